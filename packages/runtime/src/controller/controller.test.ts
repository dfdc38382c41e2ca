import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../clock/index.ts';
import { PermanentError, TemporaryError } from '../reconcile/index.ts';
import type { Request, Result } from '../reconcile/index.ts';
import { ApiError, apiErrorFromResponse, isFieldManagerConflict } from '../client/index.ts';
import { Controller, LeadershipLostError, newReconcileId } from './controller.ts';

const log = pino({ level: 'silent' });
const tick = () => new Promise((r) => setImmediate(r));

function harness(behaviour: (req: Request, n: number) => Promise<Result | void>, opts: { resyncPeriodMs?: number; workers?: number } = {}) {
  const clock = new FakeClock(1_000_000);
  const calls: string[] = [];
  let n = 0;
  const controller = new Controller(
    { name: 't', log, clock, reconciler: { reconcile: (req) => { calls.push(req.key); return behaviour(req, n++); } } },
    { resyncPeriodMs: opts.resyncPeriodMs ?? 60_000, resyncJitter: 0, maxConcurrentReconciles: opts.workers ?? 1, shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  return { clock, calls, controller, stop, running };
}

test('success schedules the periodic check; deleted objects are not re-checked', async () => {
  const h = harness(async () => {});
  h.controller.enqueue('ns/a');
  await tick();
  assert.deepEqual(h.calls, ['ns/a']);
  await h.clock.advanceAsync(59_999);
  await tick();
  assert.equal(h.calls.length, 1);
  await h.clock.advanceAsync(1);
  await tick();
  assert.equal(h.calls.length, 2, 'looked at again after the resync period');
  h.stop.abort();
  await h.running;
});

test('errors back off exponentially; permanent errors wait for a change; temporary errors use their delay', async () => {
  const h = harness(async (req, n) => {
    if (req.key === 'ns/perm') throw new PermanentError('InvalidSpec', 'bad');
    if (req.key === 'ns/temp') throw new TemporaryError('VendorDown', 'later', { retryAfterMs: 3_000 });
    if (n < 3) throw new Error('boom');
  }, { resyncPeriodMs: 0 });
  h.controller.enqueue('ns/a');
  await tick();
  await h.clock.advanceAsync(5);
  await tick();
  await h.clock.advanceAsync(10);
  await tick();
  assert.deepEqual(h.calls, ['ns/a', 'ns/a', 'ns/a'], 'retried after 5 ms then 10 ms');
  h.controller.enqueue('ns/perm');
  await tick();
  await h.clock.advanceAsync(100_000);
  await tick();
  assert.equal(h.calls.filter((k) => k === 'ns/perm').length, 1, 'no retry of a permanent error');
  h.controller.enqueue('ns/perm');
  await tick();
  assert.equal(h.calls.filter((k) => k === 'ns/perm').length, 2, 'a change (new event) tries again');
  h.controller.enqueue('ns/temp');
  await tick();
  await h.clock.advanceAsync(2_999);
  await tick();
  assert.equal(h.calls.filter((k) => k === 'ns/temp').length, 1);
  await h.clock.advanceAsync(1);
  await tick();
  assert.equal(h.calls.filter((k) => k === 'ns/temp').length, 2);
  h.stop.abort();
  await h.running;
});

test('TemporaryError (or Retry-After) of 0 ms is a rate-limited retry, never "now": no tight loop', async () => {
  // Each key fails its first 50 reconciles (bounded, so the old tight loop ends and the test reports it).
  const count = (key: string) => h.calls.filter((k) => k === key).length;
  const h = harness(async (req) => {
    if (req.key === 'ns/zero' && count('ns/zero') <= 50) throw new TemporaryError('Superseded', 'looking again', { retryAfterMs: 0 });
    if (req.key === 'ns/api' && count('ns/api') <= 50) throw new ApiError({ reason: 'TooManyRequests', code: 429, message: 'slow down', retryAfterMs: 0 });
  }, { resyncPeriodMs: 0 });
  h.controller.enqueue('ns/zero');
  for (let i = 0; i < 20; i++) await tick();
  assert.equal(h.calls.length, 1, `reconciled ${h.calls.length} times without the clock moving: a tight loop`);
  await h.clock.advanceAsync(5);
  await tick();
  assert.equal(h.calls.length, 2, 'first retry after the per-key backoff (5 ms)');
  await h.clock.advanceAsync(9);
  await tick();
  assert.equal(h.calls.length, 2);
  await h.clock.advanceAsync(1);
  await tick();
  assert.equal(h.calls.length, 3, 'then 10 ms: exponential');
  assert.equal(h.controller.queue.numRequeues('ns/zero'), 3);
  h.controller.enqueue('ns/api');
  for (let i = 0; i < 20; i++) await tick();
  assert.equal(count('ns/api'), 1, 'Retry-After: 0 is rate limited too');
  h.stop.abort();
  await h.running;
});

test('conflicts requeue at once (with the small per-key backoff); requeueAfter is honoured', async () => {
  const h = harness(async (req, n) => {
    if (req.key === 'ns/c' && n === 0) throw new ApiError({ reason: 'Conflict', code: 409, message: 'stale' });
    if (req.key === 'ns/r' && h.calls.filter((k) => k === 'ns/r').length === 1) return { requeueAfterMs: 500 };
  }, { resyncPeriodMs: 0 });
  h.controller.enqueue('ns/c');
  await tick();
  await h.clock.advanceAsync(5);
  await tick();
  assert.equal(h.calls.filter((k) => k === 'ns/c').length, 2);
  h.controller.enqueue('ns/r');
  await tick();
  await h.clock.advanceAsync(500);
  await tick();
  assert.equal(h.calls.filter((k) => k === 'ns/r').length, 2);
  h.stop.abort();
  await h.running;
});

test('never two reconciles of one key at once; a key added meanwhile runs again afterwards', async () => {
  let active = 0;
  let maxSameKey = 0;
  const release: (() => void)[] = [];
  const h = harness(async () => {
    active++;
    maxSameKey = Math.max(maxSameKey, active);
    await new Promise<void>((r) => release.push(r));
    active--;
  }, { workers: 4, resyncPeriodMs: 0 });
  h.controller.enqueue('ns/a');
  await tick();
  h.controller.enqueue('ns/a');
  h.controller.enqueue('ns/a');
  await tick();
  assert.equal(release.length, 1);
  release.shift()!();
  await tick();
  await tick();
  assert.equal(release.length, 1, 'the re-added key ran once more, merged');
  release.shift()!();
  await tick();
  assert.equal(maxSameKey, 1);
  assert.equal(h.calls.length, 2);
  h.stop.abort();
  await h.running;
});

test('shutdown stops intake and lets in-flight work finish within the grace period', async () => {
  let finished = false;
  let sawAbort = false;
  const h = harness(async (_req, _n) => {
    await new Promise((r) => setTimeout(r, 20));
    finished = true;
  });
  h.controller.enqueue('ns/a');
  await tick();
  h.stop.abort();
  await tick();
  h.controller.enqueue('ns/b');
  await h.running;
  assert.equal(finished, true, 'in-flight reconcile completed before start() settled');
  assert.deepEqual(h.calls, ['ns/a'], 'no intake after shutdown began');
  // A reconcile that outlives the grace period has its signal aborted.
  const h3clock = new FakeClock();
  const c = new Controller(
    { name: 'slow', log, clock: h3clock, reconciler: { reconcile: (_r, signal) => new Promise((resolve) => signal.addEventListener('abort', () => { sawAbort = true; resolve(); })) } },
    { shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = c.start(stop.signal);
  c.enqueue('ns/x');
  await tick();
  stop.abort();
  await tick();
  await h3clock.advanceAsync(1_000);
  await running;
  assert.equal(sawAbort, true);
});

test('abortNow during the grace period: in-flight reconciles are aborted at once and no further key is taken', async () => {
  const clock = new FakeClock(0);
  const started: string[] = [];
  const aborted: string[] = [];
  const c = new Controller(
    {
      name: 'drain',
      log,
      clock,
      reconciler: {
        reconcile: (req, signal) => {
          started.push(req.key);
          return new Promise<void>((resolve) => {
            const timer = clock.setTimer(10_000, resolve);
            signal.addEventListener('abort', () => { timer.cancel(); aborted.push(req.key); resolve(); }, { once: true });
          });
        },
      },
    },
    { shutdownGraceMs: 30_000, resyncPeriodMs: 0 },
  );
  const stop = new AbortController();
  const now = new AbortController();
  const running = c.start(stop.signal, now.signal);
  for (let i = 0; i < 10; i++) c.enqueue(`ns/k${i}`);
  await tick();
  stop.abort(new Error('SIGTERM')); // graceful: the in-flight reconcile may finish within 30 s
  await clock.advanceAsync(1_000);
  await tick();
  assert.deepEqual([started, aborted, c.inFlightKeys()], [['ns/k0'], [], ['ns/k0']]);
  now.abort(new LeadershipLostError('leadership lost')); // the lease is gone: stop now
  await tick();
  assert.deepEqual(aborted, ['ns/k0'], 'the in-flight reconcile saw its signal abort at once');
  await running;
  assert.deepEqual(started, ['ns/k0'], 'no key taken after the cut');
  assert.equal(clock.pendingTimers(), 0);
});

test('abortNow in the tick a key is handed to a waiting worker: no reconcile starts', async () => {
  const calls: string[] = [];
  const c = new Controller({ name: 'x', reconciler: { reconcile: async (req) => void calls.push(req.key) }, log });
  const stop = new AbortController();
  const abortNow = new AbortController();
  const running = c.start(stop.signal, abortNow.signal);
  await new Promise((r) => setTimeout(r, 10)); // the worker waits for a key
  c.enqueue('ns/a'); // handed straight to it
  abortNow.abort(new LeadershipLostError('lost'));
  await new Promise((r) => setTimeout(r, 10));
  stop.abort();
  await running;
  assert.deepEqual(calls, []);
});

test('debug: one "reconcile done" line per successful reconcile, with its result and duration', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const debugLog = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const clock = new FakeClock(1_000_000);
  const controller = new Controller(
    { name: 'dbg', log: debugLog, clock, reconciler: { reconcile: async (req) => (req.key === 'ns/later' ? { requeueAfterMs: 2_500 } : {}) } },
    { resyncPeriodMs: 0, shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  controller.enqueue('ns/a');
  controller.enqueue('ns/later');
  for (let i = 0; i < 5; i++) await tick();
  stop.abort();
  await running;
  const done = lines.filter((l) => l.msg === 'reconcile done');
  assert.deepEqual(done.map((l) => [l.name, l.result, typeof l.durationMs, l.requeueAfterMs, l.controller, typeof l.reconcileID]), [
    ['a', 'success', 'number', undefined, 'dbg', 'string'],
    ['later', 'requeue_after', 'number', 2_500, 'dbg', 'string'],
  ]);
});

test('a create refused because the namespace is being terminated is done: no retry, no warning, a debug line', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const debugLog = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const clock = new FakeClock(1_000_000);
  const calls: string[] = [];
  const terminating = apiErrorFromResponse(403, {
    kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403,
    message: 'services "web" is forbidden: unable to create new content in namespace gone because it is being terminated',
    details: { causes: [{ reason: 'NamespaceTerminating', message: 'namespace gone is being terminated', field: 'metadata.namespace' }] },
  });
  const controller = new Controller(
    { name: 'ns', log: debugLog, clock, reconciler: { reconcile: async (req) => { calls.push(req.key); throw terminating; } } },
    { resyncPeriodMs: 0, shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  controller.enqueue('gone/web');
  await tick();
  await clock.advanceAsync(60_000);
  await tick();
  stop.abort();
  await running;
  assert.deepEqual(calls, ['gone/web'], 'not retried');
  assert.deepEqual(lines.filter((l) => (l.level as number) >= 40), [], 'no warning or error');
  assert.ok(lines.some((l) => l.msg === 'the namespace is being terminated; nothing more to do' && l.level === 20));
});

test('reconcile IDs: 12 hex characters, distinct across many pool refills', () => {
  const ids = Array.from({ length: 5_000 }, () => newReconcileId());
  assert.ok(ids.every((id) => /^[0-9a-f]{12}$/.test(id)), 'every ID is 12 lowercase hex characters');
  assert.equal(new Set(ids).size, ids.length, 'no ID repeats');
});

test('a permanent failure is warned about once, not at every periodic check while it lasts; a new one, or the same after a success, is warned again', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const debugLog = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const clock = new FakeClock(1_000_000);
  let outcome: 'bad' | 'worse' | 'ok' = 'bad';
  const controller = new Controller(
    { name: 'perm', log: debugLog, clock, reconciler: { reconcile: async () => { if (outcome !== 'ok') throw new PermanentError('InvalidSpec', outcome); } } },
    { resyncPeriodMs: 10_000, resyncJitter: 0, shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  const warnings = () => lines.filter((l) => l.level === 40 && l.msg === 'reconcile failed permanently; waiting for a change').map((l) => l.err);
  controller.enqueue('ns/a');
  await tick();
  for (let i = 0; i < 6; i++) { await clock.advanceAsync(10_000); await tick(); }
  assert.deepEqual(warnings(), ['bad'], 'seven reconciles, one warning');
  assert.equal(lines.filter((l) => l.level === 20 && l.msg === 'reconcile failed permanently; waiting for a change (as before)').length, 6);
  outcome = 'worse';
  await clock.advanceAsync(10_000); await tick();
  outcome = 'ok';
  await clock.advanceAsync(10_000); await tick();
  outcome = 'worse';
  await clock.advanceAsync(10_000); await tick();
  assert.deepEqual(warnings(), ['bad', 'worse', 'worse']);
  stop.abort();
  await running;
});

test('a Server-Side Apply conflict with another field manager is a failure, not an optimistic-lock conflict: warned, counted as an error, backed off', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const debugLog = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const clock = new FakeClock(1_000_000);
  const owned = apiErrorFromResponse(409, {
    kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409,
    message: 'Apply failed with 1 conflict: conflict with "hpa-controller": .spec.replicas',
    details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "hpa-controller"', field: '.spec.replicas' }] },
  });
  assert.equal(isFieldManagerConflict(owned), true);
  assert.equal(owned.transient, false, 'the same apply is refused the same way');
  const controller = new Controller(
    { name: 'ssa', log: debugLog, clock, reconciler: { reconcile: async () => { throw owned; } } },
    { resyncPeriodMs: 0, shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  controller.enqueue('ns/a');
  await tick();
  stop.abort();
  await running;
  assert.ok(!lines.some((l) => l.msg === 'conflict; re-reading and retrying'), 'not taken for a stale read');
  assert.ok(lines.some((l) => (l.level as number) >= 40 && JSON.stringify(l).includes("hpa-controller")), 'a warning names the other manager');
});

test('a permanent failure of a key whose primary does not exist is not remembered (nothing would ever clear it): told again the next time', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const debugLog = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const clock = new FakeClock(1_000_000);
  const controller = new Controller(
    { name: 'ghost', log: debugLog, clock, exists: (key) => key !== 'ns/ghost', reconciler: { reconcile: async () => { throw new PermanentError('NotFound', 'mapped to a name that does not exist'); } } },
    { resyncPeriodMs: 10_000, resyncJitter: 0, shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  const warnings = () => lines.filter((l) => l.level === 40 && l.msg === 'reconcile failed permanently; waiting for a change').length;
  controller.enqueue('ns/ghost');
  await tick();
  controller.enqueue('ns/ghost');
  await tick();
  assert.equal(warnings(), 2, 'no entry kept for a key with no primary');
  stop.abort();
  await running;
});

test('a reconcile that fails during the shutdown grace period is not logged as retried: the key is left to the next start or leader', async () => {
  const lines: { msg: string; level: number }[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => { lines.push(JSON.parse(s) as { msg: string; level: number }); } });
  let release!: () => void;
  const c = new Controller({ name: 't', log, clock: new FakeClock(1_000_000), reconciler: { reconcile: () => new Promise((_r, rej) => { release = () => rej(new Error('boom')); }) } }, { shutdownGraceMs: 5_000, resyncPeriodMs: 0 });
  const stop = new AbortController();
  const running = c.start(stop.signal);
  c.enqueue('ns/a');
  await new Promise((r) => setImmediate(r));
  stop.abort();
  await new Promise((r) => setImmediate(r));
  release();
  await running;
  const msgs = lines.map((l) => l.msg);
  assert.ok(!msgs.some((m) => /retrying with backoff|will retry/.test(m)), msgs.join('\n'));
  assert.ok(msgs.includes('reconcile failed while stopping; left to the next start'), msgs.join('\n'));
  assert.equal(c.queue.delayedLen() + c.queue.len(), 0);
});

test('a retry at a delay the error names (TemporaryError retryAfterMs, an API server Retry-After) is counted in workqueue_retries_total like any retry', async () => {
  const { RuntimeMetrics } = await import('../metrics/index.ts');
  const metrics = new RuntimeMetrics();
  const clock = new FakeClock(1_000_000);
  let failures = 0;
  const controller = new Controller(
    {
      name: 'retry-count',
      log,
      clock,
      metrics,
      reconciler: {
        reconcile: async (req) => {
          failures++;
          if (req.key === 'ns/vendor') throw new TemporaryError('VendorDown', 'vendor 503', { retryAfterMs: 3_000 });
          if (req.key === 'ns/api') throw new ApiError({ code: 429, reason: 'TooManyRequests', message: 'slow down', retryAfterMs: 2_000 });
          throw new Error('boom');
        },
      },
    },
    { resyncPeriodMs: 0, resyncJitter: 0, maxConcurrentReconciles: 1, shutdownGraceMs: 1_000 },
  );
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  for (const key of ['ns/vendor', 'ns/api', 'ns/plain']) controller.enqueue(key);
  for (let i = 0; i < 10; i++) {
    await tick();
    await clock.advanceAsync(1_000);
  }
  stop.abort();
  await running;
  const retries = Number(/workqueue_retries_total\{name="retry-count"\} (\d+)/.exec(await metrics.registry.metrics())?.[1]);
  assert.ok(failures >= 6, `${failures} failed reconciles`);
  assert.equal(retries, failures, `${failures} failed reconciles, each retried; ${retries} retries counted`);
});
