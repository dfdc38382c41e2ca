/**
 * The worker loop: takes keys from the work queue and calls the reconciler, at most
 * `maxConcurrentReconciles` at a time and never two for the same key (the queue guarantees it).
 * How each outcome is treated is the contract in `../reconcile/index.ts`.
 * @module
 */
import { randomFillSync } from 'node:crypto';
import type { Logger } from 'pino';
import { parseKey } from '../objects/index.ts';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';
import { WorkQueue, defaultControllerRateLimiter } from '../queue/index.ts';
import type { RateLimiter } from '../queue/index.ts';
import { ApiError, isFieldManagerConflict, isNamespaceTerminating } from '../client/index.ts';
import type { RuntimeMetrics, ReconcileOutcome } from '../metrics/index.ts';
import { PermanentError, TemporaryError } from '../reconcile/index.ts';
import { withReconcileSpan } from '../tracing/index.ts';
import type { Reconciler, Request, Result } from '../reconcile/index.ts';

export interface ControllerOptions {
  /** Up to this many keys are reconciled at once (default 1). */
  maxConcurrentReconciles?: number;
  /**
   * The periodic check: after each successful reconcile the key is looked at again after this
   * many ms, ± `resyncJitter` (default 10 minutes, jitter 0.1). 0 disables it.
   */
  resyncPeriodMs?: number;
  resyncJitter?: number;
  /** How long in-flight reconciles may run on after shutdown begins (default 30 000 ms). */
  shutdownGraceMs?: number;
  rateLimiter?: RateLimiter;
}

/** Thrown into a controller's stop signal when leadership is lost: no grace period. */
export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError';
}

export interface ControllerDeps {
  name: string;
  reconciler: Reconciler;
  log: Logger;
  clock?: Clock;
  metrics?: RuntimeMetrics;
  /** Whether a key still names a cached primary object (the periodic check skips vanished ones). */
  exists?: (key: string) => boolean;
  /**
   * What wakes the controller, connected while it runs: each is called with `enqueue` when
   * `start` begins and returns its disconnect, called when the stop begins. A standby replica
   * (controllers start only while the process leads) thus queues nothing; a source that
   * replays what it already has on connecting (an informer's handler) loses nothing by it.
   */
  sources?: ((enqueue: (key: string) => void) => () => void)[];
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #deps: ControllerDeps;
  readonly #opts: Required<Omit<ControllerOptions, 'rateLimiter'>>;
  readonly #clock: Clock;
  /** The permanent failure last warned about, per key, until the key next succeeds or fails otherwise. */
  readonly #toldPermanent = new Map<string, string>();
  #started = false;

