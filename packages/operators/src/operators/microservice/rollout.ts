/**
 * Where a Microservice's rollout stands, from facts only: the Deployment as last seen, the ready
 * endpoints of its Service, and the CR generation the Deployment must have been written for.
 * Pure; the reconciler turns the answer into conditions.
 *
 * "Ready" is strict on purpose: the Deployment must carry this CR generation's stamp, its
 * controller must have observed its latest spec, and every replica (not just enough of them)
 * must be updated and available — so availability left over from an old ReplicaSet never reads
 * as success of a new spec.
 * @module
 */
import type { Deployment } from '@converge/runtime';
import { GENERATION_ANNOTATION } from './api/index.ts';

export type RolloutState = 'Available' | 'InProgress' | 'Stalled' | 'EndpointsNotReady';

export interface RolloutSummary {
  replicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  readyEndpoints: number;
}

export interface RolloutAssessment {
  state: RolloutState;
  message: string;
  summary: RolloutSummary;
}

export function assessRollout(deployment: Deployment, crGeneration: number, readyEndpoints: number): RolloutAssessment {
  const desired = deployment.spec?.replicas ?? 1;
  const status = deployment.status ?? {};
  const summary: RolloutSummary = {
    replicas: desired,
    updatedReplicas: status.updatedReplicas ?? 0,
    availableReplicas: status.availableReplicas ?? 0,
    readyEndpoints,
  };
  const stamped = deployment.metadata.annotations?.[GENERATION_ANNOTATION] === String(crGeneration);
  const observed = (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 1);
  if (!stamped || !observed) {
    return { state: 'InProgress', message: 'waiting for the Deployment controller to observe the new spec', summary };
  }
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return { state: 'Stalled', message: `rollout stalled: ${progressing.message ?? 'progress deadline exceeded'}`, summary };
  }
  const complete =
    summary.updatedReplicas === desired &&
    summary.availableReplicas === desired &&
    (status.replicas ?? 0) === desired &&
    (status.unavailableReplicas ?? 0) === 0;
  if (!complete) {
    return {
      state: 'InProgress',
      message: `rolling out: ${summary.updatedReplicas}/${desired} updated, ${summary.availableReplicas}/${desired} available`,
      summary,
    };
  }
  if (readyEndpoints < 1) {
    return { state: 'EndpointsNotReady', message: 'pods are available but the Service has no ready endpoint yet', summary };
  }
  return { state: 'Available', message: `${desired}/${desired} replicas available, ${readyEndpoints} ready endpoints`, summary };
}
