/**
 * Property-based search of the Manager's lifecycle promises (the header of `manager.ts`) under
 * random schedules, without an API server: no informer kind is declared, so the shared cache
 * starts no watch (its `start` and `waitForSync` are wrapped to script it); controllers are
 * added with `addController` (as `manager.test.ts` does); leader election is a scripted
 * `Elector` following the leader-election contract; time is a `FakeClock` (the manager, its
 * controllers and their queues run on it; no real timer is involved).
 *
 * Searched, per schedule: 0–3 controllers (1–3 workers, their own grace period or the
 * manager's, periodic checks or none) whose reconciles are scripted per call: finish after N ms
 * ignoring their signal (done, requeue, requeueAfter), throw after N ms, finish after N ms or
 * honour their abort signal after M ms (M may be 0), or hang until the test lets them go; keys
 * enqueued at random times; always-on runnables ("servers") and leader-only runnables that fail
 * at once or at a random time, return on their own, take a while to stop, or reject while
 * stopping; a cache that takes a while to sync (with a random `cacheSyncTimeoutMs`), fails, or
 * takes a while to stop; with or without an elector, which takes a while to lead, loses the
 * Lease the moment it gets it or at a random time (also during the graceful drain), takes a
 * while to release it, or whose `run` fails (while leading that is also a loss); the start
 * signal aborting (graceful stop) at a random time, or before `start`; random `shutdownGraceMs`
 * and `abortTimeoutMs`.
 *
 * Checked, against a trace of what happened (fake time, and a sequence number for order):
 * - `start` settles (the test drives the clock to a bounded horizon; a manager that waits for
 *   ever fails instead of hanging the test);
 * - the outcome follows the precedence `DrainTimeoutError` > `LeadershipLostError` >
 *   `RunnableFailedError` (naming the first runnable that failed, with its error as the cause)
 *   > a plain stop resolving; `DrainTimeoutError` exactly when leader-only work was still
 *   running when the manager stopped waiting, listing exactly that work, caused by
 *   `LeadershipLostError` after a loss; `CacheSyncTimeoutError` when the caches did not sync in
 *   time and nothing had stopped the manager first, with nothing leader-only run;
 * - the drain bound: the manager stops waiting for leader-only work at `stop + max grace +
 *   abortTimeoutMs`, or `loss + abortTimeoutMs`, whichever is first, and not earlier unless
 *   the work returned; the work is told to stop in the instant the stop began;
 * - reconcile signals abort exactly at `stop + the controller's grace`, or at the loss; on a
 *   loss, checked on the spot before the clock moves: every in-flight reconcile's signal and
 *   every leader-only runnable's signal has aborted; no reconcile starts once the manager began
 *   to stop (start signal, loss, or a failure it has heard of), nor after the stuck work the
 *   test lets go at the end has returned;
 * - the lease: released on a clean stop while leading, abandoned (before leader election is
 *   told to stop) and not released on a drain timeout, neither after a loss; `run` once only;
 * - start order: always-on runnables → cache → synced → leader election → leading →
 *   controllers and leader-only runnables; stop order: leader-only work returned (unless given
 *   up on) → leader election told to stop and returned → cache told to stop and returned →
 *   always-on runnables told to stop and returned → `start` settles;
 * - no timer of the manager (or its controllers and queues) is left pending once `start`
 *   settles, nor once the stuck work has returned.
 *
 * Not covered here (they need an API server or real sockets): real watches and their sync,
 * `/readyz`, the metrics and probe servers themselves (`manager.test.ts` has examples).
 *
 * Runs 200 schedules; `CONVERGE_RELIABILITY_LONG=1` runs 2,000. Each run must see each of the
 * four outcomes of the precedence at least once (a guard against a generator gone blind). A
 * failure prints fast-check's seed:
 * `CONVERGE_FC_SEED=<seed> npm run test:unit -- packages/runtime/src/manager/manager.property.test.ts`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { KubeConfig } from '../kubeconfig/index.ts';
import { Controller, LeadershipLostError } from '../controller/index.ts';
import { FakeClock } from '../clock/index.ts';
import type { Clock, Timer } from '../clock/index.ts';
import type { Result } from '../reconcile/index.ts';
import { CacheSyncTimeoutError, DrainTimeoutError, Manager, RunnableFailedError, type Elector, type Runnable } from './index.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = LONG ? 2_000 : 200;
/** Fake ms by which every schedule must have settled (stop ≤ 300, grace ≤ 120, abort ≤ 100, …). */
const HORIZON_MS = 5_000;
const MAX_STEPS = 20_000;

/** How often each outcome came up: the search must reach every one (a guard against a generator gone blind). */
const SEEN = new Map<string, number>();
const log = pino({ level: 'silent' });

/** A kubeconfig for a server that is never contacted (no informer is declared). */
function offlineKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'nobody', token: 'not-a-token' }],
    contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'nobody' }],
    currentContext: 'nowhere',
  });
  return kc;
}
const kubeConfig = offlineKubeConfig();

const realMacrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------------------------------
// Schedules

