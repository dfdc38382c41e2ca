/**
 * The `Clock` and `Timer` contracts, and the one `sleep` both clocks share.
 *
 * @module
 */

/** A scheduled callback. `cancel()` is idempotent and safe after the timer fired. */
export interface Timer {
  cancel(): void;
}

/** Time as the runtime sees it. Inject one wherever code waits or measures time. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once after `ms` (`ms <= 0`: as soon as possible, never synchronously). */
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
