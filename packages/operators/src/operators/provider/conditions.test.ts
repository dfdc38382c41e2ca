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
