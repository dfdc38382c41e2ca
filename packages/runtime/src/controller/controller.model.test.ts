/**
 * Model-based property test of the worker loop: random sequences of enqueues, reconcile outcomes
 * (every branch of the contract in `../reconcile/index.ts`), clock steps and the three ways to
 * stop (graceful, leadership lost, `abortNow`) run against the real Controller on a FakeClock,
 * checked against a reference model of what the contract promises.
 *
 * Checked at every reconcile's start: never two of one key at once, never more than the worker
 * count, never one after a stop began, and never one without a reason (an enqueue since the
 * key's last start, or a delay the model scheduled that is due). Checked after every step: no
 * key owed a reconcile waits while a worker is free; the in-flight reconciles' signals abort
 * when the contract says (grace over, leadership lost, `abortNow`); `start()` settles exactly
 * when a stop began and nothing is in flight, leaving no timer behind. At the end of a sequence
 * that did not stop: nothing lost (every enqueue and every due delay led to a reconcile).
 *
 * `CONVERGE_RELIABILITY_LONG=1` runs many more sequences.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { FakeClock } from '../clock/index.ts';
import { ApiError, apiErrorFromResponse } from '../client/index.ts';
import type { RateLimiter } from '../queue/index.ts';
import { PermanentError, TemporaryError } from '../reconcile/index.ts';
import type { Result } from '../reconcile/index.ts';
import { Controller, LeadershipLostError } from './controller.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = LONG ? 3_000 : 300;

const KEYS = ['ns/a', 'ns/b', 'ns/c', 'ns/d'];
const RESYNC_MS = 100;
const GRACE_MS = 50;
const BACKOFF_BASE_MS = 5;
const BACKOFF_MAX_MS = 80;

type Outcome =
  | 'done'
  | 'requeueAfter'
  | 'requeue'
  | 'permanent'
  | 'temporary'
  | 'temporaryNoDelay'
  | 'conflict'
  | 'namespaceTerminating'
  | 'apiRetryAfter'
  | 'error';

type Op =
  | { op: 'enqueue'; key: string }
  | { op: 'finish'; pick: number; outcome: Outcome; delay: number }
  | { op: 'advance'; ms: number }
  | { op: 'stop' }
  | { op: 'leadershipLost' }
  | { op: 'abortNow' };

const OUTCOMES: Outcome[] = ['done', 'requeueAfter', 'requeue', 'permanent', 'temporary', 'temporaryNoDelay', 'conflict', 'namespaceTerminating', 'apiRetryAfter', 'error'];

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('enqueue' as const), key: fc.constantFrom(...KEYS) }) },
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant('finish' as const), pick: fc.nat(5), outcome: fc.constantFrom(...OUTCOMES), delay: fc.integer({ min: 0, max: 60 }) }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 70 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'stop' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'leadershipLost' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'abortNow' as const }) },
);

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const settle = async (): Promise<void> => {
  for (let i = 0; i < 4; i++) await tick();
};

/** A deterministic per-key backoff the model can compute: 5, 10, 20, 40, 80, 80 … ms. */
function testBackoff(): RateLimiter {
  const failures = new Map<string, number>();
  return {
    when(key) {
      const n = failures.get(key) ?? 0;
      failures.set(key, n + 1);
      return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** n);
    },
    forget: (key) => void failures.delete(key),
    retries: (key) => failures.get(key) ?? 0,
  };
}

const terminating = (): ApiError =>
  apiErrorFromResponse(403, {
    kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403,
    message: 'unable to create new content in namespace ns because it is being terminated',
    details: { causes: [{ reason: 'NamespaceTerminating', message: 'namespace ns is being terminated' }] },
  });

interface Call {
  readonly key: string;
  readonly startedAt: number;
  readonly signal: AbortSignal;
  readonly resolve: (r: Result | void) => void;
  readonly reject: (e: unknown) => void;
}

/** What the contract promises about one key. */
interface KeyModel {
  /** Enqueued (or a delay came due) since its last reconcile started: a reconcile is owed. */
  owed: boolean;
  /** A delay the controller took on for it (requeue, retry, periodic check), earliest kept. */
  delayedTo: number | undefined;
  /** Its backoff count since the last `forget`. */
  failures: number;
}

/** A delay that has come due is an enqueue (the queue's timer fires at its deadline). */
function fire(m: KeyModel, now: number): void {
  if (m.delayedTo !== undefined && m.delayedTo <= now) {
    m.owed = true;
    m.delayedTo = undefined;
  }
}

type Phase = 'running' | 'graceful' | 'cut';

