/**
 * The sharded late-create ledger on a client that keeps ConfigMaps in memory, refuses a write to a
 * stale version (409) as the API server does, and fails writes where the test says: the shard of
 * a UID is stable and spread evenly, and, against a reference model (a Map), every entry stored
 * stays stored wherever it started (the single ConfigMap of earlier versions included) and
 * through loads cut short at any write. Against the real API server: test/integration/provider/
 * late-create-ledger.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ApiError } from '@converge/runtime';
import type { ConfigMap, KubeClient } from '@converge/runtime';
import { LATE_CREATES_CONFIGMAP, LEDGER_SHARDS, ShardedLedger, homeShard, ledgerShardNames } from './late-create-ledger-shards.ts';

/** ConfigMaps in memory; `failWrite(n)` makes the n-th write from now on fail (a kill point), `conflictEvery` answers 409 to every k-th write. */
function configMapServer(options: { conflictEvery?: number; jitter?: () => number } = {}) {
  const cms = new Map<string, ConfigMap>();
  let version = 0;
  let writes = 0;
  let failAt = -1;
  const write = (next: ConfigMap, expectExisting: boolean) => {
    writes++;
    if (writes === failAt) throw new ApiError({ reason: 'ServerError', code: 503, message: 'the write was cut short' });
    const name = next.metadata!.name!;
    const current = cms.get(name);
    if (options.conflictEvery && writes % options.conflictEvery === 0) throw new ApiError({ reason: 'Conflict', code: 409, message: 'the object has been modified' });
    if (!expectExisting && current) throw new ApiError({ reason: 'AlreadyExists', code: 409, message: 'exists' });
    if (expectExisting && next.metadata?.resourceVersion !== current?.metadata?.resourceVersion) throw new ApiError({ reason: 'Conflict', code: 409, message: 'the object has been modified' });
    const stored = { ...structuredClone(next), metadata: { ...next.metadata, resourceVersion: String(++version) } };
    cms.set(name, stored);
    return structuredClone(stored);
  };
  const pause = () => (options.jitter ? new Promise((r) => setTimeout(r, options.jitter!())) : Promise.resolve());
  const client = {
    get: async (_kind: unknown, ref: { name: string }) => {
      await pause();
      const cm = cms.get(ref.name);
      if (!cm) throw new ApiError({ reason: 'NotFound', code: 404, message: 'not found' });
      return structuredClone(cm);
    },
    create: async (_kind: unknown, next: ConfigMap) => (await pause(), write(next, false)),
    replace: async (_kind: unknown, next: ConfigMap) => (await pause(), write(next, true)),
  } as unknown as KubeClient;
  return {
    client,
    put(name: string, data: Record<string, string>) {
      cms.set(name, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'converge', resourceVersion: String(++version) }, data: { ...cms.get(name)?.data, ...data } });
    },
    /** Where each uid is, by shard index. */
    placement(): Map<string, { shard: number; value: string }[]> {
      const out = new Map<string, { shard: number; value: string }[]>();
      ledgerShardNames().forEach((name, shard) => {
        for (const [uid, value] of Object.entries(cms.get(name)?.data ?? {})) out.set(uid, [...(out.get(uid) ?? []), { shard, value }]);
      });
      return out;
    },
    writes: () => writes,
    failWriteAfter(n: number) {
      failAt = writes + n;
    },
  };
}

const signal = new AbortController().signal;

