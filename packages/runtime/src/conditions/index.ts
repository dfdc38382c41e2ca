/**
 * Status conditions by the Kubernetes API conventions (metav1.Condition): one entry per type,
 * `lastTransitionTime` moves only when `status` changes — or when the kept time lies more than
 * 60 s in the future (a writer whose clock ran ahead), which `setCondition` re-stamps with now —
 * and every condition carries the `observedGeneration` it was computed for. Pure functions;
 * inputs are never mutated.
 * @module
 */
import type { Condition } from '../objects/index.ts';

export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

/** How far in the future a kept `lastTransitionTime` may lie (clocks of two writers disagree a little). */
const FUTURE_TOLERANCE_MS = 60_000;

/**
 * Returns `conditions` with `next` set. When a condition of that type exists with the same
 * status and a transition time, its `lastTransitionTime` is kept — unless it lies more than a
 * minute after `now` (written by a clock that ran ahead: a transition cannot have happened in
 * the future, and durations measured from it would wait out the skew); otherwise it becomes
 * `now` (or `next.lastTransitionTime`). Order is kept; a new type is appended. The result holds one
 * entry of `next.type`: repeated entries of it (which a looser schema than a `map` list may
 * have let in) go, the first one's place kept. Setting the same condition again gives an equal
 * list, so an unchanged status is never written.
 */
export function setCondition(conditions: readonly Condition[] | undefined, next: ConditionInput, now: Date | string): Condition[] {
  const i = (conditions ?? []).findIndex((c) => c.type === next.type);
  const list = (conditions ?? []).filter((c, j) => j <= i || c.type !== next.type);
  const existing = i >= 0 ? list[i] : undefined;
  const at = typeof now === 'string' ? now : toRfc3339(now);
  const keep = existing && existing.status === next.status && existing.lastTransitionTime && !(Date.parse(existing.lastTransitionTime) - Date.parse(at) > FUTURE_TOLERANCE_MS);
  const lastTransitionTime = keep ? existing.lastTransitionTime! : (next.lastTransitionTime ?? at);
  const merged: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    ...(next.observedGeneration === undefined ? {} : { observedGeneration: next.observedGeneration }),
    lastTransitionTime,
  };
  if (i >= 0) list[i] = merged;
  else list.push(merged);
  return list;
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** Kubernetes timestamps have second precision: `2026-11-30T12:00:00Z`. */
export function toRfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