async function run(ops: Op[], workers: number, resync: boolean): Promise<void> {
  const clock = new FakeClock(0);
  const violations: string[] = [];
  const inFlight: Call[] = [];
  const keys = new Map<string, KeyModel>(KEYS.map((k) => [k, { owed: false, delayedTo: undefined, failures: 0 }]));
  let phase: Phase = 'running';
  let graceEndsAt = Infinity;
  let starts = 0;

  const controller = new Controller(
    {
      name: 'model',
      log: pino({ level: 'silent' }),
      clock,
      reconciler: {
        reconcile: (req, signal) => {
          starts++;
          const now = clock.monotonic();
          const m = keys.get(req.key)!;
          if (phase !== 'running') violations.push(`${req.key} started at ${now} after the stop began (${phase})`);
          if (inFlight.some((c) => c.key === req.key)) violations.push(`${req.key} started at ${now} while in flight`);
          if (inFlight.length >= workers) violations.push(`${req.key} started at ${now} with ${inFlight.length} of ${workers} workers busy`);
          if (signal.aborted) violations.push(`${req.key} started at ${now} with an aborted signal`);
          fire(m, now);
          if (!m.owed) violations.push(`${req.key} started at ${now} without a reason (next delay ${m.delayedTo})`);
          m.owed = false;
          return new Promise<Result | void>((resolve, reject) => inFlight.push({ key: req.key, startedAt: now, signal, resolve, reject }));
        },
      },
    },
    { maxConcurrentReconciles: workers, resyncPeriodMs: resync ? RESYNC_MS : 0, resyncJitter: 0, shutdownGraceMs: GRACE_MS, rateLimiter: testBackoff() },
  );
  const stop = new AbortController();
  const now = new AbortController();
  let settled = false;
  const running = controller.start(stop.signal, now.signal).then(() => void (settled = true));

  const schedule = (m: KeyModel, at: number): void => {
    fire(m, clock.monotonic());
    m.delayedTo = m.delayedTo === undefined ? at : Math.min(m.delayedTo, at);
  };
  const backoff = (m: KeyModel, at: number): void => {
    schedule(m, at + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** m.failures));
    m.failures++;
  };
  const periodic = (m: KeyModel, at: number): void => {
    m.failures = 0;
    if (resync) schedule(m, at + RESYNC_MS);
  };

  /** Settles one in-flight reconcile and records what the controller must do about it. */
  const finish = (call: Call, outcome: Outcome, delay: number): void => {
    inFlight.splice(inFlight.indexOf(call), 1);
    const t = clock.monotonic();
    const m = keys.get(call.key)!;
    // After a stop the queue takes nothing on; an aborted reconcile is not retried either.
    const counts = phase === 'running' && !call.signal.aborted;
    switch (outcome) {
      case 'done':
        if (counts) periodic(m, t);
        return call.resolve(undefined);
      case 'requeueAfter':
        if (counts) {
          if (delay > 0) (m.failures = 0), schedule(m, t + delay);
          else periodic(m, t);
        }
        return call.resolve({ requeueAfterMs: delay });
      case 'requeue':
        if (counts) backoff(m, t);
        return call.resolve({ requeue: true });
      case 'permanent':
        if (counts) periodic(m, t);
        return call.reject(new PermanentError('InvalidSpec', 'bad input'));
      case 'temporary':
        if (counts) {
          if (delay > 0) schedule(m, t + delay);
          else backoff(m, t);
        }
        return call.reject(new TemporaryError('VendorDown', 'later', { retryAfterMs: delay }));
      case 'temporaryNoDelay':
        if (counts) backoff(m, t);
        return call.reject(new TemporaryError('VendorDown', 'later'));
      case 'conflict':
        if (counts) backoff(m, t);
        return call.reject(new ApiError({ reason: 'Conflict', code: 409, message: 'stale' }));
      case 'namespaceTerminating':
        if (counts) m.failures = 0;
        return call.reject(terminating());
      case 'apiRetryAfter':
        if (counts) {
          if (delay > 0) schedule(m, t + delay);
          else backoff(m, t);
        }
        return call.reject(new ApiError({ reason: 'TooManyRequests', code: 429, message: 'slow down', retryAfterMs: delay }));
      case 'error':
        if (counts) backoff(m, t);
        return call.reject(new Error('boom'));
    }
  };

  const check = async (where: string): Promise<void> => {
    await settle();
    assert.deepEqual(violations, [], where);
    const t = clock.monotonic();
    const mustBeAborted = phase === 'cut' || (phase === 'graceful' && t >= graceEndsAt);
    for (const c of inFlight) {
      if (mustBeAborted) assert.equal(c.signal.aborted, true, `${where}: ${c.key} (started at ${c.startedAt}) must see its signal abort`);
      else assert.equal(c.signal.aborted, false, `${where}: ${c.key} (started at ${c.startedAt}) aborted while the controller runs`);
    }
    if (phase === 'running' && inFlight.length < workers) {
      // A worker is free: every key owed a reconcile is in flight, none waits.
      for (const [k, m] of keys) {
        fire(m, t);
        if (m.owed && !inFlight.some((c) => c.key === k)) assert.fail(`${where}: ${k} is owed a reconcile and waits with a worker free`);
      }
    }
    assert.equal(settled, phase !== 'running' && inFlight.length === 0, `${where}: start() settled=${settled} (phase ${phase}, ${inFlight.length} in flight)`);
    if (settled) assert.equal(clock.pendingTimers(), 0, `${where}: timers left behind after start() settled`);
  };

  const cut = (how: 'leadershipLost' | 'abortNow'): void => {
    if (phase === 'cut') return;
    if (how === 'abortNow') {
      phase = 'cut';
      now.abort(new LeadershipLostError('cut'));
    } else if (phase === 'running') {
      phase = 'cut';
      stop.abort(new LeadershipLostError('leadership lost'));
    }
    // A leadership loss after a graceful stop began changes nothing: the signal is already aborted.
  };

  let step = 0;
  for (const o of ops) {
    step++;
    const where = `step ${step} ${JSON.stringify(o)} at ${clock.monotonic()}`;
    switch (o.op) {
      case 'enqueue':
        if (phase === 'running') keys.get(o.key)!.owed = true;
        controller.enqueue(o.key);
        break;
      case 'finish': {
        const call = inFlight[o.pick % Math.max(1, inFlight.length)];
        if (call) finish(call, o.outcome, o.delay);
        break;
      }
      case 'advance':
        await clock.advanceAsync(o.ms);
        break;
      case 'stop':
        if (phase === 'running') {
          phase = 'graceful';
          graceEndsAt = clock.monotonic() + GRACE_MS;
          stop.abort(new Error('SIGTERM'));
        }
        break;
      case 'leadershipLost':
      case 'abortNow':
        cut(o.op);
        break;
    }
    await check(where);
  }

  if (phase === 'running') {
    // Nothing lost: run every reconcile to success and let every owed delay come due.
    const horizon = clock.monotonic() + 10 * BACKOFF_MAX_MS + RESYNC_MS;
    for (let rounds = 0; rounds < 10_000; rounds++) {
      while (inFlight.length > 0) {
        finish(inFlight[0]!, 'done', 0);
        await settle();
      }
      const next = clock.nextTimerAt();
      if (next === undefined || next > horizon) break;
      await clock.advanceAsync(Math.max(0, next - clock.monotonic()));
      await settle();
    }
    await check('quiesced');
    for (const [k, m] of keys) {
      fire(m, clock.monotonic());
      assert.equal(m.owed, false, `${k} was owed a reconcile and never got it (now ${clock.monotonic()})`);
      assert.ok(m.delayedTo === undefined || m.delayedTo > horizon, `${k} was delayed to ${m.delayedTo} and never reconciled`);
    }
    phase = 'graceful';
    graceEndsAt = clock.monotonic() + GRACE_MS;
    stop.abort(new Error('SIGTERM'));
    await check('stopped');
  }
  // Whatever is still in flight finishes (aborted or not); then start() settles. Bounded, so
  // a controller that kept starting reconciles fails here instead of hanging the test.
  for (let rounds = 0; rounds < 100 && !settled; rounds++) {
    while (inFlight.length > 0) finish(inFlight[0]!, 'error', 0);
    await settle();
  }
  assert.equal(settled, true, `start() never settled (${starts} reconciles started)`);
  await running;
  await check('after start() settled');
}

