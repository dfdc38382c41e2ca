/**
 * The condition transitions of one object, as the dashboard sees them happen: pure diffing of
 * two versions' conditions, and a bounded per-object history.
 *
 * A transition is a change of a condition's status or reason, its first sight (`from: null`:
 * the state when the dashboard started, or when the object appeared) or its removal
 * (`to: null`). A new message or generation with the same status and reason is not a transition.
 * @module
 */
import type { Condition } from '@converge/runtime';
import type { TimelineEntry } from './shared/types.ts';

/** How many transitions are kept per object (the most recent). */
export const TIMELINE_LIMIT = 100;

export function conditionTransitions(
  before: readonly Condition[] | undefined,
  after: readonly Condition[] | undefined,
  seenAt: string,
  generation: number,
): TimelineEntry[] {
  const old = new Map((before ?? []).map((c) => [c.type, c]));
  const entries: TimelineEntry[] = [];
  for (const c of after ?? []) {
    const o = old.get(c.type);
    old.delete(c.type);
    if (o && o.status === c.status && (o.reason ?? '') === (c.reason ?? '')) continue;
    entries.push({
      seenAt,
      type: c.type,
      from: o ? { status: o.status, reason: o.reason ?? '' } : null,
      to: {
        status: c.status,
        reason: c.reason ?? '',
        message: c.message ?? '',
        observedGeneration: typeof c.observedGeneration === 'number' ? c.observedGeneration : null,
        lastTransitionTime: c.lastTransitionTime ?? null,
      },
      generation,
    });
  }
  for (const o of old.values()) entries.push({ seenAt, type: o.type, from: { status: o.status, reason: o.reason ?? '' }, to: null, generation });
  return entries;
}

/** Appends to a history, keeping the most recent `limit` entries. Mutates and returns `history`. */
export function appendTimeline(history: TimelineEntry[], entries: readonly TimelineEntry[], limit = TIMELINE_LIMIT): TimelineEntry[] {
  history.push(...entries);
  if (history.length > limit) history.splice(0, history.length - limit);
  return history;
}
