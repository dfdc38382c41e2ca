import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteOutcome } from './delete-outcome.ts';

// Answers captured from kube-apiserver 1.36 (managedFields and most fields cut).
const service = { kind: 'Service', apiVersion: 'v1', metadata: { name: 's1', namespace: 'default', uid: 'u-svc', resourceVersion: '236' }, spec: {} };
const podGraceful = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p1', uid: 'u-pod', deletionTimestamp: '2026-12-01T11:24:24Z', deletionGracePeriodSeconds: 30 } };
const podNow = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p2', uid: 'u-pod2', deletionTimestamp: '2026-12-01T11:24:08Z', deletionGracePeriodSeconds: 0 } };
const namespace = { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'nsx', uid: 'u-ns', deletionTimestamp: '2026-12-01T11:23:55Z' }, spec: { finalizers: ['kubernetes'] } };
const withFinalizer = { kind: 'Service', apiVersion: 'v1', metadata: { name: 's2', uid: 'u-s2', deletionTimestamp: '2026-12-01T11:24:09Z', deletionGracePeriodSeconds: 0, finalizers: ['example.com/x'] } };
const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'm1', group: 'platform.example.io', kind: 'microservices', uid: 'u-cr' } };

test('a returned object is still there only with finalizers or a pending graceful deletion (issue 12, item 15)', () => {
  assert.deepEqual(deleteOutcome(service), { still: undefined, uid: 'u-svc' }, 'a Service deleted at once comes back as it was: gone');
  assert.equal(deleteOutcome(podGraceful).still, podGraceful, 'graceful deletion pending');
  assert.deepEqual(deleteOutcome(podNow), { still: undefined, uid: 'u-pod2' }, 'grace period 0: gone');
  assert.equal(deleteOutcome(namespace).still, namespace, 'a Namespace is terminating');
  assert.equal(deleteOutcome(withFinalizer).still, withFinalizer, 'finalizers hold it');
  assert.deepEqual(deleteOutcome(status), { still: undefined, uid: 'u-cr' }, 'a Status names the deleted UID');
  assert.deepEqual(deleteOutcome(undefined), { still: undefined, uid: undefined });
});
