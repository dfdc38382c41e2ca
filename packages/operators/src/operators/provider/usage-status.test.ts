import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Condition } from '@converge/runtime';
import { nextTransitionInMs, planStatusWrite, stateKey, usageStatus, type InstanceObservation, type StatusLike } from './usage-status.ts';

const NOW = Date.parse('2025-03-01T12:00:00Z');
const policy = { quotaPercent: 80, sustainedThrottlingMs: 300_000 };

function obs(over: { health?: InstanceObservation['health']; account?: Partial<InstanceObservation['account']>; usage?: Partial<InstanceObservation['usage']>; limits?: Partial<InstanceObservation['limits']> } = {}): InstanceObservation {
  const limits = { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 1000, ...over.limits };
  const callsToday = over.usage?.callsToday ?? 100;
  return {
    instanceId: 'inst-1',
    region: 'eu-west-1',
    health: over.health ?? { status: 'healthy' },
    account: { id: 'acct', state: 'active', since: '2025-01-01T00:00:00Z', ...over.account },
    limits,
    usage: {
      callsToday,
      dailyQuota: limits.dailyQuota,
      quotaRemaining: Math.max(0, limits.dailyQuota - callsToday),
      refusedToday: 0,
      throttledRequests: 0,
      throttleWindowSeconds: 60,
      quotaResetAt: '2025-03-02T00:00:00.000Z',
      observedAt: '2025-03-01T12:00:00.000Z',
      ...over.usage,
    },
  };
}

const byType = (s: ReturnType<typeof usageStatus>) => Object.fromEntries([s.ready, ...s.conditions].map((c) => [c.type, [c.status, c.reason]]));

test('healthy, active, quota left, not throttled: Ready, nothing limits it, no recommendation', () => {
  const s = usageStatus(obs(), policy, undefined, NOW);
  assert.deepEqual(byType(s), {
    Ready: ['True', 'ProviderReady'],
    QuotaExhausted: ['False', 'QuotaAvailable'],
    RateLimited: ['False', 'NotThrottled'],
    AccountSuspended: ['False', 'AccountActive'],
    ScaleRecommended: ['False', 'WithinLimits'],
  });
  assert.equal(s.limitedBy, undefined);
  assert.equal(s.recommendation, undefined);
  assert.equal(s.conditions[0]!.message, '900 of 1,000 calls left today');
});

test("Ready False names the first holding reason — suspended, then down, then quota — and mentions the others; the vendor's words pass through", () => {
  const all = usageStatus(obs({ health: { status: 'down', message: 'GPU fault' }, account: { state: 'suspended', reason: 'NonPayment', message: 'invoice unpaid' }, usage: { callsToday: 1000 } }), policy, undefined, NOW);
  assert.deepEqual([all.ready.status, all.ready.reason, all.limitedBy], ['False', 'AccountSuspended', 'AccountSuspended']);
  assert.match(all.ready.message, /^vendor account acct is suspended \(NonPayment: invoice unpaid\).*; also instance inst-1 reports down: GPU fault; also 0 of 1,000 calls left today/);
  assert.deepEqual(byType(all).AccountSuspended, ['True', 'NonPayment']);
  assert.deepEqual(byType(all).QuotaExhausted, ['True', 'QuotaExhausted']);
  const down = usageStatus(obs({ health: { status: 'down', message: 'GPU fault' }, usage: { callsToday: 1000 } }), policy, undefined, NOW);
  assert.equal(down.ready.reason, 'ProviderUnhealthy');
  assert.equal(usageStatus(obs({ usage: { callsToday: 1000 } }), policy, undefined, NOW).ready.reason, 'QuotaExhausted');
  assert.deepEqual(byType(usageStatus(obs({ account: { state: 'suspended', reason: 'PolicyViolation' } }), policy, undefined, NOW)).AccountSuspended, ['True', 'Suspended']);
  const degraded = usageStatus(obs({ health: { status: 'degraded', message: 'GPU hot' } }), policy, undefined, NOW);
  assert.deepEqual([degraded.ready.status, degraded.ready.reason, degraded.ready.message], ['True', 'ProviderDegraded', 'instance inst-1 is degraded: GPU hot']);
});

