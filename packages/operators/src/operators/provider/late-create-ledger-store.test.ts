/**
 * The late-create ledger's ConfigMap store, on a client that keeps one ConfigMap in memory and
 * refuses a write to a stale version (409), as the API server does: concurrent changes share a
 * write, none is lost to a conflict, a caller that gave up is dropped, and a failed write fails
 * every change in it. The store against a real API server runs in test/integration/provider.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError } from '@converge/runtime';
import type { ConfigMap, KubeClient } from '@converge/runtime';
import { LedgerStore } from './late-create-ledger-store.ts';

function configMapServer(options: { failWrites?: boolean } = {}) {
  let cm: ConfigMap | undefined;
  let version = 0;
  let writes = 0;
  const conflict = () => new ApiError({ reason: 'Conflict', code: 409, message: 'the object has been modified' });
  const client = {
    get: async () => {
      if (!cm) throw new ApiError({ reason: 'NotFound', code: 404, message: 'not found' });
      return structuredClone(cm);
    },
    create: async (_kind: unknown, next: ConfigMap) => {
      await new Promise((r) => setTimeout(r, 1));
      if (options.failWrites) throw new ApiError({ reason: 'ServerError', code: 500, message: 'etcd is down' });
      if (cm) throw new ApiError({ reason: 'AlreadyExists', code: 409, message: 'exists' });
      writes++;
      cm = { ...structuredClone(next), metadata: { ...next.metadata, resourceVersion: String(++version) } };
      return structuredClone(cm);
    },
    replace: async (_kind: unknown, next: ConfigMap) => {
      await new Promise((r) => setTimeout(r, 1));
      if (options.failWrites) throw new ApiError({ reason: 'ServerError', code: 500, message: 'etcd is down' });
      if (next.metadata?.resourceVersion !== cm?.metadata?.resourceVersion) throw conflict();
      writes++;
      cm = { ...structuredClone(next), metadata: { ...next.metadata, resourceVersion: String(++version) } };
      return structuredClone(cm);
    },
  } as unknown as KubeClient;
  return { client, data: () => ({ ...cm?.data }), writes: () => writes };
}

const put = (key: string) => (data: Record<string, string>) => {
  if (data[key] === 'x') return false;
  data[key] = 'x';
  return true;
};

describe('the late-create ledger store', () => {
  it('50 changes asked for at once are all stored, in 2 writes (the first, then the rest together)', async () => {
    const server = configMapServer();
    const store = new LedgerStore(server.client, 'converge', 'ledger');
    const signal = new AbortController().signal;
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.change(put(`k${i}`), signal)));
    assert.equal(Object.keys(server.data()).length, 50);
    assert.equal(server.writes(), 2);
  });

  it('two stores (two replicas) writing at once: conflicts are retried, nothing is lost', async () => {
    const server = configMapServer();
    const a = new LedgerStore(server.client, 'converge', 'ledger');
    const b = new LedgerStore(server.client, 'converge', 'ledger');
    const signal = new AbortController().signal;
    await a.change(put('seed'), signal);
    await Promise.all([a.change(put('a1'), signal), b.change(put('b1'), signal), a.change(put('a2'), signal), b.change(put('b2'), signal)]);
    assert.deepEqual(Object.keys(server.data()).sort(), ['a1', 'a2', 'b1', 'b2', 'seed']);
  });

  it('a change whose caller gave up before its turn is dropped; the others are stored', async () => {
    const server = configMapServer();
    const store = new LedgerStore(server.client, 'converge', 'ledger');
    const live = new AbortController().signal;
    const gaveUp = new AbortController();
    const first = store.change(put('first'), live);
    const dropped = store.change(put('dropped'), gaveUp.signal);
    const kept = store.change(put('kept'), live);
    gaveUp.abort(new Error('shutting down'));
    await first;
    await assert.rejects(dropped, /shutting down/);
    await kept;
    assert.deepEqual(Object.keys(server.data()).sort(), ['first', 'kept']);
  });

  it('a failed write fails every change in it, and no change is half stored', async () => {
    const server = configMapServer({ failWrites: true });
    const store = new LedgerStore(server.client, 'converge', 'ledger');
    const signal = new AbortController().signal;
    const results = await Promise.allSettled([store.change(put('a'), signal), store.change(put('b'), signal)]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.deepEqual(server.data(), {});
  });

  it('property: with replicas writing at random moments, every change that resolved is stored, and a store never writes more often than it was asked to', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ replica: fc.integer({ min: 0, max: 2 }), key: fc.integer({ min: 0, max: 15 }), delayMs: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 30 }), async (ops) => {
        const server = configMapServer();
        const stores = [0, 1, 2].map(() => new LedgerStore(server.client, 'converge', 'ledger'));
        const signal = new AbortController().signal;
        const results = await Promise.allSettled(ops.map(async ({ replica, key, delayMs }) => {
          await new Promise((r) => setTimeout(r, delayMs));
          await stores[replica]!.change(put(`k${key}`), signal);
          return `k${key}`;
        }));
        const stored = server.data();
        for (const r of results) if (r.status === 'fulfilled') assert.ok(r.value in stored, `${r.value} resolved but is not stored`);
        assert.ok(server.writes() <= ops.length);
      }),
      { numRuns: 60 },
    );
  });

  it('no write when nothing changes', async () => {
    const server = configMapServer();
    const store = new LedgerStore(server.client, 'converge', 'ledger');
    const signal = new AbortController().signal;
    await store.change(put('a'), signal);
    await store.change(put('a'), signal);
    assert.equal(server.writes(), 1);
  });
});
