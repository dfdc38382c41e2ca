/**
 * The runtime's webhook concept on the real API server, with a CRD of its own (a fresh group per
 * run, so nothing else in the shared cluster is touched): `Box` `v1` says `spec.size`, `v2` (hub,
 * storage) says `spec.dimensions.size`.
 *
 * - `injectCaBundle` points the CRD at a `WebhookServer` on 127.0.0.1 (self-managed CA, URL
 *   client config); objects created through v1 are stored as v2 (checked in etcd) and read the
 *   same through both versions, lists included;
 * - a converter that refuses an object gives the client the converter's own message;
 * - the webhook stopped: what fails (every read or write through v1) and what keeps working
 *   (reads and writes through v2, lists through v2 served from the API server's watch cache, where
 *   v1-stored objects were converted when they were first read);
 *   restarted: everything works again, nothing to do by hand;
 * - `migrateStorage`: objects stored as v1 are rewritten as v2 page by page, stopped after a page
 *   and resumed, `storedVersions` ends `["v2"]`, and a second run writes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import {
  ConversionRegistry,
  CustomResourceDefinitionKind,
  WebhookServer,
  defineCustomResource,
  defineKind,
  directoryCaStore,
  injectCaBundle,
  withConversionWebhookUrl,
  installCustomResourceDefinitions,
  migrateStorage,
  selfManagedCertificates,
} from '@converge/runtime';
import type { CustomResourceDefinitionV1, KubeClient, KubeObject } from '@converge/runtime';
import { eventually, testClient, testNamespace } from '../../support/operator-harness.ts';
import { patiently, storedApiVersions } from '../../support/crd-storage.ts';

/** What etcd holds `ns/name` as (its apiVersion), or `missing`. */
async function stored(ns: string, name: string): Promise<string> {
  const etcd = process.env.CONVERGE_TEST_ETCD;
  assert.ok(etcd, 'the harness gives the etcd URL');
  return (await storedApiVersions(etcd, GROUP, 'boxes')).get(`${ns}/${name}`) ?? 'missing';
}

const GROUP = `t${randomBytes(3).toString('hex')}.conversion.example.com`;
const CRD = `boxes.${GROUP}`;
type BoxV1 = KubeObject & { spec: { size: number } };
type BoxV2 = KubeObject & { spec: { dimensions: { size: number } } };
const V1 = defineKind<BoxV1>({ group: GROUP, version: 'v1', kind: 'Box', plural: 'boxes', namespaced: true });
const V2 = defineKind<BoxV2>({ group: GROUP, version: 'v2', kind: 'Box', plural: 'boxes', namespaced: true });

function boxCrd(storage: 'v1' | 'v2'): CustomResourceDefinitionV1 {
  return defineCustomResource({
    group: GROUP,
    kind: 'Box',
    plural: 'boxes',
    scope: 'Namespaced',
    conversionWebhook: { service: { namespace: 'unused', name: 'unused' } },
    versions: [
      { name: 'v2', served: true, storage: storage === 'v2', schema: Type.Object({ spec: Type.Object({ dimensions: Type.Object({ size: Type.Integer() }) }) }) },
      { name: 'v1', served: true, storage: storage === 'v1', schema: Type.Object({ spec: Type.Object({ size: Type.Integer() }) }) },
    ],
  }).crd;
}

const conversions = new ConversionRegistry().register({
  group: GROUP,
  kind: 'Box',
  hub: 'v2',
  spokes: [{
    version: 'v1',
    toHub: (o: BoxV1): BoxV2 => {
      if (o.spec.size === 13) throw new Error('size 13 is refused by the converter');
      return { ...o, spec: { dimensions: { size: o.spec.size } } };
    },
    fromHub: (o: BoxV2): BoxV1 => ({ ...o, spec: { size: o.spec.dimensions.size } }),
  }],
});

/** The apiVersion etcd holds the object in (custom resources are stored as JSON). */
async function startWebhook(caDir: string): Promise<{ url: string; caPem: string; stop: () => Promise<void> }> {
  const abort = new AbortController();
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(caDir) }) }).serveConversion(conversions);
  const running = server.start(abort.signal);
  const { port } = (await server.listening())!;
  return { url: `https://127.0.0.1:${port}/convert`, caPem: server.caPem()!, stop: async () => { abort.abort(); await running; } };
}

async function installBoxCrd(client: KubeClient, storage: 'v1' | 'v2', url: string, caPem: string): Promise<void> {
  await installCustomResourceDefinitions(client, [withConversionWebhookUrl(boxCrd(storage), url, caPem)], { fieldManager: 'converge-tests' });
}

