/**
 * The conditions a Microservice's status carries, for each thing the reconciler can find: a new
 * generation accepted, a rollout assessed, a write failing while it is retried, a failure that
 * waits for a change. Pure; the
 * reconciler sets them (with `observedGeneration`) on the conditions of the version it read.
 *
 * Four types, each with its `observedGeneration`:
 * - `Ready` (Kubernetes conventions, `kubectl wait --for=condition=Ready`);
 * - `Progressing` (the Deployment's vocabulary: the rollout of this generation is under way, until
 *   the Service has a ready endpoint);
 * - `Reconciling` and `Stalled`, what kstatus (Flux, kpt, cli-utils) reads: Reconciling=True →
 *   InProgress, Stalled=True → Failed, else Ready=True → Current. Both are "abnormal-true": False
 *   when the object is converged. They are never True together.
 *
 * `MICROSERVICE_CONDITION_REASONS` lists every reason each type can carry, by status; a test
 * holds the README's condition table to it.
 * @module
 */
import type { Condition } from '@converge/runtime';
import { MicroserviceConditionType as Cond, MicroserviceReason as Reason } from './api/schema-free.ts';
import type { RolloutAssessment, RolloutState } from './rollout.ts';

/** A condition the operator sets: type, status, reason, message (observedGeneration is added). */
export type ConditionEntry = [type: string, status: Condition['status'], reason: string, message: string];

/** A new generation was received; its resources are about to be applied. */
export function acceptedConditions(): ConditionEntry[] {
  const message = 'spec accepted; applying resources';
  return [
    [Cond.Ready, 'False', Reason.RolloutInProgress, message],
    [Cond.Progressing, 'True', Reason.RolloutInProgress, message],
    [Cond.Reconciling, 'True', Reason.RolloutInProgress, message],
    [Cond.Stalled, 'False', Reason.NotStalled, ''],
  ];
}

/**
 * A child write failed in a way retrying may outlive (a quota, a missing permission, a failing
 * admission webhook): retried with backoff. Ready is Unknown (what runs may still serve), the
 * operator is still working (Reconciling), and nothing has stalled for good.
 */
export function applyFailedConditions(message: string): ConditionEntry[] {
  return [
    [Cond.Ready, 'Unknown', Reason.ApplyFailed, message],
    [Cond.Progressing, 'True', Reason.ApplyFailed, message],
    [Cond.Reconciling, 'True', Reason.ApplyFailed, message],
    [Cond.Stalled, 'False', Reason.NotStalled, ''],
  ];
}

const READY_REASON: Record<RolloutState, string> = {
  Available: Reason.Available,
  ScaledToZero: Reason.ScaledToZero,
  InProgress: Reason.RolloutInProgress,
  Stalled: Reason.RolloutStalled,
  EndpointsNotReady: Reason.EndpointsNotReady,
};

/** The resources are applied for this generation; the rollout stands as assessed. */
export function rolloutConditions(rollout: RolloutAssessment): ConditionEntry[] {
  const { state, message } = rollout;
  const done = state === 'Available' || state === 'ScaledToZero';
  const readyReason = READY_REASON[state];
  return [
    [Cond.Ready, done ? 'True' : 'False', readyReason, message],
    // Progressing stays True until the Service has a ready endpoint, like Reconciling: the
    // rollout's last step (pods available, endpoints not yet published) then turns no condition,
    // and is held back as progress (`progress-only.ts`) without hiding a turn.
    state === 'InProgress' || state === 'EndpointsNotReady'
      ? [Cond.Progressing, 'True', readyReason, message]
      : [Cond.Progressing, 'False', state === 'Stalled' ? Reason.RolloutStalled : Reason.RolloutComplete, message],
    state === 'InProgress' || state === 'EndpointsNotReady'
      ? [Cond.Reconciling, 'True', readyReason, message]
      : [Cond.Reconciling, 'False', state === 'Stalled' ? Reason.RolloutStalled : Reason.RolloutComplete, message],
    state === 'Stalled' ? [Cond.Stalled, 'True', Reason.RolloutStalled, message] : [Cond.Stalled, 'False', Reason.NotStalled, ''],
  ];
}

/** Failure reasons that wait for a change (phase `Failed`). */
export const FAILURE_REASONS = [Reason.InvalidSpec, Reason.OwnershipConflict, Reason.ApplyRejected] as const;

/** The spec cannot be applied: nothing is retried until it (or the object in the way) changes. */
export function failedConditions(reason: string, message: string): ConditionEntry[] {
  return [
    [Cond.Ready, 'False', reason, message],
    [Cond.Progressing, 'False', reason, message],
    [Cond.Reconciling, 'False', reason, message],
    [Cond.Stalled, 'True', reason, message],
  ];
}

/** Every reason each condition type can carry, by status, in a stable order (documentation, tests). */
export const MICROSERVICE_CONDITION_REASONS: Record<string, { True: string[]; False: string[]; Unknown: string[] }> = (() => {
  const states: RolloutState[] = ['Available', 'ScaledToZero', 'InProgress', 'EndpointsNotReady', 'Stalled'];
  const all = [
    ...acceptedConditions(),
    ...applyFailedConditions(''),
    ...states.flatMap((state) => rolloutConditions({ state, message: '', summary: { replicas: 0, updatedReplicas: 0, availableReplicas: 0, readyEndpoints: 0 } })),
    ...FAILURE_REASONS.flatMap((reason) => failedConditions(reason, '')),
  ];
  const out: Record<string, { True: string[]; False: string[]; Unknown: string[] }> = {};
  for (const [type, status, reason] of all) {
    const entry = (out[type] ??= { True: [], False: [], Unknown: [] });
    const list = entry[status];
    if (!list.includes(reason)) list.push(reason);
  }
  return out;
})();
