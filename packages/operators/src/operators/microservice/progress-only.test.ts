import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProgressOnly } from './progress-only.ts';
import { rolloutConditions } from './conditions.ts';
import type { ConditionEntry } from './conditions.ts';
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
  // The last step of a rollout (pods available, endpoints not yet published) is progress, as the
  // reconciler sets it (`rolloutConditions`: no condition turns) …
  assert.equal(isProgressOnly(prev, own, [['Ready', 'False', 'EndpointsNotReady', 'x'], ['Progressing', 'True', 'EndpointsNotReady', 'x']]), true, 'InProgress → EndpointsNotReady');
  // … but a condition turning there is not: every change of a condition's status is written at once.
  assert.equal(isProgressOnly(prev, own, [['Ready', 'False', 'EndpointsNotReady', 'x'], ['Progressing', 'False', 'RolloutComplete', 'x']]), false, 'Progressing turned in the tail');
  assert.equal(isProgressOnly(prev, own, [['Ready', 'False', 'EndpointsNotReady', 'x'], ['Stalled', 'True', 'RolloutStalled', 'x']]), false, 'not when something stalls');
  assert.equal(isProgressOnly(prev, { ...own, observedGeneration: 3 }, [['Ready', 'False', 'RolloutInProgress', '']]), false, 'a new generation');
  assert.equal(isProgressOnly(prev, { ...own, phase: 'Failed' }, [['Ready', 'False', 'RolloutInProgress', '']]), false, 'a new phase');
  assert.equal(isProgressOnly(prev, own, [['Stalled', 'False', 'NotStalled', '']]), false, 'a condition not there yet');
  assert.equal(isProgressOnly(undefined, own, []), false, 'no status yet');
});

test('the rollout\'s last step as the reconciler builds it turns no condition, so it may be held back; Ready turning after it may not', () => {
  const summary = { replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyEndpoints: 0 };
  const status = (conditions: ConditionEntry[]): MicroserviceStatus => ({
    ...own,
    rollout: summary,
    conditions: conditions.map(([type, s, reason, message]) => ({ type, status: s, reason, message, observedGeneration: 2, lastTransitionTime: 't' })),
  } as MicroserviceStatus);
  const inProgress = rolloutConditions({ state: 'InProgress', message: 'rolling out', summary });
  const tail = rolloutConditions({ state: 'EndpointsNotReady', message: 'pods are available', summary });
  const available = rolloutConditions({ state: 'Available', message: 'ok', summary: { ...summary, readyEndpoints: 2 } });
  const statusOf = (entries: ConditionEntry[]) => new Map(entries.map(([type, s]) => [type, s]));
  assert.deepEqual(statusOf(tail), statusOf(inProgress), 'no condition turns in the last step');
  assert.equal(isProgressOnly(status(inProgress), { ...own, rollout: summary }, tail), true);
  assert.equal(isProgressOnly(status(tail), { ...own, rollout: { ...summary, readyEndpoints: 2 } }, available), false);
});
