import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MAX_INTERNED_LENGTH, internStrings } from './intern-strings.ts';

test('internStrings keeps every value equal (random JSON documents)', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      const before = JSON.parse(JSON.stringify(value)) as unknown;
      const interned = internStrings(JSON.parse(JSON.stringify(value)) as unknown);
      assert.deepStrictEqual(interned, before);
    }),
    { numRuns: 500 },
  );
});

test('internStrings leaves frozen objects, long strings and non-string values alone', () => {
  const frozen = Object.freeze({ a: 'x'.repeat(3) });
  const long = 'y'.repeat(MAX_INTERNED_LENGTH + 1);
  const obj = { frozen, long, n: 1, b: true, z: null, list: ['a', 2, { c: 'd' }] };
  assert.equal(internStrings(obj), obj);
  assert.deepStrictEqual(obj, { frozen: { a: 'xxx' }, long, n: 1, b: true, z: null, list: ['a', 2, { c: 'd' }] });
});

/** Heap kept by `count` objects parsed from `text` and passed through `map` (after full GCs). */
function heapKept(text: string, count: number, map: (o: unknown) => unknown): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: count }, () => map(JSON.parse(text)));
  gc();
  const used = process.memoryUsage().heapUsed - before;
  assert.equal(kept.length, count);
  return used;
}

test('internStrings shares equal strings between objects (less heap per parsed object)', () => {
  const text = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: { containers: [{ image: 'example.com/app:1.0.0', terminationMessagePath: '/dev/termination-log' }] } } } });
  assert.ok(heapKept(text, 2_000, internStrings) < heapKept(text, 2_000, (o) => o));
});

test('internStrings against a previous version keeps every value equal and leaves the previous version as it was', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), fc.jsonValue({ maxDepth: 6 }), fc.boolean(), (value, other, similar) => {
      // The previous version: often the same document (the common case: a status update), else any.
      const previous = JSON.parse(JSON.stringify(similar ? value : other)) as unknown;
      const previousBefore = JSON.parse(JSON.stringify(previous)) as unknown;
      const expected = JSON.parse(JSON.stringify(value)) as unknown;
      const interned = internStrings(JSON.parse(JSON.stringify(value)) as unknown, previous);
      assert.deepStrictEqual(interned, expected);
      assert.deepStrictEqual(previous, previousBefore);
    }),
    { numRuns: 500 },
  );
});

test('internStrings takes the equal string of the previous version, also one too long to be looked up', () => {
  const long = 'z'.repeat(MAX_INTERNED_LENGTH * 4);
  const text = JSON.stringify({ metadata: { annotations: { applied: long } }, status: { ready: 1 } });
  const previous = JSON.parse(text) as unknown;
  // 1,000 copies of a 1 KiB string are ≈ 1 MiB; sharing the previous version's copy saves it.
  assert.ok(heapKept(text, 1_000, (o) => internStrings(o, previous)) < heapKept(text, 1_000, (o) => internStrings(o)) - 512 * 1024);
});

test('internStrings adds no property when Object.prototype has an enumerable one (for…in is not used then)', () => {
  const proto = Object.prototype as Record<string, unknown>;
  proto.polluted = 'yes';
  try {
    const obj = JSON.parse('{"a":"x","b":{"c":"y"},"d":["z"]}') as Record<string, unknown>;
    internStrings(obj, JSON.parse('{"a":"x"}'));
    assert.deepStrictEqual(Object.keys(obj), ['a', 'b', 'd']);
    assert.deepStrictEqual(Object.keys(obj.b as object), ['c']);
  } finally {
    delete proto.polluted;
  }
});

test('internStrings leaves sealed objects alone', () => {
  const sealed = Object.seal({ a: 'x' });
  assert.equal(internStrings({ sealed }).sealed, sealed);
});
