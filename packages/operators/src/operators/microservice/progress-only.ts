/**
 * Which status changes of a Microservice are progress only (rollout counts and messages moving
 * while nothing turns): those the reconciler writes at most once per progress interval instead
 * of at once (issue 17). A pure function of the previous and the next status.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { MicroserviceReason as Reason, MicroserviceConditionType as Cond } from './api/schema-free.ts';
import type { MicroserviceStatus } from './api/schema-free.ts';
import type { ConditionEntry } from './conditions.ts';

/** The status fields the operator writes; conditions are merged into whatever the object has. */
export type OwnStatus = Omit<MicroserviceStatus, 'conditions'>;

/**
 * Whether going from `prev` to the status (`own` + `conditions`) changes only progress: the same
 * phase, generation, reason, message and managed resources, every condition set with the same
 * status and reason (its message may differ), and something else (the rollout counts, a
 * message) different. A condition whose status changes is never progress: it is written at once.
 *
 * One change of reason is progress too: the last step of every rollout, from `RolloutInProgress`
 * to `EndpointsNotReady` (pods available, the Service's endpoints not yet published), while Ready
 * stays False and nothing stalls; Ready, Progressing and Reconciling may change their reason
 * there, never their status (`rolloutConditions` turns none of them in that step). It lasts well
 * under a second when all is well, and written at once it made a cold start cost a third status
 * write whenever a reconcile fell into it (issue 17: 15 patches instead of 12 for 6
 * Microservices in one run of `write-budget.test.ts`). Held up, it is written with the next
 * change or after the progress interval, so a rollout stuck there shows its reason within that
 * interval.
 */
export function isProgressOnly(prev: MicroserviceStatus | undefined, own: OwnStatus, conditions: ConditionEntry[]): boolean {
  if (!prev || prev.phase !== own.phase || prev.observedGeneration !== own.observedGeneration) return false;
  if (prev.reason !== own.reason || prev.message !== own.message) return false;
  if (!isDeepStrictEqual(prev.managedResources, own.managedResources)) return false;
  const byType = new Map((prev.conditions ?? []).map((c) => [c.type, c]));
  const tail = isRolloutTail(byType.get(Cond.Ready), conditions.find(([type]) => type === Cond.Ready));
  return conditions.every(([type, status, reason]) => {
    const c = byType.get(type);
    if (c === undefined || c.observedGeneration !== own.observedGeneration || c.status !== status) return false;
    return c.reason === reason || (tail && (type === Cond.Ready || type === Cond.Progressing || type === Cond.Reconciling));
  });
}

/** Ready False `RolloutInProgress` → Ready False `EndpointsNotReady`: the last step of a rollout. */
function isRolloutTail(prev: { status: string; reason?: string } | undefined, next: ConditionEntry | undefined): boolean {
  return prev?.status === 'False' && prev.reason === Reason.RolloutInProgress && next?.[1] === 'False' && next[2] === Reason.EndpointsNotReady;
}