type Step =
  | { kind: 'finish'; ms: number; result: 'done' | 'requeue' | 'requeueAfter' }
  | { kind: 'throw'; ms: number }
  | { kind: 'honour'; ms: number; afterAbortMs: number }
  | { kind: 'hang' };

interface ControllerPlan {
  workers: number;
  /** The controller's own grace period; undefined: the manager's. */
  graceMs: number | undefined;
  resyncMs: number;
  /** Reconcile behaviours, taken in turn by the controller's successive reconciles. */
  steps: Step[];
}

interface RunnablePlan {
  /** Returns on its own this long after it started (-1: at once), unless told to stop before. */
  failAfterMs: number | undefined;
  /** How it returns on its own: rejects (a failure) or resolves (the manager runs on without it). */
  exit: 'reject' | 'resolve';
  /** Takes this long to return once told to stop. */
  stopMs: number;
  /** Rejects (instead of resolving) when it returns after being told to stop. */
  rejectOnStop: boolean;
}

interface ElectorPlan {
  acquireAfterMs: number;
  /** Driver time at which another replica takes the Lease. */
  loseAt: number | undefined;
  /** Or: this long after the start signal aborts (a loss during the graceful drain). */
  loseAfterStopMs: number | undefined;
  /** The Lease is taken the moment this replica gets it (the manager reads an already aborted `leadership()`). */
  loseOnAcquire: boolean;
  /** `run` rejects this long after it started (-1: at once; while leading the term ends too). */
  failAfterMs: number | undefined;
  /** How long releasing the Lease takes. */
  releaseMs: number;
}

interface Plan {
  graceMs: number;
  abortMs: number;
  controllers: ControllerPlan[];
  always: RunnablePlan[];
  leaderOnly: RunnablePlan[];
  elector: ElectorPlan | undefined;
  enqueues: { at: number; controller: number; key: number }[];
  /** When the start signal aborts; -1: before `start` is called. */
  stopAt: number;
  /**
   * The cache (it runs no watch) is wrapped to take a while to sync, fail at a random time, or
   * take a while to stop.
   */
  cache: { syncAfterMs: number; failAfterMs: number | undefined; stopMs: number };
  /** The manager's `cacheSyncTimeoutMs` (undefined: its default; 0: waits for ever). */
  cacheSyncTimeoutMs: number | undefined;
}

const sometimes = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('finish' as const),
      ms: fc.integer({ min: 0, max: 120 }),
      result: fc.constantFrom('done' as const, 'requeue' as const, 'requeueAfter' as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('throw' as const), ms: fc.integer({ min: 0, max: 80 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('honour' as const),
      ms: fc.integer({ min: 1, max: 300 }),
      afterAbortMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 150 })),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

const controllerArb: fc.Arbitrary<ControllerPlan> = fc.record({
  workers: fc.integer({ min: 1, max: 3 }),
  graceMs: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
  resyncMs: fc.oneof(fc.constant(0), fc.integer({ min: 20, max: 80 })),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 6 }),
});

const runnableArb = (stopMs: fc.Arbitrary<number>): fc.Arbitrary<RunnablePlan> =>
  fc.record({
    failAfterMs: sometimes(fc.oneof({ weight: 1, arbitrary: fc.constant(-1) }, { weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) })),
    exit: fc.oneof({ weight: 4, arbitrary: fc.constant('reject' as const) }, { weight: 1, arbitrary: fc.constant('resolve' as const) }),
    stopMs,
    rejectOnStop: fc.boolean(),
  });

const electorArb: fc.Arbitrary<ElectorPlan> = fc.record({
  acquireAfterMs: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 100 }) }),
  loseAt: sometimes(fc.integer({ min: 0, max: 400 })),
  loseAfterStopMs: sometimes(fc.integer({ min: 0, max: 150 })),
  loseOnAcquire: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  failAfterMs: sometimes(fc.oneof({ weight: 1, arbitrary: fc.constant(-1) }, { weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) })),
  releaseMs: fc.integer({ min: 0, max: 20 }),
});

const planArb: fc.Arbitrary<Plan> = fc.record({
  graceMs: fc.integer({ min: 0, max: 100 }),
  abortMs: fc.integer({ min: 1, max: 100 }),
  controllers: fc.oneof({ weight: 1, arbitrary: fc.constant<ControllerPlan[]>([]) }, { weight: 6, arbitrary: fc.array(controllerArb, { minLength: 1, maxLength: 3 }) }),
  always: fc.array(runnableArb(fc.integer({ min: 0, max: 40 })), { maxLength: 2 }),
  leaderOnly: fc.array(
    runnableArb(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 60 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 250 }) })),
    { maxLength: 2 },
  ),
  elector: fc.option(electorArb, { freq: 4, nil: undefined }),
  enqueues: fc.array(
    fc.record({ at: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 250 })), controller: fc.nat(2), key: fc.nat(3) }),
    { minLength: 1, maxLength: 20 },
  ),
  stopAt: fc.oneof(
    { weight: 1, arbitrary: fc.constant(-1) },
    { weight: 10, arbitrary: fc.integer({ min: 0, max: 300 }) },
    { weight: 10, arbitrary: fc.integer({ min: 60, max: 300 }) },
  ),
  cache: fc.record({
    syncAfterMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }) }),
    failAfterMs: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 300 }) }),
    stopMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 })),
  }),
  cacheSyncTimeoutMs: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 150 }) },
  ),
});

