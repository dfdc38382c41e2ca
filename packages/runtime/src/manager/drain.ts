/**
 * The bounded drain: how long the manager waits for its leader-only work once told to stop.
 *
 * Guarantees: `drain` settles by the bound — `graceMs + abortTimeoutMs` from the moment it is
 * called, or `abortTimeoutMs` from the moment `abortNow` fires, whichever comes first — with
 * `undefined` if the work returned, otherwise a `DrainTimeoutError` naming what still runs
 * (`stillRunning()` is asked at that moment). Times are the injected clock's monotonic ones.
 * @module
 */
import type { Logger } from 'pino';
import type { Clock, Timer } from '../clock/index.ts';
import { DrainTimeoutError } from './lifecycle-errors.ts';

export interface DrainOptions {
  clock: Clock;
  log: Logger;
  /** The longest grace period of the work (in-flight reconciles may finish). */
  graceMs: number;
  /** How long aborted work may take to return. */
  abortTimeoutMs: number;
  /** Fires when the work must stop at once (leadership lost); the bound shrinks to `abortTimeoutMs`. */
  abortNow: AbortSignal;
  /** The cause to give a `DrainTimeoutError` once `abortNow` has fired (its reason otherwise). */
  cause?: unknown;
  /** What is still running, for the error. */
  stillRunning(): string[];
}

export async function drain(work: Promise<unknown>, options: DrainOptions): Promise<DrainTimeoutError | undefined> {
  const { clock, abortNow, abortTimeoutMs } = options;
  const started = clock.monotonic();
  let deadline = Infinity;
  let timer: Timer | undefined;
  let expire!: () => void;
  const expired = new Promise<'expired'>((resolve) => (expire = () => resolve('expired')));
  const arm = (ms: number): void => {
    const at = clock.monotonic() + ms;
    if (at >= deadline) return;
    deadline = at;
    timer?.cancel();
    timer = clock.setTimer(ms, expire);
  };
  arm(abortNow.aborted ? abortTimeoutMs : options.graceMs + abortTimeoutMs);
  const onAbortNow = (): void => arm(abortTimeoutMs);
  abortNow.addEventListener('abort', onAbortNow, { once: true });
  try {
    const outcome = await Promise.race([work.then(() => 'done' as const), expired]);
    if (outcome === 'done') return undefined;
    const boundMs = clock.monotonic() - started;
    const err = new DrainTimeoutError(boundMs, options.stillRunning(), abortNow.aborted ? (options.cause ?? abortNow.reason) : undefined);
    options.log.error({ stuck: err.stuck, boundMs: Math.round(boundMs) }, err.message);
    return err;
  } finally {
    timer?.cancel();
    abortNow.removeEventListener('abort', onAbortNow);
  }
}
