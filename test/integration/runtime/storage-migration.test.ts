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
 *
 * Then: a pass writes nothing before discovery publishes the storage version's hash (the API
 * server swaps a CRD's storage a moment after the CRD changed; discovery is made to lag here), and
 * migrations started the moment the storage version flipped leave nothing in the old version
 * (`CONVERGE_FLIP_ROUNDS` flips, default 6).
 *
 * The last test searches (fast-check): random programs of storage flips, writes through either
 * version, creates and deletes, and migrations (random page sizes, stopped after a few pages or
 * not) with more of the same run between their pages. After every step: every object is stored
 * in a version `status.storedVersions` lists (read from etcd). At the end, with v2 the storage
 * version and runs until one completes: every object stored as v2 and `storedVersions` `["v2"]`.
 * `CONVERGE_MIGRATION_RUNS` programs (default 3, ≈ 10 s each).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Type } from '@sinclair/typebox';
import {
  CustomResourceDefinitionKind,
  StorageMigrationError,
  defineCustomResource,
  defineKind,
  installCustomResourceDefinitions,
  KubeClient,
  loadKubeConfig,
  migrateStorage,
} from '@converge/runtime';
import type { CustomResourceDefinitionV1, KubeObject } from '@converge/runtime';
import { eventually, testClient, testNamespace } from '../../support/operator-harness.ts';
import { kubeconfigPath } from '../../support/operator-harness.ts';
import { startFaultProxy } from '../../support/fault-proxy.ts';
import { patiently, storedApiVersions, storedVersions } from '../../support/crd-storage.ts';

/** Every object of the namespace as etcd stores it: name → apiVersion. */
async function storedVersionsInEtcd(group: string, ns: string): Promise<Map<string, string>> {
  const all = await storedApiVersions(process.env.CONVERGE_TEST_ETCD!, group, 'crates');
  return new Map([...all].filter(([key]) => key.startsWith(`${ns}/`)).map(([key, v]) => [key.slice(ns.length + 1), v]));
}

async function storedAs(group: string, ns: string, name: string): Promise<string> {
  return (await storedVersionsInEtcd(group, ns)).get(name) ?? 'missing';
}

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

test('a continue token that expired between pages goes on with the token the API server puts in its 410: the pass does not start over', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const s = await crdWithObjectsStoredAsV1(t, client);
  // kube-apiserver answers a token compacted away with 410 and a token to go on with, from the
  // same key (`handleCompactedErrorForPaging`). A pass slower than the compaction interval meets
  // it on every page after the first; starting over then never finishes.
  const proxy = await startFaultProxy({ kubeconfigPath: kubeconfigPath(), faults: { split: 0 } });
  t.after(() => proxy.close());
  proxy.inject({ match: { method: 'GET', path: new RegExp(`/apis/${s.group.replace(/\./g, '\\.')}/v\\d+/crates$`), continued: true }, answer: { status: 410, continueInStatus: true }, times: 2 });
  const through = new KubeClient({ kubeConfig: loadKubeConfig(proxy.kubeconfigPath), qps: 0 });
  t.after(() => through.close());
  const outcome = await patiently(() => migrateStorage(through, s.kinds.crd, { pageSize: 10 }));
  assert.equal(outcome.complete, true);
  assert.equal(proxy.stats().injected['410'], 2, 'both expired tokens met');
  assert.equal(outcome.seen, 30, 'every object read once: the pass went on from where it was');
  assert.deepEqual(await s.notStoredAsV2(), [], 'every object stored as v2');
  assert.deepEqual(await storedVersions(client, s.kinds.crd), ['v2']);
});

