/**
 * The cache's data path through the fault proxy (test/support/fault-proxy.ts), one fault per
 * test, each a bug of issue 12 that these tests found on the code before it was fixed:
 * - item 1: watch events cut inside multi-byte characters reach the cache byte for byte;
 * - item 2: a write response held until after a later delete does not resurrect the object;
 * - item 3: 504 "Too large resource version" on every watch from an old version (an etcd
 *   restore, as the API server sees it) relists and catches up;
 * - item 8: watches the proxy closes at once back off instead of spinning at the client's QPS;
 *   so does an answer asking to retry after 0 seconds;
 * - item 9: a list page that cannot arrive within its timeout is asked for in smaller pages, and
 *   a declared page size is honoured; a list whose continue tokens keep expiring finishes with
 *   one unpaged list, and a list answered 410 backs off instead of being asked again at once;
 * - item 10: a metadata-only informer downloads and holds no Secret data, and its objects cannot
 *   be written back;
 * - item 15: write-through respects the informer's namespaces and selectors; `delete()` of a kind
 *   that returns the deleted object (Service) reports it gone and the cache drops it at once.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cache, ConfigMapKind, KubeClient, SecretKind, ServiceKind, isPartial, loadKubeConfig } from '@converge/runtime';
import type { ConfigMap, KubeObject } from '@converge/runtime';
import { startFaultProxy } from '../../support/fault-proxy.ts';
import { eventually, kubeconfigPath, sleep, testClient, testLogger, testNamespace } from '../../support/operator-harness.ts';

const proxy = await startFaultProxy({ kubeconfigPath: kubeconfigPath() });
after(() => proxy.close());
const direct = testClient();

function throughProxy(options: { timeoutMs?: number; qps?: number } = {}): KubeClient {
  return new KubeClient({ kubeConfig: loadKubeConfig(proxy.kubeconfigPath), qps: options.qps ?? 0, timeoutMs: options.timeoutMs ?? 10_000 });
}

function startCache(client: KubeClient, ns: string, declare: (cache: Cache) => void = (c) => void c.informer(ConfigMapKind)) {
  const restarts: string[] = [];
  const cache = new Cache({ client, namespaces: [ns], log: testLogger(), onRestart: (_k, r) => restarts.push(r) });
  declare(cache);
  const abort = new AbortController();
  const running = cache.start(abort.signal);
  return { cache, restarts, stop: async () => { abort.abort(); await running; await client.close(); } };
}

const TEXT = 'ログの注釈 — Ünïcödé ✓ 😀 𝄞 — '.repeat(1_400); // ≈ 40 KB of non-ASCII text

test('item 1: events cut inside multi-byte characters reach the cache byte for byte', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-utf8');
  proxy.setFaults({ split: 1, maxPieces: 6 });
  t.after(() => proxy.setFaults({ split: 0 }));
  const w = startCache(throughProxy(), ns);
  t.after(w.stop);
  await w.cache.waitForSync();
  const cuts = proxy.stats().cutsInsideCharacters;
  await direct.create(ConfigMapKind, { metadata: { name: 'text', namespace: ns, annotations: { note: TEXT } }, data: { text: TEXT } });
  const cached = await eventually(() => w.cache.get(ConfigMapKind, `${ns}/text`), { what: 'the ConfigMap in the cache' });
  assert.ok(proxy.stats().cutsInsideCharacters > cuts, 'the proxy cut inside characters');
  assert.equal(cached.data?.text, TEXT, 'data unchanged');
  assert.equal(cached.metadata.annotations?.note, TEXT, 'annotation unchanged');
});

test('item 2: a write whose response arrives after a later delete does not resurrect the object', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-ghost');
  const client = throughProxy();
  const w = startCache(client, ns);
  t.after(w.stop);
  await w.cache.waitForSync();
  const cm = await direct.create(ConfigMapKind, { metadata: { name: 'victim', namespace: ns }, data: { v: '1' } });
  await eventually(() => w.cache.get(ConfigMapKind, `${ns}/victim`), { what: 'victim cached' });
  // Our update commits at N; someone deletes at N+1; the watch delivers the delete before our response.
  const release = proxy.holdWrites({
    match: { method: 'PUT', path: /\/configmaps\/victim$/ },
    until: 'later-event',
    times: 1,
    onHeld: () => direct.delete(ConfigMapKind, { namespace: ns, name: 'victim' }).then(() => undefined),
  });
  t.after(release);
  await client.replace(ConfigMapKind, { ...cm, data: { v: '2' } });
  await sleep(1_000);
  assert.equal(w.cache.get(ConfigMapKind, `${ns}/victim`), undefined, 'no ghost: the API server has no such ConfigMap');
});

test('item 3: 504 Too large resource version relists from "" and catches up', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-restore');
  const w = startCache(throughProxy(), ns);
  t.after(w.stop);
  await w.cache.waitForSync();
  await eventually(() => proxy.stats().openWatches >= 1, { what: 'the cache watching' });
  // etcd restored: every watch from a version the cache has seen is "too large" for the API server.
  const remove = proxy.restore({ path: new RegExp(`/namespaces/${ns}/configmaps$`) });
  t.after(remove);
  await sleep(300);
  await direct.create(ConfigMapKind, { metadata: { name: 'after-restore', namespace: ns } });
  await eventually(() => w.cache.get(ConfigMapKind, `${ns}/after-restore`), { timeoutMs: 15_000, what: 'a change after the restore in the cache' });
  assert.ok(w.restarts.includes('too-large'), `restarts: ${w.restarts.join(',')}`);
});

test('item 8: watches closed at once back off instead of spinning', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-spin');
  proxy.setFaults({ closeWatch: 1, closeWatchAfterMs: [0, 0], abruptShare: 0 });
  t.after(() => proxy.setFaults({ closeWatch: 0 }));
  const w = startCache(throughProxy({ qps: 50 }), ns);
  t.after(w.stop);
  await w.cache.waitForSync();
  const before = proxy.stats().watches;
  await sleep(4_000);
  const watches = proxy.stats().watches - before;
  const health = w.cache.health()[0]!;
  t.diagnostic(`${watches} watch requests in 4 s with every watch closed at once; failures ${health.consecutiveFailures}, last error ${health.lastError}`);
  assert.ok(watches <= 20, `${watches} watches in 4 s`);
  assert.ok(health.consecutiveFailures >= 2, 'counted as failures');
  assert.match(health.lastError ?? '', /very short watch/);
  assert.equal(health.lastErrorReason, undefined, 'no API answer');
});

test('a 429 with Retry-After is retried after what the server asked, not after a backoff grown by earlier failures', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-retry-after');
  const w = startCache(throughProxy(), ns);
  t.after(w.stop);
  await w.cache.waitForSync();
  await eventually(() => proxy.stats().openWatches >= 1, { what: 'the cache watching' });
  const watches = new RegExp(`/namespaces/${ns}/configmaps$`);
  const errors = proxy.inject({ match: { path: watches, watch: true }, answer: { status: 500 }, times: 5 });
  t.after(errors);
  proxy.closeWatches();
  await eventually(() => (w.cache.health()[0]!.consecutiveFailures >= 4 ? true : undefined), { timeoutMs: 30_000, what: 'five failures in a row' });
  const busy = proxy.inject({ match: { path: watches, watch: true }, answer: { status: 429, retryAfterSeconds: 1 }, times: 1 });
  t.after(busy);
  const waited = await eventually(() => {
    const h = w.cache.health()[0]!;
    return h.state === 'backoff' && /too many requests/.test(h.lastError ?? '') ? h.retryInMs : undefined;
  }, { timeoutMs: 30_000, intervalMs: 20, what: 'the backoff after the 429' });
  assert.ok(waited <= 1_200, `retry after ${waited} ms (the server asked for 1 s; the grown backoff would be ≈ 4–8 s)`);
});

test('a Retry-After of 0 (a proxy in front of the API server may send one) backs off; it does not reconnect at once', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-retry-zero');
  const w = startCache(throughProxy(), ns);
  t.after(w.stop);
  await w.cache.waitForSync();
  await eventually(() => proxy.stats().openWatches >= 1, { what: 'the cache watching' });
  const busy = proxy.inject({ match: { path: new RegExp(`/namespaces/${ns}/configmaps$`) }, answer: { status: 429, retryAfterSeconds: 0 } });
  t.after(busy);
  proxy.closeWatches();
  const before = proxy.stats().requests;
  await sleep(2_000);
  busy();
  const requests = proxy.stats().requests - before;
  const health = w.cache.health()[0]!;
  t.diagnostic(`${requests} requests in 2 s answered 429 with Retry-After: 0; failures ${health.consecutiveFailures}`);
  assert.ok(requests <= 15, `${requests} requests in 2 s: reconnected without waiting`);
  await direct.create(ConfigMapKind, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name: 'after' } });
  await eventually(() => (w.cache.health()[0]!.healthy && w.cache.store(ConfigMapKind).get({ namespace: ns, name: 'after' }) ? true : undefined), { timeoutMs: 30_000, what: 'the watch back once the proxy answers again' });
});

test('item 9: a list page too slow for its timeout is asked for in smaller pages; a declared page size is honoured', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-pages');
  for (let i = 0; i < 8; i++) await direct.create(ConfigMapKind, { metadata: { name: `big-${i}`, namespace: ns }, data: { x: 'x'.repeat(60_000) } });
  // ≈ 480 KB at 150 KB/s: one page of everything needs > 3 s; the client allows 2 s per request.
  const slow = proxy.inject({ match: { path: new RegExp(`/namespaces/${ns}/configmaps$`), watch: false }, bytesPerSecond: 150_000 });
  t.after(slow);
  const before = proxy.stats().requests;
  const w = startCache(throughProxy({ timeoutMs: 2_000 }), ns);
  t.after(w.stop);
  await Promise.race([w.cache.waitForSync(), sleep(40_000).then(() => assert.fail(`not synced after 40 s: ${JSON.stringify(w.cache.health())}`))]);
  assert.equal(w.cache.store(ConfigMapKind).list().filter((c) => c.metadata.name?.startsWith('big-')).length, 8);
  slow();
  t.diagnostic(`synced after ${proxy.stats().requests - before} requests`);

  const requests = proxy.stats().requests;
  const paged = startCache(throughProxy(), ns, (c) => void c.informer(ConfigMapKind, { pageSize: 2 }));
  t.after(paged.stop);
  await paged.cache.waitForSync();
  // The test's own 8 ConfigMaps need 4 pages of 2 (the namespace's kube-root-ca.crt, published by
  // kube-controller-manager on its own schedule, may make a fifth: not counted on); one unpaged
  // list and its watch would be 2 requests.
  assert.ok(proxy.stats().requests - requests >= 4, '8 ConfigMaps in pages of 2: at least 4 list requests');
});

test('a list whose continued pages keep expiring (410) syncs from one unpaged list; a list answered 410 backs off', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-expired-pages');
  for (let i = 0; i < 9; i++) await direct.create(ConfigMapKind, { metadata: { name: `cm-${i}`, namespace: ns } });
  const lists = new RegExp(`/namespaces/${ns}/configmaps$`);
  // A list slower than the API server's compaction interval: every continue token it is given
  // has expired by the time it is used. Starting over in pages can never finish; client-go's
  // pager then lists once without pages, and so must we.
  const expired = proxy.inject({ match: { path: lists, watch: false, continued: true }, answer: { status: 410 } });
  t.after(expired);
  const before = proxy.stats().requests;
  const paged = startCache(throughProxy(), ns, (c) => void c.informer(ConfigMapKind, { pageSize: 2 }));
  t.after(paged.stop);
  await Promise.race([paged.cache.waitForSync(), sleep(10_000).then(() => assert.fail(`not synced after 10 s, ${proxy.stats().requests - before} requests: ${JSON.stringify(paged.cache.health())}`))]);
  // Only the test's own ConfigMaps: the namespace's kube-root-ca.crt is published by
  // kube-controller-manager on its own schedule, and may land after this list.
  assert.equal(paged.cache.store(ConfigMapKind).list().filter((c) => c.metadata.name?.startsWith('cm-')).length, 9);
  const synced = proxy.stats().requests - before;
  t.diagnostic(`synced after ${synced} requests with every continued page answered 410`);
  assert.ok(synced <= 6, `${synced} requests to sync`);
  expired();

  // Every list answered 410 (an API server or proxy that misbehaves): the relists back off as
  // after any failed list, rather than asking again at once for as long as it lasts.
  const gone = proxy.inject({ match: { path: lists, watch: false }, answer: { status: 410 } });
  t.after(gone);
  const w = startCache(throughProxy(), ns);
  t.after(w.stop);
  const start = proxy.stats().injected['410'] ?? 0;
  await sleep(3_000);
  const answered = (proxy.stats().injected['410'] ?? 0) - start;
  const health = w.cache.health()[0]!;
  t.diagnostic(`${answered} lists in 3 s with every list answered 410; failures ${health.consecutiveFailures}`);
  assert.ok(answered <= 15, `${answered} lists in 3 s`);
  assert.ok(health.consecutiveFailures >= 2, 'counted as failures');
  assert.equal(health.lastErrorReason, 'Gone');
  gone();
  await w.cache.waitForSync();
});

test('item 10: a metadata-only informer holds no Secret data, and its objects cannot be written', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-meta');
  const payload = Buffer.alloc(400_000, 'h').toString('base64');
  await direct.create(SecretKind, { metadata: { name: 'helm-release', namespace: ns, labels: { owner: 'helm' } }, data: { release: payload } });
  const client = throughProxy();
  const before = proxy.stats().bytes['secrets (metadata)'] ?? 0;
  const w = startCache(client, ns, (c) => void c.informer(SecretKind, { metadataOnly: true }));
  t.after(w.stop);
  await w.cache.waitForSync();
  const cached = w.cache.metadataStore(SecretKind).get(`${ns}/helm-release`)!;
  assert.equal(cached.kind, 'PartialObjectMetadata');
  assert.equal((cached as KubeObject & { data?: unknown }).data, undefined);
  assert.equal(cached.metadata.labels?.owner, 'helm');
  assert.equal(cached.metadata.managedFields, undefined);
  assert.ok(isPartial(cached));
  const downloaded = (proxy.stats().bytes['secrets (metadata)'] ?? 0) - before;
  assert.ok(downloaded < 10_000, `${downloaded} bytes downloaded for a 530 KB Secret`);
  await assert.rejects(client.replace(SecretKind, { ...cached, type: 'Opaque' } as never), /partial copy from the cache/);
  // Our own write of a Secret enters the metadata store without its data.
  await client.create(SecretKind, { metadata: { name: 'mine', namespace: ns }, stringData: { token: 'secret' } });
  const mine = w.cache.metadataStore(SecretKind).get(`${ns}/mine`);
  assert.ok(mine, 'read-your-own-writes');
  assert.equal((mine as KubeObject & { data?: unknown }).data, undefined);
  assert.throws(() => w.cache.store(SecretKind), /metadata only/);
});

test('item 10: a metadata-only list of a namespace with no such objects (`items: null`) syncs', async (t) => {
  const ns = await testNamespace(t, direct, 'faults-meta-empty');
  const w = startCache(throughProxy(), ns, (c) => void c.informer(SecretKind, { metadataOnly: true }));
  t.after(w.stop);
  await Promise.race([w.cache.waitForSync(), sleep(10_000).then(() => assert.fail(`not synced: ${JSON.stringify(w.cache.health())}`))]);
  assert.equal(w.cache.metadataStore(SecretKind).size, 0);
});

test('item 15: write-through respects the informer\'s namespaces and label selector', async (t) => {
  const nsA = await testNamespace(t, direct, 'faults-scope-a');
  const nsB = await testNamespace(t, direct, 'faults-scope-b');
  const client = testClient();
  const w = startCache(client, nsA, (c) => {
    c.informer(ConfigMapKind, { labelSelector: 'team=a' });
    c.informer(ServiceKind);
  });
  t.after(w.stop);
  await w.cache.waitForSync();
  const store = w.cache.store(ConfigMapKind);
  await client.create(ConfigMapKind, { metadata: { name: 'elsewhere', namespace: nsB, labels: { team: 'a' } } });
  await client.create(ConfigMapKind, { metadata: { name: 'unlabelled', namespace: nsA } });
  const mine = await client.create(ConfigMapKind, { metadata: { name: 'mine', namespace: nsA, labels: { team: 'a' } } });
  assert.equal(store.get(`${nsB}/elsewhere`), undefined, 'another namespace: not watched');
  assert.equal(store.get(`${nsA}/unlabelled`), undefined, 'outside the label selector');
  assert.ok(store.get(`${nsA}/mine`), 'in scope: read-your-own-writes');
  await client.replace(ConfigMapKind, { ...mine, metadata: { ...mine.metadata, labels: { team: 'b' } } } as ConfigMap);
  assert.equal(store.get(`${nsA}/mine`), undefined, 'left the selection with our write: gone at once');
  await sleep(500);
  assert.equal(store.get(`${nsA}/mine`), undefined);
  assert.equal(store.get(`${nsB}/elsewhere`), undefined);
});

test('item 15: delete() of a Service (the API server returns the deleted object) reports it gone; the cache drops it at once', async (t) => {
  const nsA = await testNamespace(t, direct, 'faults-delete');
  const client = testClient();
  const w = startCache(client, nsA, (c) => void c.informer(ServiceKind));
  t.after(w.stop);
  await w.cache.waitForSync();
  await client.create(ServiceKind, { metadata: { name: 'svc', namespace: nsA }, spec: { ports: [{ port: 80 }] } });
  assert.ok(w.cache.get(ServiceKind, `${nsA}/svc`));
  const still = await client.delete(ServiceKind, { namespace: nsA, name: 'svc' });
  assert.equal(still, undefined, 'the API server returned the deleted Service: it is gone, not still there');
  assert.equal(w.cache.get(ServiceKind, `${nsA}/svc`), undefined, 'and the cache drops it at once');
});
