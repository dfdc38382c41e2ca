/**
 * The fault proxy itself, against the real local API server: it serves HTTPS (with its own CA,
 * in the kubeconfig it writes) and plain HTTP; it cuts bodies inside multi-byte characters
 * without changing a byte; it closes watches early, cleanly or abruptly; it answers 410 (as a
 * watch ERROR event), 504 Too large resource version, 429 with Retry-After and 500 in the API
 * server's place; it holds a write's response until the watch has delivered its event; it
 * slows bodies down.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { ApiError, ConfigMapKind, KubeClient, loadKubeConfig } from '@converge/runtime';
import type { ConfigMap } from '@converge/runtime';
import { startFaultProxy, resourceOf } from './fault-proxy.ts';
import { kubeconfigPath, testClient, testNamespace, eventually } from './operator-harness.ts';

const proxy = await startFaultProxy({ kubeconfigPath: kubeconfigPath(), seed: 12 });
after(() => proxy.close());
const through = () => new KubeClient({ kubeConfig: loadKubeConfig(proxy.kubeconfigPath), qps: 0, timeoutMs: 10_000 });
const TEXT = '日本語のテキスト — ünïcödé — 😀🎉 — '.repeat(40);

test('HTTPS with the CA in its kubeconfig, and plain HTTP', async () => {
  const client = through();
  const ns = await client.get({ group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, apiVersion: 'v1' }, { namespace: '', name: 'default' });
  assert.equal(ns.metadata.name, 'default');
  await client.close();
  const res = await request(`${proxy.httpUrl}/api/v1/namespaces/default`);
  assert.equal(res.statusCode, 200);
  assert.equal(((await res.body.json()) as { metadata: { name: string } }).metadata.name, 'default');
  assert.equal(resourceOf('/apis/apps/v1/namespaces/x/deployments/d/status'), 'deployments/status');
  assert.equal(resourceOf('/api/v1/namespaces/x/configmaps'), 'configmaps');
});

test('cuts watch events inside multi-byte characters, and changes no byte', async (t) => {
  const direct = testClient();
  const ns = await testNamespace(t, direct, 'proxy-split');
  proxy.setFaults({ split: 1, maxPieces: 4 });
  t.after(() => proxy.setFaults({ split: 0 }));
  const list = await direct.list(ConfigMapKind, { namespace: ns });
  const agent = new Agent({ connect: { ca: proxy.caPem } });
  const res = await request(`${proxy.url}/api/v1/namespaces/${ns}/configmaps?watch=true&timeoutSeconds=3&resourceVersion=${list.metadata.resourceVersion}`, { dispatcher: agent });
  const before = proxy.stats();
  // Read in flowing mode from before the write on: each piece as the socket delivered it. An
  // async iterator started after the write (as this test once did) reads in paused mode, and
  // under load it got the event's pieces already buffered and joined into one chunk.
  const chunks: Buffer[] = [];
  const ended = new Promise<void>((resolve, reject) => {
    res.body.on('data', (c: Buffer) => chunks.push(c));
    res.body.on('end', resolve);
    res.body.on('error', reject);
  });
  await direct.create(ConfigMapKind, { metadata: { name: 'text', namespace: ns }, data: { text: TEXT } });
  await ended;
  await agent.close();
  const whole = Buffer.concat(chunks).toString('utf8');
  // The namespace's kube-root-ca.crt may be published by kube-controller-manager after the list
  // (under load it is): find this test's own ConfigMap among the events.
  const events = whole.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; object: ConfigMap });
  const event = events.find((e) => e.object.metadata?.name === 'text');
  assert.ok(event, `the watch delivered the ConfigMap (events: ${events.map((e) => `${e.type} ${e.object.metadata?.name}`).join(', ')})`);
  assert.equal(event.type, 'ADDED');
  assert.equal(event.object.data?.text, TEXT, 'every byte arrived');
  const cutInside = chunks.slice(0, -1).some((c) => c.length > 0 && (c.at(-1)! & 0x80) === 0x80 && !isCharEnd(c));
  assert.ok(cutInside, `the client read a chunk that ends inside a character (${chunks.length} chunks)`);
  assert.ok(proxy.stats().cutsInsideCharacters > before.cutsInsideCharacters);
});

test('closes watches early, cleanly or abruptly', async (t) => {
  const agent = new Agent({ connect: { ca: proxy.caPem } });
  t.after(() => agent.close());
  t.after(() => proxy.setFaults({ closeWatch: 0 }));
  const watch = () => request(`${proxy.url}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=30`, { dispatcher: agent });
  proxy.setFaults({ closeWatch: 1, closeWatchAfterMs: [200, 200], abruptShare: 0 });
  let started = Date.now();
  const clean = await watch();
  await clean.body.text();
  assert.ok(Date.now() - started < 10_000, 'ended long before its 30 s timeout');
  proxy.setFaults({ abruptShare: 1 });
  started = Date.now();
  const abrupt = await watch();
  await assert.rejects(abrupt.body.text(), 'the connection is reset mid-stream');
  const s = proxy.stats();
  assert.ok(s.closedCleanly >= 1 && s.closedAbruptly >= 1);
});

test('answers 410 (watch ERROR event), 504 Too large resource version, 429 with Retry-After and 500', async () => {
  const client = through();
  const remove = [
    proxy.inject({ match: { path: /\/configmaps$/, watch: true }, answer: { status: 410, asWatchEvent: true }, times: 1 }),
    proxy.inject({ match: { path: /\/secrets$/, watch: true }, answer: { status: 504 }, times: 1 }),
    proxy.inject({ match: { path: /\/services$/, watch: false }, answer: { status: 429, retryAfterSeconds: 3 }, times: 1 }),
    proxy.inject({ match: { path: /\/pods$/, watch: false }, answer: { status: 500 }, times: 1 }),
  ];
  try {
    const firstEvent = async (plural: string) => {
      const kind = { ...ConfigMapKind, plural } as typeof ConfigMapKind;
      for await (const _ of client.watch(kind, { namespace: 'default', resourceVersion: '1', timeoutSeconds: 5 }, AbortSignal.timeout(10_000))) return undefined;
      return undefined;
    };
    await assert.rejects(firstEvent('configmaps'), (e: unknown) => e instanceof ApiError && e.reason === 'Gone');
    await assert.rejects(firstEvent('secrets'), (e: unknown) => e instanceof ApiError && e.reason === 'ResourceVersionTooLarge');
    await assert.rejects(client.list({ ...ConfigMapKind, plural: 'services' }, { namespace: 'default' }), (e: unknown) => e instanceof ApiError && e.reason === 'TooManyRequests' && e.retryAfterMs === 3_000);
    await assert.rejects(client.list({ ...ConfigMapKind, plural: 'pods' }, { namespace: 'default' }), (e: unknown) => e instanceof ApiError && e.reason === 'ServerError');
    assert.ok((await client.list({ ...ConfigMapKind, plural: 'pods' }, { namespace: 'default' })).items, 'times: 1 — then the API server answers again');
  } finally {
    for (const r of remove) r();
    await client.close();
  }
});

test("holds a write's response until its watch event has been delivered; slows bodies down", async (t) => {
  const direct = testClient();
  const ns = await testNamespace(t, direct, 'proxy-hold');
  const client = through();
  t.after(() => client.close());
  const order: string[] = [];
  const abort = new AbortController();
  t.after(() => abort.abort());
  const list = await client.list(ConfigMapKind, { namespace: ns });
  void (async () => {
    try {
      for await (const e of client.watch(ConfigMapKind, { namespace: ns, resourceVersion: list.metadata.resourceVersion! }, abort.signal)) order.push(`event ${e.type} ${e.object.metadata.name}`);
    } catch {
      // aborted
    }
  })();
  const release = proxy.holdWrites({ match: { method: 'POST', path: /\/configmaps$/ }, until: 'own-event', times: 1, onHeld: (o) => void order.push(`held ${o.metadata.name}`) });
  t.after(release);
  await client.create(ConfigMapKind, { metadata: { name: 'held', namespace: ns } });
  order.push('response held');
  assert.ok(order.includes('held held'), order.join(', '));
  assert.ok(order.indexOf('event ADDED held') >= 0 && order.indexOf('event ADDED held') < order.indexOf('response held'), `the event came first: ${order.join(', ')}`);

  await direct.create(ConfigMapKind, { metadata: { name: 'bulk', namespace: ns }, data: { x: 'x'.repeat(60_000) } });
  const slow = proxy.inject({ match: { path: new RegExp(`/namespaces/${ns}/configmaps$`), watch: false }, bytesPerSecond: 40_000, times: 1 });
  t.after(slow);
  const started = Date.now();
  await client.list(ConfigMapKind, { namespace: ns });
  assert.ok(Date.now() - started >= 1_000, `a 60 KB body at 40 KB/s took ${Date.now() - started} ms`);
  await eventually(() => order.length >= 2);
});

/** Whether a chunk ends on a UTF-8 character boundary. */
function isCharEnd(c: Buffer): boolean {
  // Walk back to the last lead byte and check the sequence is complete.
  let i = c.length - 1;
  while (i > 0 && (c[i]! & 0xc0) === 0x80) i--;
  const lead = c[i]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return c.length - i === need;
}

