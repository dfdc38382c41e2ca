import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setCondition, findCondition, isConditionTrue, removeCondition, toRfc3339 } from './index.ts';

const t1 = '2026-01-01T00:00:00Z';
const t2 = '2026-01-01T00:05:00Z';

test('a new condition gets now as its transition time', () => {
  const out = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Waiting', message: 'm', observedGeneration: 1 }, t1);
  assert.deepEqual(out, [{ type: 'Ready', status: 'False', reason: 'Waiting', message: 'm', observedGeneration: 1, lastTransitionTime: t1 }]);
});

test('same status keeps lastTransitionTime while reason, message and generation move', () => {
  const a = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Waiting', message: 'm', observedGeneration: 1 }, t1);
  const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'Other', message: 'n', observedGeneration: 2 }, t2);
  assert.equal(b[0]?.lastTransitionTime, t1);
  assert.equal(b[0]?.reason, 'Other');
  assert.equal(b[0]?.observedGeneration, 2);
  assert.equal(a[0]?.reason, 'Waiting', 'input not mutated');
});

test('a status change moves lastTransitionTime; order is kept', () => {
  let c = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'r', message: '' }, t1);
  c = setCondition(c, { type: 'Progressing', status: 'True', reason: 'r', message: '' }, t1);
  c = setCondition(c, { type: 'Ready', status: 'True', reason: 'r', message: '' }, t2);
  assert.deepEqual(c.map((x) => x.type), ['Ready', 'Progressing']);
  assert.equal(findCondition(c, 'Ready')?.lastTransitionTime, t2);
  assert.equal(isConditionTrue(c, 'Ready'), true);
  assert.equal(isConditionTrue(c, 'Missing'), false);
  assert.deepEqual(removeCondition(c, 'Ready').map((x) => x.type), ['Progressing']);
});

test('timestamps have second precision', () => {
  assert.equal(toRfc3339(new Date('2026-11-30T12:34:56.789Z')), '2026-11-30T12:34:56Z');
});
