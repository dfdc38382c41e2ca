/**
 * What a held-back status write may never hide, searched over random pairs of statuses: a status
 * change classed as progress only keeps the phase, the generation, the top-level reason and
 * message, the managed resources, Ready's status and all of Stalled; every condition it sets was
 * already there for this generation with the same status and reason, or it is the one documented
 * exception (the rollout's last step, Ready False `RolloutInProgress` → False `EndpointsNotReady`),
 * where a reason may change but never a status.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isProgressOnly, type OwnStatus } from './progress-only.ts';
import type { ConditionEntry } from './conditions.ts';
import type { MicroserviceStatus } from './api/index.ts';

const TYPES = ['Ready', 'Progressing', 'Reconciling', 'Stalled'] as const;
const STATUSES = ['True', 'False', 'Unknown'] as const;
const REASONS = ['Available', 'RolloutInProgress', 'RolloutComplete', 'RolloutStalled', 'EndpointsNotReady', 'ApplyFailed', 'NotStalled'] as const;

const conditionEntry = fc.tuple(fc.constantFrom(...TYPES), fc.constantFrom(...STATUSES), fc.constantFrom(...REASONS), fc.constantFrom('', 'a', 'b'));
/** Up to one entry per type, as the reconciler builds them. */
const entries: fc.Arbitrary<ConditionEntry[]> = fc.uniqueArray(conditionEntry, { selector: (e) => e[0], maxLength: 4 });

const own: fc.Arbitrary<OwnStatus> = fc.record({
  phase: fc.constantFrom('ResourcesApplied', 'Failed'),
  observedGeneration: fc.constantFrom(1, 2),
  reason: fc.constantFrom(undefined, 'InvalidSpec'),
  message: fc.constantFrom(undefined, 'x'),
  managedResources: fc.constantFrom({ deployment: 'a', service: 'a' }, { deployment: 'a', service: 'b' }),
  rollout: fc.record({ replicas: fc.nat(3), updatedReplicas: fc.nat(3), availableReplicas: fc.nat(3), readyEndpoints: fc.nat(3) }),
}, { requiredKeys: ['phase', 'observedGeneration', 'managedResources', 'rollout'] }) as fc.Arbitrary<OwnStatus>;

const previous: fc.Arbitrary<MicroserviceStatus> = fc
  .tuple(own, entries, fc.constantFrom(1, 2))
  .map(([o, es, conditionGeneration]) => ({
    ...o,
    conditions: es.map(([type, status, reason, message]) => ({ type, status, reason, message, observedGeneration: conditionGeneration, lastTransitionTime: '2026-12-05T00:00:00Z' })),
  }) as MicroserviceStatus);

/** Next statuses near the previous one (most random pairs differ in the phase and say little). */
const near = (prev: MicroserviceStatus): fc.Arbitrary<[OwnStatus, ConditionEntry[]]> =>
  fc.tuple(
    fc.oneof(own, fc.record({ rollout: fc.record({ replicas: fc.nat(3), updatedReplicas: fc.nat(3), availableReplicas: fc.nat(3), readyEndpoints: fc.nat(3) }) }).map(({ rollout }) => {
      const { conditions: _conditions, ...rest } = prev;
      return { ...rest, rollout } as OwnStatus;
    })),
    fc.oneof(entries, fc.constant((prev.conditions ?? []).map((c): ConditionEntry => [c.type, c.status, c.reason, 'moved on'])), fc.constant<ConditionEntry[]>([
      ['Ready', 'False', 'EndpointsNotReady', 'x'],
      ['Progressing', 'False', 'RolloutComplete', 'x'],
    ]), fc.constant<ConditionEntry[]>([
      ['Ready', 'False', 'EndpointsNotReady', 'x'],
      ['Progressing', 'True', 'EndpointsNotReady', 'x'],
      ['Reconciling', 'True', 'EndpointsNotReady', 'x'],
    ])),
  );

test('a change held back as progress never hides a turn of any condition, the phase or the generation', () => {
  let heldBack = 0;
  fc.assert(
    fc.property(previous.chain((p) => fc.tuple(fc.constant(p), near(p))), ([prev, [next, conditions]]) => {
      if (!isProgressOnly(prev, next, conditions)) return;
      heldBack++;
      assert.equal(next.phase, prev.phase);
      assert.equal(next.observedGeneration, prev.observedGeneration);
      assert.equal(next.reason, prev.reason);
      assert.equal(next.message, prev.message);
      assert.deepEqual(next.managedResources, prev.managedResources);
      const before = new Map((prev.conditions ?? []).map((c) => [c.type, c]));
      const tail = before.get('Ready')?.reason === 'RolloutInProgress' && conditions.some(([t, s, r]) => t === 'Ready' && s === 'False' && r === 'EndpointsNotReady');
      for (const [type, status, reason] of conditions) {
        const c = before.get(type);
        assert.ok(c, `${type} set for the first time, held back`);
        assert.equal(c.observedGeneration, next.observedGeneration, `${type} of another generation, held back`);
        assert.equal(status, c.status, `${type} turned ${c.status} → ${status}, held back`);
        if (type === 'Stalled' || !tail) assert.deepEqual([status, reason], [c.status, c.reason], `${type} ${c.status}/${c.reason} → ${status}/${reason}, held back`);
      }
    }),
    { numRuns: 5_000 },
  );
  // About one pair in ten is progress only (479–581 in 5,000 over nine runs; 500 was the bound and
  // failed once in CI): the bound says the generator reaches the case, not how often.
  assert.ok(heldBack > 250, `only ${heldBack} of 5,000 pairs were progress only: the generator misses the case`);
});