  constructor(deps: ControllerDeps, options: ControllerOptions = {}) {
    this.name = deps.name;
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#opts = {
      maxConcurrentReconciles: Math.max(1, options.maxConcurrentReconciles ?? 1),
      resyncPeriodMs: options.resyncPeriodMs ?? 600_000,
      resyncJitter: options.resyncJitter ?? 0.1,
      shutdownGraceMs: options.shutdownGraceMs ?? 30_000,
    };
    this.queue = new WorkQueue({
      name: deps.name,
      clock: this.#clock,
      rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter(this.#clock),
      ...(deps.metrics ? { metrics: deps.metrics.queue(deps.name, () => this.queue) } : {}),
    });
    deps.metrics?.controllerRegistered(deps.name, this.#opts.maxConcurrentReconciles);
  }

  /** How long in-flight reconciles may run on after a graceful stop begins. */
  get shutdownGraceMs(): number {
    return this.#opts.shutdownGraceMs;
  }

  /** Asks for a reconcile of this key (deduplicated with any pending one). */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /**
   * Runs the workers until `signal` aborts, then stops intake and starts no further reconcile
   * (keys still waiting are left: the next start, or the next leader, lists afresh), lets
   * in-flight reconciles finish for up to the grace period (none when the reason is
   * `LeadershipLostError`), aborts what is still running, and settles once every worker has
   * returned.
   *
   * `abortNow` cuts that short whenever it aborts, also in the middle of the grace period (the
   * manager aborts it when leadership is lost): in-flight reconciles get their signal aborted
   * at once and no worker takes another key. A reconcile that ignores its signal keeps `start`
   * from settling; bounding that wait is the caller's job (the manager's drain bound).
   */
  async start(signal: AbortSignal, abortNow?: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`controller ${this.name} already started`);
    this.#started = true;
    const hard = new AbortController();
    const cut = (reason: unknown): void => {
      if (hard.signal.aborted) return;
      hard.abort(reason);
      this.queue.shutDown();
    };
    if (abortNow?.aborted) cut(abortNow.reason);
    else abortNow?.addEventListener('abort', () => cut(abortNow.reason), { once: true });
    const disconnects = hard.signal.aborted || signal.aborted ? [] : (this.#deps.sources ?? []).map((connect) => connect((key) => this.enqueue(key)));
    const n = this.#opts.maxConcurrentReconciles;
    this.#deps.metrics?.setMaxConcurrentReconciles(this.name, n);
    this.#deps.log.info({ controller: this.name, workers: n }, 'starting workers');
    const workers = Array.from({ length: n }, () => this.#worker(signal, hard.signal));
    await new Promise<void>((resolve) => {
      if (signal.aborted || hard.signal.aborted) resolve();
      else {
        signal.addEventListener('abort', () => resolve(), { once: true });
        hard.signal.addEventListener('abort', () => resolve(), { once: true });
      }
    });
    for (const disconnect of disconnects) disconnect();
    const immediate = hard.signal.aborted || signal.reason instanceof LeadershipLostError;
    const grace = immediate ? 0 : this.#opts.shutdownGraceMs;
    this.#deps.log.info({ controller: this.name, graceMs: grace, inFlight: this.queue.inFlight() }, 'stopping workers');
    const drained = this.queue.shutDownWithDrain();
    if (immediate) cut(hard.signal.aborted ? hard.signal.reason : signal.reason);
    const timer = this.#clock.setTimer(grace, () => cut(signal.reason));
    await Promise.race([drained, new Promise<void>((resolve) => hard.signal.addEventListener('abort', () => resolve(), { once: true }))]);
    timer.cancel();
    cut(signal.reason ?? hard.signal.reason);
    await Promise.all(workers);
  }

  /** Keys being reconciled right now (for the manager's report of what did not stop). */
  inFlightKeys(): string[] {
    return this.queue.inFlightKeys();
  }

  /**
   * Takes keys until a stop begins: after `signal` aborts no worker starts another reconcile,
   * not even of a key already waiting (the queue would still hand those out, as client-go's
   * does). Waiting keys are left to the next start or the next leader, which lists afresh.
   */
  async #worker(signal: AbortSignal, hard: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted || hard.aborted) return;
      const key = await this.queue.get(hard);
      if (key === undefined) return;
      if (signal.aborted || hard.aborted) {
        this.queue.done(key); // handed out as the stop began: left, like the keys still waiting
        return;
      }
      try {
        await this.#process(key, hard);
      } finally {
        this.queue.done(key);
      }
    }
  }

