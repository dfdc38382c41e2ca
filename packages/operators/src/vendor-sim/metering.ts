/**
 * The simulator's metering: per-instance limits, what an instance's billable calls consumed in
 * the current quota day, throttling over `requestsPerMinute`, and the quota calendar. Pure and
 * synchronous, with an injected clock, so a test can count every outcome exactly.
 *
 * Guarantees:
 * - A billable call is decided in this order: quota used up → `refused`; this minute's
 *   `requestsPerMinute` used up → `throttled`; else `accepted` (counted in `callsToday`).
 *   `consume(n)` decides n calls at once exactly as n single calls in a row would, in O(1).
 * - The quota day rolls over by itself at UTC midnight (of the calendar, see below) and when
 *   `advance()` is called; a meter notices lazily on its next use, so an advance is O(1) for any
 *   number of instances.
 * - Throttled calls count in `throttledRequests` for `throttleWindowSeconds` after they happen
 *   (a sliding window, one bucket per second), then drop out by themselves.
 *
 * Caveat: minutes for `requestsPerMinute` are fixed clock minutes, not sliding ones (a client
 * can get up to twice the limit across a minute boundary), as many real vendors do.
 * @module
 */

export interface Limits {
  maxConcurrency: number;
  requestsPerMinute: number;
  dailyQuota: number;
}

export type LimitName = keyof Limits;
export const LIMIT_NAMES: readonly LimitName[] = ['maxConcurrency', 'requestsPerMinute', 'dailyQuota'];

/** The bounds the vendor accepts for each limit (inclusive), as in `openapi.yaml`. */
export const LIMIT_BOUNDS: Readonly<Record<LimitName, readonly [number, number]>> = {
  maxConcurrency: [1, 10_000],
  requestsPerMinute: [1, 1_000_000],
  dailyQuota: [1, 1_000_000_000],
};

export const DEFAULT_LIMITS: Readonly<Limits> = { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 10_000 };

