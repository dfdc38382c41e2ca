/**
 * Watches that never die silently, on a control plane of this test's own (it is stopped and
 * restarted, which the shared one must not be): the watch resumes after the API server comes
 * back, relists after etcd compaction expired its resourceVersion without missing an object or
 * re-reporting unchanged ones, and a quiet watch is restarted. The cache reaches the API server
 * through the fault proxy (every event cut, latency; no early closes, which would hide the quiet
 * restarts this file counts), so an outage is seen through a proxy as in a real network.
 */
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { startControlPlane } from '@converge/envtest';
import type { ControlPlane } from '@converge/envtest';
import { Cache, ConfigMapKind, KubeClient, NamespaceKind, loadKubeConfig } from '@converge/runtime';
import type { Change, ConfigMap } from '@converge/runtime';
import { FAULTS_ON, eventually, sleep } from '../../support/operator-harness.ts';
import { startFaultProxy } from '../../support/fault-proxy.ts';
import type { FaultProxy } from '../../support/fault-proxy.ts';

let cp: ControlPlane;
let proxy: FaultProxy | undefined;
before(async () => {
  cp = await startControlPlane({});
  if (FAULTS_ON) proxy = await startFaultProxy({ kubeconfigPath: cp.kubeconfigPath, faults: { split: 1, maxPieces: 3, latencyMs: [0, 10] } });
}, { timeout: 600_000 });
after(async () => {
  await proxy?.close();
  await cp?.stop();
});

function clientFor(): KubeClient {
  return new KubeClient({ kubeConfig: loadKubeConfig(proxy?.kubeconfigPath ?? cp.kubeconfigPath), qps: 0, timeoutMs: 5_000 });
}

/**
 * A cache on `ns`, stopped when the test ends whether it passed or not (a cache left running after
 * a failed assertion keeps its watches, and the file, alive).
 */
function startCache(t: TestContext, client: KubeClient, ns: string, quietTimeoutMs?: number) {
  const restarts: string[] = [];
  let relists = 0;
  const cache = new Cache({
    client,
    namespaces: [ns],
    log: pino({ level: 'silent' }),
    ...(quietTimeoutMs ? { quietTimeoutMs } : {}),
    onRestart: (_k, reason) => restarts.push(reason),
    onRelist: () => relists++,
  });
  const informer = cache.informer(ConfigMapKind);
  const changes: Change<ConfigMap>[] = [];
  informer.addHandler((c) => changes.push(c));
  const abort = new AbortController();
  const running = cache.start(abort.signal);
  const stop = async () => { abort.abort(); await running; };
  t.after(stop);
  return {
    cache, informer, changes, restarts,
    relists: () => relists,
    stop,
  };
}

