/**
 * One pass of the late-create sweep over one account, on fakes (a ConfigMap in memory, a scripted
 * vendor, a fake clock): a failure delays only the key it failed, and one that would fail the
 * account's other calls ends the pass there. The sweep against a real API server and vendor
 * simulator is in test/integration/provider/deletion.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { FakeClock } from '@converge/runtime';
import { inMemoryLedger, sweepOver } from './late-creates.test-support.ts';
import { encodeEntry } from './late-create-ledger.ts';
import type { VendorApi, VendorInstance } from './vendor-api.ts';
import { VendorError, type UnreadableInstanceState } from './vendor/index.ts';

const NOW = Date.parse('2026-12-01T10:20:00.000Z');
const SETTLE_MS = 2_000;
const ENDPOINT = 'https://vendor.example.com';

/** The ledger's entry for `uid`, its window over: its next look is its last. */
const stored = (uid: string) => encodeEntry({ uid, namespace: 'team-a', name: `p-${uid}`, endpoint: ENDPOINT, secret: { name: 'creds', key: 'token' }, requestedAt: '2026-12-01T10:00:00.000Z', until: '2026-12-01T10:15:00.000Z' });
const instance = (key: string): VendorInstance => ({ id: `i-${key}`, region: 'eu', displayName: '', idempotencyKey: key, createdAt: '', updatedAt: '' });
const fail = (kind: 'Invalid' | 'Timeout') => new VendorError({ kind, operation: 'findByIdempotencyKey', message: `scripted ${kind}` });

/**
 * Runs the sweep until its first pass is over and its finished entries are written (it sleeps
 * then), with the ledger holding `uids` and the vendor answering as `vendor` says; returns the
 * vendor calls in order and the keys left in the ledger.
 */
async function firstPass(uids: string[], vendor: { find?: (key: string) => VendorInstance | undefined; list?: () => VendorInstance[]; unreadable?: () => UnreadableInstanceState[]; nextPageToken?: (listing: number) => string | undefined; delete?: (id: string) => void }, options: { legacy?: boolean } = {}) {
  const clock = new FakeClock(NOW);
  const ledger = inMemoryLedger(clock, Object.fromEntries(uids.map((u) => [u, stored(u)])), options);
  const calls: string[] = [];
  const api = {
    findByIdempotencyKey: async (key: string) => (calls.push(`find ${key}`), vendor.find?.(key)),
    listInstanceStates: async () => {
      calls.push('list');
      const token = vendor.nextPageToken?.(calls.filter((c) => c === 'list').length);
      const unreadable = vendor.unreadable?.();
      return { items: (vendor.list?.() ?? []).map((i) => ({ instance: i })), ...(unreadable ? { unreadable } : {}), ...(token !== undefined ? { nextPageToken: token } : {}) };
    },
    deleteInstance: async (id: string) => (calls.push(`delete ${id}`), vendor.delete?.(id), true),
  } as unknown as VendorApi;
  const sweep = sweepOver(ledger.client, api, clock, { settleMs: SETTLE_MS, windowMs: 900_000 });
  const abort = new AbortController();
  const running = sweep.start(abort.signal);
  for (let i = 0; i < 1_000 && clock.pendingTimers() === 0; i++) await tick();
  if (clock.pendingTimers() === 0) calls.push('(still in its first pass)');
  abort.abort();
  await running;
  return { calls, left: Object.keys(ledger.data()).sort(), configMaps: ledger.configMaps() };
}

/** Settles the sweep: lets it run until it sleeps on the fake clock again. */
async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await tick();
}

/**
 * Releases (records) keys at the given offsets from NOW on a sweep whose ledger starts empty,
 * then lets the fake clock run `untilMs`; returns the vendor calls in order.
 */
async function released(records: { uid: string; atMs: number }[], untilMs: number) {
  const clock = new FakeClock(NOW);
  const ledger = inMemoryLedger(clock);
  const calls: string[] = [];
  const api = {
    findByIdempotencyKey: async (key: string) => (calls.push(`find ${key}`), undefined),
    listInstanceStates: async () => (calls.push('list'), { items: [] }),
    deleteInstance: async () => true,
  } as unknown as VendorApi;
  const sweep = sweepOver(ledger.client, api, clock, { settleMs: SETTLE_MS, windowMs: 900_000 });
  const abort = new AbortController();
  const running = sweep.start(abort.signal);
  await settle();
  let at = 0;
  for (const { uid, atMs } of [...records].sort((a, b) => a.atMs - b.atMs)) {
    await clock.advanceAsync(atMs - at);
    at = atMs;
    const requestedAt = new Date(clock.now() - 1_000).toISOString();
    await sweep.record({ uid, namespace: 'team-a', name: `p-${uid}`, endpoint: ENDPOINT, secret: { name: 'creds', key: 'token' }, requestedAt, until: new Date(clock.now() + 600_000).toISOString() }, 'token', abort.signal);
    await settle();
  }
  for (; at < untilMs; at += 100) {
    await clock.advanceAsync(100);
    await settle();
  }
  abort.abort();
  await running;
  return calls;
}

