/**
 * `migrateStorage` when the CRD's storage version moves while a migration runs or waits to be
 * resumed: the guarantee "never drops a version that may still be stored". A CRD of its own (a
 * fresh group per run), two versions with one schema and `conversion: None`, so no webhook is
 * needed; what each object is stored as is read from etcd.
 *
 * The storage version goes v2 → v1 → v2 between two pages of a pass (and, in the second test,
 * between a stopped run and its resumption), and an object of a page already done is written
 * while v1 is the storage version: that object is stored as v1 again. A pass that carried on (or
 * resumed where it stopped) would never see it and would drop v1 from `storedVersions` while an
 * object is stored as v1 (a later removal of v1 from the CRD would make it unreadable).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import {
  CustomResourceDefinitionKind,
  StorageMigrationError,
  defineCustomResource,
  defineKind,
  installCustomResourceDefinitions,
  migrateStorage,
} from '@converge/runtime';
import type { CustomResourceDefinitionV1, KubeClient, KubeObject } from '@converge/runtime';
import { eventually, testClient, testNamespace } from '../../support/operator-harness.ts';

type Crate = KubeObject & { spec: { size: number } };

function crateKinds(group: string) {
  return {
    crd: `crates.${group}`,
    v1: defineKind<Crate>({ group, version: 'v1', kind: 'Crate', plural: 'crates', namespaced: true }),
    v2: defineKind<Crate>({ group, version: 'v2', kind: 'Crate', plural: 'crates', namespaced: true }),
  };
}

function crateCrd(group: string, storage: 'v1' | 'v2'): CustomResourceDefinitionV1 {
  const schema = Type.Object({ spec: Type.Object({ size: Type.Integer() }) });
  const { crd } = defineCustomResource({
    group,
    kind: 'Crate',
    plural: 'crates',
    scope: 'Namespaced',
    conversionWebhook: { service: { namespace: 'unused', name: 'unused' } },
    versions: [
      { name: 'v2', served: true, storage: storage === 'v2', schema },
      { name: 'v1', served: true, storage: storage === 'v1', schema },
    ],
  });
  // One schema for both versions: the API server converts by changing apiVersion alone.
  return { ...crd, spec: { ...crd.spec, conversion: { strategy: 'None' } } } as CustomResourceDefinitionV1;
}

async function storedAs(group: string, ns: string, name: string): Promise<string> {
  const etcd = process.env.CONVERGE_TEST_ETCD;
  assert.ok(etcd, 'the harness gives the etcd URL');
  const key = Buffer.from(`/registry/${group}/crates/${ns}/${name}`).toString('base64');
  const res = (await (await fetch(`${etcd}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key }) })).json()) as { kvs?: { value: string }[] };
  const value = res.kvs?.[0]?.value;
  return value ? (JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as { apiVersion: string }).apiVersion : 'missing';
}

/** The API server answers 429 "storage is (re)initializing" for a moment after a CRD changes. */
async function patiently<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: number }).code !== 429 || attempt > 60) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A CRD with 30 objects stored as v1, then v2 made the storage version. */
async function crdWithObjectsStoredAsV1(t: test.TestContext, client: KubeClient) {
  const group = `t${randomBytes(3).toString('hex')}.migration.example.com`;
  const kinds = crateKinds(group);
  const ns = await testNamespace(t, client, 'migrate');
  t.after(async () => {
    await client.delete(CustomResourceDefinitionKind, { namespace: '', name: kinds.crd }).catch(() => undefined);
  });
  const install = (storage: 'v1' | 'v2') => installCustomResourceDefinitions(client, [crateCrd(group, storage)], { fieldManager: 'converge-tests' });
  await install('v1');
  await eventually(async () => client.create(kinds.v1, { metadata: { name: 'c-00', namespace: ns }, spec: { size: 0 } }).then(() => true), { what: 'first create' });
  for (let i = 1; i < 30; i++) await patiently(() => client.create(kinds.v1, { metadata: { name: `c-${String(i).padStart(2, '0')}`, namespace: ns }, spec: { size: i } }));
  await install('v2');
  /** Storage v1 for a moment, `c-00` (on the first page) written meanwhile, then v2 again. */
  const flipWithAWrite = async () => {
    await install('v1');
    await eventually(async () => {
      const c = await patiently(() => client.get(kinds.v1, { namespace: ns, name: 'c-00' }));
      await patiently(() => client.replace(kinds.v1, { ...c, spec: { size: c.spec.size + 1 } }));
      return (await storedAs(group, ns, 'c-00')) === `${group}/v1`;
    }, { what: 'c-00 stored as v1 while v1 is the storage version' });
    await install('v2');
  };
  const notStoredAsV2 = async () => {
    const names = (await patiently(() => client.list(kinds.v2, { namespace: ns }))).items.map((c) => c.metadata.name ?? '');
    assert.equal(names.length, 30);
    const storedV1: string[] = [];
    for (const name of names) if ((await storedAs(group, ns, name)) !== `${group}/v2`) storedV1.push(name);
    return storedV1;
  };
  return { group, kinds, ns, install, flipWithAWrite, notStoredAsV2 };
}

