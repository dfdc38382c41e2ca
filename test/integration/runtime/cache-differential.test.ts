/**
 * A search for breaks of the cache's guarantees (`cache/store.ts`, `cache/watcher.ts`) on the
 * real API server, through the fault proxy with a random fault mix per run. Each run is a random
 * program over four ConfigMap names: writes by this process through the cache's own client
 * (write-through) and by another actor (a direct client), some at once; a write of ours held by
 * the proxy until the watch has shown a later event, with the other actor writing the object
 * meanwhile (a late response); watches closed cleanly or abruptly; 410, 429 and 500 answers in
 * the API server's place; pauses.
 *
 * Checked as it runs, on every change the informer reports: changes of a key come in order (an
 * `add` only for a key not held, an `update` or `delete` only of the object last reported, with
 * it as `oldObject`), a UID's resourceVersions never go back, and no UID is reported again after
 * its deletion (a ghost). After every write of ours: read-your-writes (the store holds what we
 * wrote or something newer; after our delete, never the object the API server says it deleted
 * again).
 * Checked at the end, faults off: the store equals the API server's list (UIDs, versions, data),
 * and the state rebuilt from the reported changes equals the store.
 *
 * `npm test` runs 6 programs (~10 s); CONVERGE_CACHE_RUNS sets the count, and
 * CONVERGE_RELIABILITY_LONG=1 runs 60.
 */
import { test, after } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError, Cache, ConfigMapKind, KubeClient, compareResourceVersions, loadKubeConfig } from '@converge/runtime';
import type { Change, ConfigMap } from '@converge/runtime';
import { startFaultProxy, NO_FAULTS } from '../../support/fault-proxy.ts';
import type { FaultMix } from '../../support/fault-proxy.ts';
import { eventually, kubeconfigPath, sleep, testClient, testLogger, testNamespace } from '../../support/operator-harness.ts';

const RUNS = Number.parseInt(process.env.CONVERGE_CACHE_RUNS ?? '', 10) || (process.env.CONVERGE_RELIABILITY_LONG === '1' ? 60 : 6);
const NAMES = ['a', 'b', 'c', 'd'] as const;

const proxy = await startFaultProxy({ kubeconfigPath: kubeconfigPath() });
after(() => proxy.close());
const direct = testClient();
after(() => direct.close());

type Actor = 'own' | 'other';
type Write = { op: 'create' | 'patch' | 'delete'; actor: Actor; name: string; value: number };
type Step =
  | { op: 'writes'; writes: Write[] }
  | { op: 'holdOwn'; write: Write; until: 'own-event' | 'later-event'; meanwhile: Write }
  | { op: 'inject'; status: 410 | 429 | 500; watch: boolean }
  | { op: 'closeWatches'; abrupt: boolean }
  | { op: 'pause'; ms: number };

const nameArb = fc.constantFrom(...NAMES);
const writeArb = (actor?: Actor): fc.Arbitrary<Write> =>
  fc.record({
    op: fc.constantFrom<Write['op']>('create', 'create', 'patch', 'patch', 'delete'),
    actor: actor ? fc.constant(actor) : fc.constantFrom<Actor>('own', 'other'),
    name: nameArb,
    value: fc.nat(999),
  });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constant('writes' as const), writes: fc.array(writeArb(), { minLength: 1, maxLength: 3 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('holdOwn' as const),
      write: writeArb('own').filter((w) => w.op !== 'delete'),
      until: fc.constantFrom<'own-event' | 'later-event'>('own-event', 'later-event'),
      meanwhile: writeArb('other'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('inject' as const), status: fc.constantFrom<410 | 429 | 500>(410, 429, 500), watch: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('closeWatches' as const), abrupt: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('pause' as const), ms: fc.integer({ min: 0, max: 300 }) }) },
);
const mixArb: fc.Arbitrary<Partial<FaultMix>> = fc.record({
  split: fc.constantFrom(0, 0.5, 1),
  maxPieces: fc.integer({ min: 2, max: 5 }),
  closeWatch: fc.constantFrom(0, 0.3, 0.8),
  closeWatchAfterMs: fc.constantFrom<[number, number]>([50, 500], [200, 2_000]),
  abruptShare: fc.constantFrom(0, 0.5, 1),
  latencyMs: fc.constantFrom<[number, number]>([0, 0], [0, 10], [0, 30]),
});

