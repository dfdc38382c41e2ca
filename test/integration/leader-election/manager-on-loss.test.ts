/**
 * The manager and a real LeaderElector on the local control plane, when leadership is lost
 * (the leader's connection to the API server is cut by a TCP proxy):
 * - during a graceful shutdown, the loss aborts the in-flight reconcile at once (it would
 *   otherwise run out its 30 s grace period) and `start` rejects with `LeadershipLostError`;
 * - with a reconcile that ignores its abort signal, `start` rejects with `DrainTimeoutError`
 *   within the abort timeout, the elector neither campaigns again nor releases the Lease, and a
 *   standby takes over only once the Lease has expired — after the stuck process gave up.
 */
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMapKind, DrainTimeoutError, KubeClient, LeadershipLostError, LeaderElector, Manager, loadKubeConfig } from '@converge/runtime';
import type { Reconciler } from '@converge/runtime';
import { Leases } from '../../../packages/runtime/src/leader-election/index.ts';
import { kubeconfigPath, testClient, testLogger, testNamespace, eventually, sleep } from '../../support/operator-harness.ts';
import { startTcpProxy } from './tcp-proxy.ts';

const LEASE = 'converge-test-manager';
const TIMINGS = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 500 };

async function partitionableClient(t: TestContext, server: string) {
  const proxy = await startTcpProxy(server);
  t.after(() => proxy.close());
  const kc = loadKubeConfig(kubeconfigPath());
  const current = kc.getCurrentCluster()!;
  kc.clusters = kc.clusters.map((c) => (c.name === current.name ? { ...c, server: proxy.url } : c));
  const client = new KubeClient({ kubeConfig: kc, userAgent: 'converge-test-partitioned', qps: 0 });
  t.after(() => client.close());
  return { proxy, client };
}

async function leaderManager(t: TestContext, ns: string, reconciler: Reconciler, extra: { shutdownGraceMs: number; abortTimeoutMs?: number }) {
  const direct = testClient();
  const { proxy, client: electorClient } = await partitionableClient(t, direct.server);
  const elector = new LeaderElector({ client: electorClient, namespace: ns, name: LEASE, identity: 'leader', log: testLogger(), ...TIMINGS });
  const manager = new Manager({ client: direct, log: testLogger(), namespaces: [ns], elector, ...extra });
  manager.controller('work').for(ConfigMapKind).withOptions({ resyncPeriodMs: 0 }).complete(reconciler);
  const stop = new AbortController();
  const outcome = manager.start(stop.signal).then(() => ({ ok: true as const, at: Date.now() }), (error: unknown) => ({ ok: false as const, error, at: Date.now() }));
  t.after(async () => { stop.abort(); await Promise.race([outcome, sleep(20_000)]); await direct.close(); });
  await eventually(() => elector.isLeader(), { timeoutMs: 15_000, intervalMs: 20, what: 'the manager leads' });
  return { manager, elector, proxy, stop, outcome };
}

describe('manager on a lost lease', { concurrency: false }, () => {
  it('a loss during the graceful drain aborts the in-flight reconcile at once', { timeout: 60_000 }, async (t) => {
    const client = testClient();
    t.after(() => client.close());
    const ns = await testNamespace(t, client, 'mgr-loss');
    let abortedAt: number | undefined;
    let started = 0;
    const reconciler: Reconciler = {
      reconcile: (req, signal) => {
        if (req.name !== 'slow') return Promise.resolve({}); // the namespace's own ConfigMaps
        started++;
        return new Promise((resolve) => {
          const timer = setTimeout(resolve, 30_000);
          signal.addEventListener('abort', () => { clearTimeout(timer); abortedAt = Date.now(); resolve({}); }, { once: true });
        });
      },
    };
    const leader = await leaderManager(t, ns, reconciler, { shutdownGraceMs: 30_000 });
    await client.create(ConfigMapKind, { metadata: { namespace: ns, name: 'slow' } });
    await eventually(() => started === 1, { what: 'the reconcile started' });
    leader.stop.abort(new Error('SIGTERM')); // graceful: 30 s for the reconcile to finish
    await sleep(300);
    const cutAt = Date.now();
    leader.proxy.partition();
    const result = await leader.outcome;
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.error instanceof LeadershipLostError, `start settled with ${JSON.stringify(result)}`);
    assert.ok(abortedAt !== undefined, 'the in-flight reconcile was aborted');
    t.diagnostic(`reconcile aborted ${abortedAt! - cutAt} ms after the cut (renew deadline 4 s); start rejected after ${result.at - cutAt} ms`);
    assert.ok(abortedAt! - cutAt <= TIMINGS.renewDeadlineMs + 500, `aborted ${abortedAt! - cutAt} ms after the cut`);
    assert.equal(started, 1);
  });

  it('a reconcile that ignores its abort signal: start rejects within the abort timeout, the Lease is kept until it expires', { timeout: 60_000 }, async (t) => {
    const client = testClient();
    t.after(() => client.close());
    const ns = await testNamespace(t, client, 'mgr-stuck');
    let started = 0;
    const reconciler: Reconciler = {
      reconcile: (req) => {
        if (req.name !== 'stuck') return Promise.resolve({});
        started++;
        return new Promise(() => {}); // never returns, ignores its signal
      },
    };
    const leader = await leaderManager(t, ns, reconciler, { shutdownGraceMs: 30_000, abortTimeoutMs: 1_000 });
    const standby = new LeaderElector({ client, namespace: ns, name: LEASE, identity: 'standby', log: testLogger(), ...TIMINGS });
    const standbyStop = new AbortController();
    const standbyDone = standby.run(standbyStop.signal);
    t.after(async () => { standbyStop.abort(); await standbyDone; });
    await client.create(ConfigMapKind, { metadata: { namespace: ns, name: 'stuck' } });
    await eventually(() => started === 1, { what: 'the reconcile started' });
    await sleep(1_000); // the standby has seen the latest renewal
    const before = await client.get(Leases, { namespace: ns, name: LEASE });
    const cutAt = Date.now();
    leader.proxy.partition();
    const result = await leader.outcome;
    assert.ok(!result.ok && result.error instanceof DrainTimeoutError, `start settled with ${String(!result.ok && result.error)}`);
    assert.deepEqual(result.error.stuck, [`work/${ns}/stuck`]);
    const rejectedAfter = result.at - cutAt;
    t.diagnostic(`start rejected ${rejectedAfter} ms after the cut (renew deadline 4 s + abort timeout 1 s)`);
    assert.ok(rejectedAfter <= TIMINGS.renewDeadlineMs + 1_000 + 700, `rejected after ${rejectedAfter} ms`);
    leader.proxy.heal(); // the process could reach the API server again: it must still not release or campaign
    await eventually(() => standby.isLeader(), { timeoutMs: 15_000, intervalMs: 20, what: 'the standby takes over' });
    const tookOver = Date.now() - cutAt;
    t.diagnostic(`standby took over ${tookOver} ms after the cut (lease 6 s)`);
    assert.ok(tookOver > rejectedAfter, 'the standby led before the stuck process had given up');
    const after = await client.get(Leases, { namespace: ns, name: LEASE });
    assert.equal(after.spec?.holderIdentity, 'standby');
    assert.equal(after.spec?.leaseTransitions, (before.spec?.leaseTransitions ?? 0) + 1, 'taken over from the stuck leader, not released by it');
    assert.equal(leader.elector.isLeader(), false);
  });
});
