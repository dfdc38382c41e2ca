/**
 * Why a rollout does not progress, in the pods' own words: `converge explain` reads the pods of a
 * Microservice's Deployment while its rollout is not done and names what keeps them from being
 * ready (an image that cannot be pulled, a crash loop, a failing readiness probe, a pod that
 * cannot be scheduled), so a `RolloutInProgress` says its cause long before the
 * `progressDeadlineSeconds` turns it into `RolloutStalled`.
 *
 * Guarantees: pure; one line per distinct cause, most frequent first, at most `MAX_CAUSES`, each
 * message cut to `MAX_MESSAGE` characters; pods being deleted are left out. Caveats: only what
 * the kubelet (or the scheduler) wrote in the pod's status; Events are not read.
 * @module
 */
import type { Pod } from '@converge/runtime';

export const MAX_CAUSES = 3;
export const MAX_MESSAGE = 200;

export interface PodProblems {
  /** Pods counted (those not being deleted). */
  pods: number;
  notReady: number;
  /** `container app: ErrImagePull — …` lines, most frequent first, `(n pods)` when more than one. */
  causes: string[];
}

/** What keeps `pods` from being ready; undefined when every pod is ready (or there is none). */
export function podProblems(pods: readonly Pod[]): PodProblems | undefined {
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  const counts = new Map<string, number>();
  let notReady = 0;
  for (const pod of live) {
    if (isReady(pod)) continue;
    notReady++;
    for (const cause of causesOf(pod)) counts.set(cause, (counts.get(cause) ?? 0) + 1);
  }
  if (notReady === 0) return undefined;
  const causes = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, MAX_CAUSES)
    .map(([cause, n]) => (n > 1 ? `${cause} (${n} pods)` : cause));
  return { pods: live.length, notReady, causes };
}

/** One line: `2/2 pods not ready: container app: ErrImagePull — …; …`. */
export function describePodProblems(p: PodProblems): string {
  const head = `${p.notReady}/${p.pods} pod${p.pods === 1 ? '' : 's'} not ready`;
  return p.causes.length ? `${head}: ${p.causes.join('; ')}` : `${head} (their status says nothing more yet)`;
}

function isReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function causesOf(pod: Pod): string[] {
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') return [`not scheduled: ${cut(scheduled.reason ?? 'Unschedulable', scheduled.message)}`];
  const out: string[] = [];
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    if (s.ready) continue;
    const what = `container ${s.name}`;
    const waiting = s.state?.waiting;
    const terminated = s.state?.terminated ?? s.lastState?.terminated;
    if (waiting?.reason && waiting.reason !== 'ContainerCreating' && waiting.reason !== 'PodInitializing') {
      const last = terminated ? ` (last exit ${terminated.exitCode}${terminated.reason ? `, ${terminated.reason}` : ''})` : '';
      out.push(`${what}: ${cut(waiting.reason, waiting.message)}${last}`);
    } else if (s.state?.terminated) {
      out.push(`${what}: exited ${s.state.terminated.exitCode}${s.state.terminated.reason ? ` (${s.state.terminated.reason})` : ''}`);
    } else if (s.state?.running) {
      out.push(`${what}: running but not ready (its readiness probe fails${(s.restartCount ?? 0) > 0 ? `; ${s.restartCount} restart${s.restartCount === 1 ? '' : 's'}` : ''})`);
    }
  }
  return out;
}

function cut(reason: string, message: string | undefined): string {
  if (!message) return reason;
  const text = message.replace(/\s+/g, ' ').trim();
  // Cut by code points, not UTF-16 units: a cut through a surrogate pair (an emoji) would leave
  // half a character (U+FFFD on a terminal, a lone surrogate in -o json).
  const chars = [...text];
  return `${reason} — ${chars.length > MAX_MESSAGE ? `${chars.slice(0, MAX_MESSAGE - 1).join('')}…` : text}`;
}