// ---------------------------------------------------------------------------------------------
// The trace

/** When something happened: fake time, and a sequence number for the order within one instant. */
interface Mark {
  at: number;
  seq: number;
}

interface ReconcileRec {
  /** `controller/key`, as `DrainTimeoutError.stuck` names it. */
  readonly id: string;
  readonly controller: number;
  readonly started: Mark;
  readonly signal: AbortSignal;
  aborted?: Mark;
  ended?: Mark;
  release(): void;
}

interface RunnableRec {
  readonly name: string;
  readonly leaderOnly: boolean;
  readonly started: Mark;
  asked?: Mark;
  returned?: Mark;
  release(): void;
}

class Trace {
  readonly clock: FakeClock;
  #seq = 0;
  readonly lines: string[] = [];
  readonly violations: string[] = [];
  readonly reconciles: ReconcileRec[] = [];
  readonly runnables: RunnableRec[] = [];
  /** The first reason the manager had to stop (start signal, failed runnable, loss). */
  stopBegan: { at: number; by: string } | undefined;
  /**
   * The manager has begun to stop: the driver aborted the start signal or took the Lease (the
   * manager hears of both synchronously), or the controllers' stop signal aborted (a failed
   * runnable is heard of once its rejection is handled, a few microtasks later).
   */
  stopping: { seq: number; by: string } | undefined;
  /** The controllers' stop signal aborted (or a leader-only runnable's). */
  workStop: Mark | undefined;
  firstFailure: { name: string; error: Error; at: number } | undefined;
  lossAt: number | undefined;
  /** The (wrapped) cache told the manager it synced. */
  synced: Mark | undefined;
  cacheStarted: Mark | undefined;
  /** Each call of the elector's `run` (one at most: it does not campaign again). */
  readonly electorRuns: Mark[] = [];
  readonly controllersStarted: Mark[] = [];
  /** The elector handed leadership to the manager (its `whenLeader` resolved). */
  granted: Mark | undefined;
  abandoned: Mark | undefined;
  released: Mark | undefined;
  electorStop: Mark | undefined;
  electorReturned: Mark | undefined;
  cacheStop: Mark | undefined;
  cacheReturned: Mark | undefined;
  /** The manager stopped waiting for leader-only work: the first of "elector told to stop", "cache told to stop". */
  drainEnd: { mark: Mark; stillRunning: string[] } | undefined;

  constructor(clock: FakeClock) {
    this.clock = clock;
  }

