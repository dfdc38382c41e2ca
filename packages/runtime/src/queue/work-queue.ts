/**
 * The work queue: de-duplicating, never hands one key to two workers, delayed and rate-limited
 * adds, draining shutdown. Semantics of client-go's `workqueue` (typed rate-limiting queue).
 *
 * @module
 */
import { DeadlineHeap, systemClock, type Clock, type Timer } from '../clock/index.ts';
import { KeyFifo } from './key-fifo.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.ts';

/** Optional hooks, all cheap and synchronous. A hook that throws is ignored. */
export interface QueueMetrics {
  /** A key entered the queue (a merged duplicate does not count). */
  adds?(): void;
  /** Ready keys waiting, after every change. */
  depth?(n: number): void;
  /** From the (ready) add to the get that handed the key out. */
  queueLatency?(ms: number): void;
  /** From get to done. */
  workDuration?(ms: number): void;
  /** A retry was scheduled: `addRateLimited` or `retryAfter` was called. */
  retries?(): void;
}

export interface WorkQueueOptions {
  clock?: Clock;
  /** Per-key retry policy for `addRateLimited`; default `defaultControllerRateLimiter(clock)`. */
  rateLimiter?: RateLimiter;
  metrics?: QueueMetrics;
  /** For metric labels and logs. */
  name?: string;
}

interface Delayed {
  readonly key: string;
  readonly at: number;
  readonly seq: number;
}

type Waiter = (key: string | undefined) => void;

export class WorkQueue {
  readonly name: string;
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #metrics: QueueMetrics;

  /** Ready keys, in order. Never contains a key twice, nor a key that is processing. */
  readonly #ready = new KeyFifo();
  /** Keys that need processing: those in #ready plus those re-added while processing. */
  readonly #dirty = new Set<string>();
  /** Keys handed out and not yet done, with the time they were handed out. */
  readonly #processing = new Map<string, number>();
  /** When each dirty key was added, for the latency metric. */
  readonly #addedAt = new Map<string, number>();
  /** Blocked get() calls, oldest first. Non-empty only while #ready is empty. */
  readonly #waiters = new Set<Waiter>();

  /** The winning (earliest) delayed add per key; heap entries not in here are stale. */
  readonly #delayed = new Map<string, Delayed>();
  readonly #heap = new DeadlineHeap<Delayed>();
  #seq = 0;
  #timer: Timer | undefined;
  #timerAt = Infinity;

