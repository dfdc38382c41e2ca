/**
 * Time for the runtime: the `Clock` interface every waiting or measuring component takes by
 * injection, the real `systemClock`, and a deterministic `FakeClock` for tests.
 *
 * What a caller can rely on:
 * - Two readings: `now()` is the wall clock (timestamps for the API and for people; it may jump
 *   both ways), `monotonic()` never goes back and ignores wall-clock steps. Measure every
 *   duration, deadline and age on `monotonic()`; timers run on monotonic time.
 * - `setTimer` never calls back synchronously; each timer fires at most once; `cancel()` is
 *   idempotent and harmless after firing. Delays of NaN throw a RangeError; Infinity never fires.
 * - `sleep(ms, signal)` resolves after `ms`, or rejects with `signal.reason` once the signal
 *   aborts (immediately when it already is) and cancels its timer. It never blocks the thread.
 * - `systemClock` uses `Date.now()`, `performance.now()` and ordinary, ref'd Node timers (a
 *   pending timer keeps the process alive: cancel what you start). Delays longer than
 *   setTimeout's 2^31-1 ms are chained.
 * - `FakeClock` moves only on `advance`/`advanceAsync`/`setTime`; timers fire in deadline order,
 *   FIFO among equal deadlines, with `monotonic()` equal to the deadline while each one runs.
 *   `stepWall` jumps the wall clock alone (both ways), for tests of clock steps.
 * - `DeadlineHeap` is the min-heap (deadline, then insertion order) behind `FakeClock` and the
 *   work queue's delayed adds.
 *
 * @module
 */
export type { Clock, Timer } from './clock.ts';
export { systemClock } from './system-clock.ts';
export { FakeClock } from './fake-clock.ts';
export { DeadlineHeap, type DeadlineEntry } from './deadline-heap.ts';
