import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineFramer } from './line-framer.ts';

// Text with characters of 1, 2, 3 and 4 bytes in UTF-8.
const text = fc.array(fc.constantFrom('a', '{', '"', 'é', 'ß', '日', '本', '€', '😀', '𝄞', ' '), { maxLength: 40 }).map((cs) => cs.join(''));

test('lines are decoded whole however the stream is cut, also inside multi-byte characters', () => {
  fc.assert(
    fc.property(fc.array(text, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (lines, cuts) => {
      const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
      const offsets = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const framer = new LineFramer();
      const out: string[] = [];
      let at = 0;
      for (const o of [...offsets, bytes.length]) {
        out.push(...framer.push(bytes.subarray(at, o)));
        at = o;
      }
      assert.deepEqual(out, lines);
    }),
    { numRuns: 2_000 },
  );
});

test('a chunk cut inside a character keeps it (decoding chunk by chunk would not)', () => {
  const bytes = Buffer.from('{"a":"日本"}\n', 'utf8');
  const cut = bytes.indexOf(Buffer.from('日', 'utf8')) + 1; // inside 日
  const framer = new LineFramer();
  assert.deepEqual(framer.push(bytes.subarray(0, cut)), []);
  assert.deepEqual(framer.push(bytes.subarray(cut)), ['{"a":"日本"}']);
  assert.notEqual(bytes.subarray(0, cut).toString('utf8') + bytes.subarray(cut).toString('utf8'), '{"a":"日本"}\n', 'the old way corrupts it');
  assert.deepEqual(new LineFramer().push(Buffer.from('no newline yet')), [], 'an unfinished line is never returned');
});
