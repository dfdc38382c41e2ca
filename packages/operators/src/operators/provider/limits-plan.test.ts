import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planLimits } from './limits-plan.ts';

const vendor = { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 10_000 };

test('only the fields spec.limits sets, and only those that differ; none when they agree', () => {
  assert.equal(planLimits(undefined, vendor, undefined, undefined, 1, 'i'), undefined);
  assert.equal(planLimits({ dailyQuota: 10_000 }, vendor, undefined, undefined, 1, 'i'), undefined);
  const plan = planLimits({ dailyQuota: 500, requestsPerMinute: 600 }, vendor, undefined, undefined, 1, 'i')!;
  assert.deepEqual(plan.patch, { dailyQuota: 500 });
  assert.equal(plan.drift, false);
  assert.equal(plan.message, 'limits of i set to spec.limits: dailyQuota 10000 → 500');
});

test('a difference for a generation whose limits were already in force is drift, said as such', () => {
  const recorded = { ...vendor, dailyQuota: 500 };
  const drift = planLimits({ dailyQuota: 500 }, { ...vendor, dailyQuota: 5 }, recorded, 3, 3, 'inst-1')!;
  assert.deepEqual([drift.drift, drift.patch], [true, { dailyQuota: 500 }]);
  assert.equal(drift.message, 'limits of inst-1 changed outside the cluster: dailyQuota was 5 at the vendor, set back to 500');
  // The spec changed since (generation 4): a plain update, not drift.
  assert.equal(planLimits({ dailyQuota: 800 }, { ...vendor, dailyQuota: 500 }, recorded, 3, 4, 'inst-1')!.drift, false);
});
