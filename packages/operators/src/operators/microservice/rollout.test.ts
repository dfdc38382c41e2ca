import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, EndpointSlice } from '@converge/runtime';
import { GENERATION_ANNOTATION } from './api/index.ts';
import { assessRollout, countEndpoints } from './rollout.ts';

function dep(opts: { stamp?: string; generation?: number; observed?: number; replicas?: number; updated?: number; available?: number; current?: number; progressing?: { status: string; reason: string } }): Deployment {
  return {
    metadata: { name: 'a', generation: opts.generation ?? 1, annotations: opts.stamp === undefined ? {} : { [GENERATION_ANNOTATION]: opts.stamp } },
    spec: { replicas: opts.replicas ?? 2, selector: {}, template: {} },
    status: {
      observedGeneration: opts.observed ?? 1,
      replicas: opts.current ?? opts.replicas ?? 2,
      updatedReplicas: opts.updated ?? 2,
      availableReplicas: opts.available ?? 2,
      ...(opts.progressing ? { conditions: [{ type: 'Progressing', ...opts.progressing }] } : {}),
    },
  } as Deployment;
}

test('available only when this generation rolled out fully and endpoints are ready', () => {
  assert.equal(assessRollout(dep({ stamp: '3' }), 3, 2).state, 'Available');
  assert.equal(assessRollout(dep({ stamp: '3' }), 3, 0).state, 'EndpointsNotReady');
});

test('an old generation, an unobserved spec or old pods never read as success', () => {
  assert.equal(assessRollout(dep({ stamp: '2' }), 3, 2).state, 'InProgress', 'Deployment written for an older CR generation');
  assert.equal(assessRollout(dep({ stamp: '3', generation: 4, observed: 3 }), 3, 2).state, 'InProgress', 'controller has not observed the spec');
  assert.equal(assessRollout(dep({ stamp: '3', updated: 1 }), 3, 2).state, 'InProgress');
  assert.equal(assessRollout(dep({ stamp: '3', current: 3 }), 3, 2).state, 'InProgress', 'old pods still around');
  const a = assessRollout(dep({ stamp: '3', available: 1 }), 3, 2);
  assert.equal(a.state, 'InProgress');
  assert.deepEqual(a.summary, { replicas: 2, updatedReplicas: 2, availableReplicas: 1, readyEndpoints: 2 });
});

test('ProgressDeadlineExceeded is a stall', () => {
  const a = assessRollout(dep({ stamp: '1', available: 0, progressing: { status: 'False', reason: 'ProgressDeadlineExceeded' } }), 1, 0);
  assert.equal(a.state, 'Stalled');
});

test('pods the API server refuses to create (ReplicaFailure) are named in the rollout message; still InProgress, as kstatus reads it', () => {
  const d = dep({ stamp: '1', updated: 0, available: 0, current: 0 });
  const message = 'pods "a-1" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true';
  d.status!.conditions = [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message }];
  const a = assessRollout(d, 1, 0);
  assert.equal(a.state, 'InProgress');
  assert.match(a.message, /rolling out: 0\/2 updated, 0\/2 available; pods cannot be created: pods "a-1" is forbidden: violates PodSecurity/);
  d.status!.conditions = [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'x'.repeat(5_000) }];
  assert.ok(assessRollout(d, 1, 0).message.length < 700, 'a long message is cut');
  d.status!.conditions = [{ type: 'ReplicaFailure', status: 'False', reason: 'FailedCreate', message }];
  assert.doesNotMatch(assessRollout(d, 1, 0).message, /cannot be created/, 'only while the condition is True');
});

test('zero replicas: Ready (ScaledToZero) once the controller observed the spec and no pod is left', () => {
  const zero = (extra: Parameters<typeof dep>[0] = {}) => dep({ stamp: '1', replicas: 0, updated: 0, available: 0, current: 0, ...extra });
  const a = assessRollout(zero(), 1, 0);
  assert.equal(a.state, 'ScaledToZero');
  assert.deepEqual(a.summary, { replicas: 0, updatedReplicas: 0, availableReplicas: 0, readyEndpoints: 0 });
  assert.equal(assessRollout(zero({ current: 1, available: 1 }), 1, 1).state, 'InProgress', 'an old pod is still there');
  assert.equal(assessRollout(zero({ generation: 2, observed: 1 }), 1, 0).state, 'InProgress', 'scale-down not observed yet');
  assert.equal(assessRollout(zero({ stamp: '0' }), 1, 0).state, 'InProgress', 'written for another generation');
});

const slice = (family: string, endpoints: EndpointSlice['endpoints']): EndpointSlice =>
  ({ metadata: { name: `s-${family}`, namespace: 'ns' }, addressType: family, endpoints }) as EndpointSlice;
