/**
 * Where a Microservice's rollout stands, from facts only: the Deployment as last seen, the ready
 * endpoints of its Service, and the CR generation the Deployment must have been written for.
 * Pure; the reconciler turns the answer into conditions.
 *
 * "Ready" is strict on purpose: the Deployment must carry this CR generation's stamp, its
 * controller must have observed its latest spec, and every replica (not just enough of them)
 * must be updated and available — so availability left over from an old ReplicaSet never reads
 * as success of a new spec.
 *
 * At **zero replicas** (a platform default of `replicas: 0`) there is nothing to serve and no
 * endpoint to wait for: the rollout is done (`ScaledToZero`, Ready) once the controller has
 * observed the spec and no pod of any ReplicaSet is left.
 *
 * A rollout that makes no progress is `InProgress` until the Deployment controller gives up after
 * the Deployment's `progressDeadlineSeconds` (a platform default) and then `Stalled` (its
 * `Progressing` condition's reason `ProgressDeadlineExceeded`, read as kubectl reads it); both
 * messages say that deadline, so a person waiting knows how long.
 *
 * A Deployment being deleted (someone else deleted it, e.g. with foreground cascading) is
 * `InProgress` whatever its counts say: it is about to go and be created again.
 *
 * Ready endpoints are counted once per endpoint (`countEndpoints`): a dual-stack Service has an
 * EndpointSlice per address family, each listing the same pods.
 * @module
 */
import type { Deployment, EndpointSlice } from '@converge/runtime';
import { GENERATION_ANNOTATION } from './api/constants.ts';

const NO_DEADLINE = 2 ** 31 - 1;

export type RolloutState = 'Available' | 'ScaledToZero' | 'InProgress' | 'Stalled' | 'EndpointsNotReady';

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
  if (deployment.metadata.deletionTimestamp) {
    return { state: 'InProgress', message: 'the Deployment is being deleted; it is created again once it is gone', summary };
  }
  const stamped = deployment.metadata.annotations?.[GENERATION_ANNOTATION] === String(crGeneration);
  const observed = (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 1);
  if (!stamped || !observed) {
    return { state: 'InProgress', message: 'waiting for the Deployment controller to observe the new spec', summary };
  }
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  // 2^31-1 is the Deployment controller's "no deadline" (deploymentutil.HasProgressDeadline).
  const deadline = deployment.spec?.progressDeadlineSeconds === NO_DEADLINE ? undefined : deployment.spec?.progressDeadlineSeconds;
  // By its reason, as kubectl's rollout status and the controller's own DeploymentTimedOut read it.
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    const why = deadline === undefined ? '' : ` (no progress for ${deadline} s, the progressDeadlineSeconds)`;
    return { state: 'Stalled', message: `rollout stalled: ${progressing.message || 'progress deadline exceeded'}${why}`, summary };
  }
  if (desired === 0) {
    const left = status.replicas ?? 0;
    return left === 0
      ? { state: 'ScaledToZero', message: 'scaled to zero: 0 replicas desired and no pod left; the Service has no endpoints by design', summary }
      : { state: 'InProgress', message: `scaling to zero: ${left} pod${left === 1 ? '' : 's'} left`, summary };
  }
  const complete =
    summary.updatedReplicas === desired &&
    summary.availableReplicas === desired &&
    (status.replicas ?? 0) === desired &&
    (status.unavailableReplicas ?? 0) === 0;
  if (!complete) {
    // Pods the API server refuses to create (Pod Security, a quota, a webhook): the controller
    // keeps trying until the deadline; its ReplicaFailure condition says why, in the API server's
    // words. kstatus reads it as InProgress too.
    const failure = status.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
    const refused = failure ? `; pods cannot be created: ${clip(failure.message || failure.reason || 'ReplicaFailure', 500)}` : '';
    return {
      state: 'InProgress',
      message:
        `rolling out: ${summary.updatedReplicas}/${desired} updated, ${summary.availableReplicas}/${desired} available${refused}` +
        (deadline === undefined ? '' : `; RolloutStalled after ${deadline} s without progress (progressDeadlineSeconds)`),
      summary,
    };
  }
  if (readyEndpoints < 1) {
    return { state: 'EndpointsNotReady', message: 'pods are available but the Service has no ready endpoint yet', summary };
  }
  return { state: 'Available', message: `${desired}/${desired} replicas available, ${readyEndpoints} ready endpoints`, summary };
}

/**
 * Ready and not-ready endpoints of a Service's EndpointSlices, each endpoint counted once however
 * many slices list it (one slice per address family on a dual-stack Service; a pod may also move
 * between slices of one family while the controller rebalances them). An endpoint is identified
 * by its target (the pod), else its hostname, else its first address. Endpoints without an
 * address are not counted; `ready` absent means ready (the EndpointSlice API's rule). An endpoint
 * ready in one slice and not in another (a transition being written) counts as ready.
 */
export function countEndpoints(slices: readonly EndpointSlice[]): { ready: number; notReady: number } {
  const ready = new Set<string>();
  const notReady = new Set<string>();
  for (const slice of slices) {
    for (const e of slice.endpoints ?? []) {
      if (!e.addresses?.length) continue;
      const ref = e.targetRef;
      const id = ref?.uid
        ? `uid:${ref.uid}`
        : ref?.name
          ? `ref:${JSON.stringify([ref.kind ?? '', ref.namespace ?? slice.metadata.namespace ?? '', ref.name])}`
          : e.hostname
            ? `host:${e.hostname}`
            : `addr:${e.addresses[0]}`;
      (e.conditions?.ready === false ? notReady : ready).add(id);
    }
  }
  for (const id of ready) notReady.delete(id);
  return { ready: ready.size, notReady: notReady.size };
}

/** `text`, cut to `max` characters (a message quoted from the API server can be long). */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
