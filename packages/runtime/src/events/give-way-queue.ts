/**
 * The event recorder's write queue: one writer, in order, that lets other work go first.
 *
 * The recorder decides what to write (series, budgets, drops); this queue decides when. It
 * knows nothing of Events: a task is something to write, queued at a monotonic time, urgent or
 * not (the recorder's Warnings are urgent).
 *
 * Guarantees:
 * - One write at a time, in the order tasks were pushed, never from inside the caller's stack.
 * - While `giveWayTo()` returns true, the task at the head waits, until whichever comes first:
 *   its own cap after it was queued (`maxGiveWayMs` when urgent, `maxNormalGiveWayMs`
 *   otherwise), the cap of the first urgent task behind it (so an urgent task never waits longer
 *   than its cap for the routine ones ahead of it), a `hurry()` or `close()`. A `giveWayTo`
 *   that throws counts as false. `gaveWay` counts the tasks that waited.
 * - After `close()`, nothing more is written: queued tasks are dropped, a waiting head is woken.
 *
 * Assumptions: tasks are pushed in order of `queuedAt` (monotonic ms of the clock passed), and
 * `write` never rejects (the recorder counts and logs its own failures).
 * @module
 */
import type { Clock } from '../clock/index.ts';

/** How often a head that gives way asks `giveWayTo` again. */
const GIVE_WAY_POLL_MS = 100;

export interface GiveWayTask {
  /** Monotonic ms when it was queued. */
  queuedAt: number;
  /** Waits at most `maxGiveWayMs`, and shortens the wait of the tasks ahead of it. */
  urgent: boolean;
}

export interface GiveWayQueueOptions<T extends GiveWayTask> {
  clock: Clock;
  /** Writes one task; must not reject. */
  write: (task: T) => Promise<void>;
  /** Other work goes first while this returns true; without it, tasks are written at once. */
  giveWayTo?: () => boolean;
  /** The longest an urgent task gives way. */
  maxGiveWayMs: number;
  /** The longest any other task gives way. */
  maxNormalGiveWayMs: number;
}

export class GiveWayQueue<T extends GiveWayTask> {
  readonly #opts: GiveWayQueueOptions<T>;
  readonly #tasks: T[] = [];
  /** Urgent tasks in `#tasks`: while there are none, the head's own cap is its deadline (no scan). */
  #urgent = 0;
  /** Held while the owner hurries (a flush): the head stops giving way. */
  #hurrying = 0;
  /** Wakes a head waiting in `#giveWay`. */
  #wake: (() => void) | undefined;
  /** The writer, while it runs; cleared in the same synchronous step that sees the queue empty. */
  #writer: Promise<void> | undefined;
  #closed = false;
  #gaveWay = 0;

  constructor(options: GiveWayQueueOptions<T>) {
    this.#opts = options;
  }

  /** Tasks queued and not yet taken by the writer. */
  get length(): number {
    return this.#tasks.length;
  }

  /** True while the writer runs (tasks queued or one being written). */
  get busy(): boolean {
    return this.#writer !== undefined;
  }

  /** Tasks that gave way before they were written. */
  get gaveWay(): number {
    return this.#gaveWay;
  }

  /** Queues a task (ignored once closed) and starts the writer if it is not running. */
  push(task: T): void {
    if (this.#closed) return;
    this.#tasks.push(task);
    if (task.urgent) this.#urgent++;
    this.#writer ??= this.#run();
  }

  /** Until the returned function is called, no task gives way (a waiting head goes at once). */
  hurry(): () => void {
    this.#hurrying++;
    this.#wake?.();
    let released = false;
    return () => {
      if (!released) this.#hurrying--;
      released = true;
    };
  }

  /** Drops the queued tasks and writes nothing more; a write in progress finishes. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#tasks.length = 0;
    this.#urgent = 0;
    this.#wake?.();
  }

  /** Waits until the writer has nothing left, or `timeoutMs` of real time passed. Never rejects. */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.#writer && performance.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#writer, new Promise((r) => (timer = setTimeout(r, Math.max(0, deadline - performance.now()))))]);
      clearTimeout(timer);
    }
  }

  async #run(): Promise<void> {
    try {
      await Promise.resolve(); // never write from inside the caller's stack
      for (let task = this.#tasks[0]; task && !this.#closed; task = this.#tasks[0]) {
        await this.#giveWay(task);
        if (this.#closed) break;
        this.#tasks.shift();
        if (task.urgent) this.#urgent--;
        await this.#opts.write(task);
      }
    } finally {
      this.#writer = undefined;
    }
  }

  /** Waits while `giveWayTo()` says other work goes first, until the head's deadline, a hurry or a close. */
  async #giveWay(head: T): Promise<void> {
    const { giveWayTo, clock } = this.#opts;
    if (!giveWayTo) return;
    let waited = false;
    for (;;) {
      if (this.#closed || this.#hurrying > 0) break;
      const left = this.#deadline(head) - clock.monotonic();
      if (left <= 0 || !this.#othersFirst(giveWayTo)) break;
      waited = true;
      await new Promise<void>((resolve) => {
        const timer = clock.setTimer(Math.min(GIVE_WAY_POLL_MS, left), () => done());
        const done = (): void => {
          timer.cancel();
          this.#wake = undefined;
          resolve();
        };
        this.#wake = done;
      });
    }
    if (waited) this.#gaveWay++;
  }

  /** When the head stops giving way: its own cap, or the cap of the first urgent task behind it. */
  #deadline(head: T): number {
    const { maxGiveWayMs, maxNormalGiveWayMs } = this.#opts;
    const own = head.queuedAt + (head.urgent ? maxGiveWayMs : maxNormalGiveWayMs);
    // Polled every GIVE_WAY_POLL_MS while many routine tasks wait: no scan without an urgent one.
    if (this.#urgent === 0) return own;
    // Tasks are in order of queuedAt and every urgent one has the same cap: the first one's comes first.
    for (const t of this.#tasks) {
      if (t.urgent) return Math.min(own, t.queuedAt + maxGiveWayMs);
    }
    return own;
  }

  #othersFirst(giveWayTo: () => boolean): boolean {
    try {
      return giveWayTo();
    } catch {
      return false;
    }
  }
}
