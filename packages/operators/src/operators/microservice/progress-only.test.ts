import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProgressOnly } from './progress-only.ts';
import type { MicroserviceStatus } from './api/index.ts';

const prev: MicroserviceStatus = {
  phase: 'ResourcesApplied',
  observedGeneration: 2,
  managedResources: { deployment: 'a', service: 'a' },
  rollout: { replicas: 2, updatedReplicas: 1, availableReplicas: 1, readyEndpoints: 1 },
  conditions: [
    { type: 'Ready', status: 'False', reason: 'RolloutInProgress', message: '1/2 available', observedGeneration: 2, lastTransitionTime: 't' },
    { type: 'Progressing', status: 'True', reason: 'RolloutInProgress', message: '1/2 available', observedGeneration: 2, lastTransitionTime: 't' },
  ],
} as MicroserviceStatus;
const own = { phase: 'ResourcesApplied', observedGeneration: 2, managedResources: { deployment: 'a', service: 'a' }, rollout: { replicas: 2, updatedReplicas: 2, availableReplicas: 1, readyEndpoints: 1 } } as Omit<MicroserviceStatus, 'conditions'>;

test('rollout counts and messages alone are progress; a condition turning, a new generation or phase are not', () => {
  assert.equal(isProgressOnly(prev, own, [['Ready', 'False', 'RolloutInProgress', '2 updated'], ['Progressing', 'True', 'RolloutInProgress', '2 updated']]), true);
  assert.equal(isProgressOnly(prev, own, [['Ready', 'True', 'Available', 'ok'], ['Progressing', 'False', 'RolloutComplete', 'ok']]), false, 'Ready turned');
  assert.equal(isProgressOnly(prev, own, [['Ready', 'False', 'RolloutStalled', 'x']]), false, 'a new reason');
  // The last step of a rollout (pods available, endpoints not yet published) is progress.
  assert.equal(isProgressOnly(prev, own, [['Ready', 'False', 'EndpointsNotReady', 'x'], ['Progressing', 'False', 'RolloutComplete', 'x']]), true, 'InProgress → EndpointsNotReady');
  assert.equal(isProgressOnly(prev, own, [['Ready', 'False', 'EndpointsNotReady', 'x'], ['Stalled', 'True', 'RolloutStalled', 'x']]), false, 'not when something stalls');
  assert.equal(isProgressOnly(prev, { ...own, observedGeneration: 3 }, [['Ready', 'False', 'RolloutInProgress', '']]), false, 'a new generation');
  assert.equal(isProgressOnly(prev, { ...own, phase: 'Failed' }, [['Ready', 'False', 'RolloutInProgress', '']]), false, 'a new phase');
  assert.equal(isProgressOnly(prev, own, [['Stalled', 'False', 'NotStalled', '']]), false, 'a condition not there yet');
  assert.equal(isProgressOnly(undefined, own, []), false, 'no status yet');
});
