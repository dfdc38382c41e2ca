/**
 * One term of leadership: an AbortSignal that stays live while renewals keep coming within the
 * renew deadline, and aborts the moment they stop. The deadline is on the clock's monotonic
 * time, so a wall-clock step can neither stretch nor shorten a term.
 * @module
 */
import type { Clock, Timer } from '../clock/index.ts';

export class LeadershipTerm {
  readonly #controller = new AbortController();
  readonly #clock: Clock;
  readonly #renewDeadlineMs: number;
  readonly #onExpire: (term: LeadershipTerm) => void;
  #timer: Timer | undefined;
  #deadlineMs = -Infinity;

  /**
   * `startedAtMs` (monotonic) is when the request that won the Lease was *sent*: the deadline is
   * counted from there, which errs on the safe side of any latency.
   */
  constructor(clock: Clock, renewDeadlineMs: number, startedAtMs: number, onExpire: (term: LeadershipTerm) => void) {
    this.#clock = clock;
    this.#renewDeadlineMs = renewDeadlineMs;
    this.#onExpire = onExpire;
    this.#deadlineMs = startedAtMs + renewDeadlineMs;
    this.#arm();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * True until the term ends or its deadline passes. Read from the clock, so it is false from the
   * deadline on even if the event loop has not yet run the timer that aborts the signal.
   */
  get active(): boolean {
    return !this.#controller.signal.aborted && this.#clock.monotonic() < this.#deadlineMs;
  }

  /** Monotonic time after which this term is over unless renewed. */
  get deadlineMs(): number {
    return this.#deadlineMs;
  }

  /**
   * A renewal sent at `sentAtMs` (monotonic) succeeded: the deadline moves to
   * `sentAtMs + renewDeadline`. Too late (the deadline has passed) ends the term instead: a term
   * never comes back to life.
   */
  renewed(sentAtMs: number): void {
    if (!this.active) {
      this.#expire();
      return;
    }
    this.#deadlineMs = Math.max(this.#deadlineMs, sentAtMs + this.#renewDeadlineMs);
    this.#arm();
  }

  /** Ends the term now if its deadline has passed and its timer has not fired yet (a busy loop). */
  expireIfDue(): void {
    if (!this.#controller.signal.aborted && this.#clock.monotonic() >= this.#deadlineMs) this.#expire();
  }

  /** Ends the term (idempotent): the signal aborts with `reason`. */
  end(reason: Error): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  #arm(): void {
    this.#timer?.cancel();
    this.#timer = this.#clock.setTimer(this.#deadlineMs - this.#clock.monotonic(), () => this.#expire());
  }

  #expire(): void {
    if (this.#controller.signal.aborted) return;
    this.end(new Error(`leadership lost: lease not renewed within ${this.#renewDeadlineMs} ms`));
    this.#onExpire(this);
  }
}
