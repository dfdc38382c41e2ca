/**
 * Time for the runtime: the `Clock` interface every waiting or measuring component takes by
 * injection, the real `systemClock`, and a deterministic `FakeClock` for tests.
 *
 * What a caller can rely on:
 * - `setTimer` never calls back synchronously; each timer fires at most once; `cancel()` is
 *   idempotent and harmless after firing. Delays of NaN throw a RangeError; Infinity never fires.
 * - `sleep(ms, signal)` resolves after `ms`, or rejects with `signal.reason` once the signal
 *   aborts (immediately when it already is) and cancels its timer. It never blocks the thread.
 * - `systemClock` uses `Date.now()` and ordinary, ref'd Node timers (a pending timer keeps the
 *   process alive: cancel what you start). Delays longer than setTimeout's 2^31-1 ms are chained.
 *   `now()` is the wall clock and may jump; duration measurements clamp at zero.
 * - `FakeClock` moves only on `advance`/`advanceAsync`/`setTime`; timers fire in deadline order,
 *   FIFO among equal deadlines, with `now()` equal to the deadline while each one runs.
 * - `DeadlineHeap` is the min-heap (deadline, then insertion order) behind `FakeClock` and the
 *   work queue's delayed adds.
 *
 * @module
 */
export type { Clock, Timer } from './clock.ts';
export { systemClock } from './system-clock.ts';
export { FakeClock } from './fake-clock.ts';
export { DeadlineHeap, type DeadlineEntry } from './deadline-heap.ts';
