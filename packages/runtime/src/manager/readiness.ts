/**
 * The manager's readiness checks (`/readyz`), as a pure function of the watches' health.
 *
 * - `caches-synced`: every watch has completed its first list.
 * - `watches-healthy`: every watch can vouch for itself: it has listed (synced) and is not
 *   failing. A watch that never got an answer (API server unreachable, CRD missing, no RBAC)
 *   has nothing healthy to report and fails the check with its last error; so does one that is
 *   still listing, and one that has failed repeatedly since (`healthy: false`). A single
 *   transient failure of a synced watch does not flip it (the watcher's own threshold).
 * - Checks added by the operator (`Manager.addReadyCheck`) are run through `runCheck`: one that
 *   throws fails itself, with its error as the detail, and nothing else.
 * @module
 */
import type { WatchHealth } from '../cache/index.ts';

export interface ReadyCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export function readyChecksFor(health: readonly WatchHealth[]): ReadyCheck[] {
  const unsynced = health.filter((h) => !h.synced);
  const unhealthy = health.filter((h) => !h.synced || !h.healthy);
  return [
    { name: 'caches-synced', ok: unsynced.length === 0, ...(unsynced.length ? { detail: `waiting for ${unsynced.map(describeWatch).join(', ')}` } : {}) },
    { name: 'watches-healthy', ok: unhealthy.length === 0, ...(unhealthy.length ? { detail: unhealthy.map(whyUnhealthy).join('; ') } : {}) },
  ];
}

function whyUnhealthy(h: WatchHealth): string {
  const failures = h.consecutiveFailures > 0 ? ` (${h.consecutiveFailures} failure${h.consecutiveFailures === 1 ? '' : 's'} in a row${h.state === 'backoff' ? ', retrying' : ''})` : '';
  if (h.lastError) return `${describeWatch(h)}: ${h.lastError}${failures}`;
  if (!h.synced) return `${describeWatch(h)}: no answer yet (${h.state})`;
  return `${describeWatch(h)}: failing${failures}`;
}

export function describeWatch(h: WatchHealth): string {
  return h.namespace ? `${h.kind} in ${h.namespace}` : h.kind;
}

/** An added check's answer; one that throws fails, with its error as the detail. */
export function runCheck(check: () => { ok: boolean; detail?: string }): { ok: boolean; detail?: string } {
  try {
    return check();
  } catch (err) {
    return { ok: false, detail: `the check threw: ${err instanceof Error ? err.message : String(err)}` };
  }
}
