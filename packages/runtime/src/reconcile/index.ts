/**
 * The reconcile contract: what a controller calls, what it hands over, what it gets back.
 *
 * A `Reconciler` is level-triggered: it is told only *which* object to look at (a `Request`,
 * its key), never what happened to it. It reads current facts (from the cache), closes the gap,
 * and returns. It must be idempotent: running it twice in a row changes nothing the second time.
 *
 * How the controller treats the outcome:
 * - resolves `{}` (or `done()`): success; the key's backoff is forgotten and the periodic check
 *   is scheduled;
 * - resolves `requeueAfter(ms)`: success, look again after `ms`;
 * - resolves `{ requeue: true }`: look again soon, with the key's backoff;
 * - throws `PermanentError`: bad input; not retried with backoff: looked at again when the object
 *   changes (its next watch event) and at its periodic check (`resyncPeriodMs`), as after a success;
 * - throws `TemporaryError`: retried after its own delay (`retryAfterMs` > 0), or with the key's
 *   backoff (no delay, or 0: "soon" is rate limited, never a tight loop);
 * - throws an `ApiError` with reason `Conflict`: retried soon with the key's backoff (its first
 *   steps are milliseconds), reading the cache again, logged at debug; but a Server-Side Apply
 *   conflict with another field manager (`isFieldManagerConflict`) is a failure like any other
 *   below (reading again cannot help);
 * - throws the API server's refusal to create in a namespace that is being deleted
 *   (`isNamespaceTerminating`): done, logged at debug; the object's deletion follows;
 * - throws anything else: retried with per-key exponential backoff (5 ms … 1000 s).
 * The signal aborts when the manager shuts down or loses leadership: stop early and throw.
 * @module
 */
import type { Logger } from 'pino';

/** Which object to reconcile. `namespace` is `''` for cluster-scoped kinds. */
export interface Request {
  readonly namespace: string;
  readonly name: string;
  /** `namespace/name`, as the work queue and cache key it. */
  readonly key: string;
  /** A logger carrying controller, namespace, name and reconcile ID. */
  readonly log: Logger;
  /** Unique per reconcile call; also in every log line. */
  readonly reconcileId: string;
}

export interface Result {
  /** Look again soon, with the key's backoff. */
  requeue?: boolean;
  /** Look again after this many milliseconds (success: the backoff is reset). */
  requeueAfterMs?: number;
}

export interface Reconciler {
  reconcile(request: Request, signal: AbortSignal): Promise<Result | void>;
}

/** A function is a reconciler too. */
export type ReconcileFunc = (request: Request, signal: AbortSignal) => Promise<Result | void>;

export const done = (): Result => ({});
export const requeueAfter = (ms: number): Result => ({ requeueAfterMs: ms });

/**
 * The object's input cannot work as it is (invalid spec, ownership conflict). The controller
 * does not retry it with backoff; the object's next change triggers a new attempt, and so does
 * its periodic check (something outside the object may have changed). `reason` is a stable,
 * CamelCase code suitable for a status condition.
 */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
  readonly reason: string;
  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/**
 * A failure expected to clear by itself (vendor down, dependency missing). Retried after
 * `retryAfterMs` when that is > 0; otherwise (absent or 0) with the key's rate-limited backoff.
 */
export class TemporaryError extends Error {
  override readonly name = 'TemporaryError';
  readonly reason: string;
  readonly retryAfterMs: number | undefined;
  constructor(reason: string, message: string, options?: { retryAfterMs?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.retryAfterMs = options?.retryAfterMs;
  }
}
