/**
 * Rate limiting for the runtime: a token bucket (client-side request limiting, the work queue's
 * overall retry budget) and delay jitter.
 *
 * What a caller can rely on:
 * - `TokenBucket` is pure given its `Clock`: same calls at the same clock times, same answers.
 *   It measures on `clock.monotonic()`: wall-clock steps neither refill nor drain it.
 *   It starts full (`burst` tokens) and refills at `qps` tokens per second up to `burst`.
 * - `reserve()` never blocks: it takes a token now, possibly going into debt, and returns the
 *   whole milliseconds (rounded up) to wait before using it. Reservations are honoured in the
 *   order they were made, spaced `1000 / qps` ms apart once the burst is spent.
 * - `take(signal)` waits with `clock.sleep`; it resolves at once when a token is available and
 *   rejects with `signal.reason` when aborted (giving back the token where no later reservation
 *   relies on it). Concurrent `take()` calls are served FIFO by reservation order.
 * - `tryTake()` takes a token only if one is there now; `available()` reports the balance.
 * - `qps: Infinity` disables limiting; qps <= 0 or a non-integer/zero burst throws a RangeError.
 * - `jitter(ms, factor)` stretches a delay by a random fraction in [0, factor).
 *
 * @module
 */
export { TokenBucket, type TokenBucketOptions } from './token-bucket.ts';
export { jitter } from './jitter.ts';