export class LimitValidationError extends Error {
  override readonly name = 'LimitValidationError';
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** Validates a limits patch (some of the three fields, integers within bounds); throws `LimitValidationError`. */
export function parseLimitsPatch(body: unknown): Partial<Limits> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new LimitValidationError('limits', 'limits must be a JSON object');
  const out: Partial<Limits> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(key)) throw new LimitValidationError(key, `unknown field "${key}" (limits are ${LIMIT_NAMES.join(', ')})`);
    const [min, max] = LIMIT_BOUNDS[key as LimitName];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new LimitValidationError(key, `${key} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    out[key as LimitName] = value;
  }
  return out;
}

/** What the vendor reports for an instance (`Usage` in `openapi.yaml`, without the id). */
export interface UsageReport {
  callsToday: number;
  dailyQuota: number;
  quotaRemaining: number;
  refusedToday: number;
  throttledRequests: number;
  throttleWindowSeconds: number;
  quotaResetAt: string;
  observedAt: string;
}

export interface ConsumeOutcome {
  accepted: number;
  throttled: number;
  refused: number;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/**
 * Quota days: UTC days of a clock shifted by `offsetMs`. `advance()` shifts it to the next
 * midnight, so the next day starts now and lasts 24 h.
 */
export class QuotaCalendar {
  #offsetMs = 0;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  now(): number {
    return this.#now();
  }

  /** The current quota day's number. */
  day(at = this.#now()): number {
    return Math.floor((at + this.#offsetMs) / DAY_MS);
  }

  /** When (real time, ms) the next quota day starts. */
  resetAt(at = this.#now()): number {
    return (this.day(at) + 1) * DAY_MS - this.#offsetMs;
  }

  /** Starts the next quota day now; returns its number. */
  advance(): number {
    const at = this.#now();
    this.#offsetMs += this.resetAt(at) - at;
    return this.day(at);
  }
}

/** One instance's counters. Mutated only through its methods. */
export class Meter {
  readonly #calendar: QuotaCalendar;
  readonly #windowSeconds: number;
  #day: number;
  #callsToday = 0;
  #refusedToday = 0;
  #minute = -1;
  #acceptedThisMinute = 0;
  /** Throttled calls per whole second (epoch seconds), oldest first. */
  #throttles: { second: number; count: number }[] = [];

  constructor(calendar: QuotaCalendar, throttleWindowSeconds: number) {
    this.#calendar = calendar;
    this.#windowSeconds = throttleWindowSeconds;
    this.#day = calendar.day();
  }

  #roll(at: number): void {
    const day = this.#calendar.day(at);
    if (day !== this.#day) {
      this.#day = day;
      this.#callsToday = 0;
      this.#refusedToday = 0;
    }
    const minute = Math.floor(at / MINUTE_MS);
    if (minute !== this.#minute) {
      this.#minute = minute;
      this.#acceptedThisMinute = 0;
    }
    const oldest = Math.floor(at / 1000) - this.#windowSeconds + 1;
    while (this.#throttles.length > 0 && this.#throttles[0]!.second < oldest) this.#throttles.shift();
  }

  #addThrottled(at: number, count: number): void {
    if (count <= 0) return;
    const second = Math.floor(at / 1000);
    const last = this.#throttles.at(-1);
    if (last?.second === second) last.count += count;
    else this.#throttles.push({ second, count });
  }

  /** Decides `calls` billable calls made now against `limits`. */
  consume(calls: number, limits: Limits): ConsumeOutcome {
    const at = this.#calendar.now();
    this.#roll(at);
    const quotaLeft = Math.max(0, limits.dailyQuota - this.#callsToday);
    const minuteLeft = Math.max(0, limits.requestsPerMinute - this.#acceptedThisMinute);
    const accepted = Math.min(calls, quotaLeft, minuteLeft);
    this.#callsToday += accepted;
    this.#acceptedThisMinute += accepted;
    const rest = calls - accepted;
    // Calls stop being accepted when the quota or the minute runs out; the quota is checked first.
    if (accepted === quotaLeft) {
      this.#refusedToday += rest;
      return { accepted, throttled: 0, refused: rest };
    }
    this.#addThrottled(at, rest);
    return { accepted, throttled: rest, refused: 0 };
  }

  /** Records `count` throttled calls now, whatever the limits (the admin "throttle" switch). */
  throttle(count: number): void {
    const at = this.#calendar.now();
    this.#roll(at);
    this.#addThrottled(at, count);
  }

  clearThrottle(): void {
    this.#throttles = [];
  }

  /** Milliseconds until this minute ends (the Retry-After of a throttled call). */
  msUntilNextMinute(): number {
    const at = this.#calendar.now();
    return (Math.floor(at / MINUTE_MS) + 1) * MINUTE_MS - at;
  }

  report(limits: Limits): UsageReport {
    const at = this.#calendar.now();
    this.#roll(at);
    return {
      callsToday: this.#callsToday,
      dailyQuota: limits.dailyQuota,
      quotaRemaining: Math.max(0, limits.dailyQuota - this.#callsToday),
      refusedToday: this.#refusedToday,
      throttledRequests: this.#throttles.reduce((sum, t) => sum + t.count, 0),
      throttleWindowSeconds: this.#windowSeconds,
      quotaResetAt: new Date(this.#calendar.resetAt(at)).toISOString(),
      observedAt: new Date(at).toISOString(),
    };
  }
}

/** The meters of every instance, on one calendar. A meter is made on first use and forgotten with its instance. */
export class Metering {
  readonly calendar: QuotaCalendar;
  readonly throttleWindowSeconds: number;
  readonly #meters = new Map<string, Meter>();

  constructor(options: { now?: () => number; throttleWindowSeconds?: number } = {}) {
    this.calendar = new QuotaCalendar(options.now);
    this.throttleWindowSeconds = options.throttleWindowSeconds ?? 60;
    if (!Number.isInteger(this.throttleWindowSeconds) || this.throttleWindowSeconds < 1 || this.throttleWindowSeconds > 3_600) {
      throw new LimitValidationError('usageWindowSeconds', 'the throttle window must be a whole number of seconds from 1 to 3600');
    }
  }

  meter(id: string): Meter {
    let meter = this.#meters.get(id);
    if (!meter) {
      meter = new Meter(this.calendar, this.throttleWindowSeconds);
      this.#meters.set(id, meter);
    }
    return meter;
  }

  forget(id: string): void {
    this.#meters.delete(id);
  }

  clear(): void {
    this.#meters.clear();
  }
}
