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

test('internStrings shares equal strings between objects (less heap per parsed object)', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const text = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: { containers: [{ image: 'example.com/app:1.0.0', terminationMessagePath: '/dev/termination-log' }] } } } });
  const measure = (map: (o: unknown) => unknown) => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const kept = Array.from({ length: 2_000 }, () => map(JSON.parse(text)));
    gc();
    const used = process.memoryUsage().heapUsed - before;
    assert.equal(kept.length, 2_000);
    return used;
  };
  assert.ok(measure(internStrings) < measure((o) => o));
});