test('throttling: RateLimited True, Ready stays True, limitedBy RateLimited; sustained for 5 min → ScaleRecommended', () => {
  const throttled = obs({ usage: { throttledRequests: 12 } });
  const first = usageStatus(throttled, policy, undefined, NOW);
  assert.deepEqual([first.ready.status, first.limitedBy, byType(first).RateLimited], ['True', 'RateLimited', ['True', 'Throttled']]);
  assert.deepEqual(byType(first).ScaleRecommended, ['False', 'WithinLimits']);
  const since: Condition[] = [{ type: 'RateLimited', status: 'True', reason: 'Throttled', message: '', lastTransitionTime: new Date(NOW - 200_000).toISOString() }];
  assert.equal(nextTransitionInMs(usageStatus(throttled, policy, since, NOW), policy, since, NOW), 100_000, 'looked at again when the 5 minutes are up');
  const later = usageStatus(throttled, policy, since, NOW + 100_000);
  assert.deepEqual(byType(later).ScaleRecommended, ['True', 'SustainedThrottling']);
  assert.match(later.recommendation!, /throttled for 5 min.*raise spec\.limits\.requestsPerMinute above 600.*another provider in eu-west-1.*does not change limits/);
  assert.equal(nextTransitionInMs(later, policy, since, NOW + 100_000), undefined);
});

test('80 % of the quota used → ScaleRecommended QuotaNearlyUsed with a recommendation', () => {
  const s = usageStatus(obs({ usage: { callsToday: 850 } }), policy, undefined, NOW);
  assert.deepEqual(byType(s).ScaleRecommended, ['True', 'QuotaNearlyUsed']);
  assert.match(s.recommendation!, /^85 % of the daily quota used \(850 of 1,000; threshold 80 %\): raise spec\.limits\.dailyQuota above 1,000/);
  assert.equal(s.ready.status, 'True');
  assert.deepEqual(byType(usageStatus(obs({ usage: { callsToday: 799 } }), policy, undefined, NOW)).ScaleRecommended, ['False', 'WithinLimits']);
});

test('figures read "in the future" (written before the wall clock stepped back, or by a replica whose clock ran ahead) do not hold new figures back for the skew', () => {
  const current: StatusLike = { observedGeneration: 1, providerID: 'i', usable: true, usage: { observedAt: new Date(NOW + 3_600_000).toISOString(), callsToday: 5 } as never };
  const figures = { ...current, usage: { observedAt: new Date(NOW).toISOString(), callsToday: 9 } as never };
  assert.deepEqual(planStatusWrite(current, figures, NOW, 30_000), { write: true }, 'never written by this process: the age is unknown');
  assert.deepEqual(planStatusWrite(current, figures, NOW, 30_000, 10_000), { write: false, requeueAfterMs: 20_000 }, 'written here 10 s ago: that decides');
  assert.deepEqual(planStatusWrite(current, figures, NOW, 30_000, 600_000), { write: true });
});

test('the write bound: a state change at once, figures alone once they are refreshMs old, nothing when only observedAt moved', () => {
  const cond = (type: string, status: string, reason: string) => ({ type, status, reason, observedGeneration: 1 });
  const current: StatusLike = { observedGeneration: 1, providerID: 'i', usable: true, conditions: [cond('Ready', 'True', 'ProviderReady'), cond('QuotaExhausted', 'False', 'QuotaAvailable')], usage: { observedAt: new Date(NOW - 10_000).toISOString(), callsToday: 5 } as never };
  const figures = { ...current, usage: { observedAt: new Date(NOW).toISOString(), callsToday: 9 } as never };
  assert.deepEqual(planStatusWrite(current, figures, NOW, 30_000), { write: false, requeueAfterMs: 20_000 });
  assert.deepEqual(planStatusWrite(current, figures, NOW + 20_000, 30_000), { write: true });
  const same = { ...current, usage: { observedAt: new Date(NOW).toISOString(), callsToday: 5 } as never };
  assert.deepEqual(planStatusWrite(current, same, NOW + 60_000, 30_000), { write: false }, 'nothing changed but the time of reading');
  const flipped = { ...figures, usable: false, conditions: [cond('Ready', 'False', 'QuotaExhausted'), cond('QuotaExhausted', 'True', 'QuotaExhausted')] };
  assert.deepEqual(planStatusWrite(current, flipped, NOW, 30_000), { write: true });
  assert.deepEqual(planStatusWrite(current, { ...figures, observedGeneration: 2 }, NOW, 30_000), { write: true }, 'a new generation is a state change');
  assert.deepEqual(planStatusWrite(undefined, figures, NOW, 30_000), { write: true });
});

