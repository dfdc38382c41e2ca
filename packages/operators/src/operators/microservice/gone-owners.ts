/**
 * Microservices the API server answered for as gone while the operator's cache still shows them.
 *
 * A live read or a status write that finds a Microservice gone (404, or another UID) means its
 * delete event is on the way; reconciling the cached copy meanwhile would act on a stale object
 * (re-create children garbage collection just removed). But a 404 is not always a deletion:
 * kube-apiserver also answers 404 for a custom resource that exists while its CRD does not serve
 * the version or subresource asked for (an older CRD applied during a rollback, a CRD being
 * re-established). So what is remembered is the cached *version* found gone, for a while.
 *
 * Guarantees (`judge`, for the cached object of a key):
 * - the version found gone is left alone (`waitMs`) until `recheckMs` after it was marked;
 * - then `confirm`: the caller makes a live read, and marks the key again if it is still gone;
 * - a later version of the same UID (the watch shows the object changed: it is there), another
 *   UID, or a key the cache dropped (`forget`) ends the mark at once.
 * Nothing here calls the API server; durations run on the monotonic clock.
 * @module
 */
import type { Clock, KubeObject } from '@converge/runtime';

/** How long a version found gone is left to its delete event before a live read looks again. */
export const GONE_RECHECK_MS = 5_000;

export type GoneVerdict =
  /** Not marked (or no longer): reconcile. */
  | undefined
  /** The version found gone: look again in `waitMs`. */
  | { waitMs: number }
  /** Marked `waitedMs` ago: confirm with a live read before reconciling. */
  | { confirm: true; waitedMs: number };

export class GoneOwners {
  readonly #clock: Clock;
  readonly #recheckMs: number;
  readonly #marks = new Map<string, { uid: string; resourceVersion: string | undefined; at: number }>();

  constructor(clock: Clock, recheckMs = GONE_RECHECK_MS) {
    this.#clock = clock;
    this.#recheckMs = recheckMs;
  }

  /**
   * Remembers that `uid` was found gone; `cached` is what the cache shows for `key` now. Returns
   * when to look again (ms).
   */
  mark(key: string, uid: string, cached: KubeObject | undefined): number {
    const resourceVersion = cached?.metadata.uid === uid ? cached.metadata.resourceVersion : undefined;
    this.#marks.set(key, { uid, resourceVersion, at: this.#clock.monotonic() });
    return this.#recheckMs;
  }

  /** What to do with `cached`, the cache's object for `key` (see the module's guarantees). */
  judge(key: string, cached: KubeObject): GoneVerdict {
    const mark = this.#marks.get(key);
    if (!mark) return undefined;
    if (mark.uid === cached.metadata.uid && mark.resourceVersion === cached.metadata.resourceVersion) {
      const waitedMs = this.#clock.monotonic() - mark.at;
      if (waitedMs < this.#recheckMs) return { waitMs: this.#recheckMs - waitedMs };
      this.#marks.delete(key);
      return { confirm: true, waitedMs };
    }
    this.#marks.delete(key);
    return undefined;
  }

  /** The cache no longer shows `key` (or shows it being deleted). */
  forget(key: string): void {
    this.#marks.delete(key);
  }

  get size(): number {
    return this.#marks.size;
  }
}
