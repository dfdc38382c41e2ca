import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { VENDOR_TEXT_MAX, vendorText } from './vendor-text.ts';

test("vendorText keeps the vendor's words: one line, bounded, without the token or credentials", () => {
  assert.equal(vendorText('GPU hot'), 'GPU hot');
  assert.equal(vendorText('  GPU\nhot\r\n\t(82 °C)  '), 'GPU hot (82 °C)');
  assert.equal(vendorText('token s3cr3t-abc leaked', 's3cr3t-abc'), 'token [redacted] leaked');
  assert.equal(vendorText('sent Authorization: Bearer abc.def.ghi to us'), 'sent Authorization: Bearer [redacted] to us');
  assert.equal(vendorText('api_key=XYZ123, password: "hunter 2"; ok'), 'api_key=[redacted], password: [redacted]; ok');
  const cut = vendorText('a'.repeat(500));
  assert.equal([...cut].length, VENDOR_TEXT_MAX);
  assert.ok(cut.endsWith('…'));
  assert.equal(vendorText('😀'.repeat(300)).length <= VENDOR_TEXT_MAX * 2, true, 'cut on code points, never inside a pair');
  assert.equal(vendorText('\u0000\u0007'), '');
});

test('property: never the secret, never a control character, never longer than the bound', () => {
  // Secrets as tokens are: no control characters, no leading or trailing space.
  const secret = fc.string({ minLength: 4, maxLength: 24 }).filter((s) => s.trim() === s && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]|\s\s/.test(s));
  fc.assert(
    fc.property(secret, fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.constant('\n'), fc.constant(' \t'), fc.constant('Bearer ')), { maxLength: 12 }), fc.integer({ min: 1, max: 300 }), (s, parts, max) => {
      const text = parts.join(s);
      const out = vendorText(text, s, max);
      assert.ok(!out.includes(s), JSON.stringify({ text, out }));
      assert.ok(!/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(out));
      assert.ok([...out].length <= max);
    }),
    { numRuns: 500 },
  );
});