const pod = (name: string, address: string, ready?: boolean) => ({
  addresses: [address],
  targetRef: { kind: 'Pod', namespace: 'ns', name, uid: `uid-${name}` },
  ...(ready === undefined ? {} : { conditions: { ready } }),
});

test('endpoints are counted once per pod, not once per address family', () => {
  const v4 = slice('IPv4', [pod('a', '10.0.0.1', true), pod('b', '10.0.0.2', true), pod('c', '10.0.0.3', false)]);
  const v6 = slice('IPv6', [pod('a', 'fd00::1', true), pod('b', 'fd00::2'), pod('c', 'fd00::3', false)]);
  assert.deepEqual(countEndpoints([v4]), { ready: 2, notReady: 1 });
  assert.deepEqual(countEndpoints([v4, v6]), { ready: 2, notReady: 1 });
  // Ready in one slice, not (yet) in the other: ready, counted once.
  assert.deepEqual(countEndpoints([slice('IPv4', [pod('a', '10.0.0.1', true)]), slice('IPv6', [pod('a', 'fd00::1', false)])]), { ready: 1, notReady: 0 });
  // No address: not an endpoint; no targetRef: identified by hostname, else by address.
  assert.deepEqual(countEndpoints([slice('IPv4', [{ addresses: [] }, { addresses: ['10.0.0.9'] }, { addresses: ['10.0.0.8'], hostname: 'h' }]), slice('IPv6', [{ addresses: ['fd00::8'], hostname: 'h' }])]), { ready: 2, notReady: 0 });
  assert.deepEqual(countEndpoints([]), { ready: 0, notReady: 0 });
});

test('the messages say how long a rollout without progress waits before it is called stalled', () => {
  const base = {
    metadata: { name: 'a', generation: 2, annotations: { [GENERATION_ANNOTATION]: '3' } },
    spec: { replicas: 2, progressDeadlineSeconds: 60 },
  };
  const rolling = assessRollout({ ...base, status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 0, unavailableReplicas: 2 } } as unknown as Deployment, 3, 0);
  assert.equal(rolling.state, 'InProgress');
  assert.equal(rolling.message, 'rolling out: 2/2 updated, 0/2 available; RolloutStalled after 60 s without progress (progressDeadlineSeconds)');
  const stalled = assessRollout({
    ...base,
    status: { observedGeneration: 2, replicas: 2, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "a-1" has timed out progressing.' }] },
  } as unknown as Deployment, 3, 0);
  assert.equal(stalled.state, 'Stalled');
  assert.equal(stalled.message, 'rollout stalled: ReplicaSet "a-1" has timed out progressing. (no progress for 60 s, the progressDeadlineSeconds)');
});

test('ProgressDeadlineExceeded is read by its reason, as kubectl and the Deployment controller read it, whatever its status says', () => {
  for (const status of ['True', 'Unknown']) {
    assert.equal(assessRollout(dep({ stamp: '1', progressing: { status, reason: 'ProgressDeadlineExceeded' } }), 1, 2).state, 'Stalled', status);
  }
});

test('a Deployment being deleted (by someone else) is never Available: the rollout waits for it to go and be recreated', () => {
  const d = dep({ stamp: '1' });
  d.metadata.deletionTimestamp = '2026-12-06T00:00:00Z';
  const a = assessRollout(d, 1, 2);
  assert.equal(a.state, 'InProgress');
  assert.match(a.message, /being deleted/);
});

test('messages: a stall with an empty message still says why; a deadline of 2^31-1 s (the controller: no deadline) promises no stall', () => {
  const stalled = assessRollout(dep({ stamp: '1', progressing: { status: 'False', reason: 'ProgressDeadlineExceeded', message: '' } as never }), 1, 0);
  assert.equal(stalled.message.startsWith('rollout stalled: progress deadline exceeded'), true, stalled.message);
  const d = dep({ stamp: '1', updated: 1 });
  d.spec!.progressDeadlineSeconds = 2 ** 31 - 1;
  const rolling = assessRollout(d, 1, 0);
  assert.doesNotMatch(rolling.message, /RolloutStalled|2147483647/, rolling.message);
});

test('endpoints whose references differ only in where a "/" falls are two endpoints', () => {
  // Without a uid an endpoint is known by its reference; joined with "/", these two read alike.
  const ref = (namespace: string, name: string) => ({ addresses: [`10.0.0.${namespace.length}`], targetRef: { kind: 'Pod', namespace, name }, conditions: { ready: true } });
  assert.deepEqual(countEndpoints([slice('IPv4', [ref('a/b', 'c'), ref('a', 'b/c')])]), { ready: 2, notReady: 0 });
});
