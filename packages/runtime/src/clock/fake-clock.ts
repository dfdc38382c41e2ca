/**
 * A manual clock for deterministic tests: time moves only when the test calls `advance`, and
 * the wall clock can be stepped on its own (`stepWall`) to test code against clock jumps.
 *
 * @module
 */
import { checkDelay, sleepOn, type Clock, type Timer } from './clock.ts';
import { DeadlineHeap } from './deadline-heap.ts';

interface FakeTimer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Lets promise continuations (and anything they schedule on the real event loop) run. */
function realMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock that stands still until told to move.
 *
 * - `advance(ms)` moves monotonic and wall time together. `stepWall(ms)` moves only the wall
 *   clock (`now()`), forwards or backwards, as an NTP step or a resumed VM does; monotonic time
 *   and timers are unaffected. Without `stepWall`, `now() === monotonic()` (both start at
 *   `startMs`).
 * - Timers run on monotonic time. They fire only inside `advance`/`advanceAsync`, never on their
 *   own, in deadline order; timers with the same deadline fire in the order they were set.
 * - A timer set with `ms <= 0` is due at once and fires on the next `advance` (even `advance(0)`).
 * - While a timer's callback runs, `monotonic()` equals that timer's deadline (and `now()` is
 *   that plus the wall offset). A callback that sets a new timer due within the advanced window
 *   sees it fire in the same `advance`.
 * - `advance` is synchronous: promise continuations of a fired timer (e.g. code after
 *   `await clock.sleep()`) run only after it returns. Use `advanceAsync` when such code sets
 *   further timers that should fire within the same window.
 * - A throwing callback does not stop the others: `advance` finishes, then rethrows the first error.
 */
export class FakeClock implements Clock {
  /** Monotonic time; the wall clock is this plus `#wallOffset`. */
  #now: number;
  #wallOffset = 0;
  #seq = 0;
  #live = 0;
  readonly #timers = new DeadlineHeap<FakeTimer>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now + this.#wallOffset;
  }

  monotonic(): number {
    return this.#now;
  }

  /**
   * Steps the wall clock by `deltaMs` (negative: backwards) without moving monotonic time: no
   * timer fires, `monotonic()` does not change, `now()` jumps.
   */
  stepWall(deltaMs: number): void {
    if (!Number.isFinite(deltaMs)) throw new RangeError(`FakeClock cannot step the wall clock by ${deltaMs} ms`);
    this.#wallOffset += deltaMs;
  }

  setTimer(ms: number, fn: () => void): Timer {
    checkDelay(ms);
    const timer: FakeTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    this.#live++;
    return {
      cancel: () => {
        if (timer.cancelled) return;
        timer.cancelled = true;
        this.#live--;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers set and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#live;
  }

  /** Deadline (monotonic) of the earliest pending timer, or undefined when none is pending. */
  nextTimerAt(): number | undefined {
    return this.#peekLive()?.at;
  }

  /** Moves time forward by `ms` (>= 0), firing every timer due on the way, in order. */
  advance(ms: number): void {
    const target = this.#target(ms);
    const errors: unknown[] = [];
    for (let t = this.#takeDue(target); t; t = this.#takeDue(target)) {
      try {
        t.fn();
      } catch (err) {
        errors.push(err);
      }
    }
    this.#now = target;
    if (errors.length > 0) throw errors[0];
  }

  /**
   * Like `advance`, but yields to the real event loop before and after each fired timer, so
   * `await`-chains woken by a timer can set further timers that still fire within this window.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#target(ms);
    const errors: unknown[] = [];
    await realMacrotask();
    for (let t = this.#takeDue(target); t; t = this.#takeDue(target)) {
      try {
        t.fn();
      } catch (err) {
        errors.push(err);
      }
      await realMacrotask();
    }
    this.#now = target;
    await realMacrotask();
    if (errors.length > 0) throw errors[0];
  }

  /** Sets the wall time to `ms` (not before now) by advancing, firing due timers: `advance(ms - now())`. */
  setTime(ms: number): void {
    this.advance(ms - this.now());
  }

  #target(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`FakeClock cannot move by ${ms} ms`);
    return this.#now + ms;
  }

  #peekLive(): FakeTimer | undefined {
    let top = this.#timers.peek();
    while (top?.cancelled) {
      this.#timers.pop();
      top = this.#timers.peek();
    }
    return top;
  }

  /** Removes and returns the earliest live timer due at or before `target`, moving `now` to it. */
  #takeDue(target: number): FakeTimer | undefined {
    const top = this.#peekLive();
    if (!top || top.at > target) return undefined;
    this.#timers.pop();
    top.cancelled = true; // fired: a later cancel() is a no-op
    this.#live--;
    if (top.at > this.#now) this.#now = top.at;
    return top;
  }
}