test('sends nothing on for a client that left while its request was delayed, nor once it is closed', async (t) => {
  const slow = await startFaultProxy({ kubeconfigPath: kubeconfigPath(), faults: { latencyMs: [400, 400] }, seed: 3 });
  let closed = false;
  t.after(() => (closed ? undefined : slow.close()));
  const agent = new Agent({ connect: { ca: slow.caPem } });
  t.after(() => agent.close());
  // From the current version on: nothing arrives on these watches, so an upstream one left open
  // would stay open (its first event would have shown the proxy that its client was gone).
  const ns = await testNamespace(t, testClient(), 'proxy-left');
  const { metadata } = await testClient().list(ConfigMapKind, { namespace: ns });
  const watch = (signal: AbortSignal) => request(`${slow.url}/api/v1/namespaces/${ns}/configmaps?watch=true&timeoutSeconds=60&resourceVersion=${metadata.resourceVersion}`, { dispatcher: agent, signal });
  const settle = () => new Promise((r) => setTimeout(r, 1_000));

  // A watch whose client gives up during the proxy's latency: no watch is opened upstream for it
  // (one was, and stayed open until its timeout: a test's process then outlived its tests).
  await assert.rejects(watch(AbortSignal.timeout(100)));
  await settle();
  assert.equal(slow.stats().upstreamOpen, 0, 'no request open upstream for a client that left');

  // A watch the proxy is closed under while it delays it.
  const pending = watch(new AbortController().signal).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  await slow.close();
  closed = true;
  await pending;
  await settle();
  assert.equal(slow.stats().upstreamOpen, 0, 'no request open upstream once the proxy is closed');
  assert.equal(slow.stats().requests, 2);
});