test('a health change behind an unchanged Ready reason is a state change, written at once: down (or back up, or new vendor words) while the account is suspended', () => {
  const statusOf = (o: InstanceObservation): StatusLike => {
    const s = usageStatus(o, policy, undefined, NOW);
    return { observedGeneration: 1, providerID: 'inst-1', usable: s.ready.status === 'True', conditions: [s.ready, ...s.conditions].map((c) => ({ ...c, observedGeneration: 1 })), ...(s.limitedBy ? { limitedBy: s.limitedBy } : {}), limits: s.limits, usage: { ...s.usage, observedAt: new Date(NOW - 1_000).toISOString() } };
  };
  const suspended = { state: 'suspended' as const, reason: 'NonPayment', message: 'invoice unpaid' };
  const up = statusOf(obs({ account: suspended }));
  const down = statusOf(obs({ account: suspended, health: { status: 'down', message: 'GPU fault' } }));
  assert.equal(up.limitedBy, 'AccountSuspended');
  assert.equal(down.limitedBy, 'AccountSuspended', 'the same reason holds Ready False');
  assert.deepEqual(planStatusWrite(up, down, NOW, 30_000), { write: true }, 'down while suspended');
  assert.deepEqual(planStatusWrite(down, up, NOW, 30_000), { write: true }, 'back up while suspended');
  const otherWords = statusOf(obs({ account: suspended, health: { status: 'down', message: 'maintenance until 14:00' } }));
  assert.deepEqual(planStatusWrite(down, otherWords, NOW, 30_000), { write: true }, "the vendor's words changed");
  const degraded = statusOf(obs({ health: { status: 'degraded', message: 'GPU hot' } }));
  const degradedCooler = statusOf(obs({ health: { status: 'degraded', message: 'GPU warm' } }));
  assert.deepEqual(planStatusWrite(degraded, degradedCooler, NOW, 30_000), { write: true }, 'degraded with new words (Ready True, same reason)');
  // Figures alone still wait for the refresh bound, also while a reason holds Ready False.
  const moreCalls = statusOf(obs({ account: suspended, health: { status: 'down', message: 'GPU fault' }, usage: { callsToday: 150 } }));
  assert.deepEqual(planStatusWrite(down, moreCalls, NOW, 30_000), { write: false, requeueAfterMs: 29_000 });
});

test('property: the figures are read some time before they are written (the account watch\'s round, the queue): writes stay at least refreshMs apart in real time', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 200, max: 5_000 }), fc.integer({ min: 0, max: 5_000 })), { minLength: 10, maxLength: 200 }), fc.integer({ min: 1_000, max: 60_000 }), (steps, refreshMs) => {
      let status: StatusLike = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', reason: 'ProviderReady' }], usage: { observedAt: new Date(NOW).toISOString(), callsToday: 0 } as never };
      let t = NOW;
      let lastWrite = NOW;
      let calls = 0;
      for (const [gap, lag] of steps) {
        t += gap;
        calls += 1;
        // What the reconcile sees now was read `lag` ms ago (never before the previous write's reading).
        const readAt = Math.max(Date.parse(status.usage!.observedAt!), t - lag);
        const desired = { ...status, usage: { observedAt: new Date(readAt).toISOString(), callsToday: calls } as never };
        if (planStatusWrite(status, desired, t, refreshMs, t - lastWrite).write) {
          assert.ok(t - lastWrite >= refreshMs, `written ${t - lastWrite} ms after the previous write (< ${refreshMs})`);
          lastWrite = t;
          status = desired;
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('property: under a steady state with growing usage, writes per provider stay within 1 per refresh interval', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 200, max: 5_000 }), { minLength: 10, maxLength: 200 }), fc.integer({ min: 1_000, max: 60_000 }), (gaps, refreshMs) => {
      let status: StatusLike = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', reason: 'ProviderReady' }], usage: { observedAt: new Date(NOW).toISOString(), callsToday: 0 } as never };
      let t = NOW;
      let calls = 0;
      const writes: number[] = [];
      for (const gap of gaps) {
        t += gap;
        calls += 1;
        const desired = { ...status, usage: { observedAt: new Date(t).toISOString(), callsToday: calls } as never };
        if (planStatusWrite(status, desired, t, refreshMs).write) {
          writes.push(t);
          status = desired;
        }
      }
      for (let i = 1; i < writes.length; i++) assert.ok(writes[i]! - writes[i - 1]! >= refreshMs, `${writes[i]! - writes[i - 1]!} < ${refreshMs}`);
      assert.ok(writes.length <= Math.floor((t - NOW) / refreshMs) + 1);
      assert.deepEqual(stateKey(status), stateKey({ ...status, usage: { callsToday: -1 } as never }), 'figures are not state');
    }),
    { numRuns: 300 },
  );
});
