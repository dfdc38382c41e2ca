/**
 * One external endpoint's traffic gate: a token-bucket rate limit, a cap on requests in flight,
 * and a pause that a server's `Retry-After` can impose on everyone calling that endpoint.
 *
 * @module
 */
import { systemClock, type Clock } from '../clock/index.ts';
import { TokenBucket } from '../rate-limit/index.ts';
import { parseRetryAfterMs } from './retry-after.ts';

export interface EndpointLimiterOptions {
  /** Sustained requests per second. Default `Infinity` (no rate limit). */
  ratePerSecond?: number;
  /**
   * Largest burst: tokens the bucket holds. Default 1, so requests are evenly spaced and never
   * exceed a server-side bucket of the same rate. Ignored when the rate is unlimited.
   */
  burst?: number;
  /** Most requests in flight at once. Default `Infinity`. */
  maxConcurrency?: number;
  /** Longest pause a single `Retry-After` may impose. Default 300 000 ms (5 minutes). */
  maxPauseMs?: number;
  /**
   * Default: `systemClock`. Pauses and waits run on `monotonic()` (a step of the wall clock
   * neither stretches nor ends a pause); `now()` only reads a `Retry-After` given as a date.
   */
  clock?: Clock;
}

/** Proof of admission. `release()` is idempotent; forgetting it leaks a concurrency slot. */
export interface Permit {
  release(): void;
}

export interface AcquireOptions {
  /**
   * The longest pause this caller will wait out. A caller who finds the endpoint paused for
   * longer, or is waiting when a pause begins (or extends) that leaves longer, is refused at once
   * with `EndpointPausedError` instead of being held. Default `Infinity`: every pause is waited.
   * Waits for a token or a concurrency slot are not bounded by it (pass a signal for those).
   */
  maxPauseWaitMs?: number;
}

/** A caller refused because the endpoint is paused for longer than its `maxPauseWaitMs`. */
export class EndpointPausedError extends Error {
  override readonly name = 'EndpointPausedError';
  /** Whole milliseconds left of the pause when the caller was refused. */
  readonly pausedForMs: number;
  constructor(pausedForMs: number, maxPauseWaitMs: number) {
    super(`endpoint paused for ${pausedForMs} ms more, longer than the ${maxPauseWaitMs} ms this caller waits`);
    this.pausedForMs = pausedForMs;
  }
}

export interface EndpointLimiterStats {
  inFlight: number;
  queued: number;
  /** Permits handed out since creation. */
  granted: number;
  /** Waiters that gave up (their signal aborted) before admission. */
  abandoned: number;
  /** Callers refused because a pause was longer than their `maxPauseWaitMs`. */
  refused: number;
  /** Times a pause was set or extended (`pauseFor`, `honourRetryAfter`). */
  pauses: number;
  /** Milliseconds left of the current pause (0 when not paused). */
  pausedForMs: number;
}

interface Waiter {
  grant: (permit: Permit) => void;
  refuse: (err: EndpointPausedError) => void;
  maxPauseWaitMs: number;
  done: boolean;
}

/**
 * Admits callers in FIFO order when three conditions hold at once: the endpoint is not paused,
 * fewer than `maxConcurrency` permits are held, and the token bucket has a token.
 *
 * Contracts:
 * - `acquire(signal, { maxPauseWaitMs })` resolves with a `Permit` (possibly after waiting),
 *   rejects with `signal.reason` when the signal aborts first, or with `EndpointPausedError` as
 *   soon as a pause with more than `maxPauseWaitMs` left stands in its way (on arrival, or when
 *   such a pause begins or extends while it waits); a caller that is not admitted never consumes
 *   a token or a slot.
 * - Admission order is FIFO: a caller never overtakes an earlier one.
 * - `schedule(fn, signal, options)` = acquire, run `fn`, release (also when `fn` throws). Its
 *   signal only bounds the wait; `fn` receives it to pass on.
 * - `pauseFor(ms)` and `honourRetryAfter(header)` stop admissions until the later of the current
 *   pause end and now+ms; afterwards at most one request goes at once and the rest follow at the
 *   sustained rate. Requests already in flight are not affected.
 * - Nothing here throws for a server's answer and nothing retries: callers decide.
 * - No timer is held while nobody waits, so an idle limiter never keeps the process alive.
 */
export class EndpointLimiter {
  readonly #clock: Clock;
  readonly #bucket: TokenBucket | undefined;
  readonly #maxConcurrency: number;
  readonly #maxPauseMs: number;
  readonly #queue: Waiter[] = [];
  #inFlight = 0;
  #pausedUntil = -Infinity;
  /** Set by a pause; cleared by the first admission after it, which first trims the bucket to one token. */
  #trimAfterPause = false;
  #granted = 0;
  #abandoned = 0;
  #refused = 0;
  #pauses = 0;
  #wakeAt: number | undefined;
  #wakeAbort: AbortController | undefined;

