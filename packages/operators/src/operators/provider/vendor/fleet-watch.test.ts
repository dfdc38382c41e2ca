/**
 * FleetWatch rounds that overlap (its `poll()` is public: the run loop and any other caller may
 * ask at once). The vendor is a stand-in whose answers the test releases one by one, so the
 * order of reads, writes and commits is exact; `test/integration/vendor/fleet-watch.test.ts`
 * covers the rest against the real simulator.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '@converge/runtime';
import { FleetWatch } from './fleet-watch.ts';
import type { InstanceStatePage, UnreadableInstanceState, VendorAccount, VendorInstanceState } from './types.ts';
import { VendorError } from './errors.ts';

const account: VendorAccount = { id: 'acct', state: 'active', since: '2026-12-05T00:00:00Z' };

function instance(id: string, dailyQuota: number): VendorInstanceState {
  return {
    instance: { id, region: 'eu' },
    health: { status: 'healthy' },
    limits: { maxConcurrency: 4, requestsPerMinute: 60, dailyQuota },
    usage: { callsToday: 0, quotaRemaining: dailyQuota, refusedToday: 0, throttledRequests: 0, quotaResetAt: '2026-12-06T00:00:00Z' },
  } as unknown as VendorInstanceState;
}

/** A vendor whose list answers wait for the test: each call reads the state when it arrives, answers when released. */
function heldVendor() {
  const quota = new Map([['i-1', 10_000]]);
  const held: (() => void)[] = [];
  const calls = { account: 0, list: 0 };
  const client = {
    async getAccount(): Promise<VendorAccount> {
      calls.account++;
      return account;
    },
    listInstanceStates(): Promise<InstanceStatePage> {
      calls.list++;
      const page = { items: [...quota].map(([id, q]) => instance(id, q)) }; // read now
      return new Promise((resolve) => held.push(() => resolve(page))); // answered later
    },
  };
  return { client, quota, held, calls };
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

test('a round that read the vendor before a write never serves the pre-write view, however the rounds overlap', async () => {
  const clock = new FakeClock(0);
  const vendor = heldVendor();
  const watch = new FleetWatch({ client: vendor.client, clock, intervalMs: 1000 });
  const first = watch.poll();
  await settle();
  vendor.held.shift()!();
  await first;
  assert.equal(watch.instance('i-1')?.limits.dailyQuota, 10_000);

  clock.advance(1);
  const early = watch.poll(); // reads 10,000, answered late
  await settle();
  clock.advance(1);
  vendor.quota.set('i-1', 7); // the operator writes the limit...
  watch.forget('i-1'); // ...and says so
  clock.advance(1);
  const late = watch.poll();
  await settle();
  while (vendor.held.length) {
    vendor.held.pop()!(); // the later read answers first
    await settle();
  }
  await Promise.all([early, late]);
  assert.notEqual(watch.instance('i-1')?.limits.dailyQuota, 10_000, 'the view from before the write came back');

  clock.advance(1);
  const next = watch.poll();
  await settle();
  vendor.held.shift()!();
  await next;
  assert.equal(watch.instance('i-1')?.limits.dailyQuota, 7, 'a round started after the write serves it');
});

test('property: whatever the order rounds start, read and finish in, an instance is served as the vendor has it now or not at all', async () => {
  type Step = { kind: 'round' } | { kind: 'answer'; which: number } | { kind: 'write'; id: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.constant<Step>({ kind: 'round' }),
    fc.nat(5).map<Step>((which) => ({ kind: 'answer', which })),
    fc.nat(2).map<Step>((id) => ({ kind: 'write', id })),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
      const clock = new FakeClock(0);
      const vendor = heldVendor();
      const ids = ['i-0', 'i-1', 'i-2'];
      for (const id of ids) vendor.quota.set(id, 1);
      let written = 1;
      const watch = new FleetWatch({ client: vendor.client, clock, intervalMs: 1000 });
      const rounds: Promise<unknown>[] = [];
      const check = (when: string) => {
        for (const id of ids) {
          const served = watch.instance(id)?.limits.dailyQuota;
          assert.ok(served === undefined || served === vendor.quota.get(id), `${id} served with quota ${served}, the vendor has ${vendor.quota.get(id)} (${when})`);
        }
      };
      for (const s of steps) {
        clock.advance(1);
        if (s.kind === 'round') rounds.push(watch.poll());
        else if (s.kind === 'answer') vendor.held.splice(s.which % Math.max(1, vendor.held.length), 1)[0]?.();
        else {
          vendor.quota.set(ids[s.id]!, ++written);
          watch.forget(ids[s.id]!);
        }
        await settle();
        check(s.kind);
      }
      while (vendor.held.length) {
        vendor.held.shift()!();
        await settle();
        check('draining');
      }
      await Promise.all(rounds);
    }),
    { numRuns: 2_000 },
  );
});

