/**
 * The upstream's pick: which DigitalHumanProvider to send work to, best first. Pure; the
 * server orders `GET /api/v1/providers` with it and the page orders its provider table the same
 * way by default, so the API and the screen never disagree.
 *
 * "Usable" (`ProviderItem.usable`): converged (Ready=True for the current generation, a vendor
 * instance, the finalizer, not deleting), its cluster reachable, and no quota known to be
 * exhausted. "Best" orders providers by, in turn:
 * 1. usable before not usable;
 * 2. healthy (`ProviderReady`) before degraded (`ProviderDegraded`, still Ready=True);
 * 3. not limited before limited (`status.limitedBy` set, e.g. `RateLimited`);
 * 4. more quota left first (unknown quota after any known positive amount);
 * 5. Ready=True for longer first (the oldest `lastTransitionTime` of Ready: the most stable);
 * 6. cluster, namespace, name (so equal providers always come in the same order).
 * @module
 */
import type { ProviderItem } from './types.ts';

const DEGRADED = 'ProviderDegraded';

function readySinceMs(p: ProviderItem): number {
  const t = p.ready?.status === 'True' ? p.ready.lastTransitionTime : null;
  const ms = t ? Date.parse(t) : Number.NaN;
  return Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY;
}

function quotaScore(p: ProviderItem): number {
  const left = p.quota?.left;
  return typeof left === 'number' ? left : -1;
}

const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Negative when `a` is the better pick. `readySince` reads criterion 5 (a sort passes one that parses each time once). */
export function compareProviders(a: ProviderItem, b: ProviderItem, readySince: (p: ProviderItem) => number = readySinceMs): number {
  return (
    Number(b.usable) - Number(a.usable) ||
    Number(a.ready?.reason === DEGRADED) - Number(b.ready?.reason === DEGRADED) ||
    Number(a.limitingReason !== null) - Number(b.limitingReason !== null) ||
    quotaScore(b) - quotaScore(a) ||
    readySince(a) - readySince(b) ||
    text(a.cluster, b.cluster) ||
    text(a.namespace, b.namespace) ||
    text(a.name, b.name)
  );
}

/** The providers best first, each with its 1-based `rank` in this list. Does not mutate its input. */
export function rankProviders(providers: readonly ProviderItem[]): ProviderItem[] {
  const since = new Map(providers.map((p) => [p, readySinceMs(p)]));
  return [...providers].sort((a, b) => compareProviders(a, b, (p) => since.get(p)!)).map((p, i) => ({ ...p, rank: i + 1 }));
}
