/**
 * One term of leadership: an AbortSignal that stays live while renewals keep coming within the
 * renew deadline, and aborts the moment they stop (by the injected clock).
 * @module
 */
import type { Clock, Timer } from '../clock/index.ts';

export class LeadershipTerm {
  readonly #controller = new AbortController();
  readonly #clock: Clock;
  readonly #renewDeadlineMs: number;
  readonly #onExpire: (term: LeadershipTerm) => void;
  #timer: Timer | undefined;
  #deadlineMs = 0;

  /**
   * `startedAtMs` is when the request that won the Lease was *sent*: the deadline is counted
   * from there, which errs on the safe side of any latency.
   */
  constructor(clock: Clock, renewDeadlineMs: number, startedAtMs: number, onExpire: (term: LeadershipTerm) => void) {
    this.#clock = clock;
    this.#renewDeadlineMs = renewDeadlineMs;
    this.#onExpire = onExpire;
    this.renewed(startedAtMs);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get active(): boolean {
    return !this.#controller.signal.aborted;
  }

  /** Epoch ms after which this term is over unless renewed. */
  get deadlineMs(): number {
    return this.#deadlineMs;
  }

  /** A renewal sent at `sentAtMs` succeeded: the deadline moves to `sentAtMs + renewDeadline`. */
  renewed(sentAtMs: number): void {
    if (!this.active) return;
    this.#deadlineMs = Math.max(this.#deadlineMs, sentAtMs + this.#renewDeadlineMs);
    this.#timer?.cancel();
    this.#timer = this.#clock.setTimer(this.#deadlineMs - this.#clock.now(), () => {
      if (!this.active) return;
      this.end(new Error(`leadership lost: lease not renewed within ${this.#renewDeadlineMs} ms`));
      this.#onExpire(this);
    });
  }

  /** Ends the term (idempotent): the signal aborts with `reason`. */
  end(reason: Error): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.active) this.#controller.abort(reason);
  }
}