describe('the sharded late-create ledger', () => {
  it('names 16 ConfigMaps, shard 0 being the single ConfigMap of earlier versions', () => {
    const names = ledgerShardNames();
    assert.equal(names.length, LEDGER_SHARDS);
    assert.equal(names[0], LATE_CREATES_CONFIGMAP);
    assert.equal(names[0], 'converge-late-creates');
    assert.equal(names[15], 'converge-late-creates-15');
    assert.equal(new Set(names).size, LEDGER_SHARDS);
  });

  it('puts a UID in the same shard in every version (a change would move every entry at the next load)', () => {
    assert.deepEqual(
      ['00000000-0000-0000-0000-000000000000', '6f1c1d4e-9b5a-4a8e-8d1e-2b7f0c3a9e11', 'a', ''].map(homeShard),
      [2, 15, 10, 3],
    );
  });

  it('spreads 16,000 random UIDs evenly: every shard within 15 % of its share', () => {
    const counts = new Array<number>(LEDGER_SHARDS).fill(0);
    for (let i = 0; i < 16_000; i++) counts[homeShard(randomUUID())]!++;
    for (const c of counts) assert.ok(c > 850 && c < 1_150, `shard counts ${counts.join(', ')}`);
  });

  it('set and remove write only the home shard; no write when nothing changes', async () => {
    const server = configMapServer();
    const ledger = new ShardedLedger(server.client, 'converge');
    await ledger.set('u1', 'v1', signal);
    await ledger.set('u1', 'v1', signal);
    assert.equal(server.writes(), 1);
    assert.deepEqual(server.placement().get('u1'), [{ shard: homeShard('u1'), value: 'v1' }]);
    await ledger.remove(['u1', 'never-there'], signal);
    assert.equal(server.writes(), 2);
    assert.equal(server.placement().size, 0);
  });

  it('load moves the entries of the single ConfigMap of earlier versions to their home shards, and a home copy wins', async () => {
    const server = configMapServer();
    const uids = Array.from({ length: 40 }, (_, i) => `uid-${i}`);
    server.put(LATE_CREATES_CONFIGMAP, Object.fromEntries(uids.map((u) => [u, `old-${u}`])));
    const away = uids.find((u) => homeShard(u) !== 0)!;
    server.put(ledgerShardNames()[homeShard(away)]!, { [away]: `new-${away}` });
    const loaded = await new ShardedLedger(server.client, 'converge').load(signal);
    assert.deepEqual(Object.keys(loaded).sort(), [...uids].sort());
    assert.equal(loaded[away], `new-${away}`);
    for (const [uid, places] of server.placement()) assert.deepEqual(places.map((p) => p.shard), [homeShard(uid)], uid);
    const writes = server.writes();
    await new ShardedLedger(server.client, 'converge').load(signal);
    assert.equal(server.writes(), writes, 'a second load writes nothing');
  });

  it('property (model): set, remove and load with entries starting anywhere, conflicts, and writes cut short at any point: nothing stored is lost, nothing removed comes back, and a load leaves every entry at home', async () => {
    const uid = fc.constantFrom(...Array.from({ length: 24 }, (_, i) => `u${i}`));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), uid, value: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ kind: fc.constant('remove' as const), uids: fc.uniqueArray(uid, { minLength: 1, maxLength: 6 }) }),
      fc.record({ kind: fc.constant('load' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(
        // Where an entry can be when a leader starts: at home, in shard 0 (written by an earlier
        // version), or both (a move cut short copied it home and did not take it out of shard 0).
        fc.dictionary(uid, fc.record({ at: fc.constantFrom('home', 'legacy', 'both'), value: fc.constantFrom('x', 'y'), homeValue: fc.constantFrom('x', 'y') })),
        fc.array(fc.record({ op, failAfter: fc.option(fc.integer({ min: 1, max: 4 }), { freq: 3 }) }), { minLength: 1, maxLength: 25 }),
        fc.option(fc.integer({ min: 2, max: 5 })),
        async (initial, ops, conflictEvery) => {
          const server = configMapServer({ conflictEvery: conflictEvery ?? undefined });
          const model = new Map<string, string>();
          for (const [u, { at, value, homeValue }] of Object.entries(initial)) {
            if (at !== 'home') server.put(LATE_CREATES_CONFIGMAP, { [u]: value });
            if (at !== 'legacy') server.put(ledgerShardNames()[homeShard(u)]!, { [u]: homeValue });
            model.set(u, at === 'legacy' ? value : homeValue);
          }
          // The model: what the ledger holds for each uid (an entry at home wins over a copy in shard 0);
          // after a failed call, `maybe` holds the states its uids may be in.
          const maybe = new Map<string, Set<string | undefined>>();
          const ledger = new ShardedLedger(server.client, 'converge');
          const seen = () => new Map([...server.placement()].map(([u, places]) => [u, (places.find((p) => p.shard === homeShard(u)) ?? places[0]!).value]));
          for (const { op, failAfter } of ops) {
            if (failAfter !== null) server.failWriteAfter(failAfter);
            let ok = true;
            let loaded: Record<string, string> | undefined;
            try {
              if (op.kind === 'set') await ledger.set(op.uid, op.value, signal);
              else if (op.kind === 'remove') await ledger.remove(op.uids, signal);
              else loaded = await ledger.load(signal);
            } catch (err) {
              if (!(err instanceof ApiError)) throw err;
              ok = false;
            }
            server.failWriteAfter(Number.MAX_SAFE_INTEGER);
            const touched = op.kind === 'set' ? [op.uid] : op.kind === 'remove' ? op.uids : [];
            for (const u of touched) {
              const after = op.kind === 'set' ? op.value : undefined;
              if (ok) {
                maybe.delete(u);
                if (after === undefined) model.delete(u);
                else model.set(u, after);
              } else {
                // Stored or not: the caller learns it failed and tries again; either state is allowed.
                maybe.set(u, new Set([...(maybe.get(u) ?? [model.get(u)]), after]));
              }
            }
            const now = seen();
            for (const [u, options] of maybe) {
              assert.ok(options.has(now.get(u)), `${u} is ${now.get(u)}, expected one of ${[...options].join('|')}`);
              const v = now.get(u);
              if (v === undefined) model.delete(u);
              else model.set(u, v);
              maybe.delete(u);
            }
            assert.deepEqual(now, model, `after ${JSON.stringify(op)} (${ok ? 'ok' : 'failed'})`);
            if (loaded) {
              assert.deepEqual(new Map(Object.entries(loaded)), model, 'load returns every entry');
              for (const [u, places] of server.placement()) assert.deepEqual(places.map((p) => p.shard), [homeShard(u)], `${u} at home only after a load`);
            }
          }
        },
      ),
      { numRuns: Number(process.env.LEDGER_SHARDS_RUNS ?? 300), timeout: 5_000 },
    );
  });

  it('property: sets and removals running while a leader loads (the single ConfigMap of earlier versions being moved) all hold afterwards: no move puts back a removed entry', async () => {
    const uids = Array.from({ length: 12 }, (_, i) => `u${i}`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('home', 'legacy', 'both', 'none'), { minLength: uids.length, maxLength: uids.length }),
        fc.array(fc.record({ kind: fc.constantFrom('set', 'remove', 'none'), delayMs: fc.integer({ min: 0, max: 4 }) }), { minLength: uids.length, maxLength: uids.length }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer(),
        async (placement, ops, loadDelayMs, seed) => {
          let state = seed;
          const server = configMapServer({ jitter: () => ((state = (state * 1103515245 + 12345) | 0) >>> 16) % 3 });
          const expected = new Map<string, string>();
          placement.forEach((at, i) => {
            const u = uids[i]!;
            if (at === 'legacy' || at === 'both') server.put(LATE_CREATES_CONFIGMAP, { [u]: 'old' });
            if (at === 'home' || at === 'both') server.put(ledgerShardNames()[homeShard(u)]!, { [u]: 'home' });
            if (at !== 'none') expected.set(u, at === 'legacy' ? 'old' : 'home');
          });
          const ledger = new ShardedLedger(server.client, 'converge');
          const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
          await Promise.all([
            sleep(loadDelayMs).then(() => ledger.load(signal)),
            ...ops.map(async ({ kind, delayMs }, i) => {
              const u = uids[i]!;
              await sleep(delayMs);
              if (kind === 'set') await ledger.set(u, 'new', signal);
              if (kind === 'remove') await ledger.remove([u], signal);
            }),
          ]);
          ops.forEach(({ kind }, i) => {
            if (kind === 'set') expected.set(uids[i]!, 'new');
            if (kind === 'remove') expected.delete(uids[i]!);
          });
          const loaded = await new ShardedLedger(server.client, 'converge').load(signal);
          assert.deepEqual(new Map(Object.entries(loaded)), expected);
        },
      ),
      { numRuns: Math.ceil(Number(process.env.LEDGER_SHARDS_RUNS ?? 300) / 3), timeout: 5_000 },
    );
  });
});
