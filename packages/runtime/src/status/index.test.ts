import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergePatchFrom } from './index.ts';

test('mergePatchFrom sends only the difference, null for removals, arrays whole', () => {
  const from = { phase: 'Accepted', observedGeneration: 1, managed: { deployment: 'a', service: 'a' }, conditions: [{ type: 'A' }] };
  const to = { phase: 'Failed', observedGeneration: 1, conditions: [{ type: 'A' }, { type: 'B' }] };
  assert.deepEqual(mergePatchFrom(from, to), { phase: 'Failed', conditions: [{ type: 'A' }, { type: 'B' }], managed: null });
  assert.deepEqual(mergePatchFrom({ a: { b: 1, c: 2 } }, { a: { b: 1, c: 3 } }), { a: { c: 3 } });
  assert.deepEqual(mergePatchFrom(to, to), {});
});