  constructor(options: EndpointLimiterOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    const rate = options.ratePerSecond ?? Infinity;
    this.#bucket = rate === Infinity ? undefined : new TokenBucket({ qps: rate, burst: options.burst ?? 1 }, this.#clock);
    this.#maxConcurrency = options.maxConcurrency ?? Infinity;
    if (!(this.#maxConcurrency >= 1)) throw new RangeError(`maxConcurrency must be >= 1, got ${this.#maxConcurrency}`);
    this.#maxPauseMs = options.maxPauseMs ?? 300_000;
  }

  acquire(signal?: AbortSignal, options: AcquireOptions = {}): Promise<Permit> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const maxPauseWaitMs = options.maxPauseWaitMs ?? Infinity;
    if (!(maxPauseWaitMs >= 0)) return Promise.reject(new RangeError(`maxPauseWaitMs must be >= 0, got ${maxPauseWaitMs}`));
    const paused = this.pausedForMs();
    if (paused > maxPauseWaitMs) {
      this.#refused++;
      return Promise.reject(new EndpointPausedError(paused, maxPauseWaitMs));
    }
    return new Promise<Permit>((resolve, reject) => {
      const onAbort = (): void => {
        if (waiter.done) return;
        waiter.done = true;
        const i = this.#queue.indexOf(waiter);
        if (i >= 0) this.#queue.splice(i, 1);
        this.#abandoned++;
        reject(signal!.reason);
        this.#drain();
      };
      const waiter: Waiter = {
        done: false,
        maxPauseWaitMs,
        grant: (permit) => {
          waiter.done = true;
          signal?.removeEventListener('abort', onAbort);
          resolve(permit);
        },
        refuse: (err) => {
          waiter.done = true;
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#drain();
    });
  }

  async schedule<T>(fn: (signal: AbortSignal | undefined) => Promise<T>, signal?: AbortSignal, options?: AcquireOptions): Promise<T> {
    const permit = await this.acquire(signal, options);
    try {
      return await fn(signal);
    } finally {
      permit.release();
    }
  }

  /**
   * Pauses admissions for `ms` (capped by `maxPauseMs`); a shorter pause never shortens a longer
   * one. Waiters whose `maxPauseWaitMs` is shorter than what is left are refused at once.
   */
  pauseFor(ms: number): void {
    if (!(ms > 0)) return;
    const now = this.#clock.monotonic();
    const until = now + Math.min(ms, this.#maxPauseMs);
    this.#pauses++;
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    this.#trimAfterPause = true;
    const left = this.pausedForMs();
    for (const waiter of this.#queue.filter((w) => left > w.maxPauseWaitMs)) {
      this.#queue.splice(this.#queue.indexOf(waiter), 1);
      this.#refused++;
      waiter.refuse(new EndpointPausedError(left, waiter.maxPauseWaitMs));
    }
    this.#drain();
  }

  /**
   * Pauses for what a `Retry-After` header asks (seconds or HTTP date), or for `fallbackMs` when
   * the header is absent or unreadable. Returns the pause asked for in ms (before the
   * `maxPauseMs` cap), or `undefined` when there was neither a readable header nor a fallback.
   */
  honourRetryAfter(header: string | null | undefined, fallbackMs?: number): number | undefined {
    const ms = parseRetryAfterMs(header, this.#clock.now()) ?? fallbackMs;
    if (ms === undefined) return undefined;
    this.pauseFor(ms);
    return ms;
  }

  /** The longest one pause lasts (`maxPauseMs`): a longer wait asked for is cut to it. */
  get maxPauseMs(): number {
    return this.#maxPauseMs;
  }

  /** Whole milliseconds left of the current pause (rounded up); 0 when not paused. */
  pausedForMs(): number {
    return Math.max(0, Math.ceil(this.#pausedUntil - this.#clock.monotonic()));
  }

  stats(): EndpointLimiterStats {
    return {
      inFlight: this.#inFlight,
      queued: this.#queue.length,
      granted: this.#granted,
      abandoned: this.#abandoned,
      refused: this.#refused,
      pauses: this.#pauses,
      pausedForMs: this.pausedForMs(),
    };
  }

  #release(): void {
    this.#inFlight--;
    this.#drain();
  }

  /** Admits as many waiters as the three conditions allow, then arms one wake-up if time is the blocker. */
  #drain(): void {
    while (this.#queue.length > 0) {
      const now = this.#clock.monotonic();
      if (now < this.#pausedUntil) return this.#wakeAtTime(this.#pausedUntil);
      if (this.#inFlight >= this.#maxConcurrency) return this.#cancelWake(); // a release drains again
      if (this.#trimAfterPause) {
        // The bucket refilled during the pause; spending all but one token keeps the restart smooth.
        this.#trimAfterPause = false;
        while (this.#bucket && this.#bucket.available() >= 2) this.#bucket.tryTake();
      }
      if (this.#bucket && !this.#bucket.tryTake()) {
        const missing = 1 - this.#bucket.available();
        return this.#wakeAtTime(now + Math.max(1, Math.ceil((missing * 1000) / this.#bucket.qps)));
      }
      const waiter = this.#queue.shift()!;
      this.#inFlight++;
      this.#granted++;
      let released = false;
      waiter.grant({
        release: () => {
          if (released) return;
          released = true;
          this.#release();
        },
      });
    }
    this.#cancelWake();
  }

  #wakeAtTime(at: number): void {
    if (this.#wakeAt !== undefined && this.#wakeAt <= at) return; // an earlier wake re-checks anyway
    this.#cancelWake();
    const abort = new AbortController();
    this.#wakeAt = at;
    this.#wakeAbort = abort;
    this.#clock.sleep(Math.max(0, at - this.#clock.monotonic()), abort.signal).then(
      () => {
        if (this.#wakeAbort !== abort) return;
        this.#wakeAt = undefined;
        this.#wakeAbort = undefined;
        this.#drain();
      },
      () => {}, // cancelled
    );
  }

  #cancelWake(): void {
    this.#wakeAbort?.abort();
    this.#wakeAbort = undefined;
    this.#wakeAt = undefined;
  }
}
