/**
 * The late-create sweep's `beforeCreate` entries (kubernetes#77988: kube-apiserver can remove a
 * provider past its finalizer), on fakes: a ConfigMap in memory, the providers the cache and the
 * API server hold, a scripted vendor, a fake clock. The key of a provider that still exists is
 * never looked up at the vendor; once the provider is gone (or replaced), it is swept like a
 * released key — also by a process that only loaded it from the ledger. The integration tests are
 * in test/integration/provider/deletion.test.ts and deletion-crash-points.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { ApiError, FakeClock } from '@converge/runtime';
import type { KubeClient } from '@converge/runtime';
import { inMemoryLedger, sweepOver } from './late-creates.test-support.ts';
import { BEFORE_CREATE_HOLD_MS, encodeEntry, entryFor } from './late-create-ledger.ts';
import type { LedgerEntry } from './late-create-ledger.ts';
import { PROVIDER_FINALIZER } from './api/constants.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { VendorApi } from './vendor-api.ts';

const NOW = Date.parse('2026-12-03T10:00:00.000Z');
const SETTLE_MS = 2_000;
const WINDOW_MS = 600_000;
const KEY = 'team-a/p';

function provider(uid: string, extra: { providerID?: string; deleting?: boolean } = {}): DigitalHumanProvider {
  return {
    apiVersion: 'dhp.example.com/v1',
    kind: 'DigitalHumanProvider',
    metadata: { name: 'p', namespace: 'team-a', uid, finalizers: [PROVIDER_FINALIZER], ...(extra.deleting ? { deletionTimestamp: '2026-12-03T10:00:01Z' } : {}) },
    spec: { endpoint: 'https://vendor.example.com', region: 'eu', credentials: { secretRef: { name: 'creds' } } },
    ...(extra.providerID ? { status: { providerID: extra.providerID } } : {}),
  } as DigitalHumanProvider;
}

const beforeCreate = (uid: string): LedgerEntry => entryFor(provider(uid), 'https://vendor.example.com', new Date(NOW).toISOString(), WINDOW_MS, { beforeCreate: true });

/**
 * A running sweep whose ledger holds `stored` at start; `cached` is the sweep's cache, and the
 * ledger's `providers` what the API server answers. Every vendor call is listed in `calls`; the
 * vendor holds an instance for every key in `instances`.
 */
async function running(options: { stored?: LedgerEntry[]; cached?: Map<string, DigitalHumanProvider>; atServer?: DigitalHumanProvider[]; instances?: string[]; ledgerDown?: { now: boolean }; providerRead?: () => Promise<void> }) {
  const clock = new FakeClock(NOW);
  const ledger = inMemoryLedger(clock, options.stored && Object.fromEntries(options.stored.map((e) => [e.uid, encodeEntry(e)])));
  for (const p of options.atServer ?? []) ledger.providers.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
  const instances = new Set(options.instances);
  const calls: string[] = [];
  const api = {
    findByIdempotencyKey: async (key: string) => (calls.push(`find ${key}`), instances.has(key) ? { id: `i-${key}`, idempotencyKey: key } : undefined),
    listInstanceStates: async () => (calls.push('list'), { items: [] }),
    deleteInstance: async (id: string) => (calls.push(`delete ${id}`), instances.delete(id.slice(2))),
  } as unknown as VendorApi;
  const cached = options.cached ?? new Map<string, DigitalHumanProvider>();
  const { ledgerDown, providerRead } = options;
  // With `ledgerDown`, the ledger's writes fail while `ledgerDown.now` says so; a read of a
  // provider from the API server answers once `providerRead` resolved.
  const down = ledgerDown ?? { now: false };
  const client = ledgerDown || providerRead
    ? ({
        get: async (kind: { kind: string }, ...rest: unknown[]) => {
          if (kind.kind === 'DigitalHumanProvider') await providerRead?.();
          return (ledger.client.get as (...a: unknown[]) => Promise<unknown>)(kind, ...rest);
        },
        create: (...args: unknown[]) => (down.now ? Promise.reject(new ApiError({ reason: 'ServerError', code: 500, message: 'down' })) : (ledger.client.create as (...a: unknown[]) => Promise<unknown>)(...args)),
        replace: (...args: unknown[]) => (down.now ? Promise.reject(new ApiError({ reason: 'ServerError', code: 500, message: 'down' })) : (ledger.client.replace as (...a: unknown[]) => Promise<unknown>)(...args)),
      } as unknown as KubeClient)
    : ledger.client;
  const sweep = sweepOver(client, api, clock, { settleMs: SETTLE_MS, windowMs: WINDOW_MS }, cached);
  const abort = new AbortController();
  const done = sweep.start(abort.signal);
  const settle = async () => {
    for (let i = 0; i < 50; i++) await tick();
  };
  await settle();
  return {
    sweep, clock, ledger, calls, cached, abort,
    /** Lets the fake clock run `ms` in steps of `stepMs` (100 ms). */
    async run(ms: number, stepMs = 100) {
      for (let at = 0; at < ms; at += stepMs) {
        await clock.advanceAsync(stepMs);
        await settle();
      }
    },
    async stop() {
      abort.abort();
      await done;
    },
  };
}

