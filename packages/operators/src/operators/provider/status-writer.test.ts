import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findingStatus, observedStatus } from './status-writer.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { InstanceObservation } from './usage-status.ts';

const NOW = Date.parse('2026-12-06T12:00:00Z');
const policy = { quotaPercent: 80, sustainedThrottlingMs: 300_000 };

function provider(status?: DigitalHumanProvider['status']): DigitalHumanProvider {
  return {
    apiVersion: 'dhp.example.com/v1',
    kind: 'DigitalHumanProvider',
    metadata: { namespace: 'ns', name: 'p', uid: 'u1', generation: 3 },
    spec: { endpoint: 'https://vendor.example', region: 'eu', credentials: { secretRef: { name: 's' } } },
    ...(status ? { status } : {}),
  } as DigitalHumanProvider;
}

const observation = (over: Partial<InstanceObservation> = {}): InstanceObservation => ({
  instanceId: 'inst-1',
  region: 'eu',
  health: { status: 'healthy' },
  account: { id: 'acct', state: 'active', since: '2026-01-01T00:00:00Z' },
  limits: { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 1000 },
  usage: { callsToday: 1, dailyQuota: 1000, quotaRemaining: 999, refusedToday: 0, throttledRequests: 0, throttleWindowSeconds: 60, quotaResetAt: '2026-12-07T00:00:00.000Z', observedAt: '2026-12-06T12:00:00.000Z' },
  ...over,
});

const typesOf = (s: { conditions?: { type: string; status: string; reason: string; observedGeneration?: number }[] }) =>
  Object.fromEntries((s.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}@${c.observedGeneration}`]));

test('a finding: usable only when Ready is True, limitedBy is a False Ready\'s reason, every condition at the generation read', () => {
  const live = provider({ usable: true, providerID: 'inst-1', instanceEndpoint: 'https://vendor.example' });
  const failed = findingStatus(live, { ready: 'False', reason: 'EnsureFailed', message: 'down' }, NOW);
  assert.equal(failed.usable, false);
  assert.equal(failed.limitedBy, 'EnsureFailed');
  assert.equal(failed.providerID, 'inst-1', 'the recorded instance is kept');
  assert.deepEqual(typesOf(failed), { Ready: 'False/EnsureFailed@3', Reconciling: 'True/EnsureFailed@3', Stalled: 'False/NotStalled@3' });

  const stalled = findingStatus(live, { ready: 'False', reason: 'Odd', message: 'no', permanent: true, conditions: [['AccountSuspended', 'True', 'Suspended', 'no']] }, NOW);
  assert.deepEqual(typesOf(stalled), { Ready: 'False/Odd@3', Reconciling: 'False/Odd@3', Stalled: 'True/Odd@3', AccountSuspended: 'True/Suspended@3' });
});

test('a finding about an instance with no recorded endpoint (an older version wrote it) records the spec\'s', () => {
  const s = findingStatus(provider(), { ready: 'False', reason: 'EnsureFailed', message: 'x', providerID: 'inst-9' }, NOW);
  assert.equal(s.providerID, 'inst-9');
  assert.equal(s.instanceEndpoint, 'https://vendor.example');
  assert.equal(findingStatus(provider(), { ready: 'False', reason: 'CredentialsMissing', message: 'x' }, NOW).instanceEndpoint, undefined, 'no instance, no endpoint');
});

test('an observation: usage read at its own time, Reconciling and Stalled follow Ready, a pending change is said on a False Ready only', () => {
  const healthy = observedStatus(provider(), observation(), NOW - 5_000, NOW, policy, { pending: 'spec.limits are applied once the account is resumed' });
  assert.equal(healthy.status.usable, true);
  assert.equal(healthy.status.usage?.observedAt, new Date(NOW - 5_000).toISOString());
  assert.equal(healthy.status.conditions?.find((c) => c.type === 'Ready')?.message.includes('once the account is resumed'), false);
  assert.equal(typesOf(healthy.status).Stalled, 'False/NotStalled@3');

  const down = observedStatus(provider({ limitedBy: 'x', recommendation: 'old' }), observation({ health: { status: 'down', message: 'gone' } }), NOW, NOW, policy, { pending: 'pending' });
  const ready = down.status.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'False');
  assert.match(ready?.message ?? '', /; pending$/);
  assert.equal(down.status.usable, false);
  assert.equal(down.status.recommendation, undefined, 'an old recommendation goes');
  assert.match(typesOf(down.status).Reconciling ?? '', /^True\//);
});

test('a change the vendor refused leaves Ready, usable and limitedBy to the instance: SpecApplied says it, Stalled for this generation', () => {
  const live = provider({ usable: true, providerID: 'inst-1', instanceEndpoint: 'https://vendor.example' });
  const refused = { status: 'False' as const, reason: 'VendorRejected' as const, message: 'the vendor refused the limits: dailyQuota 20000 is above the plan\'s 10000 (spec.limits.dailyQuota)' };
  const s = observedStatus(live, observation(), NOW, NOW, policy, { applied: refused }).status;
  assert.equal(s.usable, true, 'the instance serves');
  assert.equal(s.limitedBy, undefined);
  assert.deepEqual(typesOf(s), {
    Ready: 'True/ProviderReady@3', QuotaExhausted: 'False/QuotaAvailable@3', RateLimited: 'False/NotThrottled@3', AccountSuspended: 'False/AccountActive@3', ScaleRecommended: 'False/WithinLimits@3',
    SpecApplied: 'False/VendorRejected@3', Reconciling: 'False/VendorRejected@3', Stalled: 'True/VendorRejected@3',
  });
  assert.match(s.conditions!.find((c) => c.type === 'Stalled')!.message, /dailyQuota/);

  // Down meanwhile: Ready follows the instance, the refusal stays said.
  const down = observedStatus(live, observation({ health: { status: 'down', message: 'GPU on fire' } }), NOW, NOW, policy, { applied: refused }).status;
  assert.equal(down.usable, false);
  assert.equal(down.limitedBy, 'ProviderUnhealthy');
  assert.equal(typesOf(down).Stalled, 'True/VendorRejected@3');

  const applied = observedStatus(live, observation(), NOW, NOW, policy, { applied: { status: 'True', reason: 'Applied', message: 'the vendor holds generation 3' } }).status;
  assert.equal(typesOf(applied).SpecApplied, 'True/Applied@3');
  assert.equal(typesOf(applied).Stalled, 'False/NotStalled@3');
});
