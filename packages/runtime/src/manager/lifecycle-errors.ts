/**
 * Why `Manager.start` rejected, besides `LeadershipLostError` (in `../controller`): every one
 * means "this process must exit non-zero and be restarted", each with a message a person can
 * act on.
 * @module
 */

/** A runnable (a server, a controller, leader election, the cache) failed; the manager stopped everything. */
export class RunnableFailedError extends Error {
  override readonly name = 'RunnableFailedError';
  /** The runnable's name, e.g. `metrics server`, `controller microservice`. */
  readonly runnable: string;

  constructor(runnable: string, cause: unknown) {
    const message = cause instanceof Error ? cause.message : String(cause);
    // A cause that already names the runnable ("metrics server cannot listen on …") is used as is.
    super(message.startsWith(runnable) ? message : `${runnable} failed: ${message}`, { cause });
    this.runnable = runnable;
  }
}

/**
 * Work did not stop within the drain bound (the grace period plus the abort timeout, or the
 * abort timeout alone after leadership was lost): some reconcile ignores its abort signal. The
 * manager gave up waiting, stopped renewing the Lease without releasing it (standbys take over
 * once it expires, by when this process must be gone), and rejected with this error.
 */
export class DrainTimeoutError extends Error {
  override readonly name = 'DrainTimeoutError';
  /** `controller/namespace/name` of each reconcile still running, and any other runnable that did not return. */
  readonly stuck: string[];

  constructor(boundMs: number, stuck: string[], cause?: unknown) {
    const what = stuck.length ? stuck.join(', ') : 'a leader-only runnable';
    super(
      `work did not stop within ${Math.round(boundMs)} ms of being told to: still running ${what} ` +
        '(a reconcile that ignores its abort signal); exiting without releasing the lease',
      cause === undefined ? undefined : { cause },
    );
    this.stuck = stuck;
  }
}

/** The caches did not sync in time (`cacheSyncTimeoutMs`): the process should exit non-zero. */
export class CacheSyncTimeoutError extends Error {
  override readonly name = 'CacheSyncTimeoutError';
}