describe('Controller: the worker loop against a model of the reconcile contract', () => {
  it('random enqueues, outcomes, clock steps and stops', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 80, size: 'max' }), fc.integer({ min: 1, max: 3 }), fc.boolean(), run),
      { numRuns: RUNS },
    );
  });

  it('a graceful stop with keys waiting: the in-flight reconcile finishes, no waiting key starts', async () => {
    await run(
      [
        { op: 'enqueue', key: 'ns/a' },
        { op: 'enqueue', key: 'ns/b' },
        { op: 'enqueue', key: 'ns/c' },
        { op: 'stop' },
        { op: 'finish', pick: 0, outcome: 'done', delay: 0 },
      ],
      1,
      false,
    );
  });

  it('a graceful stop with two workers busy and keys waiting: neither worker takes another key', async () => {
    await run(
      [
        { op: 'enqueue', key: 'ns/a' },
        { op: 'enqueue', key: 'ns/b' },
        { op: 'enqueue', key: 'ns/c' },
        { op: 'enqueue', key: 'ns/d' },
        { op: 'stop' },
        { op: 'finish', pick: 0, outcome: 'done', delay: 0 },
        { op: 'advance', ms: 10 },
        { op: 'finish', pick: 0, outcome: 'error', delay: 0 },
      ],
      2,
      true,
    );
  });
});
