/**
 * Per-key retry policies for the work queue, after client-go's `workqueue` rate limiters.
 *
 * @module
 */
import type { Clock } from '../clock/index.ts';
import { TokenBucket } from '../rate-limit/index.ts';

/** Per-key retry policy. */
export interface RateLimiter {
  /** Delay in ms for this key's next retry; increments its failure count. */
  when(key: string): number;
  /** Resets the key's failures (call after a success). */
  forget(key: string): void;
  /** How many times `when` was called for the key since the last `forget`. */
  retries(key: string): number;
}

export interface ExponentialBackoffOptions {
  /** Delay after the first failure; default 5 ms. */
  baseMs?: number;
  /** Cap; default 1_000_000 ms (1000 s). */
  maxMs?: number;
  /**
   * Shorten each delay by a random fraction in [0, jitter), 0..1; default 0 (none). Keys that
   * failed together (e.g. every object calling one vendor during its outage) then retry apart,
   * also once their delays reach `maxMs`, instead of in lockstep.
   */
  jitter?: number;
  /** Random source in [0, 1) for the jitter; default Math.random. */
  random?: () => number;
}

/**
 * `baseMs * 2^failures`, capped at `maxMs`: 5, 10, 20, 40 … 1_000_000 ms with the defaults; with
 * `jitter` each delay is drawn from (d * (1 - jitter), d], so `maxMs` stays the longest wait.
 * Keeps one counter per key until `forget(key)`, so callers must forget keys that succeed or
 * are deleted (as in client-go).
 */
export function exponentialBackoff(opts: ExponentialBackoffOptions = {}): RateLimiter {
  const baseMs = opts.baseMs ?? 5;
  const maxMs = opts.maxMs ?? 1_000_000;
  const factor = opts.jitter ?? 0;
  const random = opts.random ?? Math.random;
  if (!(baseMs >= 0)) throw new RangeError(`exponentialBackoff baseMs must be >= 0, got ${baseMs}`);
  if (!(maxMs >= baseMs)) throw new RangeError(`exponentialBackoff maxMs must be >= baseMs, got ${maxMs}`);
  if (!(factor >= 0 && factor <= 1)) throw new RangeError(`exponentialBackoff jitter must be in [0, 1], got ${factor}`);
  const failures = new Map<string, number>();
  return {
    when(key) {
      const n = failures.get(key) ?? 0;
      failures.set(key, n + 1);
      const raw = baseMs * 2 ** n; // Infinity for huge n, which the cap absorbs
      const capped = Math.min(raw, maxMs);
      return factor > 0 ? capped * (1 - factor * random()) : capped;
    },
    forget(key) {
      failures.delete(key);
    },
    retries(key) {
      return failures.get(key) ?? 0;
    },
  };
}

/**
 * One token bucket shared by all keys (defaults: 10 qps, burst 100, as controller-runtime):
 * bounds the overall retry rate. Each `when` reserves a token; it keeps no per-key state, so
 * `retries` is always 0 and `forget` does nothing.
 */
export function bucketRateLimiter(opts: { qps?: number; burst?: number } = {}, clock?: Clock): RateLimiter {
  const bucket = new TokenBucket({ qps: opts.qps ?? 10, burst: opts.burst ?? 100 }, clock);
  return {
    when: () => bucket.reserve(),
    forget() {},
    retries: () => 0,
  };
}

/**
 * The largest delay of all `limiters` (each one's `when` is called, so each counts the failure);
 * `forget` forgets in all; `retries` is the largest count. With no limiters, `when` is 0.
 */
export function maxOfRateLimiters(...limiters: RateLimiter[]): RateLimiter {
  return {
    when(key) {
      let delay = 0;
      for (const l of limiters) delay = Math.max(delay, l.when(key));
      return delay;
    },
    forget(key) {
      for (const l of limiters) l.forget(key);
    },
    retries(key) {
      let n = 0;
      for (const l of limiters) n = Math.max(n, l.retries(key));
      return n;
    },
  };
}

/** controller-runtime's default: max(per-key exponential 5 ms .. 1000 s, overall bucket 10 qps / burst 100). */
export function defaultControllerRateLimiter(clock?: Clock): RateLimiter {
  return maxOfRateLimiters(exponentialBackoff(), bucketRateLimiter({}, clock));
}