async function storedVersions(client: KubeClient, crd: string): Promise<string[]> {
  const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name: crd });
  return [...((live.status as { storedVersions?: string[] }).storedVersions ?? [])].sort();
}

test('the storage version moved during a pass: the pass does not drop the other version, and a run after it migrates everything', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const s = await crdWithObjectsStoredAsV1(t, client);
  let lists = 0;
  // The flip happens before the third page is listed: pages 1 and 2 (c-00 among them) are done.
  const sneaky = new Proxy(client, {
    get(target, prop) {
      if (prop === 'list') {
        return async (...args: Parameters<KubeClient['list']>) => {
          if (++lists === 3) await s.flipWithAWrite();
          return target.list(...args);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const outcome = await patiently(() => migrateStorage(sneaky, s.kinds.crd, { pageSize: 10 })).catch((err: unknown) => err);
  const versions = await storedVersions(client, s.kinds.crd);
  const storedAsV1 = await s.notStoredAsV2();
  assert.ok(versions.includes('v1') || storedAsV1.length === 0, `storedVersions ${JSON.stringify(versions)} while ${storedAsV1.join(', ')} stored as v1`);
  assert.ok(outcome instanceof StorageMigrationError, `the pass failed with a StorageMigrationError (got ${String(outcome)})`);
  assert.match(outcome.message, /during the migration/);
  const again = await patiently(() => migrateStorage(client, s.kinds.crd, { pageSize: 10 }));
  assert.equal(again.complete, true);
  assert.equal(again.resumed, false, 'a fresh pass');
  assert.deepEqual(await s.notStoredAsV2(), [], 'every object stored as v2');
  assert.deepEqual(await storedVersions(client, s.kinds.crd), ['v2']);
});

test('the storage version moved between a stopped run and its resumption: the resumption starts a fresh pass', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const s = await crdWithObjectsStoredAsV1(t, client);
  const first = await patiently(() => migrateStorage(client, s.kinds.crd, { pageSize: 10, maxPages: 2 }));
  assert.equal(first.complete, false);
  await s.flipWithAWrite();
  const rest = await patiently(() => migrateStorage(client, s.kinds.crd, { pageSize: 10 }));
  assert.equal(rest.complete, true);
  assert.deepEqual(await s.notStoredAsV2(), [], 'every object stored as v2 once v1 is dropped');
  assert.deepEqual(await storedVersions(client, s.kinds.crd), ['v2']);
  assert.equal(rest.resumed, false, 'the recorded run belonged to the CRD as it was');
  assert.equal(rest.seen, 30, 'every object seen in the fresh pass');
});
