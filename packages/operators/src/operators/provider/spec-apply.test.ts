/**
 * The apply step: a refused or failed write of an existing instance is `SpecApplied`'s, never the
 * observation's, and the refused write alone waits for a spec change or the retry interval (the
 * vendor is a stand-in recording the writes; no API server is involved).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@converge/runtime';
import type { Request } from '@converge/runtime';
import { SpecApplier, changeRefused, createRefused } from './spec-apply.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { InstanceObservation } from './usage-status.ts';
import type { VendorApi, VendorInstance } from './vendor-api.ts';
import { VendorError } from './vendor/index.ts';
import type { VendorLimits } from './vendor/index.ts';

const log = { info() {}, debug() {}, warn() {} };
const request = { key: 'ns/p', namespace: 'ns', name: 'p', log } as unknown as Request;
const signal = new AbortController().signal;
const RETRY_MS = 600_000;

const observation: InstanceObservation = {
  instanceId: 'inst-1',
  region: 'eu',
  health: { status: 'healthy' },
  account: { id: 'acct', state: 'active', since: '2026-01-01T00:00:00Z' },
  limits: { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 10_000 },
  usage: { callsToday: 100, dailyQuota: 10_000, quotaRemaining: 9_900, refusedToday: 0, throttledRequests: 0, throttleWindowSeconds: 60, quotaResetAt: '2026-12-07T00:00:00.000Z', observedAt: '2026-12-06T12:00:00.000Z' },
} as InstanceObservation;
const instance = { id: 'inst-1', region: 'eu', displayName: 'Presenter' } as VendorInstance;

function provider(generation: number, spec: Partial<DigitalHumanProvider['spec']>, status?: DigitalHumanProvider['status']): DigitalHumanProvider {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u1', generation },
    spec: { endpoint: 'https://vendor.example', region: 'eu', credentials: { secretRef: { name: 's' } }, ...spec },
    status: { observedGeneration: generation - 1, providerID: 'inst-1', limits: observation.limits, usable: true, ...status },
  } as DigitalHumanProvider;
}

function setup(fail?: () => VendorError) {
  const clock = new FakeClock(0);
  const writes: string[] = [];
  const events: string[] = [];
  const vendor = {
    async setLimits(id: string, patch: Partial<VendorLimits>) {
      writes.push(`setLimits ${id} ${JSON.stringify(patch)}`);
      if (fail) throw fail();
      return { ...observation.limits, ...patch };
    },
    async updateInstance(id: string, input: { displayName: string }) {
      writes.push(`updateInstance ${id} ${input.displayName}`);
      if (fail) throw fail();
      return { ...instance, ...input };
    },
  } as unknown as VendorApi;
  const applier = new SpecApplier({ clock, rejectedRetryMs: RETRY_MS, events: { normal: (_o: unknown, r: string) => void events.push(r), warning: (_o: unknown, r: string) => void events.push(r) } as never });
  const apply = (dhp: DigitalHumanProvider) => applier.apply(dhp, vendor, instance, observation, request, signal);
  return { clock, writes, events, apply };
}

const refusal = () => new VendorError({ kind: 'Invalid', operation: 'setLimits', status: 422, field: 'dailyQuota', message: 'vendor setLimits: HTTP 422 PlanLimit: dailyQuota 20000 is above the plan (10000)' });

test('a refused limits change: the observation stands (the instance serves), SpecApplied=False/VendorRejected with the vendor\'s words and the field', async () => {
  const s = setup(refusal);
  const out = await s.apply(provider(2, { limits: { dailyQuota: 20_000 } }));
  assert.deepEqual(out.observation, observation, 'the observation is not replaced');
  assert.equal(out.applied.status, 'False');
  assert.equal(out.applied.reason, 'VendorRejected');
  assert.match(out.applied.message, /the vendor refused the limits of generation 2: .*dailyQuota 20000 is above the plan.*\(the vendor names spec\.limits\.dailyQuota\); instance inst-1 keeps serving as it was/);
  assert.match(out.applied.message, /every 600 s while it does not/);
  assert.equal(out.retry, undefined, 'not retried with backoff: it waits for a change');
});

test('the refused write alone is held back for its generation: sent again after the retry interval, or at once for a new generation', async () => {
  const s = setup(refusal);
  const first = await s.apply(provider(2, { limits: { dailyQuota: 20_000 } }));
  const recorded = (generation: number) => provider(generation, { limits: { dailyQuota: 20_000 } }, { conditions: [{ type: 'SpecApplied', status: 'False', reason: 'VendorRejected', message: first.applied.message, observedGeneration: 2, lastTransitionTime: '2026-12-06T12:00:00Z' }] });
  assert.equal(s.writes.length, 1);

  for (let i = 0; i < 5; i++) {
    s.clock.advance(60_000);
    const held = await s.apply(recorded(2));
    assert.equal(held.applied.reason, 'VendorRejected');
    assert.equal(held.applied.message, first.applied.message, 'the refusal stays said');
    assert.deepEqual(held.observation, observation, 'observed all the same');
  }
  assert.equal(s.writes.length, 1, 'not sent again within the interval');
  s.clock.advance(RETRY_MS);
  await s.apply(recorded(2));
  assert.equal(s.writes.length, 2, 'sent again once the interval passed');

  // A new generation (a spec change) is sent at once: its condition is not this generation's.
  await s.apply(provider(3, { limits: { dailyQuota: 15_000 } }, { conditions: [{ type: 'SpecApplied', status: 'False', reason: 'VendorRejected', message: 'x', observedGeneration: 2, lastTransitionTime: '2026-12-06T12:00:00Z' }] }));
  assert.equal(s.writes.length, 3);
});

test('nothing left to write is Applied, whatever was refused before (the vendor changed meanwhile)', async () => {
  const s = setup(refusal);
  const out = await s.apply(provider(2, { limits: { dailyQuota: 10_000 } }, { conditions: [{ type: 'SpecApplied', status: 'False', reason: 'VendorRejected', message: 'x', observedGeneration: 2, lastTransitionTime: '2026-12-06T12:00:00Z' }] }));
  assert.deepEqual(out.applied, { status: 'True', reason: 'Applied', message: 'the vendor holds the spec of generation 2' });
  assert.equal(s.writes.length, 0);
});

test('a transient failure (a 503, a 429) is ApplyFailed and retried with backoff; the serving instance stays as observed', async () => {
  for (const err of [
    () => new VendorError({ kind: 'Server', operation: 'setLimits', status: 503, message: 'vendor setLimits: HTTP 503', retryAfterMs: 2_000 }),
    () => new VendorError({ kind: 'RateLimited', operation: 'updateInstance', status: 429, message: 'vendor updateInstance: HTTP 429', retryAfterMs: 1_000 }),
  ]) {
    const s = setup(err);
    const out = await s.apply(provider(2, { displayName: 'New name', limits: { dailyQuota: 20_000 } }));
    assert.deepEqual(out.observation, observation);
    assert.equal(out.applied.reason, 'ApplyFailed');
    assert.match(out.applied.message, /failed: .*; retrying with backoff/);
    assert.equal(out.retry?.name, 'TemporaryError');
    assert.equal(out.retry?.retryAfterMs, err().retryAfterMs);
  }
});

test('a suspended account: ApplyFailed, no backoff (the account watch wakes it), and the observation says the account is suspended', async () => {
  const s = setup(() => new VendorError({ kind: 'AccountSuspended', operation: 'setLimits', status: 403, code: 'AccountSuspended', message: 'vendor setLimits: account suspended' }));
  const out = await s.apply(provider(2, { limits: { dailyQuota: 20_000 } }));
  assert.equal(out.applied.reason, 'ApplyFailed');
  assert.equal(out.retry, undefined);
  assert.equal(out.observation.account.state, 'suspended');
  assert.equal(out.pending, 'spec.limits are applied once the account is resumed');
});

test('written when accepted: the display name, then the limits, with their Events; the limits answered are the observation\'s', async () => {
  const s = setup();
  const out = await s.apply(provider(2, { displayName: 'New name', limits: { dailyQuota: 20_000 } }));
  assert.deepEqual(s.writes, ['updateInstance inst-1 New name', 'setLimits inst-1 {"dailyQuota":20000}']);
  assert.deepEqual(s.events, ['Updated', 'LimitsUpdated']);
  assert.equal(out.applied.reason, 'Applied');
  assert.equal(out.observation.limits.dailyQuota, 20_000);
  assert.equal(out.observation.usage.quotaRemaining, 19_900);
});

test('what is not about the spec is the caller\'s: a refused token, an instance gone', async () => {
  for (const kind of ['Unauthorized', 'NotFound'] as const) {
    const s = setup(() => new VendorError({ kind, operation: 'setLimits', message: kind }));
    await assert.rejects(s.apply(provider(2, { limits: { dailyQuota: 20_000 } })), (err: Error) => err.name === 'VendorError');
  }
});

const condition = (type: string, reason: string, message: string, generation: number) => ({ type, status: 'False' as const, reason, message, observedGeneration: generation, lastTransitionTime: '2026-12-06T12:00:00Z' });

test('an instance created in the reconcile after a refused create (the vendor enabled the region) gets its limits at once: the refusal was the create\'s, not a change\'s', async () => {
  const s = setup();
  const msg = 'the vendor refused the ensure: HTTP 422 region not enabled; sent again when the spec changes, and every 600 s while it does not';
  const dhp = provider(1, { limits: { dailyQuota: 5_000 } }, {
    observedGeneration: 1,
    conditions: [condition('Ready', 'VendorRejected', msg, 1), condition('SpecApplied', 'VendorRejected', msg, 1)],
  });
  assert.equal(changeRefused(dhp), false);
  assert.equal(createRefused(dhp), true);
  const out = await s.apply(dhp);
  assert.deepEqual(s.writes, ['setLimits inst-1 {"dailyQuota":5000}']);
  assert.equal(out.applied.status, 'True');
});

test('a refused read of an existing instance (Ready VendorRejected, SpecApplied untouched) holds nothing back: the instance is observed again', () => {
  const msg = 'the vendor refused the health: HTTP 400 bad request; sent again when the spec changes';
  const dhp = provider(1, {}, {
    observedGeneration: 1,
    conditions: [condition('Ready', 'VendorRejected', msg, 1), { type: 'SpecApplied', status: 'True', reason: 'Applied', message: 'the vendor holds the spec of generation 1', observedGeneration: 1, lastTransitionTime: '2026-12-06T12:00:00Z' }],
  });
  assert.equal(createRefused(dhp), false, 'not a create refusal: observation goes on');
  assert.equal(changeRefused(dhp), false);
});
