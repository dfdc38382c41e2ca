/**
 * Jitter for delays, so that many clients retrying or resyncing do not do it in lockstep.
 *
 * @module
 */

/**
 * Returns `ms` stretched by a random amount in `[0, factor * ms)`, as client-go's `wait.Jitter`:
 * `jitter(1000, 0.1)` is in [1000, 1100). `factor <= 0` returns `ms` unchanged. `random` is
 * injectable for tests and must return a number in [0, 1).
 */
export function jitter(ms: number, factor: number, random: () => number = Math.random): number {
  if (!(factor > 0) || !(ms > 0)) return ms;
  return ms + random() * factor * ms;
}
