/**
 * `ConvergenceTracker`: per controller, which objects are unconverged and since when.
 * @module
 */
import type { KubeObject, Condition } from '../objects/index.ts';
import { formatKey, keyOf } from '../objects/index.ts';
import { systemClock, type Clock } from '../clock/index.ts';
import { describeError } from '../logging/index.ts';

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
  /**
   * Epoch ms since when the object has been unconverged, on the current wall clock: ages run on
   * monotonic time, so a wall-clock step shifts this (by the step), not `ageSeconds`.
   */
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
  /** `clock.monotonic()` since when the object has been unconverged: ages run on monotonic time, immune to wall-clock steps. */
  sinceMono: number;
  reason: string;
  message: string | undefined;
  /** The object's UID: another one under the same name (deleted and recreated) starts its own age. */
  uid: string | undefined;
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
      verdict = { reason: 'PredicateError', message: describeError(err, 'predicate threw a value that cannot be printed') };
    }
    if (!verdict) {
      this.#entries.delete(key);
      return false;
    }
    // A claimed time is a wall time: turn it into an age now (never negative), then date it on monotonic time.
    const claimedAge = verdict.sinceMs !== undefined && Number.isFinite(verdict.sinceMs) ? Math.max(0, this.#clock.now() - verdict.sinceMs) : 0;
    const since = this.#clock.monotonic() - claimedAge;
    const uid = obj.metadata.uid;
    const prev = this.#entries.get(key);
    // A relist reports an object deleted and recreated while the watch was down as an update
    // of the name, with no delete in between: its predecessor's age is not its own.
    const same = prev !== undefined && prev.uid === uid;
    this.#entries.set(key, {
      sinceMono: same ? Math.min(prev.sinceMono, since) : since,
      reason: verdict.reason,
      message: verdict.message,
      uid,
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
    for (const e of this.#entries.values()) if (e.sinceMono < oldest) oldest = e.sinceMono;
    return oldest === Infinity ? 0 : Math.max(0, now - this.#wallOf(oldest)) / 1000;
  }

  /** A monotonic instant on today's wall clock (never after `now()`). */
  #wallOf(sinceMono: number): number {
    return this.#clock.now() - Math.max(0, this.#clock.monotonic() - sinceMono);
  }

  /** The `n` longest-unconverged objects, oldest first (ties by key). */
  top(n: number, now: number = this.#clock.now()): UnconvergedEntry[] {
    const all = [...this.#entries].map(([key, e]) => ({
      key,
      sinceMs: this.#wallOf(e.sinceMono),
      ageSeconds: Math.max(0, now - this.#wallOf(e.sinceMono)) / 1000,
      reason: e.reason,
      ...(e.message === undefined ? {} : { message: e.message }),
    }));
    all.sort((a, b) => a.sinceMs - b.sinceMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return all.slice(0, Math.max(0, n));
  }
}
