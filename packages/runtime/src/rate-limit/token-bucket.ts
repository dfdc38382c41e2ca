/**
 * A token bucket: `burst` tokens at most, refilled continuously at `qps` per second.
 *
 * @module
 */
import { systemClock, type Clock } from '../clock/index.ts';

export interface TokenBucketOptions {
  /** Tokens added per second; > 0. `Infinity` disables limiting. */
  qps: number;
  /** Bucket size: how many tokens can be taken at once after a quiet period; integer >= 1. */
  burst: number;
}

interface Reservation {
  readonly timeToAct: number;
}

/**
 * Token bucket in the manner of golang.org/x/time/rate (which client-go and controller-runtime use).
 * The bucket starts full. Reservations may drive it into debt: each one is served in the order it
 * was made, spaced `1000 / qps` ms apart once the burst is spent.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;
  /** When the most recent reservation may act. */
  #lastEvent: number;

  constructor(opts: TokenBucketOptions, clock: Clock = systemClock) {
    const { qps, burst } = opts;
    if (!(qps > 0)) throw new RangeError(`TokenBucket qps must be > 0, got ${qps}`);
    if (!Number.isInteger(burst) || burst < 1) throw new RangeError(`TokenBucket burst must be an integer >= 1, got ${burst}`);
    this.qps = qps;
    this.burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#last = clock.monotonic();
    this.#lastEvent = this.#last;
  }

  /** Reserve one token; returns how long (ms) the caller must wait before using it (0 = now). Never blocks. */
  reserve(): number {
    return this.#reserve(this.#clock.monotonic()).waitMs;
  }

  /** Takes a token only if one is available right now; never goes into debt. */
  tryTake(): boolean {
    if (this.qps === Infinity) return true;
    const now = this.#clock.monotonic();
    this.#refill(now);
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Tokens available now; negative while reservations are outstanding (debt). */
  available(): number {
    if (this.qps === Infinity) return this.burst;
    this.#refill(this.#clock.monotonic());
    return this.#tokens;
  }

  /**
   * Waits for a token (uses clock.sleep); rejects with `signal.reason` if aborted. An already
   * aborted signal takes no token; an abort during the wait hands the token back, as far as no
   * later reservation has been promised it.
   */
  async take(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    const r = this.#reserve(this.#clock.monotonic());
    if (r.waitMs === 0) return;
    try {
      await this.#clock.sleep(r.waitMs, signal);
    } catch (err) {
      this.#cancel(r);
      throw err;
    }
  }

  #refill(now: number): void {
    if (now <= this.#last) {
      this.#last = Math.min(this.#last, now); // a clock that went back (tests): restart from here
      return;
    }
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) * this.qps) / 1000);
    this.#last = now;
  }

  #reserve(now: number): Reservation & { waitMs: number } {
    if (this.qps === Infinity) return { timeToAct: now, waitMs: 0 };
    this.#refill(now);
    this.#tokens -= 1;
    // Sub-microsecond float residue is not a reason to wait a whole millisecond.
    const exact = this.#tokens < 0 ? (-this.#tokens * 1000) / this.qps : 0;
    const waitMs = exact <= 1e-6 ? 0 : Math.ceil(exact - 1e-6);
    const timeToAct = now + exact;
    this.#lastEvent = timeToAct;
    return { timeToAct, waitMs };
  }

  /** Gives back a reservation's token, minus what later reservations already counted on. */
  #cancel(r: Reservation): void {
    if (this.qps === Infinity) return;
    const now = this.#clock.monotonic();
    if (r.timeToAct <= now) return;
    const restore = 1 - ((this.#lastEvent - r.timeToAct) * this.qps) / 1000;
    if (restore <= 0) return;
    this.#refill(now);
    this.#tokens = Math.min(this.burst, this.#tokens + restore);
    if (r.timeToAct === this.#lastEvent) {
      const prevEvent = r.timeToAct - 1000 / this.qps;
      if (prevEvent >= now) this.#lastEvent = prevEvent;
    }
  }
}