test('a token the vendor refuses (401/403) is asked ever less often, at most every maxBackoffMs; an answer brings the interval back', async () => {
  const clock = new FakeClock(0);
  let refuse = true;
  let reads = 0;
  const client = {
    async getAccount(): Promise<VendorAccount> {
      reads++;
      if (refuse) throw new VendorError({ kind: 'Unauthorized', operation: 'getAccount', message: 'vendor getAccount: 401 invalid token', status: 401 });
      return account;
    },
    async listInstanceStates(): Promise<InstanceStatePage> {
      return { items: [] } as unknown as InstanceStatePage;
    },
  };
  const errors: unknown[] = [];
  const watch = new FleetWatch({ client, clock, intervalMs: 3_000, maxBackoffMs: 300_000, onError: (e) => errors.push(e) });
  const abort = new AbortController();
  const running = watch.run(abort.signal);
  const readsAt: number[] = [];
  let seen = 0;
  for (let t = 0; t < 20 * 60_000; t += 1_000) {
    await settle();
    if (reads > seen) { seen = reads; readsAt.push(clock.monotonic()); }
    await clock.advanceAsync(1_000);
  }
  const gaps = readsAt.slice(1).map((at, i) => at - readsAt[i]!);
  assert.ok(readsAt.length <= 12, `${readsAt.length} reads in 20 minutes with a refused token (gaps ${gaps.join(', ')} ms)`);
  assert.deepEqual(gaps.slice(0, 4), [6_000, 12_000, 24_000, 48_000], 'doubling from the interval');
  assert.ok(gaps.every((g) => g <= 300_000), 'capped');
  assert.equal(errors.length, readsAt.length, 'every refusal is reported');

  refuse = false; // the token works again (rotated at the vendor, say): the next round succeeds, then the normal rhythm
  const before = reads;
  await clock.advanceAsync(300_000);
  await settle();
  assert.ok(reads > before, 'read again within the cap');
  const after = reads;
  for (let i = 0; i < 10; i++) { await clock.advanceAsync(3_000); await settle(); }
  assert.ok(reads - after >= 9, `${reads - after} reads in 30 s once the token works`);
  abort.abort();
  await running;
});

test('a failure that is not a refusal of the token (the vendor down) keeps the interval', async () => {
  const clock = new FakeClock(0);
  let reads = 0;
  const client = {
    async getAccount(): Promise<VendorAccount> {
      reads++;
      throw new VendorError({ kind: 'Server', operation: 'getAccount', message: 'vendor getAccount: HTTP 503', status: 503 });
    },
    async listInstanceStates(): Promise<InstanceStatePage> {
      return { items: [] } as unknown as InstanceStatePage;
    },
  };
  const watch = new FleetWatch({ client, clock, intervalMs: 3_000 });
  const abort = new AbortController();
  const running = watch.run(abort.signal);
  for (let i = 0; i < 10; i++) { await settle(); await clock.advanceAsync(3_000); }
  await settle();
  assert.ok(reads >= 10, `${reads} reads in 30 s`);
  abort.abort();
  await running;
});

test('an instance the client cannot read is left out of the snapshot, woken once (never called gone), and the round stands for the others', async () => {
  const clock = new FakeClock(0);
  let unreadable: UnreadableInstanceState[] = [];
  const client = {
    async getAccount(): Promise<VendorAccount> {
      return account;
    },
    async listInstanceStates(): Promise<InstanceStatePage> {
      const readable = ['i-1', 'i-2'].filter((id) => !unreadable.some((u) => u.id === id));
      return { items: readable.map((id) => instance(id, 1_000)), ...(unreadable.length ? { unreadable } : {}) };
    },
  };
  const heard: UnreadableInstanceState[][] = [];
  const watch = new FleetWatch({ client, clock, intervalMs: 1000, onUnreadable: (items) => heard.push(items) });
  assert.deepEqual((await watch.poll()).changed, ['i-1', 'i-2']);

  unreadable = [{ id: 'i-2', idempotencyKey: 'k-2', problem: 'unknown health status' }, { problem: 'not an instance' }];
  const round = await watch.poll();
  assert.deepEqual([round.changed, round.gone], [['i-2'], []], 'woken once, still listed');
  assert.equal(watch.instance('i-2'), undefined, 'its providers read it themselves');
  assert.equal(watch.instance('i-1')?.limits.dailyQuota, 1_000, 'the others are served from the round');
  assert.equal(watch.stats().unreadable, 2);
  assert.deepEqual((await watch.poll()).changed, [], 'not woken again while it stays unreadable');
  assert.equal(heard.length, 1, 'heard when the set changed, not every round');

  unreadable = [];
  const readable = await watch.poll();
  assert.deepEqual([readable.changed, readable.gone], [['i-2'], []]);
  assert.equal(watch.instance('i-2')?.limits.dailyQuota, 1_000);
  assert.deepEqual(heard.map((h) => h.length), [2, 0]);

  // One that stops being listed after being unreadable is gone.
  unreadable = [{ id: 'i-2', problem: 'unknown health status' }];
  assert.deepEqual((await watch.poll()).changed, ['i-2']);
  client.listInstanceStates = async () => ({ items: [instance('i-1', 1_000)] });
  assert.deepEqual((await watch.poll()).gone, ['i-2']);
});

test('an id read on one page and unreadable on another (the listing moved under the pages) is served as read, not counted unreadable', async () => {
  const clock = new FakeClock(0);
  const pages: InstanceStatePage[] = [
    { items: [instance('i-1', 1_000)], nextPageToken: 'p2' },
    { items: [], unreadable: [{ id: 'i-1', idempotencyKey: 'k-1', problem: 'unknown health status' }] },
  ];
  let n = 0;
  const client = {
    getAccount: async (): Promise<VendorAccount> => account,
    listInstanceStates: async (): Promise<InstanceStatePage> => pages[n++ % 2]!,
  };
  const heard: UnreadableInstanceState[][] = [];
  const watch = new FleetWatch({ client, clock, intervalMs: 1000, onUnreadable: (items) => heard.push(items) });
  await watch.poll();
  assert.equal(watch.instance('i-1')?.limits.dailyQuota, 1_000);
  assert.equal(watch.stats().unreadable, 0);
  assert.deepEqual(heard, []);
});
