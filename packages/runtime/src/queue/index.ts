/**
 * The work queue controllers pull keys (`namespace/name`) from, and the per-key retry policies
 * behind `addRateLimited`. Semantics of client-go's `workqueue`, as controller-runtime uses it.
 *
 * What a caller can rely on:
 * - De-duplication: a key waiting in the queue is not added twice (it keeps its place). A key
 *   being processed that is added again is marked and re-queued when `done(key)` is called, so a
 *   change seen during a reconcile is never lost and never processed concurrently.
 * - No key is ever handed to two getters at once: from `get()` until `done()` it is in flight.
 *   `done()` must be called exactly once per key `get()` returned (extra calls are ignored).
 * - Ordering: FIFO among ready keys; blocked `get()` calls are served in the order they were made.
 *   Delayed keys become ready in deadline order (ties: the order of the winning addAfter call).
 * - `get(signal)` never rejects. It resolves `undefined` when the queue is shut down and nothing
 *   is ready, or when `signal` aborts; `undefined` means no key was handed out (no `done()`).
 * - `addAfter` keeps one pending deadline per key, the earliest. Delays, latencies and work
 *   durations run on the injected `Clock`'s monotonic time (one timer for the whole queue;
 *   `FakeClock` makes them deterministic): a wall-clock step neither holds keys back nor
 *   releases them early. With the
 *   system clock the pending timer keeps the process alive until it fires or `shutDown()`.
 * - `addRateLimited(key)` = `addAfter(key, rateLimiter.when(key))` (returns that delay); the default limiter is
 *   controller-runtime's: max(per-key exponential 5 ms·2^n capped at 1000 s, overall token
 *   bucket 10 qps / burst 100). Forgetting a key after success (`forget`) is the caller's job;
 *   per-key counters live until then. `retryAfter(key, ms)` is a retry at a delay the caller
 *   chose (a Retry-After): counted as a retry, the backoff untouched.
 * - `shutDown()` stops intake (adds become no-ops), drops delayed keys, wakes blocked getters
 *   with `undefined`; keys already ready are still handed out until none is left.
 *   `shutDownWithDrain()` also waits until every in-flight key got `done()`.
 * - Metrics hooks are called synchronously after the queue's state is updated; a hook that
 *   throws is ignored. Queue latency runs from the (ready) add to the get, work duration from
 *   get to done; `unfinishedWorkMs()`/`longestRunningMs()` are computed on demand (O(in-flight)).
 * - Nothing here blocks the thread; all methods but `get` and `shutDownWithDrain` are synchronous.
 *
 * @module
 */
export { WorkQueue, type QueueMetrics, type WorkQueueOptions } from './work-queue.ts';
export {
  exponentialBackoff,
  bucketRateLimiter,
  maxOfRateLimiters,
  defaultControllerRateLimiter,
  type RateLimiter,
  type ExponentialBackoffOptions,
} from './rate-limiters.ts';