test('a migration started the moment the storage version changed writes nothing in the old version', { timeout: 300_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const s = await crdWithObjectsStoredAsV1(t, client);
  // The API server swaps a CRD's storage when its own informer sees the change, a moment after
  // the write: a rewrite in between is stored in the old version.
  for (const [round, to] of Array.from({ length: Number(process.env.CONVERGE_FLIP_ROUNDS ?? 6) }, (_, i) => (i % 2 === 0 ? 'v1' : 'v2') as 'v1' | 'v2').entries()) {
    await s.install(to);
    const result = await patiently(() => migrateStorage(client, s.kinds.crd, { pageSize: 50 }));
    assert.equal(result.complete, true);
    const wrong = [...(await storedVersionsInEtcd(s.group, s.ns))].filter(([, v]) => v !== `${s.group}/${to}`).map(([name, v]) => `${name}: ${v}`);
    assert.deepEqual(wrong, [], `round ${round}: every object stored as ${to} once storedVersions is ${JSON.stringify(result.storedVersionsAfter)}`);
  }
});

test('a pass writes nothing before discovery says the API server stores the storage version', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const s = await crdWithObjectsStoredAsV1(t, client);
  const order: string[] = [];
  let discoveryCalls = 0;
  // Discovery a little behind, as it is for a moment after a CRD's storage version changed.
  const lagging = new Proxy(client, {
    get(target, prop) {
      if (prop === 'request') {
        return async (method: string, path: string, opts?: Parameters<KubeClient['request']>[2]) => {
          const answer = await target.request(method, path, opts);
          if (method !== 'GET' || path !== `/apis/${s.group}/v2`) return answer;
          discoveryCalls++;
          order.push(`discovery ${discoveryCalls}`);
          if (discoveryCalls > 3) return answer;
          const list = answer as { resources: { name: string; storageVersionHash?: string }[] };
          return { ...list, resources: list.resources.map((r) => (r.name === 'crates' ? { ...r, storageVersionHash: 'still-v1' } : r)) };
        };
      }
      if (prop === 'replace') {
        return (...args: Parameters<KubeClient['replace']>) => {
          order.push('replace');
          return target.replace(...args);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const result = await patiently(() => migrateStorage(lagging, s.kinds.crd, { pageSize: 50 }));
  assert.equal(result.complete, true);
  assert.deepEqual(order.slice(0, 5), ['discovery 1', 'discovery 2', 'discovery 3', 'discovery 4', 'replace'], 'the first write after discovery published v2');
  assert.deepEqual(await s.notStoredAsV2(), []);
});

type Step =
  | { op: 'flip'; to: 'v1' | 'v2' }
  | { op: 'write'; i: number; via: 'v1' | 'v2' }
  | { op: 'create'; via: 'v1' | 'v2' }
  | { op: 'delete'; i: number };
type ProgramStep = Step | { op: 'migrate'; pageSize: number; maxPages: number | undefined; between: { atList: number; step: Step }[] };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), to: fc.constantFrom('v1' as const, 'v2' as const) }),
  fc.record({ op: fc.constant('write' as const), i: fc.nat(11), via: fc.constantFrom('v1' as const, 'v2' as const) }),
  fc.record({ op: fc.constant('create' as const), via: fc.constantFrom('v1' as const, 'v2' as const) }),
  fc.record({ op: fc.constant('delete' as const), i: fc.nat(11) }),
);
const programArb: fc.Arbitrary<ProgramStep[]> = fc.array(
  fc.oneof(
    stepArb,
    fc.record({
      op: fc.constant('migrate' as const),
      pageSize: fc.integer({ min: 2, max: 6 }),
      maxPages: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      between: fc.array(fc.record({ atList: fc.integer({ min: 2, max: 4 }), step: stepArb }), { maxLength: 3 }),
    }),
  ),
  { minLength: 3, maxLength: 8 },
);