describe('beforeCreate entries of the late-create sweep', () => {
  it('while its provider exists, the key is never looked up at the vendor; once the status has recorded the instance for the hold, the entry leaves the ledger', async () => {
    const live = provider('u1');
    const s = await running({ cached: new Map([[KEY, live]]), atServer: [live], instances: ['u1'] });
    await s.sweep.record(beforeCreate('u1'), 'token', s.abort.signal);
    await s.run(20_000);
    s.sweep.notice(KEY, 'u1');
    assert.ok('u1' in s.ledger.data(), 'kept while nothing records the instance');
    s.cached.set(KEY, provider('u1', { providerID: 'i-u1' }));
    await s.run(BEFORE_CREATE_HOLD_MS + 60_000);
    await s.stop();
    assert.deepEqual(s.calls, [], 'no vendor call for a live provider');
    assert.equal(s.ledger.providerReads(), 0, 'the cache answered: no read from the API server');
    assert.deepEqual(s.ledger.data(), {}, 'done and removed');
  });

  it('a provider gone without its finalizer honoured (notice): its key is looked up at once and its instance deleted', async () => {
    const s = await running({ cached: new Map([[KEY, provider('u1')]]), atServer: [provider('u1')], instances: ['u1'] });
    await s.sweep.record(beforeCreate('u1'), 'token', s.abort.signal);
    s.cached.delete(KEY);
    s.ledger.providers.delete(KEY);
    s.sweep.notice(KEY, undefined);
    await s.run(100);
    assert.deepEqual(s.calls, ['find u1', 'delete i-u1'], 'looked at before its first scheduled look');
    await s.run(WINDOW_MS);
    await s.stop();
    assert.deepEqual(s.ledger.data(), {}, 'done once its window is over');
  });

  it('after a restart: a stored key whose provider the API server no longer has is swept', async () => {
    const s = await running({ stored: [beforeCreate('u1')], instances: ['u1'] });
    await s.run(100);
    await s.stop();
    assert.deepEqual(s.calls, ['find u1', 'delete i-u1']);
    assert.equal(s.ledger.providerReads(), 1, 'absent from the cache: the API server was asked');
  });

  it('a step of the wall clock neither ends the entry early (its instance would leak) nor holds it past its window', async () => {
    // Forward: an hour's step while the provider lives, then the provider is removed past its
    // finalizer. The entry's window (10 min) has not run out in real time: the key is swept.
    const forward = await running({ cached: new Map([[KEY, provider('u1')]]), atServer: [provider('u1')], instances: ['u1'] });
    await forward.sweep.record(beforeCreate('u1'), 'token', forward.abort.signal);
    forward.clock.stepWall(3_600_000);
    await forward.run(120_000);
    assert.ok('u1' in forward.ledger.data(), 'kept: its window has not passed');
    forward.cached.delete(KEY);
    forward.ledger.providers.delete(KEY);
    forward.sweep.notice(KEY, undefined);
    await forward.run(100);
    await forward.stop();
    assert.deepEqual(forward.calls, ['find u1', 'delete i-u1'], 'the late instance is deleted');

    // Back: an hour's step back does not keep the entry an hour past its window.
    const back = await running({ cached: new Map([[KEY, provider('u1')]]), atServer: [provider('u1')], instances: ['u1'] });
    await back.sweep.record(beforeCreate('u1'), 'token', back.abort.signal);
    back.clock.stepWall(-3_600_000);
    await back.run(WINDOW_MS + 120_000);
    await back.stop();
    assert.deepEqual(back.ledger.data(), {}, 'done once its window is over in real time');
    assert.deepEqual(back.calls, [], 'no vendor call for a live provider');
  });

  it('a cache that is behind does not sweep: the API server still has the provider', async () => {
    const s = await running({ stored: [beforeCreate('u1')], atServer: [provider('u1')], instances: ['u1'] });
    await s.run(30_000);
    await s.stop();
    assert.deepEqual(s.calls, []);
    assert.ok('u1' in s.ledger.data());
  });

  it('a provider replaced by another of the same name: the old key is swept, the new provider left alone', async () => {
    const s = await running({ stored: [beforeCreate('u1')], cached: new Map([[KEY, provider('u2')]]), atServer: [provider('u2')], instances: ['u1', 'u2'] });
    await s.run(100);
    await s.stop();
    assert.deepEqual(s.calls, ['find u1', 'delete i-u1']);
  });

  it('a deletion that honours the finalizer: the entry is done (the deletion looks by key itself), no vendor call', async () => {
    const deleting = provider('u1', { deleting: true });
    const s = await running({ stored: [beforeCreate('u1')], cached: new Map([[KEY, deleting]]), atServer: [deleting], instances: ['u1'] });
    await s.run(100);
    await s.stop();
    assert.deepEqual(s.calls, []);
    assert.deepEqual(s.ledger.data(), {});
  });

  it('a released entry recorded for the same UID (the deletion) replaces the beforeCreate one and is swept as usual', async () => {
    const s = await running({ cached: new Map([[KEY, provider('u1')]]), atServer: [provider('u1')], instances: ['u1'] });
    await s.sweep.record(beforeCreate('u1'), 'token', s.abort.signal);
    const { beforeCreate: _, ...releasedEntry } = beforeCreate('u1');
    await s.sweep.record(releasedEntry, 'token', s.abort.signal);
    s.cached.delete(KEY);
    s.ledger.providers.delete(KEY);
    await s.run(SETTLE_MS + 100);
    await s.stop();
    assert.deepEqual(s.calls, ['find u1', 'delete i-u1']);
    assert.equal(JSON.parse(s.ledger.data().u1!).beforeCreate, undefined);
  });
});

