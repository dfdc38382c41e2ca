/**
 * The manager's lifecycle promises, without an API server: leadership lost during a graceful
 * shutdown stops work at once; a reconcile that ignores its abort signal cannot hold the
 * process (bounded drain, the Lease abandoned, not released); a runnable that cannot start
 * (a busy port) fails `start`; `/readyz` is not ok while no watch has ever been answered
 * (a kubeconfig pointing at a closed port). Leader election is a scripted `Elector`; the
 * readiness check runs over real (failing) connections.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { pino } from 'pino';
import { Controller, LeadershipLostError } from '../controller/index.ts';
import { ConfigMapKind } from '../objects/index.ts';
import type { WatchHealth } from '../cache/index.ts';
import { FakeClock } from '../clock/index.ts';
import { closedPort, unreachableKubeConfig } from './unreachable-cluster.test-support.ts';
import { DrainTimeoutError, Manager, RunnableFailedError, readyChecksFor, type Elector } from './index.ts';

const log = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function busyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server };
}

/** A scripted elector: leads at once; `lose()` ends the term; records a release or an abandon. */
class ScriptedElector implements Elector {
  readonly term = new AbortController();
  abandoned = false;
  released = false;
  run(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const end = (): void => {
        if (!this.abandoned && !this.term.signal.aborted) this.released = true;
        if (!this.term.signal.aborted) this.term.abort(new Error('leader election stopped'));
        resolve();
      };
      if (signal.aborted) end();
      signal.addEventListener('abort', end, { once: true });
      this.term.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }
  whenLeader(): Promise<void> {
    return Promise.resolve();
  }
  leadership(): AbortSignal {
    return this.term.signal;
  }
  isLeader(): boolean {
    return !this.term.signal.aborted;
  }
  abandon(): void {
    this.abandoned = true;
    if (!this.term.signal.aborted) this.term.abort(new Error('abandoned'));
  }
  lose(): void {
    this.term.abort(new Error('lease taken'));
  }
}

/** Settles `p` or reports that it did not within `ms` (real time). */
async function within<T>(p: Promise<T>, ms: number): Promise<{ settled: false } | { settled: true; value?: T; error?: unknown }> {
  const timeout = sleep(ms).then(() => ({ settled: false as const }));
  return Promise.race([p.then((value) => ({ settled: true as const, value }), (error: unknown) => ({ settled: true as const, error })), timeout]);
}

async function manager(extra: Partial<ConstructorParameters<typeof Manager>[0]> = {}) {
  return new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log, ...extra });
}

function controllerOf(m: Manager, reconcile: (key: string, signal: AbortSignal) => Promise<void>, graceMs: number): Controller {
  const c = new Controller(
    { name: 'work', log, clock: m.clock, metrics: m.metrics, reconciler: { reconcile: (req, signal) => reconcile(req.key, signal) } },
    { shutdownGraceMs: graceMs, resyncPeriodMs: 0 },
  );
  m.addController(c);
  return c;
}