test('search: flips, writes and migrations in any order never leave an object stored in a version storedVersions lacks', { timeout: 900_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const runs = Number(process.env.CONVERGE_MIGRATION_RUNS ?? 3);
  let programs = 0;
  await fc.assert(
    fc.asyncProperty(programArb, async (program) => {
      programs++;
      const group = `t${randomBytes(3).toString('hex')}.migration-search.example.com`;
      const kinds = crateKinds(group);
      const ns = await testNamespace(t, client, 'migrate-search');
      const install = (storage: 'v1' | 'v2') => installCustomResourceDefinitions(client, [crateCrd(group, storage)], { fieldManager: 'converge-tests' });
      try {
        await install('v1');
        await eventually(async () => client.create(kinds.v1, { metadata: { name: 'c-00', namespace: ns }, spec: { size: 0 } }).then(() => true), { what: 'first create' });
        for (let i = 1; i < 12; i++) await patiently(() => client.create(kinds.v1, { metadata: { name: `c-${String(i).padStart(2, '0')}`, namespace: ns }, spec: { size: i } }));
        let created = 12;
        const run = async (step: Step): Promise<void> => {
          const name = (i: number) => `c-${String(i).padStart(2, '0')}`;
          if (step.op === 'flip') await install(step.to);
          else if (step.op === 'create') await patiently(() => client.create(kinds[step.via], { metadata: { name: name(created++), namespace: ns }, spec: { size: 1 } }));
          else if (step.op === 'delete') await patiently(() => client.delete(kinds.v1, { namespace: ns, name: name(step.i) })).catch((err: { code?: number }) => { if (err.code !== 404) throw err; });
          else {
            const current = await patiently(() => client.get(kinds[step.via], { namespace: ns, name: name(step.i) })).catch((err: { code?: number }) => { if (err.code !== 404) throw err; return undefined; });
            if (current) await patiently(() => client.replace(kinds[step.via], { ...current, spec: { size: current.spec.size + 1 } })).catch((err: { code?: number }) => { if (err.code !== 404 && err.code !== 409) throw err; });
          }
        };
        const check = async (after: string) => {
          const versions = await storedVersions(client, kinds.crd);
          for (const [name, apiVersion] of await storedVersionsInEtcd(group, ns)) {
            assert.ok(versions.includes(apiVersion.split('/')[1]!), `after ${after}: ${name} is stored as ${apiVersion}, storedVersions ${JSON.stringify(versions)}`);
          }
        };
        const migrate = async (options: { pageSize: number; maxPages?: number }, between: { atList: number; step: Step }[] = []) => {
          let lists = 0;
          const hooked = new Proxy(client, {
            get(target, prop) {
              if (prop === 'list') {
                return async (...args: Parameters<KubeClient['list']>) => {
                  lists++;
                  for (const b of between) if (b.atList === lists) await run(b.step);
                  return target.list(...args);
                };
              }
              const value = Reflect.get(target, prop, target) as unknown;
              return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
            },
          });
          return migrateStorage(hooked, kinds.crd, options).catch((err: unknown) => {
            if (err instanceof StorageMigrationError) return undefined; // the CRD moved: run again later
            throw err;
          });
        };
        for (const [n, step] of program.entries()) {
          if (step.op === 'migrate') await migrate({ pageSize: step.pageSize, ...(step.maxPages ? { maxPages: step.maxPages } : {}) }, step.between);
          else await run(step);
          await check(`step ${n} (${step.op})`);
        }
        await install('v2');
        let done = false;
        for (let attempt = 0; attempt < 3 && !done; attempt++) done = (await migrate({ pageSize: 5 }))?.complete === true;
        assert.ok(done, 'a run with nothing moving completes');
        await check('the final migration');
        assert.deepEqual(await storedVersions(client, kinds.crd), ['v2']);
        const notV2 = [...(await storedVersionsInEtcd(group, ns))].filter(([, v]) => v !== `${group}/v2`);
        assert.deepEqual(notV2, [], 'every object stored as v2');
      } finally {
        await client.delete(CustomResourceDefinitionKind, { namespace: '', name: kinds.crd }).catch(() => undefined);
      }
    }),
    { numRuns: runs, endOnFailure: true, seed: Number(process.env.CONVERGE_MIGRATION_SEED ?? Date.now() % 1_000_000) },
  );
  t.diagnostic(`${programs} programs`);
});