  #shuttingDown = false;
  #drained: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(opts: WorkQueueOptions = {}) {
    this.#clock = opts.clock ?? systemClock;
    this.#limiter = opts.rateLimiter ?? defaultControllerRateLimiter(this.#clock);
    this.#metrics = opts.metrics ?? {};
    this.name = opts.name ?? '';
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Queues `key` unless it is already waiting (then nothing changes, its place is kept). A key
   * being processed is marked and queued again when `done(key)` is called. No-op after shutdown.
   */
  add(key: string): void {
    if (this.#shuttingDown) return;
    this.#insert(key);
  }

  /**
   * Adds `key` after `delayMs`. For a key already waiting on a delay the earliest deadline wins.
   * `delayMs <= 0` (or NaN) is `add(key)`. Independent of the ready queue: a key that is also
   * added directly is processed then, and again when its delay expires. No-op after shutdown.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (!(delayMs > 0)) {
      this.#insert(key);
      return;
    }
    const at = this.#clock.monotonic() + delayMs;
    const current = this.#delayed.get(key);
    if (current && current.at <= at) return;
    const entry: Delayed = { key, at, seq: this.#seq++ };
    this.#delayed.set(key, entry);
    this.#heap.push(entry);
    this.#arm();
  }

  /**
   * `addAfter(key, rateLimiter.when(key))`, counting a retry; returns the delay chosen. No-op
   * (and no count; returns 0) after shutdown.
   */
  addRateLimited(key: string): number {
    if (this.#shuttingDown) return 0;
    const delay = this.#limiter.when(key);
    this.#emit('retries');
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * A retry at a delay the caller chose (a vendor's or API server's Retry-After): `addAfter`,
   * counted as a retry as `addRateLimited` is, the per-key backoff left as it is. No-op (and no
   * count) after shutdown.
   */
  retryAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    this.#emit('retries');
    this.addAfter(key, delayMs);
  }

  /** Resets the key's retry count (`rateLimiter.forget`). Call it after a success. */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#limiter.retries(key);
  }

  /**
   * Resolves with the next ready key (FIFO) and marks it processing: the caller owns it until
   * `done(key)`. Waits while nothing is ready; waiting callers are served in call order.
   * Resolves `undefined` (never rejects) when the queue is shut down and nothing is ready, or
   * when `signal` aborts (already aborted: at once, even if keys are ready). An `undefined`
   * result hands out no key: do not call `done`.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    const key = this.#ready.shift();
    if (key !== undefined) {
      this.#emit('depth', this.#ready.length);
      this.#startProcessing(key);
      return Promise.resolve(key);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        if (this.#waiters.delete(waiter)) resolve(undefined);
      };
      const waiter: Waiter = (k) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(k);
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Marks `key` finished. If it was added again while processing, it goes back to the end of the
   * ready queue (also during shutdown). Ignored for a key that is not being processed.
   */
  done(key: string): void {
    const started = this.#processing.get(key);
    if (started === undefined) return;
    this.#processing.delete(key);
    this.#emit('workDuration', Math.max(0, this.#clock.monotonic() - started));
    if (this.#dirty.has(key)) this.#makeReady(key);
    if (this.#processing.size === 0 && this.#drained) {
      this.#drained.resolve();
      this.#drained = undefined;
    }
  }

  /** Ready keys waiting (not delayed, not processing). */
  len(): number {
    return this.#ready.length;
  }

  /** Keys handed out by get() and not yet done(). */
  inFlight(): number {
    return this.#processing.size;
  }

  /** The keys in flight, oldest first. */
  inFlightKeys(): string[] {
    return [...this.#processing.keys()];
  }

  /** Keys waiting on a delay (addAfter / addRateLimited). */
  delayedLen(): number {
    return this.#delayed.size;
  }

  /**
   * Stops intake: add, addAfter and addRateLimited become no-ops; delayed keys are dropped (their
   * timer cancelled); waiting get() calls resolve undefined. Keys already ready are still handed
   * out by get() until none is left, and keys re-added while processing still return on done().
   * Idempotent.
   */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#delayed.clear();
    this.#heap.clear();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w(undefined);
  }

  /**
   * `shutDown()`, then resolves once no key is processing (every in-flight key got `done()`).
   * Ready keys left in the queue are not waited for: workers take them with get() until it
   * resolves undefined. Never rejects; bound it with your own grace period.
   */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    if (!this.#drained) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#drained = { promise, resolve };
    }
    return this.#drained.promise;
  }

  /** Sum of how long each in-flight key has been processing, in ms. */
  unfinishedWorkMs(): number {
    const now = this.#clock.monotonic();
    let sum = 0;
    for (const started of this.#processing.values()) sum += Math.max(0, now - started);
    return sum;
  }

  /** How long the longest-running in-flight key has been processing, in ms (0 when idle). */
  longestRunningMs(): number {
    const now = this.#clock.monotonic();
    let longest = 0;
    for (const started of this.#processing.values()) longest = Math.max(longest, now - started);
    return longest;
  }

  #insert(key: string): void {
    if (this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#addedAt.set(key, this.#clock.monotonic());
    this.#emit('adds');
    if (this.#processing.has(key)) return;
    this.#makeReady(key);
  }

  /** A dirty, not-processing key becomes ready: straight to the oldest waiter, else queued. */
  #makeReady(key: string): void {
    const waiter = this.#waiters.values().next().value;
    if (waiter) {
      this.#waiters.delete(waiter);
      this.#startProcessing(key);
      waiter(key);
      return;
    }
    this.#ready.push(key);
    this.#emit('depth', this.#ready.length);
  }

  #startProcessing(key: string): void {
    const now = this.#clock.monotonic();
    this.#dirty.delete(key);
    const added = this.#addedAt.get(key) ?? now;
    this.#addedAt.delete(key);
    this.#processing.set(key, now);
    this.#emit('queueLatency', Math.max(0, now - added));
  }

  /** Earliest live delayed entry, discarding stale ones. */
  #peekDelayed(): Delayed | undefined {
    let top = this.#heap.peek();
    while (top && this.#delayed.get(top.key) !== top) {
      this.#heap.pop();
      top = this.#heap.peek();
    }
    return top;
  }

  /** Keeps exactly one clock timer, set for the earliest delayed deadline. */
  #arm(): void {
    const top = this.#peekDelayed();
    if (!top) {
      this.#timer?.cancel();
      this.#timer = undefined;
      this.#timerAt = Infinity;
      return;
    }
    if (this.#timer && this.#timerAt <= top.at) return;
    this.#timer?.cancel();
    this.#timerAt = top.at;
    this.#timer = this.#clock.setTimer(top.at - this.#clock.monotonic(), () => this.#onTimer());
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    if (this.#shuttingDown) return;
    const now = this.#clock.monotonic();
    for (let top = this.#peekDelayed(); top && top.at <= now; top = this.#peekDelayed()) {
      this.#heap.pop();
      this.#delayed.delete(top.key);
      this.#insert(top.key);
    }
    this.#arm();
  }

  #emit<K extends keyof QueueMetrics>(hook: K, ...args: Parameters<NonNullable<QueueMetrics[K]>>): void {
    const fn = this.#metrics[hook] as ((...a: unknown[]) => void) | undefined;
    if (!fn) return;
    try {
      fn.apply(this.#metrics, args);
    } catch {
      // Metrics must never break the queue; a throwing hook is ignored.
    }
  }
}