describe('Manager: leadership lost', () => {
  it('during a graceful shutdown stops work at once and start rejects with LeadershipLostError', async () => {
    const elector = new ScriptedElector();
    const m = await manager({ elector, shutdownGraceMs: 30_000 });
    const started: string[] = [];
    const abortedAt: number[] = [];
    const c = controllerOf(m, (key, signal) => {
      started.push(key);
      return new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 200);
        signal.addEventListener('abort', () => { clearTimeout(t); abortedAt.push(performance.now()); resolve(); }, { once: true });
      });
    }, 30_000);
    const stop = new AbortController();
    const running = m.start(stop.signal);
    await sleep(20);
    for (let i = 0; i < 50; i++) c.enqueue(`ns/k${i}`);
    await sleep(50);
    stop.abort(new Error('SIGTERM')); // graceful: 30 s grace for the in-flight reconcile
    await sleep(50);
    const lostAt = performance.now();
    elector.lose();
    const outcome = await within(running, 2_000);
    assert.ok(outcome.settled, 'start did not settle after leadership was lost during shutdown');
    assert.ok(outcome.error instanceof LeadershipLostError, `start should reject with LeadershipLostError, got ${String(outcome.error)}`);
    assert.equal(abortedAt.length, 1, 'the in-flight reconcile was aborted');
    assert.ok(abortedAt[0]! - lostAt < 50, `aborted ${abortedAt[0]! - lostAt} ms after the loss`);
    const count = started.length;
    await sleep(300);
    assert.equal(started.length, count, 'no reconcile started after the loss');
    assert.ok(count <= 2, `${count} reconciles ran: workers kept dequeuing after the loss`);
    assert.equal(elector.released, false);
  });

  it('a reconcile that ignores its abort signal: start rejects within the abort timeout; the lease is abandoned, not released', async () => {
    const elector = new ScriptedElector();
    const m = await manager({ elector, abortTimeoutMs: 300 });
    let release: (() => void) | undefined;
    const c = controllerOf(m, () => new Promise<void>((resolve) => (release = resolve)), 30_000); // ignores its signal
    const running = m.start(new AbortController().signal);
    await sleep(20);
    c.enqueue('ns/stubborn');
    await sleep(50);
    const lostAt = performance.now();
    elector.lose();
    const outcome = await within(running, 3_000);
    assert.ok(outcome.settled, 'start waited for ever on a reconcile that ignores its signal');
    const ms = performance.now() - lostAt;
    assert.ok(outcome.error instanceof DrainTimeoutError, String(outcome.error));
    assert.deepEqual(outcome.error.stuck, ['work/ns/stubborn']);
    assert.match(outcome.error.message, /still running work\/ns\/stubborn \(a reconcile that ignores its abort signal\); exiting without releasing the lease/);
    assert.ok(outcome.error.cause instanceof LeadershipLostError);
    assert.ok(ms >= 290 && ms < 1_500, `rejected after ${ms} ms (abort timeout 300 ms)`);
    assert.equal(elector.released, false, 'the lease was released while a reconcile still ran');
    release?.();
  });

  it('a graceful stop with a reconcile that ignores its abort signal is bounded by grace + abort timeout', async () => {
    const elector = new ScriptedElector();
    const m = await manager({ elector, shutdownGraceMs: 200, abortTimeoutMs: 200 });
    let release: (() => void) | undefined;
    const c = controllerOf(m, () => new Promise<void>((resolve) => (release = resolve)), 200);
    const stop = new AbortController();
    const running = m.start(stop.signal);
    await sleep(20);
    c.enqueue('ns/stubborn');
    await sleep(50);
    const stoppedAt = performance.now();
    stop.abort();
    const outcome = await within(running, 3_000);
    assert.ok(outcome.settled, 'start waited for ever');
    assert.ok(outcome.error instanceof DrainTimeoutError, String(outcome.error));
    const ms = performance.now() - stoppedAt;
    assert.ok(ms >= 390 && ms < 1_500, `rejected after ${ms} ms (grace 200 + abort 200)`);
    assert.equal(elector.abandoned, true);
    assert.equal(elector.released, false);
    release?.();
  });

  it('a graceful stop whose reconciles finish releases the lease and resolves', async () => {
    const elector = new ScriptedElector();
    const m = await manager({ elector });
    const c = controllerOf(m, async () => void (await sleep(50)), 1_000);
    const stop = new AbortController();
    const running = m.start(stop.signal);
    await sleep(20);
    c.enqueue('ns/a');
    await sleep(10);
    stop.abort();
    const outcome = await within(running, 2_000);
    assert.deepEqual(outcome, { settled: true, value: undefined });
    assert.equal(elector.released, true);
  });
});

describe('Manager: a runnable that cannot start', () => {
  for (const which of ['metrics', 'probe'] as const) {
    it(`a busy ${which} port fails start with a clear message and stops everything`, async () => {
      const { port, server } = await busyPort();
      try {
        const address = `127.0.0.1:${port}`;
        const m = await manager(which === 'metrics' ? { metricsBindAddress: address } : { healthProbeBindAddress: address });
        let reconciles = 0;
        const c = controllerOf(m, async () => void reconciles++, 1_000);
        c.enqueue('ns/a');
        const outcome = await within(m.start(new AbortController().signal), 3_000);
        assert.ok(outcome.settled, 'the manager kept running without its server');
        assert.ok(outcome.error instanceof RunnableFailedError, String(outcome.error));
        assert.equal(outcome.error.runnable, `${which} server`);
        assert.equal(outcome.error.message, `${which} server cannot listen on ${address}: the address is already in use (EADDRINUSE)`);
      } finally {
        server.close();
      }
    });
  }
});

describe('Manager: readiness', () => {
  it('against an unreachable API server, /readyz fails watches-healthy with the connection error', async () => {
    const m = await manager({ healthProbeBindAddress: '127.0.0.1:0' });
    m.cache.informer(ConfigMapKind);
    const stop = new AbortController();
    const running = m.start(stop.signal);
    try {
      const [probe] = await m.serverAddresses();
      let body = '';
      for (let i = 0; i < 100; i++) {
        const res = await fetch(`http://${probe}/readyz?verbose`);
        body = await res.text();
        if (/ECONNREFUSED/.test(body)) {
          assert.equal(res.status, 500);
          break;
        }
        await sleep(50);
      }
      assert.match(body, /\[-\]watches-healthy failed: ConfigMap: .*ECONNREFUSED/);
      assert.match(body, /\[-\]caches-synced failed/);
      assert.doesNotMatch(body, /\[\+\]watches-healthy ok/);
    } finally {
      stop.abort();
      await running;
    }
  });
});

