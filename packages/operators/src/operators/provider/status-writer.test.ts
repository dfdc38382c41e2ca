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
  const healthy = observedStatus(provider(), observation(), NOW - 5_000, NOW, policy, 'spec.limits are applied once the account is resumed');
  assert.equal(healthy.status.usable, true);
  assert.equal(healthy.status.usage?.observedAt, new Date(NOW - 5_000).toISOString());
  assert.equal(healthy.status.conditions?.find((c) => c.type === 'Ready')?.message.includes('once the account is resumed'), false);
  assert.equal(typesOf(healthy.status).Stalled, 'False/NotStalled@3');

  const down = observedStatus(provider({ limitedBy: 'x', recommendation: 'old' }), observation({ health: { status: 'down', message: 'gone' } }), NOW, NOW, policy, 'pending');
  const ready = down.status.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'False');
  assert.match(ready?.message ?? '', /; pending$/);
  assert.equal(down.status.usable, false);
  assert.equal(down.status.recommendation, undefined, 'an old recommendation goes');
  assert.match(typesOf(down.status).Reconciling ?? '', /^True\//);
});