describe('a pass of the late-create sweep over one account', () => {
  it('by key: a lookup that fails for its own key (4xx) delays that key only; the others are looked at, cleaned and done', async () => {
    const { calls, left } = await firstPass(['a', 'b', 'c'], {
      find: (key) => {
        if (key === 'b') throw fail('Invalid');
        return key === 'a' ? instance('a') : undefined;
      },
    });
    assert.deepEqual(calls, ['find a', 'find b', 'find c', 'delete i-a']);
    assert.deepEqual(left, ['b'], 'a (its late instance deleted) and c (nothing found) are done after their last look');
  });

  it('by key: a vendor that does not answer ends the pass; the keys looked at before are done, the others stay', async () => {
    const { calls, left } = await firstPass(['a', 'b', 'c'], {
      find: (key) => {
        if (key === 'b') throw fail('Timeout');
        return undefined;
      },
    });
    assert.deepEqual(calls, ['find a', 'find b'], 'no call for c after the timeout');
    assert.deepEqual(left, ['b', 'c']);
  });

  it('by listing: a deletion that fails delays its own key only', async () => {
    const { calls, left } = await firstPass(['a', 'b', 'c', 'd'], {
      list: () => [instance('a'), instance('b'), instance('someone-else')],
      delete: (id) => {
        if (id === 'i-a') throw fail('Invalid');
      },
    });
    assert.deepEqual(calls, ['list', 'delete i-a', 'delete i-b']);
    assert.deepEqual(left, ['a']);
  });

  it('by listing: a vendor that repeats its page token (or cycles) ends the listing at the repeat; every key stays for the next pass, nothing deleted', async () => {
    for (const nextPageToken of [() => 'p', (n: number) => `p${n % 3}`]) {
      const { calls, left } = await firstPass(['a', 'b', 'c', 'd'], { list: () => [instance('a')], nextPageToken });
      assert.ok(calls.length <= 4 && calls.every((c) => c === 'list'), calls.slice(0, 8).join(', '));
      assert.deepEqual(left, ['a', 'b', 'c', 'd']);
    }
  });
});

describe('a listing with items the client cannot read (outside the vendor contract)', () => {
  it('one whose instance could be read is cleaned like any; one of another key or of none is passed over; the other keys are done', async () => {
    const { calls, left } = await firstPass(['a', 'b', 'c', 'd'], {
      list: () => [instance('a')],
      unreadable: () => [
        { id: 'i-b', idempotencyKey: 'b', instance: instance('b'), problem: 'unknown health status' },
        { id: 'i-x', idempotencyKey: 'someone-else', problem: 'not an instance' },
        { idempotencyKey: null, problem: 'not an instance' },
      ],
    });
    assert.deepEqual(calls, ['list', 'delete i-a', 'delete i-b']);
    assert.deepEqual(left, []);
  });

  it('one listed under a due key with no readable instance fails that key only (never read as "no late instance")', async () => {
    const { calls, left } = await firstPass(['a', 'b', 'c', 'd'], {
      list: () => [instance('a')],
      unreadable: () => [{ id: 'i-c', idempotencyKey: 'c', problem: 'not an instance' }],
    });
    assert.deepEqual(calls, ['list', 'delete i-a']);
    assert.deepEqual(left, ['c']);
  });

  it('one whose key cannot be told ends the pass: every key stays, nothing deleted', async () => {
    const { calls, left } = await firstPass(['a', 'b', 'c', 'd'], { list: () => [instance('a')], unreadable: () => [{ problem: 'not an instance' }] });
    assert.deepEqual(calls, ['list']);
    assert.deepEqual(left, ['a', 'b', 'c', 'd']);
  });
});

