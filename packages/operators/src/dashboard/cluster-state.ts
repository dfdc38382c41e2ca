/**
 * Whether a cluster is reachable, judged from its watches' health alone (the dashboard never
 * polls the API server). Pure: health samples and what was seen before in, a state out; the
 * cluster source samples its cache's `health()` a few times a second and feeds it here.
 *
 * Rules, per watch:
 * - a watch is down when it has failed at least twice in a row (`consecutiveFailures >= 2`:
 *   the second failure comes 125–250 ms after the first, so a killed API server is noticed in
 *   well under a second, while one dropped connection alone is not an outage);
 * - a watch is up again when it is healthy, or when it has stayed in `watching` with no further
 *   restart for `stableMs` (an idle watch that reconnected reports no progress until its first
 *   event or bookmark, which can take a minute: a connection that stays open is the evidence);
 * - failures the API server answered about a kind (`NotFound`: the CRD is not installed;
 *   `Forbidden`: the RBAC does not allow it) are warnings: the other kinds still show. Judged by
 *   the answer's reason, never by words in an error's text (a message that happens to hold "403"
 *   or "not found" says nothing about the kind).
 * The cluster is `connecting` until every watch has listed once, `unreachable` while any watch is
 * down for a reason other than a warning, or while every kind is refused and none ever listed
 * (an identity with no access at all: a ClusterRole without its binding), else `reachable`.
 * `unreadable` names the kinds refused now: what the dashboard shows of them is what it last saw
 * (a provider of such a kind is not offered as usable).
 * @module
 */
import type { WatchHealth } from '@converge/runtime';
import type { ClusterState } from './shared/types.ts';

export interface WatchMemory {
  restarts: number;
  /** Monotonic time since which the watch has been `watching` with this restart count. */
  stableSince: number | null;
}

export interface ClusterJudgement {
  state: ClusterState;
  error: string | null;
  warnings: string[];
  /** Kinds whose watch the API server refuses now (`NotFound`, `Forbidden`), sorted. */
  unreadable: string[];
}

const KIND_REASONS = new Set(['NotFound', 'Forbidden']);

/** Default time a reconnected watch must stay open to count as up. */
export const STABLE_WATCH_MS = 1_000;

function watchId(h: WatchHealth): string {
  return `${h.kind}/${h.namespace}`;
}

/**
 * Judges the cluster from `health` at `now` (monotonic ms: it only measures how long a watch
 * stayed open); updates `memory` (one entry per watch).
 */
export function judgeCluster(health: readonly WatchHealth[], memory: Map<string, WatchMemory>, now: number, stableMs = STABLE_WATCH_MS): ClusterJudgement {
  const warnings: string[] = [];
  const unreadable = new Set<string>();
  let error: string | null = null;
  let synced = true;
  let anyListed = false;
  for (const h of health) {
    const id = watchId(h);
    const m = memory.get(id);
    let stableSince: number | null = null;
    if (h.state === 'watching') stableSince = m && m.restarts === h.restarts && m.stableSince !== null ? m.stableSince : now;
    memory.set(id, { restarts: h.restarts, stableSince });
    const stable = stableSince !== null && now - stableSince >= stableMs;
    const kindError = h.lastErrorReason !== undefined && KIND_REASONS.has(h.lastErrorReason);
    if (h.synced) anyListed = true;
    if (!h.synced) {
      if (kindError) {
        warnings.push(`${h.kind}: ${h.lastError}`);
        unreadable.add(h.kind);
      } else synced = false;
      if (!kindError && h.consecutiveFailures >= 2) error ??= `${h.kind}: ${h.lastError ?? 'watch failing'}`;
      continue;
    }
    const down = h.consecutiveFailures >= 2 && !stable;
    if (!down) continue;
    if (kindError) {
      warnings.push(`${h.kind}: ${h.lastError}`);
      unreadable.add(h.kind);
    } else error ??= `${h.kind}: ${h.lastError ?? 'watch failing'}`;
  }
  warnings.sort();
  const refused = [...unreadable].sort();
  if (!error && synced && !anyListed && health.length > 0 && refused.length > 0) error = `no kind could be read: ${warnings[0]}`;
  if (error) return { state: 'unreachable', error, warnings, unreadable: refused };
  return { state: synced ? 'reachable' : 'connecting', error: null, warnings, unreadable: refused };
}