  mark(): Mark {
    return { at: this.clock.monotonic(), seq: this.#seq++ };
  }

  note(line: string): void {
    this.lines.push(`t=${this.clock.monotonic()} ${line}`);
  }

  beginStop(by: string, heard: boolean): void {
    if (heard) this.stopping ??= { seq: this.#seq++, by };
    this.stopBegan ??= { at: this.clock.monotonic(), by };
  }

  workStopped(): void {
    if (this.workStop) return;
    this.workStop = this.mark();
    this.stopping ??= { seq: this.workStop.seq, by: 'the controllers were told to stop' };
  }

  failed(name: string, error: Error): void {
    this.note(`${name} FAILS (${error.message})`);
    this.firstFailure ??= { name, error, at: this.clock.monotonic() };
    this.beginStop(`${name} failed`, false);
  }

  lost(): void {
    this.note('LEADERSHIP LOST');
    this.lossAt = this.clock.monotonic();
    this.beginStop('leadership lost', true);
  }

  /** Leader-only work still running: reconciles and leader-only runnables that have not returned. */
  running(): string[] {
    return [
      ...this.reconciles.filter((r) => !r.ended).map((r) => r.id),
      ...this.runnables.filter((r) => r.leaderOnly && !r.returned).map((r) => r.name),
    ];
  }

  endOfDrain(): void {
    if (this.drainEnd) return;
    this.drainEnd = { mark: this.mark(), stillRunning: this.running() };
    this.note(`drain over; still running: [${this.drainEnd.stillRunning.join(', ')}]`);
  }
}

/** The manager's clock: the FakeClock, counting the timers the manager, controllers and queues leave pending. */
class CountingClock implements Clock {
  readonly #inner: FakeClock;
  pending = 0;

  constructor(inner: FakeClock) {
    this.#inner = inner;
  }

  now(): number {
    return this.#inner.now();
  }

  monotonic(): number {
    return this.#inner.monotonic();
  }

  setTimer(ms: number, fn: () => void): Timer {
    let live = true;
    const done = (): void => {
      if (!live) return;
      live = false;
      this.pending--;
    };
    this.pending++;
    const timer = this.#inner.setTimer(ms, () => {
      done();
      fn();
    });
    return {
      cancel: () => {
        done();
        timer.cancel();
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        timer.cancel();
        reject(signal?.reason);
      };
      const timer = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Scripted parts

/**
 * Leader election as the contract in `../leader-election` describes it, scripted: leads after
 * `acquireAfterMs`; `lose()` ends the term and the run (no release); when `run`'s signal aborts
 * while leading, the term ends, then the Lease is released (taking `releaseMs`); `abandon()`
 * ends the term and the run at once, releasing nothing.
 */
class ScriptedElector implements Elector {
  readonly #trace: Trace;
  readonly #plan: ElectorPlan;
  readonly #term = new AbortController();
  readonly #waiters = new Set<() => void>();
  readonly #timers: Timer[] = [];
  #leading = false;
  #ended = true;
  #endRun: ((error?: Error) => void) | undefined;

  constructor(trace: Trace, plan: ElectorPlan) {
    this.#trace = trace;
    this.#plan = plan;
  }

  run(signal: AbortSignal): Promise<void> {
    const clock = this.#trace.clock;
    this.#ended = false;
    this.#trace.electorRuns.push(this.#trace.mark());
    return new Promise<void>((resolve, reject) => {
      this.#endRun = (error) => {
        if (this.#ended) return;
        this.#ended = true;
        for (const t of this.#timers) t.cancel();
        this.#trace.electorReturned = this.#trace.mark();
        this.#trace.note(`leader election returned${error ? ` (rejects: ${error.message})` : ''}`);
        if (error) reject(error);
        else resolve();
      };
      const onAbort = (): void => {
        this.#trace.electorStop = this.#trace.mark();
        this.#trace.note('leader election told to stop');
        this.#trace.endOfDrain();
        if (this.#ended) return;
        for (const t of this.#timers) t.cancel();
        if (this.#leading && !this.#term.signal.aborted) {
          this.#term.abort(new Error('leader election stopped'));
          const release = (): void => {
            this.#trace.released = this.#trace.mark();
            this.#trace.note('lease released');
            this.#endRun?.();
          };
          if (this.#plan.releaseMs === 0) release();
          else clock.setTimer(this.#plan.releaseMs, release);
        } else {
          this.#endRun?.();
        }
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      if (this.#plan.acquireAfterMs === 0) this.#lead();
      else this.#timers.push(clock.setTimer(this.#plan.acquireAfterMs, () => this.#lead()));
      const failAfter = this.#plan.failAfterMs;
      if (failAfter === -1) this.#fail();
      else if (failAfter !== undefined) this.#timers.push(clock.setTimer(failAfter, () => this.#fail()));
    });
  }

  #lead(): void {
    if (this.#ended || this.#leading) return;
    this.#leading = true;
    this.#trace.note('leading');
    for (const waiter of [...this.#waiters]) waiter();
    this.#waiters.clear();
    if (this.#plan.loseOnAcquire) this.lose();
  }

  #grant(): void {
    if (this.#trace.granted) return;
    this.#trace.granted = this.#trace.mark();
    this.#trace.note('manager told it leads');
  }

  #fail(): void {
    if (this.#ended) return;
    const error = new Error('leader election: the Lease API keeps answering 500');
    if (this.#leading && !this.#term.signal.aborted) {
      this.#trace.lost();
      this.#term.abort(new Error('leader election failed'));
    }
    this.#trace.failed('leader election', error);
    this.#endRun?.(error);
  }

  whenLeader(signal: AbortSignal): Promise<void> {
    if (this.#leading) {
      this.#grant();
      return Promise.resolve();
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(signal.reason);
      };
      const waiter = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.#grant();
        resolve();
      };
      this.#waiters.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  leadership(): AbortSignal {
    return this.#leading ? this.#term.signal : AbortSignal.abort(new Error('not leading'));
  }

  isLeader(): boolean {
    return this.#leading && !this.#term.signal.aborted;
  }

  abandon(): void {
    this.#trace.abandoned = this.#trace.mark();
    this.#trace.note('lease abandoned');
    if (!this.#term.signal.aborted) this.#term.abort(new Error('abandoned'));
    this.#endRun?.();
  }

  /** Another replica takes the Lease. False when there was nothing to lose (not leading, or the run is over). */
  lose(): boolean {
    if (this.#ended || !this.#leading || this.#term.signal.aborted) return false;
    this.#trace.lost();
    this.#term.abort(new Error('lease taken by another replica'));
    this.#endRun?.(); // a lost term ends the run (client-go): no release
    return true;
  }
}

function scriptedRunnable(trace: Trace, name: string, leaderOnly: boolean, plan: RunnablePlan): Runnable {
  const clock = trace.clock;
  return {
    name,
    start: (signal) =>
      new Promise<void>((resolve, reject) => {
        let failTimer: Timer | undefined;
        const rec: RunnableRec = { name, leaderOnly, started: trace.mark(), release: () => end() };
        trace.runnables.push(rec);
        trace.note(`${name} started`);
        const end = (error?: Error): void => {
          if (rec.returned) return;
          rec.returned = trace.mark();
          failTimer?.cancel();
          trace.note(`${name} returned${error ? ` (rejects: ${error.message})` : ''}`);
          if (error) reject(error);
          else resolve();
        };
        const onAbort = (): void => {
          if (leaderOnly) trace.workStopped();
          rec.asked = trace.mark();
          trace.note(`${name} told to stop`);
          failTimer?.cancel();
          const stopped = (): void => end(plan.rejectOnStop ? new Error(`${name} failed while stopping`) : undefined);
          if (plan.stopMs === 0) stopped();
          else clock.setTimer(plan.stopMs, stopped);
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
        const exit = (): void => {
          if (signal.aborted || rec.returned) return;
          if (plan.exit === 'resolve') {
            trace.note(`${name} returns on its own`);
            return end();
          }
          const error = new Error(`${name} cannot listen: the address is already in use (EADDRINUSE)`);
          trace.failed(name, error);
          end(error);
        };
        const failAfter = plan.failAfterMs;
        if (failAfter === -1) exit();
        else if (failAfter !== undefined && !signal.aborted) failTimer = clock.setTimer(failAfter, exit);
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// One schedule

async function runSchedule(plan: Plan): Promise<void> {
  const clock = new FakeClock(0);
  const managerClock = new CountingClock(clock);
  const trace = new Trace(clock);
  const elector = plan.elector ? new ScriptedElector(trace, plan.elector) : undefined;
  const m = new Manager({
    kubeConfig,
    log,
    clock: managerClock,
    identity: 'property',
    shutdownGraceMs: plan.graceMs,
    abortTimeoutMs: plan.abortMs,
    ...(plan.cacheSyncTimeoutMs !== undefined ? { cacheSyncTimeoutMs: plan.cacheSyncTimeoutMs } : {}),
    ...(elector ? { elector } : {}),
  });

  // Observe the cache's stop (it runs no watch: no kind is declared), and script it: it may fail
  // at a random time, or take a while to return once told to stop.
  const cacheStart = m.cache.start.bind(m.cache);
  m.cache.start = (signal: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      trace.cacheStarted = trace.mark();
      let failTimer: Timer | undefined;
      let returned = false;
      const finish = (error?: Error): void => {
        if (returned) return;
        returned = true;
        failTimer?.cancel();
        trace.cacheReturned = trace.mark();
        trace.note(`cache returned${error ? ` (rejects: ${error.message})` : ''}`);
        if (error) reject(error);
        else resolve();
      };
      signal.addEventListener(
        'abort',
        () => {
          trace.cacheStop = trace.mark();
          trace.note('cache told to stop');
          trace.endOfDrain();
          failTimer?.cancel();
        },
        { once: true },
      );
      cacheStart(signal).then(
        () => (plan.cache.stopMs === 0 ? finish() : void clock.setTimer(plan.cache.stopMs, () => finish())),
        (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
      );
      const failAfter = plan.cache.failAfterMs;
      if (failAfter !== undefined) {
        failTimer = clock.setTimer(failAfter, () => {
          if (signal.aborted || returned) return;
          const error = new Error('cache: the watch cannot be restarted');
          trace.failed('cache', error);
          finish(error);
        });
      }
    });

  m.cache.waitForSync = (signal?: AbortSignal): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      let timer: Timer | undefined;
      const onAbort = (): void => {
        timer?.cancel();
        trace.note('cache sync: no longer waited for');
        reject(signal?.reason);
      };
      const synced = (): void => {
        signal?.removeEventListener('abort', onAbort);
        trace.synced = trace.mark();
        trace.note('caches synced');
        resolve();
      };
      if (plan.cache.syncAfterMs === 0) return synced();
      timer = clock.setTimer(plan.cache.syncAfterMs, synced);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };

  const calls = plan.controllers.map(() => 0);
  const reconcile = (ci: number, key: string, signal: AbortSignal): Promise<Result | void> => {
    const cp = plan.controllers[ci]!;
    const step = cp.steps[calls[ci]!++ % cp.steps.length]!;
    const id = `c${ci}/${key}`;
    trace.note(`${id} reconcile starts (${JSON.stringify(step)})`);
    if (trace.stopping) trace.violations.push(`${id} started at ${clock.monotonic()}, after the manager began to stop (${trace.stopping.by})`);
    if (signal.aborted) trace.violations.push(`${id} started at ${clock.monotonic()} with its signal already aborted`);
    return new Promise<Result | void>((resolve, reject) => {
      const timers: Timer[] = [];
      const rec: ReconcileRec = { id, controller: ci, started: trace.mark(), signal, release: () => end(() => resolve()) };
      trace.reconciles.push(rec);
      const end = (settle: () => void): void => {
        if (rec.ended) return;
        rec.ended = trace.mark();
        for (const t of timers) t.cancel();
        trace.note(`${id} reconcile returns`);
        settle();
      };
      signal.addEventListener(
        'abort',
        () => {
          rec.aborted = trace.mark();
          trace.note(`${id} signal aborted`);
          if (step.kind !== 'honour') return;
          if (step.afterAbortMs === 0) end(() => resolve());
          else timers.push(clock.setTimer(step.afterAbortMs, () => end(() => resolve())));
        },
        { once: true },
      );
      switch (step.kind) {
        case 'finish': {
          const result: Result = step.result === 'requeue' ? { requeue: true } : step.result === 'requeueAfter' ? { requeueAfterMs: 15 } : {};
          timers.push(clock.setTimer(step.ms, () => end(() => resolve(result))));
          break;
        }
        case 'throw':
          timers.push(clock.setTimer(step.ms, () => end(() => reject(new Error('reconcile failed')))));
          break;
        case 'honour':
          timers.push(clock.setTimer(step.ms, () => end(() => resolve())));
          break;
        case 'hang':
          break; // until the test lets it go
      }
    });
  };
  const controllers = plan.controllers.map((cp, ci) => {
    const c = new Controller(
      { name: `c${ci}`, log, clock: m.clock, metrics: m.metrics, reconciler: { reconcile: (req, signal) => reconcile(ci, req.key, signal) } },
      {
        ...m.controllerDefaults,
        maxConcurrentReconciles: cp.workers,
        resyncPeriodMs: cp.resyncMs,
        resyncJitter: 0,
        ...(cp.graceMs !== undefined ? { shutdownGraceMs: cp.graceMs } : {}),
      },
    );
    // Observe when the manager tells the controller to stop.
    const start = c.start.bind(c);
    c.start = (signal: AbortSignal, abortNow?: AbortSignal): Promise<void> => {
      trace.controllersStarted.push(trace.mark());
      if (signal.aborted) trace.workStopped();
      else signal.addEventListener('abort', () => trace.workStopped(), { once: true });
      return start(signal, abortNow);
    };
    m.addController(c);
    return c;
  });
  m.add(scriptedRunnable(trace, 'servers', false, { failAfterMs: undefined, exit: 'reject', stopMs: 0, rejectOnStop: false }), { needLeaderElection: false });
  plan.always.forEach((rp, i) => m.add(scriptedRunnable(trace, `server ${i}`, false, rp), { needLeaderElection: false }));
  plan.leaderOnly.forEach((rp, i) => m.add(scriptedRunnable(trace, `leader-only ${i}`, true, rp)));

  type Outcome = { ok: true } | { ok: false; error: unknown };
  let outcome: Outcome | undefined;
  let settled: Mark | undefined;
  let pendingAtSettle = -1;
  const onSettled = (o: Outcome): void => {
    outcome = o;
    settled = trace.mark();
    pendingAtSettle = managerClock.pending;
    trace.note(`start settles: ${o.ok ? 'resolved' : String(o.error)}`);
  };
  const stop = new AbortController();
  const stopNow = (): void => {
    trace.note('START SIGNAL ABORTS (graceful stop)');
    trace.beginStop('start signal', true);
    stop.abort(new Error('SIGTERM'));
  };
  if (plan.stopAt < 0) stopNow();
  void m.start(stop.signal).then(
    () => onSettled({ ok: true }),
    (error: unknown) => onSettled({ ok: false, error }),
  );

  const fail = (message: string): never =>
    assert.fail(`${message}\n  trace (last 100 lines):\n    ${trace.lines.slice(-100).join('\n    ')}`);
  const expect = (ok: boolean, message: string): void => {
    if (!ok) fail(message);
  };

  type DriverEvent = { at: number; what: 'enqueue'; controller: number; key: number } | { at: number; what: 'stop' } | { at: number; what: 'lose' };
  const events: DriverEvent[] = [
    ...plan.enqueues.map((e) => ({ ...e, what: 'enqueue' as const })),
    ...(plan.stopAt >= 0 ? [{ at: plan.stopAt, what: 'stop' as const }] : []),
    ...(plan.elector?.loseAt !== undefined ? [{ at: plan.elector.loseAt, what: 'lose' as const }] : []),
    ...(plan.elector?.loseAfterStopMs !== undefined ? [{ at: Math.max(0, plan.stopAt + plan.elector.loseAfterStopMs), what: 'lose' as const }] : []),
  ].sort((a, b) => a.at - b.at);

  const perform = async (e: DriverEvent): Promise<void> => {
    switch (e.what) {
      case 'enqueue': {
        const c = controllers[e.controller % Math.max(1, controllers.length)];
        if (c) {
          trace.note(`enqueue ${c.name} ns/k${e.key}`);
          c.enqueue(`ns/k${e.key}`);
        }
        return;
      }
      case 'stop':
        return stopNow();
      case 'lose': {
        if (!elector?.lose()) return;
        // "At once": before the clock moves, every in-flight reconcile's signal and every
        // leader-only runnable's signal has aborted.
        await realMacrotask();
        for (const r of trace.reconciles) {
          if (!r.ended && !r.signal.aborted) trace.violations.push(`${r.id}: its signal did not abort at once on the loss at ${trace.lossAt}`);
        }
        for (const r of trace.runnables) {
          if (r.leaderOnly && !r.returned && !r.asked) trace.violations.push(`${r.name} was not told to stop at once on the loss at ${trace.lossAt}`);
        }
        return;
      }
    }
  };

  // Drive the clock: to the next timer or driver event, whichever comes first, until start settles.
  let next = 0;
  for (let steps = 0; steps < MAX_STEPS && !settled; steps++) {
    const target = Math.min(events[next]?.at ?? Infinity, clock.nextTimerAt() ?? Infinity);
    if (target === Infinity || target > HORIZON_MS) break;
    await clock.advanceAsync(Math.max(0, target - clock.monotonic()));
    while (!settled && next < events.length && events[next]!.at <= clock.monotonic()) await perform(events[next++]!);
    await realMacrotask();
  }
  if (!settled || !outcome) {
    return fail(`start did not settle (fake time ${clock.monotonic()}, ${managerClock.pending} manager timers pending, nothing else scheduled: ${clock.nextTimerAt() === undefined})`);
  }

  try {
    expect(trace.violations.length === 0, trace.violations.join('\n'));
    expect(pendingAtSettle === 0, `${pendingAtSettle} manager timer(s) left pending when start settled`);
    const drain = trace.drainEnd;
    if (!drain) return fail('start settled without stopping leader election or the cache');
    const E = drain.mark;
    const actual = outcome.ok ? 'resolved' : outcome.error instanceof Error ? outcome.error.name : String(outcome.error);
    SEEN.set(actual, (SEEN.get(actual) ?? 0) + 1);

    // The caches did not sync in time: CacheSyncTimeoutError, unless a stop began first (ties go either way).
    const syncTimeout = plan.cacheSyncTimeoutMs === undefined ? 120_000 : plan.cacheSyncTimeoutMs > 0 ? plan.cacheSyncTimeoutMs : Infinity;
    const begun = trace.stopBegan;
    const syncMustTimeOut = syncTimeout < plan.cache.syncAfterMs && (!begun || begun.at > syncTimeout);
    const syncMayTimeOut = syncTimeout <= plan.cache.syncAfterMs && (!begun || begun.at >= syncTimeout);
    if (!outcome.ok && outcome.error instanceof CacheSyncTimeoutError) {
      expect(syncMayTimeOut, `start: CacheSyncTimeoutError, but the caches sync at ${plan.cache.syncAfterMs} (timeout ${syncTimeout}, stop began at ${begun?.at})`);
      expect(E.at === syncTimeout, `gave up on the caches at ${E.at}, the timeout is ${syncTimeout}`);
      expect(trace.electorRuns.length === 0 && trace.reconciles.length === 0 && !trace.runnables.some((r) => r.leaderOnly), 'leader election or leader-only work ran before the caches synced');
    } else {
      expect(!syncMustTimeOut, `start: expected CacheSyncTimeoutError (caches sync at ${plan.cache.syncAfterMs}, timeout ${syncTimeout}), got ${outcome.ok ? 'resolved' : String(outcome.error)}`);
      const S = begun;
      if (!S) return fail('start settled though nothing told it to stop');
      const worked = elector ? trace.granted !== undefined : trace.synced !== undefined;
      const A = plan.abortMs;
      const G = Math.max(plan.graceMs, ...controllers.map((c) => c.shutdownGraceMs));
      const loss = trace.lossAt;
      const D = worked ? Math.min(S.at + G + A, loss !== undefined ? loss + A : Infinity) : S.at;
      const what = `stop began at ${S.at} (${S.by}), loss at ${loss}, grace ${G}, abort timeout ${A}: drain bound ${D}; drain over at ${E.at}`;

      // Leader-only work is told to stop in the instant the stop began.
      if (worked && (controllers.length > 0 || plan.leaderOnly.length > 0)) {
        expect(trace.workStop?.at === S.at, `the controllers were told to stop at ${trace.workStop?.at}: ${what}`);
      }

      // The drain bound, and no giving up early.
      expect(E.at <= D, `the drain bound is broken: ${what}`);
      const stuck = drain.stillRunning.length > 0;
      if (stuck) {
        expect(E.at === D, `gave up on [${drain.stillRunning.join(', ')}] before the bound: ${what}`);
      } else {
        const ends = [
          ...trace.reconciles.map((r) => r.ended?.at ?? Infinity),
          ...trace.runnables.filter((r) => r.leaderOnly).map((r) => r.returned?.at ?? Infinity),
        ];
        const lastEnd = Math.max(S.at, ...ends);
        expect(E.at === lastEnd, `the drain ended at ${E.at}, but the work returned at ${lastEnd}: ${what}`);
      }

      // Reconcile signals: at the controller's grace after the stop began, at once on a loss.
      for (const r of trace.reconciles) {
        const c = controllers[r.controller]!;
        const cut = Math.min(S.at + c.shutdownGraceMs, loss ?? Infinity);
        // (The controller aborts every signal once it stopped: one of a reconcile that returned does not count.)
        if (r.aborted && (!r.ended || r.aborted.seq < r.ended.seq)) expect(r.aborted.at === cut, `${r.id}'s signal aborted at ${r.aborted.at}, expected at ${cut} (controller grace ${c.shutdownGraceMs}): ${what}`);
        const inFlightAtCut = r.started.at <= cut && (r.ended === undefined || r.ended.at > cut);
        if (inFlightAtCut) expect(r.aborted !== undefined, `${r.id} (started at ${r.started.at}) was in flight at ${cut}, its signal never aborted: ${what}`);
      }

      // Outcome and precedence.
      const expected = stuck ? 'DrainTimeoutError' : loss !== undefined ? 'LeadershipLostError' : trace.firstFailure ? 'RunnableFailedError' : 'resolved';
      expect(actual === expected, `start: expected ${expected}, got ${outcome.ok ? 'resolved' : String(outcome.error)} (first failure: ${trace.firstFailure?.name}): ${what}`);
      if (!outcome.ok && outcome.error instanceof DrainTimeoutError) {
        const err = outcome.error;
        assert.deepEqual([...err.stuck].sort(), [...drain.stillRunning].sort(), `DrainTimeoutError.stuck (${err.message})`);
        expect((err.cause instanceof LeadershipLostError) === (loss !== undefined), `DrainTimeoutError's cause ${String(err.cause)} (loss at ${loss})`);
      }
      if (!outcome.ok && outcome.error instanceof RunnableFailedError) {
        expect(outcome.error.runnable === trace.firstFailure?.name, `RunnableFailedError names ${outcome.error.runnable}, the first failure was ${trace.firstFailure?.name}`);
        expect(outcome.error.cause === trace.firstFailure?.error, `RunnableFailedError's cause is not the runnable's error: ${String(outcome.error.cause)}`);
        expect(outcome.error.message.includes(outcome.error.runnable) && outcome.error.message.includes(trace.firstFailure!.error.message), `RunnableFailedError's message: ${outcome.error.message}`);
      }

      // The lease.
      if (elector) {
        if (stuck) {
          expect(trace.abandoned !== undefined && trace.released === undefined, `drain timeout: abandoned ${!!trace.abandoned}, released ${!!trace.released} (want abandoned, not released)`);
          expect(trace.abandoned!.seq < trace.electorStop!.seq, 'the lease was abandoned only after leader election was told to stop');
        } else if (loss !== undefined || !trace.granted) {
          expect(!trace.abandoned && !trace.released, `${loss !== undefined ? 'after a loss' : 'never leading'}: abandoned ${!!trace.abandoned}, released ${!!trace.released}`);
        } else {
          expect(trace.released !== undefined && !trace.abandoned, `clean stop while leading: abandoned ${!!trace.abandoned}, released ${!!trace.released} (want released)`);
        }
      }
    }

    // Start order: always-on runnables → cache, synced → leader election → leading → controllers and leader-only runnables.
    const cacheStarted = trace.cacheStarted;
    if (!cacheStarted) return fail('the cache was never started');
    for (const r of trace.runnables.filter((x) => !x.leaderOnly)) expect(r.started.seq < cacheStarted.seq, `${r.name} started after the cache`);
    expect(trace.electorRuns.length <= 1, `leader election ran ${trace.electorRuns.length} times`);
    const electorRun = trace.electorRuns[0];
    if (electorRun) expect(trace.synced !== undefined && trace.synced.seq < electorRun.seq, 'leader election started before the caches synced');
    const leaderWorkStarts = [...trace.controllersStarted, ...trace.runnables.filter((x) => x.leaderOnly).map((x) => x.started)];
    const mayLead = elector ? trace.granted : trace.synced;
    for (const started of leaderWorkStarts) {
      expect(mayLead !== undefined && mayLead.seq < started.seq, `leader-only work started at ${started.at} before ${elector ? 'leading' : 'the caches synced'}`);
    }

    // Stop order: leader-only work → leader election (stopped, returned) → cache → always-on runnables.
    const always = trace.runnables.filter((r) => !r.leaderOnly);
    const cacheStop = trace.cacheStop;
    const cacheReturned = trace.cacheReturned;
    if (!cacheStop || !cacheReturned) return fail('the cache was not stopped');
    for (const r of trace.runnables.filter((x) => x.leaderOnly)) {
      expect(r.asked !== undefined && r.asked.seq < E.seq, `${r.name} was not told to stop before the drain ended`);
    }
    if (trace.electorRuns.length > 0) {
      expect(trace.electorStop !== undefined && trace.electorReturned !== undefined, 'leader election was not stopped');
      expect(trace.electorReturned!.seq < cacheStop.seq, 'the cache was stopped before leader election returned (released the Lease)');
    }
    for (const r of always) {
      expect(r.asked !== undefined && r.asked.seq > cacheReturned.seq, `${r.name} was told to stop before the cache returned`);
      expect(r.returned !== undefined && r.returned.seq < settled.seq, `${r.name} had not returned when start settled`);
    }
  } finally {
    // Let stuck work go; whatever it does then must not restart anything or leave timers behind.
    for (const r of trace.reconciles) r.release();
    for (const r of trace.runnables) r.release();
    for (let steps = 0; steps < MAX_STEPS; steps++) {
      await realMacrotask();
      const at = clock.nextTimerAt();
      if (at === undefined) break;
      await clock.advanceAsync(Math.max(0, at - clock.monotonic()));
    }
  }
  expect(trace.violations.length === 0, trace.violations.join('\n'));
  expect(managerClock.pending === 0, `${managerClock.pending} manager timer(s) pending after the stuck work returned`);
}

describe('Manager: lifecycle promises under random schedules', () => {
  it('start settles with the documented outcome, drain bound, lease handling and stop order', async () => {
    SEEN.clear();
    await fc.assert(fc.asyncProperty(planArb, runSchedule), { numRuns: RUNS });
    for (const outcome of ['resolved', 'RunnableFailedError', 'LeadershipLostError', 'DrainTimeoutError']) {
      assert.ok((SEEN.get(outcome) ?? 0) > 0, `no schedule ended in ${outcome}: ${JSON.stringify([...SEEN])}`);
    }
  });
});