test('the watch resumes after an API server outage and relists after compaction, missing nothing', { timeout: 300_000 }, async (t) => {
  const client = clientFor();
  const ns = 'outage';
  await client.create(NamespaceKind, { metadata: { name: ns } });
  for (let i = 0; i < 20; i++) await client.create(ConfigMapKind, { metadata: { name: `cm-${i}`, namespace: ns }, data: { v: '0' } });
  const w = startCache(t, client, ns);
  t.after(() => client.close()); // after the cache's stop (t.after hooks run in the order added)
  await w.cache.waitForSync();
  // Only the test's own ConfigMaps: the namespace's kube-root-ca.crt is published by
  // kube-controller-manager on its own schedule, before or after this list (then as an event).
  const own = (name: string | undefined) => name !== 'kube-root-ca.crt';
  assert.equal(w.informer.store.list().filter((o) => own(o.metadata.name)).length, 20);
  assert.equal(w.relists(), 1);
  const addsAfterSync = w.changes.length;

  // Outage: the watch fails and reconnects with backoff; /readyz-style health reports it.
  await cp.stopApiServer();
  await eventually(() => w.cache.health().some((h) => !h.healthy), { timeoutMs: 60_000, what: 'watch reported unhealthy' });
  // Compact etcd to its newest revision while the API server is down: the version the watch
  // holds is now gone, and the restarted API server's watch cache starts after it.
  await cp.compactEtcd();
  await cp.startApiServer();

  await eventually(() => w.cache.health().every((h) => h.healthy && h.state === 'watching'), { timeoutMs: 90_000, what: 'watch healthy again' });
  // Changes after the outage are seen.
  await client.create(ConfigMapKind, { metadata: { name: 'new', namespace: ns } });
  const cm5 = await client.get(ConfigMapKind, { namespace: ns, name: 'cm-5' });
  await client.replace(ConfigMapKind, { ...cm5, data: { v: '1' } });
  await client.delete(ConfigMapKind, { namespace: ns, name: 'cm-7' });
  await eventually(() => w.informer.store.get(`${ns}/new`) && w.informer.store.get(`${ns}/cm-5`)?.data?.v === '1' && !w.informer.store.get(`${ns}/cm-7`), { timeoutMs: 30_000, what: 'post-outage changes in the cache' });

  // No reconcile storm: unchanged objects were not reported again by the relist.
  const after = w.changes.slice(addsAfterSync).filter((c) => own(c.object.metadata.name));
  const reported = after.map((c) => `${c.type}:${c.object.metadata.name}`);
  assert.deepEqual(reported.filter((r) => !['add:new', 'update:cm-5', 'delete:cm-7'].includes(r)), [], `unexpected changes: ${reported.join(', ')}`);
  // The store matches a fresh list exactly.
  const list = await client.listAll(ConfigMapKind, { namespace: ns });
  assert.deepEqual(w.informer.store.list().map((o) => o.metadata.name).sort(), list.items.map((o) => o.metadata.name).sort());
  assert.ok(w.restarts.length >= 1, 'the watch restarted');
  assert.ok(w.restarts.includes('gone'), `the expired resourceVersion was answered with 410 Gone (restarts: ${w.restarts.join(',')})`);
  assert.equal(w.relists(), 2, 'one relist after the expiry');
  await w.stop();
  await client.close();
});

test('a quiet watch is restarted and resumes without a relist', { timeout: 120_000 }, async (t) => {
  const client = clientFor();
  const ns = 'quiet';
  await client.create(NamespaceKind, { metadata: { name: ns } });
  const w = startCache(t, client, ns, 1_500);
  t.after(() => client.close());
  await w.cache.waitForSync();
  await eventually(() => w.restarts.filter((r) => r === 'quiet').length >= 2, { timeoutMs: 30_000, what: 'quiet restarts' });
  assert.equal(w.relists(), 1, 'resuming a quiet watch does not relist');
  await client.create(ConfigMapKind, { metadata: { name: 'after-quiet', namespace: ns } });
  await eventually(() => w.informer.store.get(`${ns}/after-quiet`), { what: 'event after quiet restarts' });
  await sleep(10);
  await w.stop();
  await client.close();
});

test('/readyz fails until caches sync and while watches are unhealthy, without a restart', { timeout: 240_000 }, async (t) => {
  const { Manager } = await import('@converge/runtime');
  await cp.stopApiServer();
  const client = clientFor();
  const manager = new Manager({ client, log: pino({ level: process.env.CONVERGE_TEST_LOG_LEVEL ?? 'silent' }), healthProbeBindAddress: '127.0.0.1:0', watchQuietTimeoutMs: 60_000 });
  manager.cache.informer(ConfigMapKind);
  const abort = new AbortController();
  const running = manager.start(abort.signal);
  // Stopped however the test ends (a manager left running keeps its watches, and the file, alive).
  t.after(async () => { abort.abort(); await running; });
  t.after(() => client.close());
  const [probe] = await manager.serverAddresses();
  const readyz = async () => (await fetch(`http://${probe}/readyz`)).status;
  assert.equal(await readyz(), 500, 'not ready before the caches synced');
  await cp.startApiServer();
  await eventually(async () => (await readyz()) === 200, { timeoutMs: 60_000, what: 'ready after sync' });
  await cp.stopApiServer();
  await eventually(async () => (await readyz()) === 500, { timeoutMs: 60_000, what: 'not ready during the outage' });
  assert.equal((await fetch(`http://${probe}/healthz`)).status, 200, 'still alive: no restart needed');
  await cp.startApiServer();
  await eventually(async () => (await readyz()) === 200, { timeoutMs: 90_000, what: 'ready again after the outage' });
});
