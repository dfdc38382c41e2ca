import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Condition } from '../objects/index.ts';
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

test('property: one entry per type, a transition time always, the others untouched, idempotent (fast-check)', () => {
  const types = fc.constantFrom('Ready', 'Progressing', 'Stalled', 'Reconciling');
  const status = fc.constantFrom('True', 'False', 'Unknown');
  const time = fc.constantFrom(t1, t2, '', undefined);
  // What another writer may have left in a CRD whose schema is looser than ours: repeated
  // types, a condition without a transition time.
  const stored = fc.array(fc.record({ type: types, status, reason: fc.constantFrom('A', 'B'), message: fc.string({ maxLength: 3 }), lastTransitionTime: time }), { maxLength: 6 });
  const next = fc.record({ type: types, status, reason: fc.constantFrom('A', 'B'), message: fc.string({ maxLength: 3 }), observedGeneration: fc.option(fc.nat(5), { nil: undefined }) });
  const now = '2026-02-02T02:02:02Z';
  fc.assert(fc.property(stored, next, (before, input) => {
    const list = before as Condition[];
    const frozen = JSON.stringify(list);
    const out = setCondition(list, input, now);
    assert.equal(JSON.stringify(list), frozen, 'input not mutated');
    const mine = out.filter((c) => c.type === input.type);
    assert.equal(mine.length, 1, 'one entry of the type set');
    const set = mine[0]!;
    assert.ok(set.lastTransitionTime, 'a transition time, always');
    const was = list.find((c) => c.type === input.type);
    if (was?.status === input.status && was.lastTransitionTime) assert.equal(set.lastTransitionTime, was.lastTransitionTime);
    else assert.equal(set.lastTransitionTime, now);
    assert.deepEqual(out.filter((c) => c.type !== input.type), list.filter((c) => c.type !== input.type), 'the other conditions as they were');
    assert.deepEqual(setCondition(out, input, now), out, 'setting it again changes nothing (no needless status write)');
    assert.deepEqual(setCondition(out, input, '2026-03-03T03:03:03Z'), out, '…nor later: time moving on rewrites nothing');
  }), { numRuns: 2_000 });
});

test('a lastTransitionTime more than a minute in the future (a writer whose clock ran ahead) is re-stamped now; a skew within the minute is kept (no write for it)', () => {
  const now = '2026-12-06T12:00:00Z';
  const ahead = [{ type: 'RateLimited', status: 'True' as const, reason: 'Throttled', message: 'm', lastTransitionTime: '2026-12-06T13:00:00Z' }];
  assert.equal(setCondition(ahead, { type: 'RateLimited', status: 'True', reason: 'Throttled', message: 'm' }, now)[0]!.lastTransitionTime, now, 'a transition cannot lie an hour ahead');
  const skewed = [{ ...ahead[0]!, lastTransitionTime: '2026-12-06T12:00:30Z' }];
  assert.equal(setCondition(skewed, { type: 'RateLimited', status: 'True', reason: 'Throttled', message: 'm' }, now)[0]!.lastTransitionTime, '2026-12-06T12:00:30Z');
});
