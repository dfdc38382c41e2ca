/**
 * Real time: `Date.now()` for the wall clock, `performance.now()` for monotonic time, and Node
 * timers (which libuv runs on its monotonic clock).
 *
 * @module
 */
import { checkDelay, sleepOn, type Clock, type Timer } from './clock.ts';

/** setTimeout's limit; longer delays overflow to 1 ms in Node, so they are chained. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function setSystemTimer(ms: number, fn: () => void): Timer {
  checkDelay(ms);
  if (ms === Infinity) return { cancel() {} }; // never fires, holds nothing alive
  const deadline = performance.now() + ms;
  let handle: NodeJS.Timeout | undefined;
  const arm = (delay: number): void => {
    if (delay > MAX_TIMEOUT_MS) {
      handle = setTimeout(() => arm(deadline - performance.now()), MAX_TIMEOUT_MS);
    } else {
      handle = setTimeout(() => {
        handle = undefined;
        fn();
      }, Math.max(0, delay));
    }
  };
  arm(ms);
  return {
    cancel() {
      if (handle !== undefined) clearTimeout(handle);
      handle = undefined;
    },
  };
}

/**
 * The real clock. Timers are ordinary ref'd Node timers: a pending timer keeps the process alive,
 * so whoever starts one must cancel it (the work queue cancels its timer on shutdown).
 * Delays above 2^31-1 ms are supported (chained). `now()` is the wall clock and can jump;
 * `monotonic()` is `performance.now()` (milliseconds since this process started, never back).
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer: setSystemTimer,
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(systemClock, ms, signal);
  },
};