const rv = (o: ConfigMap): string => o.metadata.resourceVersion ?? '';
/** The program's ConfigMaps (not the namespace's `kube-root-ca.crt`) as comparable text. */
const summary = (items: Iterable<ConfigMap>): string =>
  JSON.stringify(
    [...items]
      .filter((o) => o.metadata.name !== 'kube-root-ca.crt')
      .map((o) => [o.metadata.name, o.metadata.uid, rv(o), o.data?.['v']])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
const newer = (a: string, b: string): boolean => compareResourceVersions(a, b) > 0;

/** The informer's reported changes, checked as they come; `state` is what they add up to. */
class ChangeLog {
  readonly state = new Map<string, ConfigMap>();
  readonly deletedUids = new Set<string>();
  readonly lastRv = new Map<string, string>();
  readonly violations: string[] = [];

  readonly record = (c: Change<ConfigMap>): void => {
    const key = `${c.object.metadata.namespace}/${c.object.metadata.name}`;
    const uid = c.object.metadata.uid ?? '';
    const held = this.state.get(key);
    const say = (what: string): void => void this.violations.push(`${c.type} ${key} ${uid} rv ${rv(c.object)}: ${what}`);
    if (c.type === 'add' && held) say(`added while ${held.metadata.uid} rv ${rv(held)} is held`);
    if (c.type !== 'add') {
      if (!held) say('of a key not held');
      else if (c.type === 'update' && c.oldObject !== held) say(`oldObject is not the object last reported (rv ${rv(held)})`);
    }
    if (c.type !== 'delete' && this.deletedUids.has(uid)) say('a ghost: this UID was reported deleted');
    const last = this.lastRv.get(uid);
    if (c.type !== 'delete' && last !== undefined && newer(last, rv(c.object))) say(`went back from rv ${last}`);
    if (c.type === 'delete') {
      this.deletedUids.add(uid);
      this.state.delete(key);
    } else {
      this.state.set(key, c.object);
      this.lastRv.set(uid, rv(c.object));
    }
  };
}

/** A value with multi-byte characters, so that cuts fall inside them too. */
const text = (n: number): string => `${n} ünïcödé ✓ 😀 𝄞 `.repeat(1 + (n % 7));

async function write(client: KubeClient, ns: string, w: Write): Promise<ConfigMap | 'deleted' | undefined> {
  const key = { namespace: ns, name: w.name };
  totals[w.actor === 'own' ? 'ownWrites' : 'otherWrites']++;
  try {
    switch (w.op) {
      case 'create':
        return await client.create(ConfigMapKind, { metadata: { name: w.name, namespace: ns }, data: { v: text(w.value) } });
      case 'patch':
        return await client.patch(ConfigMapKind, key, { type: 'merge', body: { data: { v: text(w.value) } } });
      case 'delete':
        await client.delete(ConfigMapKind, key);
        return 'deleted';
    }
  } catch (err) {
    if (err instanceof ApiError && (err.reason === 'NotFound' || err.reason === 'AlreadyExists' || err.reason === 'Conflict')) {
      totals.refused++;
      return undefined;
    }
    throw err;
  }
}

const totals = { programs: 0, changes: 0, ownWrites: 0, otherWrites: 0, refused: 0 };

async function runProgram(t: TestContext, mix: Partial<FaultMix>, steps: Step[]): Promise<void> {
  totals.programs++;
  const ns = await testNamespace(t, direct, 'cache-diff');
  proxy.setFaults({ ...NO_FAULTS, ...mix });
  const removals: (() => void)[] = [];
  const own = new KubeClient({ kubeConfig: loadKubeConfig(proxy.kubeconfigPath), qps: 0, timeoutMs: 10_000 });
  const cache = new Cache({ client: own, namespaces: [ns], log: testLogger() });
  const informer = cache.informer(ConfigMapKind);
  const changes = new ChangeLog();
  informer.addHandler((c) => {
    totals.changes++;
    changes.record(c);
  });
  const abort = new AbortController();
  const running = cache.start(abort.signal);
  // The UID each delete of ours removed, as the API server's answer names it: the store may hold
  // an older object of that name when the delete is sent (deleted and created again by the other
  // actor, the watch not there yet), and the delete then removes the newer one; the older one goes
  // when the watch shows its deletion (it is not this process's write).
  const deletedByUs = new Map<string, string | undefined>();
  removals.push(own.observe({ onDelete: (_kind, key, still, deleted) => void (still ? undefined : deletedByUs.set(key.name, deleted?.uid)) }));
  const readYourWrite = (w: Write, result: ConfigMap | 'deleted' | undefined, heldUid: string | undefined): void => {
    if (result === undefined) return;
    const key = `${ns}/${w.name}`;
    const cur = informer.store.get(key);
    if (result === 'deleted') {
      const deletedUid = deletedByUs.get(w.name) ?? heldUid;
      if (cur && deletedUid !== undefined && cur.metadata.uid === deletedUid) changes.violations.push(`our delete of ${key} ${deletedUid} returned, the store still holds it (it held ${heldUid ?? 'nothing'} when the delete was sent)`);
      return;
    }
    if (!cur) {
      if (!changes.deletedUids.has(result.metadata.uid ?? '')) changes.violations.push(`our ${w.op} of ${key} returned rv ${rv(result)}; the store holds nothing and saw no delete`);
    } else if (newer(rv(result), rv(cur))) {
      changes.violations.push(`our ${w.op} of ${key} returned rv ${rv(result)}; the store holds the older rv ${rv(cur)}`);
    }
  };
  const ownWrite = async (w: Write): Promise<void> => {
    const heldUid = w.op === 'delete' ? informer.store.get(`${ns}/${w.name}`)?.metadata.uid : undefined;
    readYourWrite(w, await write(own, ns, w), heldUid);
  };
  try {
    await cache.waitForSync();
    for (const s of steps) {
      switch (s.op) {
        case 'writes':
          await Promise.all(s.writes.map((w) => (w.actor === 'own' ? ownWrite(w) : write(direct, ns, w).then(() => undefined))));
          break;
        case 'holdOwn': {
          const method = s.write.op === 'create' ? 'POST' : 'PATCH';
          const path = s.write.op === 'create' ? new RegExp(`/namespaces/${ns}/configmaps$`) : new RegExp(`/namespaces/${ns}/configmaps/${s.write.name}$`);
          removals.push(proxy.holdWrites({ match: { method, path }, until: s.until, timeoutMs: 1_500, times: 1, onHeld: () => write(direct, ns, s.meanwhile).then(() => undefined) }));
          await ownWrite(s.write);
          break;
        }
        case 'inject':
          removals.push(proxy.inject({ match: { method: 'GET', path: new RegExp(`/namespaces/${ns}/configmaps$`), watch: s.watch }, answer: { status: s.status, retryAfterSeconds: s.status === 429 ? 1 : undefined, asWatchEvent: s.watch && s.status === 410 }, times: 1 }));
          break;
        case 'closeWatches':
          proxy.closeWatches(s.abrupt);
          break;
        case 'pause':
          await sleep(s.ms);
          break;
      }
    }
    for (const remove of removals) remove();
    proxy.setFaults(NO_FAULTS);
    const truth = async (): Promise<string> => summary((await direct.list(ConfigMapKind, { namespace: ns })).items);
    await eventually(async () => summary(informer.store.list()) === (await truth()), { timeoutMs: 30_000, what: 'the store to equal the API server' });
    assert.deepEqual(changes.violations, [], 'the changes reported and read-your-writes');
    assert.equal(summary(changes.state.values()), summary(informer.store.list()), 'the reported changes add up to the store');
  } finally {
    for (const remove of removals) remove();
    proxy.setFaults(NO_FAULTS);
    abort.abort();
    await running;
    await own.close();
  }
}

test('the cache against the API server under random writes and faults: in order, no ghosts, read-your-writes, converged (fast-check)', { timeout: 60_000 + RUNS * 60_000 }, async (t) => {
  await fc.assert(
    fc.asyncProperty(mixArb, fc.array(stepArb, { minLength: 4, maxLength: 25 }), (mix, steps) => runProgram(t, mix, steps)),
    { numRuns: RUNS, endOnFailure: true },
  );
  const p = proxy.stats();
  t.diagnostic(`${totals.programs} programs: ${totals.ownWrites} writes of ours, ${totals.otherWrites} of the other actor (${totals.refused} refused), ${totals.changes} changes reported; proxy: ${p.cuts} cuts (${p.cutsInsideCharacters} inside characters), ${p.closedCleanly + p.closedAbruptly} watches closed, ${p.held} writes held, injected ${JSON.stringify(p.injected)}`);
});
