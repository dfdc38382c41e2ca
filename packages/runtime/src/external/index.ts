/**
 * Calling external HTTP APIs politely: per-endpoint rate and concurrency limits that honour a
 * server's `Retry-After`. Generic: nothing here knows any vendor; operators wrap their own
 * clients around it.
 *
 * What a caller can rely on:
 * - `EndpointLimiter.acquire(signal)` blocks (asynchronously) until the endpoint is not paused,
 *   a concurrency slot is free and the token bucket has a token; callers are admitted in FIFO
 *   order. It rejects with `signal.reason` when the signal aborts first, consuming nothing.
 *   Every permit must be released once (`release()` is idempotent); `schedule(fn, signal)` does
 *   that for you, also when `fn` throws.
 * - A caller that must not be held by a long pause passes `maxPauseWaitMs`: it is refused with
 *   `EndpointPausedError` (with the pause left) as soon as a longer pause stands in its way, on
 *   arrival or while it waits, and never consumes a token or a slot.
 * - `honourRetryAfter(header, fallbackMs?)` pauses the whole endpoint for the delay the server
 *   asked (delta-seconds or HTTP date, capped by `maxPauseMs`); pauses only ever extend. After a
 *   pause, one request goes first and the rest follow at the sustained rate, not as a burst.
 * - The limiter never retries and never inspects responses: the caller reports a `Retry-After`
 *   and decides whether to try again (in a controller: requeue the object with backoff).
 * - Time comes only from the injected runtime `Clock` (it calls `now()` and `sleep(ms, signal)`),
 *   so tests drive it with `FakeClock`. An idle limiter holds no timer.
 * - The rate limit is the runtime's `TokenBucket` (default burst 1: evenly spaced requests).
 * - `createEndpointLimiters(defaults)` shares one limiter per URL origin across all callers.
 *
 * @module
 */
export { EndpointLimiter, EndpointPausedError, type AcquireOptions, type EndpointLimiterOptions, type EndpointLimiterStats, type Permit } from './endpoint-limiter.ts';
export { createEndpointLimiters, endpointKey, type EndpointLimiters, type EndpointLimitersOptions } from './endpoint-limiters.ts';
export { parseRetryAfterMs } from './retry-after.ts';
