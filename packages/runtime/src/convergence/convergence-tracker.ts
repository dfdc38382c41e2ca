/**
 * `ConvergenceTracker`: per controller, which objects are unconverged and since when.
 * @module
 */
import type { KubeObject, Condition } from '../objects/index.ts';
import { formatKey, keyOf } from '../objects/index.ts';
import { systemClock, type Clock } from '../clock/index.ts';

/** Why an object is unconverged (a short CamelCase reason plus a human detail), or `undefined` when converged. */
export interface Unconverged {
  reason: string;
  /** Epoch ms when the object is known to have become unconverged, if the object says so. */
  sinceMs?: number;
  message?: string;
}

/** Decides whether an object is converged. Return `undefined` for converged. */
export type ConvergencePredicate = (obj: KubeObject) => Unconverged | undefined;

export interface UnconvergedEntry {
  key: string;
  /** Epoch ms since when the object has been unconverged. */
  sinceMs: number;
  ageSeconds: number;
  reason: string;
  message?: string;
}

export interface ConvergenceTrackerOptions {
  clock?: Clock;
  /** Default: `defaultConvergencePredicate()` (observedGeneration and a `Ready` condition). */
  predicate?: ConvergencePredicate;
}

interface Entry {
  sinceMs: number;
  reason: string;
  message: string | undefined;
}

interface StatusLike {
  observedGeneration?: number;
  conditions?: Condition[];
}

/**
 * The default notion of converged: `status.observedGeneration` has caught up with
 * `metadata.generation`, and the condition `readyCondition` (default `Ready`; `null` to skip the
 * check) is True and not stale (its own `observedGeneration`, when set, is current).
 * Objects without `metadata.generation` (some built-ins) skip the generation check.
 */
export function defaultConvergencePredicate(options: { readyCondition?: string | null } = {}): ConvergencePredicate {
  const readyType = options.readyCondition === undefined ? 'Ready' : options.readyCondition;
  return (obj) => {
    const generation = obj.metadata.generation;
    const status = (obj as { status?: StatusLike }).status;
    if (generation !== undefined) {
      const observed = status?.observedGeneration;
      if (observed === undefined) return { reason: 'NotObserved', message: `generation ${generation} not observed yet` };
      if (observed < generation) return { reason: 'GenerationLag', message: `observedGeneration ${observed} < generation ${generation}` };
    }
    if (readyType === null) return undefined;
    const ready = status?.conditions?.find((c) => c.type === readyType);
    if (!ready) return { reason: `${readyType}Missing`, message: `no ${readyType} condition` };
    if (ready.status !== 'True') {
      const since = Date.parse(ready.lastTransitionTime);
      return {
        reason: ready.reason || `Not${readyType}`,
        ...(ready.message ? { message: ready.message } : {}),
        ...(Number.isFinite(since) ? { sinceMs: since } : {}),
      };
    }
    if (generation !== undefined && ready.observedGeneration !== undefined && ready.observedGeneration < generation) {
      return { reason: `${readyType}Stale`, message: `${readyType} condition observedGeneration ${ready.observedGeneration} < generation ${generation}` };
    }
    return undefined;
  };
}

export class ConvergenceTracker {
  readonly #clock: Clock;
  readonly #predicate: ConvergencePredicate;
  readonly #entries = new Map<string, Entry>();

  constructor(options: ConvergenceTrackerOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#predicate = options.predicate ?? defaultConvergencePredicate();
  }

  /** Records the current state of an object. Returns true when it is (still) unconverged. */
  observe(obj: KubeObject): boolean {
    const key = formatKey(keyOf(obj));
    let verdict: Unconverged | undefined;
    try {
      verdict = this.#predicate(obj);
    } catch (err) {
      verdict = { reason: 'PredicateError', message: err instanceof Error ? err.message : String(err) };
    }
    if (!verdict) {
      this.#entries.delete(key);
      return false;
    }
    const now = this.#clock.now();
    const claimed = verdict.sinceMs !== undefined && Number.isFinite(verdict.sinceMs) ? Math.min(verdict.sinceMs, now) : now;
    const prev = this.#entries.get(key);
    this.#entries.set(key, {
      sinceMs: prev ? Math.min(prev.sinceMs, claimed) : claimed,
      reason: verdict.reason,
      message: verdict.message,
    });
    return true;
  }

  /** Drops an object (deleted, or no longer this controller's). */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  /** How many objects are unconverged. */
  get size(): number {
    return this.#entries.size;
  }

  /** Age in seconds of the oldest unconverged object; 0 when every object is converged. */
  oldestAgeSeconds(now: number = this.#clock.now()): number {
    let oldest = Infinity;
    for (const e of this.#entries.values()) if (e.sinceMs < oldest) oldest = e.sinceMs;
    return oldest === Infinity ? 0 : Math.max(0, now - oldest) / 1000;
  }

  /** The `n` longest-unconverged objects, oldest first (ties by key). */
  top(n: number, now: number = this.#clock.now()): UnconvergedEntry[] {
    const all = [...this.#entries].map(([key, e]) => ({
      key,
      sinceMs: e.sinceMs,
      ageSeconds: Math.max(0, now - e.sinceMs) / 1000,
      reason: e.reason,
      ...(e.message === undefined ? {} : { message: e.message }),
    }));
    all.sort((a, b) => a.sinceMs - b.sinceMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return all.slice(0, Math.max(0, n));
  }
}
