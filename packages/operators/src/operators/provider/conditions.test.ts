import { test } from 'node:test';
import assert from 'node:assert/strict';
import { providerConditions } from './conditions.ts';

const kstatus = (ready: 'True' | 'False', reason: string, permanent = false) =>
  Object.fromEntries(providerConditions(ready, reason, 'why', permanent).slice(1).map(([type, status]) => [type, status]));

test('Ready True: Reconciling and Stalled False (kstatus Current)', () => {
  assert.deepEqual(kstatus('True', 'ProviderReady'), { Reconciling: 'False', Stalled: 'False' });
  assert.deepEqual(kstatus('True', 'ProviderDegraded'), { Reconciling: 'False', Stalled: 'False' });
});

test('what clears at the vendor without a change here is Reconciling (InProgress): down, suspended, out of quota, retried failures', () => {
  for (const reason of ['ProviderUnhealthy', 'AccountSuspended', 'QuotaExhausted', 'EnsureFailed', 'DeletionBlocked']) {
    assert.deepEqual(kstatus('False', reason), { Reconciling: 'True', Stalled: 'False' }, reason);
  }
});

test('what needs a person is Stalled (Failed): input the vendor refuses, a rejected token, a missing Secret, a moved endpoint, any permanent failure', () => {
  for (const reason of ['VendorRejected', 'Unauthorized', 'CredentialsMissing', 'EndpointChanged']) {
    assert.deepEqual(kstatus('False', reason), { Reconciling: 'False', Stalled: 'True' }, reason);
  }
  assert.deepEqual(kstatus('False', 'EnsureFailed', true), { Reconciling: 'False', Stalled: 'True' });
});

test('a change the vendor refused for this generation is Stalled (Failed) even while the instance serves (Ready True); one still being applied is Reconciling', () => {
  const entries = (ready: 'True' | 'False', reason: string, applied: { status: 'True' | 'False'; reason: 'Applied' | 'VendorRejected' | 'ApplyFailed'; message: string }) =>
    Object.fromEntries(providerConditions(ready, reason, 'why', false, applied).map(([type, status, r]) => [type, `${status}/${r}`]));
  const refused = { status: 'False' as const, reason: 'VendorRejected' as const, message: 'the vendor refused the limits: dailyQuota above the plan' };
  assert.deepEqual(entries('True', 'ProviderReady', refused), { Ready: 'True/ProviderReady', Reconciling: 'False/VendorRejected', Stalled: 'True/VendorRejected' });
  assert.deepEqual(entries('False', 'ProviderUnhealthy', refused), { Ready: 'False/ProviderUnhealthy', Reconciling: 'False/VendorRejected', Stalled: 'True/VendorRejected' }, 'never Reconciling and Stalled together');
  const retried = { status: 'False' as const, reason: 'ApplyFailed' as const, message: 'limits failed: HTTP 503; retrying with backoff' };
  assert.deepEqual(entries('True', 'ProviderReady', retried), { Ready: 'True/ProviderReady', Reconciling: 'True/ApplyFailed', Stalled: 'False/NotStalled' });
  assert.deepEqual(entries('True', 'ProviderReady', { status: 'True', reason: 'Applied', message: 'applied' }), { Ready: 'True/ProviderReady', Reconciling: 'False/ProviderReady', Stalled: 'False/NotStalled' });
});