describe('forget (an abandonment)', () => {
  it('removes the key before the finalizer goes: the given-up instance is not swept once its provider is gone', async () => {
    const s = await running({ cached: new Map([[KEY, provider('u1')]]), atServer: [provider('u1')], instances: ['u1'] });
    await s.sweep.record(beforeCreate('u1'), 'token', s.abort.signal);
    await s.sweep.forget('u1', s.abort.signal);
    s.cached.delete(KEY);
    s.ledger.providers.delete(KEY);
    s.sweep.notice(KEY, undefined);
    await s.run(WINDOW_MS);
    await s.stop();
    assert.deepEqual(s.calls, []);
    assert.deepEqual(s.ledger.data(), {});
  });
});

describe('a removal from the ledger that failed (found by late-creates.before-create.property.test.ts)', () => {
  it('is tried again within the longest gap between looks, also when no entry is left to look at', async () => {
    const ledgerDown = { now: false };
    const s = await running({ cached: new Map([[KEY, provider('u1')]]), atServer: [provider('u1')], ledgerDown });
    await s.sweep.record(beforeCreate('u1'), 'token', s.abort.signal);
    // The window ends while the ledger cannot be written: the entry is done, its removal fails.
    ledgerDown.now = true;
    await s.run(WINDOW_MS + 10_000, 1_000);
    assert.ok('u1' in s.ledger.data(), 'not removed while the ledger is down');
    ledgerDown.now = false;
    await s.run(120_000, 1_000);
    await s.stop();
    assert.deepEqual(s.ledger.data(), {}, 'removed once the ledger can be written again (not an hour later)');
    assert.deepEqual(s.calls, []);
  });
});

describe('two beforeCreate entries under one name (found by late-creates.before-create.property.test.ts)', () => {
  it('after a restart, the entry of the provider that replaced a removed one is still looked at on notice once it is removed too', async () => {
    // u1 was removed past its finalizer and replaced by u2 (same name); both entries are in the
    // ledger (u1's stays until its window ends) when a new leader starts.
    const s = await running({ stored: [beforeCreate('u1'), beforeCreate('u2')], cached: new Map([[KEY, provider('u2')]]), atServer: [provider('u2')], instances: ['u2'] });
    await s.run(100);
    assert.deepEqual(s.calls, ['find u1'], 'u1 is swept at start; u2 lives');
    // Now u2 is removed past its finalizer too, and its reconcile says so.
    s.cached.delete(KEY);
    s.ledger.providers.delete(KEY);
    s.sweep.notice(KEY, undefined);
    await s.run(100);
    await s.stop();
    assert.deepEqual(s.calls, ['find u1', 'find u2', 'delete i-u2'], 'looked at on notice, not at its next scheduled look');
  });
});

describe('a cache that shows a provider the API server just said is gone (found by late-creates.before-create.property.test.ts)', () => {
  it('is behind: the key is swept, not dropped as a live provider\'s', async () => {
    // A new leader whose cache does not show p yet; p (u1) was removed past its finalizer. The
    // API server answers slowly, and meanwhile the cache shows p as it was (behind) for a while.
    let answer!: () => void;
    const cached = new Map<string, DigitalHumanProvider>();
    const s = await running({ stored: [beforeCreate('u1')], cached, instances: ['u1'], providerRead: () => new Promise<void>((resolve) => (answer = resolve)) });
    cached.set(KEY, provider('u1'));
    answer();
    await s.run(5_000);
    cached.delete(KEY);
    await s.run(WINDOW_MS);
    await s.stop();
    assert.deepEqual(s.calls.slice(0, 2), ['find u1', 'delete i-u1'], 'the API server decides: its instance is deleted at once');
    assert.deepEqual(new Set(s.calls.slice(2)), new Set(['find u1']), 'then looked up until its window ends, like any released key');
    assert.deepEqual(s.ledger.data(), {});
  });
});
