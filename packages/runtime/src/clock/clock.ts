/**
 * The `Clock` and `Timer` contracts, and the one `sleep` both clocks share.
 *
 * @module
 */

/** A scheduled callback. `cancel()` is idempotent and safe after the timer fired. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as the runtime sees it. Inject one wherever code waits or measures time.
 *
 * Two readings, for two purposes:
 * - `now()` is the wall clock: what a timestamp written to the API or shown to a person says.
 *   It can jump (NTP steps, a VM resumed, someone setting the date), both ways.
 * - `monotonic()` only moves forward, at the rate of real time, whatever the wall clock does.
 *   Every duration, deadline and "how long since" is measured on it; its origin is arbitrary
 *   (compare readings of one clock, never with `now()` or with another process's readings).
 * Timers (`setTimer`, `sleep`) run on monotonic time.
 */
export interface Clock {
  /** Wall-clock milliseconds since the Unix epoch. May jump; use it for timestamps only. */
  now(): number;
  /** Monotonic milliseconds from an arbitrary origin: never goes back, unaffected by wall-clock steps. */
  monotonic(): number;
  /** Calls `fn` once after `ms` of monotonic time (`ms <= 0`: as soon as possible, never synchronously). */
  setTimer(ms: number, fn: () => void): Timer;
  /**
   * Resolves after `ms`. Rejects with `signal.reason` when the signal aborts first (also when it
   * is already aborted: then no timer is created). The timer is cancelled on abort.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** `sleep` built on a clock's `setTimer`; both clocks use it so they behave the same. */
export function sleepOn(clock: Pick<Clock, 'setTimer'>, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(signal!.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Throws a RangeError for NaN; every clock rejects it rather than guessing. */
export function checkDelay(ms: number): void {
  if (Number.isNaN(ms)) throw new RangeError('timer delay must be a number, got NaN');
}