describe('the keys the sweep looks after (converge_vendor_late_create_keys)', () => {
  it('count each released key until its window is over and it was looked at a last time; then 0', async () => {
    const clock = new FakeClock(NOW);
    const ledger = inMemoryLedger(clock);
    const api = { findByIdempotencyKey: async () => undefined, listInstanceStates: async () => ({ items: [] }), deleteInstance: async () => true } as unknown as VendorApi;
    const sweep = sweepOver(ledger.client, api, clock, { settleMs: SETTLE_MS, windowMs: 60_000 });
    const abort = new AbortController();
    assert.equal(sweep.trackedKeys, undefined, 'not known before the ledger is read');
    const running = sweep.start(abort.signal);
    await settle();
    assert.equal(sweep.trackedKeys, 0);
    for (const uid of ['a', 'b']) {
      await sweep.record({ uid, namespace: 'team-a', name: `p-${uid}`, endpoint: ENDPOINT, secret: { name: 'creds', key: 'token' }, requestedAt: new Date(clock.now()).toISOString(), until: new Date(clock.now() + 60_000).toISOString() }, 'token', abort.signal);
    }
    assert.equal(sweep.trackedKeys, 2);
    for (let at = 0; at < 70_000; at += 1_000) {
      await clock.advanceAsync(1_000);
      await settle();
    }
    assert.equal(sweep.trackedKeys, 0, 'both windows over: nothing left to catch');
    abort.abort();
    await running;
  });
});

describe('a ledger written by an earlier version (one ConfigMap)', () => {
  it('its keys are looked at and swept like any, and none is left in the single ConfigMap', async () => {
    const deleted: string[] = [];
    const { calls, left, configMaps } = await firstPass(['a', 'b'], { find: (key) => (key === 'b' ? instance('b') : undefined), delete: (id) => deleted.push(id) }, { legacy: true });
    assert.deepEqual(calls.filter((c) => c.startsWith('find')).sort(), ['find a', 'find b']);
    assert.deepEqual(deleted, ['i-b']);
    assert.deepEqual(left, []);
    for (const [name, data] of configMaps) assert.deepEqual(data, {}, name);
  });
});

describe('vendor load of the late-create sweep', () => {
  it('once an account has more released keys than are looked up one by one, every pass over it is one listing covering them all, however far apart they were released', async () => {
    // a, b and c are due at 2 s; d and e, released 1.5 s later, at 3.5 s: more than the batching
    // slack apart. The pass at 2 s lists the account once, for all five.
    const calls = await released([{ uid: 'a', atMs: 0 }, { uid: 'b', atMs: 0 }, { uid: 'c', atMs: 0 }, { uid: 'd', atMs: 1_500 }, { uid: 'e', atMs: 1_500 }], 2_500);
    assert.deepEqual(calls, ['list']);
  });

  it('up to three released keys of an account are looked up by key, each when it is due', async () => {
    const calls = await released([{ uid: 'a', atMs: 0 }, { uid: 'b', atMs: 1_500 }], 4_000);
    assert.deepEqual(calls, ['find a', 'find b']);
  });
});

describe('a key whose endpoint this operator refuses to call (an endpoint no longer allowed)', () => {
  it('is put aside after one refused look: no look every minute for ever, one warning, and it stays in the ledger for an operator that may call the endpoint', async () => {
    const clock = new FakeClock(NOW);
    const ledger = inMemoryLedger(clock, { u1: stored('u1'), u2: stored('u2') });
    let looks = 0;
    const api = {
      findByIdempotencyKey: async () => {
        looks++;
        throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: `vendor endpoint ${ENDPOINT} is not among provider.vendor.allowedEndpoints` });
      },
    } as unknown as VendorApi;
    const warnings: string[] = [];
    const sweep = sweepOver(ledger.client, api, clock, { settleMs: SETTLE_MS, windowMs: 900_000 }, new Map(), (msg) => warnings.push(msg));
    const abort = new AbortController();
    const running = sweep.start(abort.signal);
    await settle();
    for (let s = 0; s < 3 * 3_600; s += 10) {
      clock.advance(10_000);
      for (let i = 0; i < 5; i++) await tick();
    }
    abort.abort();
    await running;
    assert.equal(looks, 1, 'one refused look puts the account\'s keys aside (the refusal is this process\'s own: its configuration, fixed by a restart)');
    assert.deepEqual(Object.keys(ledger.data()).sort(), ['u1', 'u2'], 'kept: an operator allowed to call the endpoint sweeps them');
    assert.equal(warnings.filter((w) => /put aside/.test(w)).length, 2, 'one warning per key, not one per look');
  });
});