describe('Manager: stopped before it started', () => {
  it('start with an already-aborted signal (a SIGTERM during start-up) settles promptly against an unreachable API server', async () => {
    const m = await manager({ cacheSyncTimeoutMs: 300 });
    m.cache.informer(ConfigMapKind);
    const outcome = await within(m.start(AbortSignal.abort(new Error('SIGTERM'))), 3_000);
    assert.ok(outcome.settled, 'start kept waiting for the caches to sync (not even cacheSyncTimeoutMs ended it)');
    assert.equal(outcome.error, undefined, 'a plain abort resolves');
  });

  it('an informer asked to wait for its sync with an already-aborted signal rejects at once with its reason', async () => {
    const m = await manager();
    const reason = new Error('stop');
    const outcome = await within(m.cache.informer(ConfigMapKind).waitForSync(AbortSignal.abort(reason)), 500);
    assert.ok(outcome.settled && outcome.error === reason, 'waitForSync did not settle');
  });
});

describe('Manager: checks other teams add', () => {
  it('a ready check that throws fails itself only: the built-in checks, and /readyz?exclude= of it, stay as they are', async () => {
    const m = await manager({ healthProbeBindAddress: '127.0.0.1:0' });
    m.addReadyCheck('vendor-api', () => { throw new Error('vendor token missing'); });
    const checks = m.readyChecks();
    assert.deepEqual(checks.map((c) => [c.name, c.ok]), [['caches-synced', true], ['watches-healthy', true], ['vendor-api', false]]);
    assert.match(checks[2]!.detail ?? '', /vendor token missing/);
    const stop = new AbortController();
    const running = m.start(stop.signal);
    try {
      const [probe] = await m.serverAddresses();
      const excluded = await fetch(`http://${probe}/readyz?verbose&exclude=vendor-api`);
      const body = await excluded.text();
      assert.doesNotMatch(body, /vendor token missing/, body);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('a check name the probe server would refuse is refused whether or not a probe server runs, and leaves nothing behind', async () => {
    for (const m of [await manager(), await manager({ healthProbeBindAddress: '127.0.0.1:0' })]) {
      assert.throws(() => m.addReadyCheck('webhookReady', () => ({ ok: true })), /lower-case/);
      assert.deepEqual(m.readyChecks().map((c) => c.name), ['caches-synced', 'watches-healthy']);
      m.addReadyCheck('webhook-ready', () => ({ ok: true }));
      assert.throws(() => m.addHealthCheck('Vendor', () => ({ ok: true })), /lower-case/);
      m.addHealthCheck('vendor-loop', () => ({ ok: true }));
      assert.throws(() => m.addHealthCheck('vendor-loop', () => ({ ok: true })), /already/);
    }
  });
});

describe('readyChecksFor', () => {
  const h = (extra: Partial<WatchHealth>): WatchHealth => ({
    kind: 'Pod', namespace: '', state: 'watching', synced: true, healthy: true, lastProgressAt: 0, lastProgressAgeMs: 0, restarts: 0, relists: 1, consecutiveFailures: 0, ...extra,
  });
  it('ok only when every watch has listed and is not failing', () => {
    assert.deepEqual(readyChecksFor([h({})]), [{ name: 'caches-synced', ok: true }, { name: 'watches-healthy', ok: true }]);
    assert.deepEqual(readyChecksFor([h({ consecutiveFailures: 1, lastError: 'blip' })])[1]?.ok, true, 'one transient failure of a synced watch');
  });
  it('a watch that never listed has nothing healthy to report', () => {
    const [synced, healthy] = readyChecksFor([
      h({ kind: 'Secret', synced: false, state: 'backoff', consecutiveFailures: 1, lastError: 'connect ECONNREFUSED 127.0.0.1:1' }),
      h({ kind: 'Service', namespace: 'team-a', synced: false, state: 'listing' }),
    ]);
    assert.deepEqual(synced, { name: 'caches-synced', ok: false, detail: 'waiting for Secret, Service in team-a' });
    assert.deepEqual(healthy, {
      name: 'watches-healthy',
      ok: false,
      detail: 'Secret: connect ECONNREFUSED 127.0.0.1:1 (1 failure in a row, retrying); Service in team-a: no answer yet (listing)',
    });
  });
  it('a synced watch that keeps failing is not healthy', () => {
    const [, healthy] = readyChecksFor([h({ healthy: false, state: 'backoff', consecutiveFailures: 4, lastError: '503 Service Unavailable' })]);
    assert.deepEqual(healthy, { name: 'watches-healthy', ok: false, detail: 'Pod: 503 Service Unavailable (4 failures in a row, retrying)' });
  });
});

describe('Manager: metrics from the start', () => {
  it('a freshly started manager shows every documented series of its controllers and queues before any reconcile', async () => {
    const m = await manager();
    m.controller('widgets').for(ConfigMapKind).complete(async () => ({}));
    const stop = new AbortController();
    const running = m.start(stop.signal);
    try {
      await sleep(50);
      const text = await m.metrics.registry.metrics();
      const has = (series: string) => text.split('\n').some((line) => line.startsWith(series));
      for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
        assert.ok(has(`controller_runtime_reconcile_total{controller="widgets",result="${result}"} 0`), `reconcile_total result=${result}`);
      }
      for (const series of [
        'controller_runtime_reconcile_errors_total{controller="widgets"} 0',
        'controller_runtime_reconcile_time_seconds_count{controller="widgets"} 0',
        'controller_runtime_max_concurrent_reconciles{controller="widgets"} 1',
        'controller_runtime_active_workers{controller="widgets"} 0',
        'workqueue_depth{name="widgets"} 0',
        'workqueue_adds_total{name="widgets"} 0',
        'workqueue_queue_duration_seconds_count{name="widgets"} 0',
        'workqueue_work_duration_seconds_count{name="widgets"} 0',
        'workqueue_retries_total{name="widgets"} 0',
        'workqueue_unfinished_work_seconds{name="widgets"} 0',
        'workqueue_longest_running_processor_seconds{name="widgets"} 0',
        'converge_longest_unconverged_seconds{controller="widgets"} 0',
        'converge_watch_healthy{kind="ConfigMap",namespace=""} 0',
        'converge_watch_last_event_age_seconds{kind="ConfigMap",namespace=""}',
        'converge_watch_relists_total{kind="ConfigMap"} 0',
      ]) {
        assert.ok(has(series), `missing: ${series}`);
      }
      for (const reason of ['quiet', 'error', 'gone', 'closed']) {
        assert.ok(has(`converge_watch_restarts_total{kind="ConfigMap",reason="${reason}"}`), `watch_restarts_total reason=${reason}`);
      }
    } finally {
      stop.abort();
      await running;
    }
  });
});

describe('Manager: the leader gauge', () => {
  it('with an elector, leader_election_master_status is there from the start under the Lease\'s name: 0 on a standby, 1 while leading', async () => {
    class Standby extends ScriptedElector {
      readonly leaseName = 'team-lease';
      leading = false;
      override isLeader(): boolean {
        return this.leading;
      }
    }
    const elector = new Standby();
    const m = await manager({ elector });
    assert.match(await m.metrics.registry.metrics(), /^leader_election_master_status\{name="team-lease"\} 0$/m);
    elector.leading = true;
    assert.match(await m.metrics.registry.metrics(), /^leader_election_master_status\{name="team-lease"\} 1$/m);
    elector.leading = false;
    assert.match(await m.metrics.registry.metrics(), /^leader_election_master_status\{name="team-lease"\} 0$/m);
  });

  it('without an elector there is no leader gauge (every replica reconciles)', async () => {
    const m = await manager();
    assert.doesNotMatch(await m.metrics.registry.metrics(), /^leader_election_master_status\{/m);
  });
});

describe('Manager: /debug/unconverged', () => {
  it('?limit must be a whole number from 1 to 1000: anything else is a 400 naming it, not an empty list', async () => {
    const m = await manager({ metricsBindAddress: '127.0.0.1:0' });
    m.controller('widgets').for(ConfigMapKind).complete(async () => ({}));
    const stop = new AbortController();
    const running = m.start(stop.signal);
    try {
      const [address] = await m.serverAddresses();
      const get = async (query: string) => {
        const res = await fetch(`http://${address}/debug/unconverged${query}`);
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      assert.deepEqual(await get(''), { status: 200, body: { widgets: { oldestAgeSeconds: 0, top: [] } } });
      assert.equal((await get('?limit=1000')).status, 200);
      for (const bad of ['abc', '', '0', '-1', '2.5', '1001', '1e3', 'NaN']) {
        const r = await get(`?limit=${bad}`);
        assert.equal(r.status, 400, `?limit=${bad}`);
        assert.match(String(r.body['error']), /limit must be a whole number from 1 to 1000/);
      }
    } finally {
      stop.abort();
      await running.catch(() => undefined);
    }
  });
});

describe('Manager: metricsAuth', () => {
  it("'kubernetes' puts the metrics server (not the probe server) behind the API server's reviews: 401 without a token, 503 when the API server cannot answer; 'none' (the default) serves anyone; anything else is refused", async () => {
    await assert.rejects(manager({ metricsAuth: 'Kubernetes' as 'kubernetes' }), RangeError);
    for (const metricsAuth of [undefined, 'none', 'kubernetes'] as const) {
      const m = await manager({ metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0', ...(metricsAuth ? { metricsAuth } : {}) });
      const stop = new AbortController();
      const running = m.start(stop.signal);
      try {
        const [metrics, probe] = await m.serverAddresses();
        const status = async (path: string, token?: string) => (await fetch(`http://${metrics}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })).status;
        if (metricsAuth === 'kubernetes') {
          assert.equal(await status('/metrics'), 401);
          assert.equal(await status('/debug/unconverged'), 401);
          assert.equal(await status('/metrics', 'some-token'), 503, 'the cluster is unreachable: never allowed');
        } else {
          assert.equal(await status('/metrics'), 200, String(metricsAuth));
        }
        assert.equal((await fetch(`http://${probe}/healthz`)).status, 200, 'the kubelet probes without a token');
      } finally {
        stop.abort();
        await running.catch(() => undefined);
      }
    }
  });
});

describe('Manager: watch age across a wall-clock step', () => {
  it('converge_watch_last_event_age_seconds is monotonic: a wall clock stepped forward 2 h does not age the watch 2 h', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const m = await manager({ clock });
    m.controller('widgets').for(ConfigMapKind).complete(async () => ({}));
    const stop = new AbortController();
    const running = m.start(stop.signal);
    try {
      await sleep(50);
      clock.stepWall(2 * 3_600_000);
      await clock.advanceAsync(3_000);
      const text = await m.metrics.registry.metrics();
      const line = text.split('\n').find((l) => l.startsWith('converge_watch_last_event_age_seconds{kind="ConfigMap"'));
      assert.ok(line, 'the series is there');
      assert.equal(Number(line.split(' ').at(-1)), 3, line);
    } finally {
      stop.abort();
      await running;
    }
  });
});

describe('Manager: work-stopped hooks', () => {
  it('run once the controllers have drained and before the Lease is released, told whether this process still leads', async () => {
    const elector = new ScriptedElector();
    const m = await manager({ elector, shutdownGraceMs: 5_000 });
    const order: string[] = [];
    const c = controllerOf(m, async (key) => {
      await sleep(100);
      order.push(`reconciled ${key}`);
    }, 5_000);
    m.onWorkStopped(async (leading) => {
      await sleep(20);
      order.push(`hook (leading ${leading}, lease released ${elector.released})`);
    });
    const stop = new AbortController();
    const running = m.start(stop.signal);
    await sleep(20);
    c.enqueue('ns/a');
    await sleep(20);
    stop.abort();
    await running;
    assert.deepEqual(order, ['reconciled ns/a', 'hook (leading true, lease released false)']);
    assert.equal(elector.released, true);
  });

  it('after leadership is lost they run told so (nothing may be written any more)', async () => {
    const elector = new ScriptedElector();
    const m = await manager({ elector });
    const seen: boolean[] = [];
    m.onWorkStopped(async (leading) => void seen.push(leading));
    const running = m.start(new AbortController().signal);
    await sleep(20);
    elector.lose();
    await assert.rejects(running, LeadershipLostError);
    assert.deepEqual(seen, [false]);
  });
});

describe('Manager: controller names', () => {
  it('a second controller of the same name is refused, however the two were built (their metrics, queue depth and convergence would merge)', async () => {
    const m = new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log });
    const first = m.controller('dup');
    const second = m.controller('dup');
    const kept = first.for(ConfigMapKind).withOptions({ maxConcurrentReconciles: 4 }).complete(async () => ({}));
    assert.throws(() => second.for(ConfigMapKind).complete(async () => ({})), /controller dup already exists/);
    assert.throws(() => m.controller('dup'), /controller dup already exists/);
    // The refused one did not take over the metrics of the one kept.
    kept.enqueue('ns/a');
    kept.enqueue('ns/b');
    const text = await m.metrics.registry.metrics();
    assert.match(text, /^controller_runtime_max_concurrent_reconciles\{controller="dup"\} 4$/m);
    assert.match(text, /^workqueue_depth\{name="dup"\} 2$/m);
  });
});
