/**
 * Measures how long the event loop has been blocked, for `/healthz`.
 * @module
 */
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';

export interface EventLoopMonitorOptions {
  /** `/healthz` fails when the loop was blocked longer than this (default 5000 ms). */
  thresholdMs?: number;
  /** Length of one measuring window (default 10 000 ms); a block is remembered for 1–2 windows. */
  windowMs?: number;
  /** Sampling resolution of the delay histogram (default 20 ms). */
  resolutionMs?: number;
}

/**
 * Wraps `perf_hooks.monitorEventLoopDelay`. The delay reported is the largest one seen in the
 * current and the previous window, so a block that has just ended is still reported by the next
 * probe. Its timer is unref'd: it never keeps the process alive.
 */
export class EventLoopMonitor {
  readonly thresholdMs: number;
  readonly #windowMs: number;
  readonly #histogram: ELDHistogram;
  #previousMaxMs = 0;
  #timer: NodeJS.Timeout | undefined;
  #users = 0;

  constructor(options: EventLoopMonitorOptions = {}) {
    this.thresholdMs = options.thresholdMs ?? 5_000;
    this.#windowMs = options.windowMs ?? 10_000;
    this.#histogram = monitorEventLoopDelay({ resolution: Math.max(1, options.resolutionMs ?? 20) });
  }

  /** Starts measuring (reference-counted: every `start` needs its `stop`). */
  start(): void {
    if (this.#users++ > 0) return;
    this.#histogram.reset();
    this.#histogram.enable();
    this.#timer = setInterval(() => this.#rotate(), this.#windowMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#users === 0 || --this.#users > 0) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#histogram.disable();
  }

  /** Largest event-loop delay (ms) over the current and previous window. */
  maxDelayMs(): number {
    const current = this.#histogram.count > 0 ? this.#histogram.max / 1e6 : 0;
    return Math.max(current, this.#previousMaxMs);
  }

  blocked(): boolean {
    return this.maxDelayMs() > this.thresholdMs;
  }

  #rotate(): void {
    this.#previousMaxMs = this.#histogram.count > 0 ? this.#histogram.max / 1e6 : 0;
    this.#histogram.reset();
  }
}