test('conversion webhook on the real API server: stored as the hub, served as both, failures explained, outage measured, storage migrated', { timeout: 240_000 }, async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'conv');
  const caDir = mkdtempSync(join(tmpdir(), 'converge-conv-'));
  let webhook = await startWebhook(caDir);
  t.after(async () => {
    await webhook.stop();
    await client.delete(CustomResourceDefinitionKind, { namespace: '', name: CRD }).catch(() => undefined);
    rmSync(caDir, { recursive: true, force: true });
    await client.close();
  });

  // ---- storage v1 first: objects that a migration must move later ----
  await installBoxCrd(client, 'v1', webhook.url, webhook.caPem);
  await eventually(async () => (await client.create(V1, { metadata: { name: 'old-0', namespace: ns }, spec: { size: 1 } }).then(() => true)), { what: 'first create through v1' });
  for (let i = 1; i < 25; i++) await patiently(() => client.create(V1, { metadata: { name: `old-${i}`, namespace: ns }, spec: { size: i + 100 } }));
  assert.equal(await stored(ns, 'old-3'), `${GROUP}/v1`);

  // ---- storage v2 (the hub) ----
  await installBoxCrd(client, 'v2', webhook.url, webhook.caPem);
  const crd = await client.get(CustomResourceDefinitionKind, { namespace: '', name: CRD });
  const conversion = (crd.spec as { conversion?: { strategy: string; webhook?: { clientConfig: { url?: string; caBundle?: string } } } }).conversion;
  assert.equal(conversion?.strategy, 'Webhook');
  assert.equal(conversion?.webhook?.clientConfig.url, webhook.url);
  assert.equal(await injectCaBundle(client, { crds: [CRD], caPem: webhook.caPem, url: webhook.url }).then((w) => w.length), 0, 'the same CA again: no write');

  // The API server swaps a CRD's storage a moment after the CRD changed: a create that lands
  // before the swap is stored as v1 for good. So: create, read etcd, and while it says v1, delete
  // and create again (waiting for "stored as v2" without the delete never ends in that case).
  await eventually(async () => {
    if (!(await client.create(V1, { metadata: { name: 'new', namespace: ns }, spec: { size: 7 } }).then(() => true, () => false))) return false;
    const version = await stored(ns, 'new');
    if (version === `${GROUP}/v2`) return true;
    await patiently(() => client.delete(V1, { namespace: ns, name: 'new' }));
    await eventually(async () => (await stored(ns, 'new')) === 'missing', { what: 'the early create gone' });
    return false;
  }, { what: 'create through v1 stored as v2', timeoutMs: 60_000 });
  assert.deepEqual((await patiently(() => client.get(V2, { namespace: ns, name: 'new' }))).spec, { dimensions: { size: 7 } });
  assert.deepEqual((await patiently(() => client.get(V1, { namespace: ns, name: 'new' }))).spec, { size: 7 });
  const listedV2 = await patiently(() => client.list(V2, { namespace: ns }));
  assert.equal(listedV2.items.length, 26);
  assert.deepEqual(listedV2.items.find((b) => b.metadata.name === 'old-3')?.spec, { dimensions: { size: 103 } }, 'v1-stored objects converted on read');
  await assert.rejects(client.create(V1, { metadata: { name: 'unlucky', namespace: ns }, spec: { size: 13 } }), /size 13 is refused by the converter/);

  // ---- the webhook stopped ----
  await webhook.stop();
  const started = performance.now();
  const v2Read = await client.get(V2, { namespace: ns, name: 'new' }).then(() => 'ok', (e: Error) => e.message);
  const v2Write = await client.create(V2, { metadata: { name: 'during-outage', namespace: ns }, spec: { dimensions: { size: 2 } } }).then(() => 'ok', (e: Error) => e.message);
  const v1Read = await client.get(V1, { namespace: ns, name: 'new' }).then(() => 'ok', (e: Error) => e.message);
  const v2ListWithOldObjects = await client.list(V2, { namespace: ns }).then(() => 'ok', (e: Error) => e.message);
  t.diagnostic(`webhook down: v2 get of a v2-stored object: ${v2Read}; v2 create: ${v2Write}; v1 get: ${v1Read.slice(0, 120)}; v2 list with v1-stored objects: ${v2ListWithOldObjects.slice(0, 120)} (${Math.round(performance.now() - started)} ms)`);
  assert.equal(v2Read, 'ok', 'the hub version of hub-stored objects needs no webhook');
  assert.equal(v2Write, 'ok');
  assert.match(v1Read, /conversion webhook/i, 'v1 needs the webhook, and the error says so');
  // Objects stored as v1 were converted when the API server's watch cache read them from etcd (while
  // the webhook was up), so a v2 list served from that cache still works; only a read from etcd
  // (e.g. after an API server restart) would need the webhook for them.
  assert.equal(v2ListWithOldObjects, 'ok', 'v2 lists are served from the watch cache, already converted');

  // ---- back: nothing to do by hand (the CA is the same, kept in its folder) ----
  webhook = await startWebhook(caDir);
  await injectCaBundle(client, { crds: [CRD], caPem: webhook.caPem, url: webhook.url });
  await eventually(async () => (await client.get(V1, { namespace: ns, name: 'new' }).then(() => true, () => false)), { what: 'v1 reads after the webhook is back' });

  // ---- storage migration: stop after one page, resume, finish ----
  const first = await migrateStorage(client, CRD, { pageSize: 10, maxPages: 1 });
  assert.equal(first.complete, false);
  assert.equal(first.rewritten, 10);
  const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name: CRD });
  assert.deepEqual((live.status as { storedVersions: string[] }).storedVersions.sort(), ['v1', 'v2'], 'not pruned before a complete pass');
  const rest = await migrateStorage(client, CRD, { pageSize: 10, expectStorageVersion: 'v2' });
  assert.equal(rest.resumed, true);
  assert.equal(rest.complete, true);
  assert.equal(rest.seen, 27, 'every object once across both runs');
  assert.deepEqual(rest.storedVersionsAfter, ['v2']);
  for (let i = 0; i < 25; i++) assert.equal(await stored(ns, `old-${i}`), `${GROUP}/v2`, `old-${i} rewritten as v2`);
  const rvBefore = (await client.list(V2, { namespace: ns })).items.map((b) => b.metadata.resourceVersion);
  const again = await migrateStorage(client, CRD, { pageSize: 10 });
  assert.equal(again.complete, true);
  const rvAfter = (await client.list(V2, { namespace: ns })).items.map((b) => b.metadata.resourceVersion);
  assert.deepEqual(rvAfter, rvBefore, 'a second run changes nothing (no-op updates)');
  await assert.rejects(migrateStorage(client, CRD, { expectStorageVersion: 'v1' }), /storage version of .* is v2, not v1/);
});
