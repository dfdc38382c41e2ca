import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readDataField } from './data-field.ts';

test('any bytes, base64-encoded and wrapped anywhere, read back as the same bytes (fast-check)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.constantFrom('\n', '\r\n', '\r')), { maxLength: 4 }), (bytes, breaks) => {
      const canonical = Buffer.from(bytes).toString('base64');
      let text = canonical;
      for (const [at, br] of breaks) text = text.slice(0, at % (text.length + 1)) + br + text.slice(at % (text.length + 1));
      const read = readDataField(text);
      assert.ok('base64' in read, `refused ${JSON.stringify(text)}`);
      assert.equal(read.base64, canonical);
      assert.deepEqual(Buffer.from(read.base64, 'base64'), Buffer.from(bytes));
    }),
  );
});

test('a character outside base64, or padding out of place, is refused at its offset; an unfinished group at its start', () => {
  assert.deepEqual(readDataField('-----BEGIN CERTIFICATE-----'), { badAt: 0 });
  assert.deepEqual(readDataField('TUlJQg'), { badAt: 4 });
  assert.deepEqual(readDataField('TUlJ Qg=='), { badAt: 4 });
  assert.deepEqual(readDataField('TUlJ\nQg'), { badAt: 5 });
  assert.deepEqual(readDataField('TQ==TQ=='), { badAt: 4 });
  assert.deepEqual(readDataField('T==='), { badAt: 1 });
  assert.deepEqual(readDataField('TQ=x'), { badAt: 3 });
  assert.deepEqual(readDataField('TUlJQg-_'), { badAt: 6 }, 'the URL alphabet is not kubectl\'s');
  fc.assert(
    fc.property(fc.string({ maxLength: 12 }), fc.constantFrom(' ', '\t', '-', '_', '.', 'ü', '\0'), fc.string({ maxLength: 12 }), (a, bad, b) => {
      assert.ok('badAt' in readDataField(a + bad + b));
    }),
  );
});