  async #process(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = parseKey(key);
    const reconcileId = newReconcileId();
    const log = this.#deps.log.child({ controller: this.name, namespace, name, reconcileID: reconcileId });
    const request: Request = { namespace, name, key, log, reconcileId };
    const started = this.#clock.monotonic();
    this.#deps.metrics?.activeWorkers(this.name, 1);
    let outcome: ReconcileOutcome = 'success';
    try {
      const result = (await withReconcileSpan(this.name, key, () => this.#deps.reconciler.reconcile(request, signal), { reconcileId })) ?? {};
      outcome = this.#onSuccess(key, result);
      // One line per reconcile at debug (failures have their own line at info or above).
      log.debug(
        { result: outcome, durationMs: Math.round(Math.max(0, this.#clock.monotonic() - started)), ...(result.requeueAfterMs ? { requeueAfterMs: Math.round(result.requeueAfterMs) } : {}) },
        'reconcile done',
      );
    } catch (err) {
      outcome = this.#onError(key, err, log, signal);
    } finally {
      this.#deps.metrics?.activeWorkers(this.name, -1);
      this.#deps.metrics?.reconciled(this.name, outcome, Math.max(0, this.#clock.monotonic() - started));
    }
  }

  #onSuccess(key: string, result: Result): ReconcileOutcome {
    this.#toldPermanent.delete(key);
    if (result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, result.requeueAfterMs);
      return 'requeue_after';
    }
    if (result.requeue) {
      this.queue.addRateLimited(key);
      return 'requeue';
    }
    this.queue.forget(key);
    this.#schedulePeriodicCheck(key);
    return 'success';
  }

  #onError(key: string, err: unknown, log: Logger, signal: AbortSignal): ReconcileOutcome {
    if (!(err instanceof PermanentError)) this.#toldPermanent.delete(key); // a permanent failure after this one is news again
    if (signal.aborted) {
      log.debug('reconcile aborted by shutdown');
      return 'error';
    }
    if (err instanceof PermanentError) {
      // Bad input: wait for the object to change. The periodic check still looks now and then.
      this.queue.forget(key);
      this.#schedulePeriodicCheck(key);
      // Warned once per failure: the periodic check meets the same one again until the input changes.
      // Not remembered for a key whose primary does not exist (a mapping to a missing name): no
      // periodic check or success would ever clear the entry.
      const told = `${err.reason}\n${err.message}`;
      if (this.#deps.exists && !this.#deps.exists(key)) {
        this.#toldPermanent.delete(key);
        log.warn({ reason: err.reason, err: err.message }, 'reconcile failed permanently; waiting for a change');
      } else if (this.#toldPermanent.get(key) === told) {
        log.debug({ reason: err.reason, err: err.message }, 'reconcile failed permanently; waiting for a change (as before)');
      } else {
        this.#toldPermanent.set(key, told);
        log.warn({ reason: err.reason, err: err.message }, 'reconcile failed permanently; waiting for a change');
      }
      return 'error';
    }
    // Stopping (the grace period): the queue takes no retry, so none is promised. The key is left
    // to the next start, or to the next leader.
    if (this.queue.shuttingDown) {
      log.info({ ...(err instanceof TemporaryError ? { reason: err.reason, err: err.message } : { err }) }, 'reconcile failed while stopping; left to the next start');
      return 'error';
    }
    if (isNamespaceTerminating(err)) {
      // The namespace is being deleted: whatever the reconcile wanted to create cannot be, and
      // the object itself is on its way out (its delete event follows). Done, quietly.
      this.queue.forget(key);
      log.debug({ err: (err as Error).message }, 'the namespace is being terminated; nothing more to do');
      return 'success';
    }
    // An optimistic-lock conflict: the cache was behind, the next read is newer. (A Server-Side
    // Apply conflict with another field manager is not one: reading again changes nothing, so it
    // is a failure like any other, warned about and counted.)
    if (err instanceof ApiError && err.reason === 'Conflict' && !isFieldManagerConflict(err)) {
      log.debug({ err: err.message }, 'conflict; re-reading and retrying');
      this.queue.addRateLimited(key);
      return 'requeue';
    }
    // An explicit delay is honoured as given; 0 (or less) means "retry soon", which is the
    // rate-limited retry (per-key backoff and the overall bucket), never an immediate one: a
    // condition that persists (an eventually consistent vendor, a stale cache) must not spin.
    if (err instanceof TemporaryError && err.retryAfterMs !== undefined) {
      const retryInMs = err.retryAfterMs > 0 ? (this.queue.retryAfter(key, err.retryAfterMs), err.retryAfterMs) : this.queue.addRateLimited(key);
      log.info({ reason: err.reason, err: err.message, retryInMs: Math.round(retryInMs) }, 'reconcile will retry');
      return 'error';
    }
    if (err instanceof ApiError && err.retryAfterMs !== undefined && err.retryAfterMs > 0) {
      this.queue.retryAfter(key, err.retryAfterMs);
    } else {
      this.queue.addRateLimited(key);
    }
    const retries = this.queue.numRequeues(key);
    const fields = err instanceof TemporaryError ? { reason: err.reason, err: err.message } : { err };
    if (retries > 5) log.error({ ...fields, retries }, 'reconcile failed; retrying with backoff');
    else log.warn({ ...fields, retries }, 'reconcile failed; retrying with backoff');
    return 'error';
  }

  #schedulePeriodicCheck(key: string): void {
    const period = this.#opts.resyncPeriodMs;
    if (period <= 0) return;
    if (this.#deps.exists && !this.#deps.exists(key)) return;
    const jitter = this.#opts.resyncJitter;
    this.queue.addAfter(key, period * (1 - jitter + Math.random() * 2 * jitter));
  }
}

/** 48 random bits per reconcile, as 12 hex characters, drawn from a pool refilled once every 256. */
const RECONCILE_ID_BYTES = 6;
const reconcileIdPool = Buffer.alloc(RECONCILE_ID_BYTES * 256);
let reconcileIdOffset = reconcileIdPool.length;

/**
 * A reconcile's ID for its log lines and trace span. One call to the system's random source per
 * 256 reconciles: a call per reconcile cost 0.18 s of a cold start of 2,000 Microservices (issue 17).
 */
export function newReconcileId(): string {
  if (reconcileIdOffset >= reconcileIdPool.length) {
    randomFillSync(reconcileIdPool);
    reconcileIdOffset = 0;
  }
  const id = reconcileIdPool.toString('hex', reconcileIdOffset, reconcileIdOffset + RECONCILE_ID_BYTES);
  reconcileIdOffset += RECONCILE_ID_BYTES;
  return id;
}
