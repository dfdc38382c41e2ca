/**
 * Model-based test of the late-create sweep (fast-check, fake clock, a ConfigMap and a vendor in
 * memory): keys released at random times, their late instances landing at random times up to the
 * end of their window, next to instances someone else created in the same account, a vendor
 * that fails at random (no answer, which ends a pass; or a refusal about one key) for a while,
 * and the wall clock stepped (±1 h, ±10 s: an NTP correction, a resumed VM) at random times. The
 * windows are elapsed time: every time the test keeps is monotonic; only the ledger's dates are
 * wall-clock dates, written from the wall clock at the time.
 *
 * Invariants, whatever the order and the failures:
 * - nothing leaks: once the vendor answers again, every late instance is deleted, each once;
 * - nothing else is touched: an instance whose key was never released stays;
 * - an entry leaves the ledger only after a look at or after its `until`, and the ledger is empty
 *   at the end;
 * - bounded vendor load: no pass looks up more than 3 keys one by one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import fc from 'fast-check';
import { FakeClock } from '@converge/runtime';
import { inMemoryLedger, sweepOver, seededRandom } from './late-creates.test-support.ts';
import type { VendorApi, VendorInstance } from './vendor-api.ts';
import { VendorError } from './vendor/index.ts';

const NOW = Date.parse('2026-12-02T10:00:00.000Z');
const SETTLE_MS = 2_000;
const WINDOW_MS = 20_000;
const MAX_GAP_MS = 8_000;
const STEP_MS = 250;

interface Release {
  /** When the finalizer goes (ms after the start). */
  atMs: number;
  /**
   * When the late instance lands, ms after the create request; none when undefined. Within the
   * window, less two steps: the test applies a landing at the step after it, and a create that
   * lands after the window is not the sweep's to catch.
   */
  landsAfterMs: number | undefined;
}

const releaseArb: fc.Arbitrary<Release> = fc.record({
  atMs: fc.integer({ min: 0, max: 15_000 }),
  landsAfterMs: fc.option(fc.integer({ min: 0, max: WINDOW_MS - 2 * STEP_MS }), { nil: undefined }),
});

const scenarioArb = fc.record({
  releases: fc.array(releaseArb, { minLength: 1, maxLength: 9 }),
  foreign: fc.integer({ min: 0, max: 3 }),
  /** Until then, each vendor call fails with `failRate`; after it, the vendor answers. */
  failUntilMs: fc.integer({ min: 0, max: 40_000 }),
  failRate: fc.double({ min: 0, max: 0.8, noNaN: true }),
  /** Wall-clock steps: at `atMs` after the start, by `ms`. */
  wallSteps: fc.array(fc.record({ atMs: fc.integer({ min: 0, max: 40_000 }), ms: fc.constantFrom(-3_600_000, -10_000, 10_000, 3_600_000) }), { maxLength: 2 }),
  seed: fc.integer(),
});

async function settle(): Promise<void> {
  for (let i = 0; i < 30; i++) await tick();
}

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

async function run(s: Scenario) {
  const clock = new FakeClock(NOW);
  const random = seededRandom(s.seed);
  const ledger = inMemoryLedger(clock);

  // The vendor: instances by id; late ones appear when they land.
  const instances = new Map<string, VendorInstance>();
  const deleted: string[] = [];
  const pending: { key: string; landsAt: number }[] = [];
  for (let i = 0; i < s.foreign; i++) instances.set(`f-${i}`, instance(`f-${i}`, `someone-else-${i}`));
  // Lookups by key at one instant of the fake clock belong to one pass (passes are ≥ 10 ms apart).
  let findsAt = Number.NaN;
  let findsInARow = 0;
  let maxFindsInARow = 0;
  const maybeFail = (operation: 'findByIdempotencyKey' | 'listInstanceStates' | 'deleteInstance') => {
    if (clock.monotonic() - NOW < s.failUntilMs && random() < s.failRate) {
      throw new VendorError({ kind: random() < 0.5 ? 'Timeout' : 'Invalid', operation, message: 'scripted' });
    }
  };
  const api = {
    findByIdempotencyKey: async (key: string) => {
      if (clock.monotonic() !== findsAt) [findsAt, findsInARow] = [clock.monotonic(), 0];
      maxFindsInARow = Math.max(maxFindsInARow, ++findsInARow);
      maybeFail('findByIdempotencyKey');
      return [...instances.values()].find((i) => i.idempotencyKey === key);
    },
    listInstanceStates: async () => {
      maybeFail('listInstanceStates');
      return { items: [...instances.values()].map((i) => ({ instance: i })) };
    },
    deleteInstance: async (id: string) => {
      maybeFail('deleteInstance');
      const existed = instances.delete(id);
      if (existed) deleted.push(id);
      return existed;
    },
  } as unknown as VendorApi;

  const sweep = sweepOver(ledger.client, api, clock, { settleMs: SETTLE_MS, windowMs: WINDOW_MS, maxGapMs: MAX_GAP_MS });
  const abort = new AbortController();
  const running = sweep.start(abort.signal);
  await settle();

  const until = new Map<string, number>();
  const order = s.releases.map((r: Release, i: number) => ({ ...r, uid: `k${i}` })).sort((a, b) => a.atMs - b.atMs);
  const endMs = Math.max(s.failUntilMs, ...order.map((r) => r.atMs + WINDOW_MS)) + 4 * MAX_GAP_MS;
  let next = 0;
  const steps = [...s.wallSteps].sort((a, b) => a.atMs - b.atMs);
  for (let t = 0; t <= endMs; t += STEP_MS) {
    while (steps.length > 0 && steps[0]!.atMs <= t) clock.stepWall(steps.shift()!.ms);
    while (next < order.length && order[next]!.atMs <= t) {
      const r = order[next++]!;
      // The create was sent 1 s before the release; its window runs from there.
      const requestedAt = clock.monotonic() - 1_000;
      const requestedAtWall = clock.now() - 1_000;
      until.set(r.uid, requestedAt + WINDOW_MS);
      if (r.landsAfterMs !== undefined) pending.push({ key: r.uid, landsAt: requestedAt + r.landsAfterMs });
      await sweep.record({ uid: r.uid, namespace: 'team-a', name: `p-${r.uid}`, endpoint: 'https://vendor.example.com', secret: { name: 'creds', key: 'token' }, requestedAt: new Date(requestedAtWall).toISOString(), until: new Date(requestedAtWall + WINDOW_MS).toISOString() }, 'token', abort.signal);
    }
    for (let i = pending.length - 1; i >= 0; i--) {
      if (pending[i]!.landsAt > clock.monotonic()) continue;
      const { key } = pending.splice(i, 1)[0]!;
      instances.set(`i-${key}`, instance(`i-${key}`, key));
    }
    await clock.advanceAsync(STEP_MS);
    await settle();
  }
  abort.abort();
  await running;
  return { instances, deleted, removedAt: ledger.removedAt, until, left: Object.keys(ledger.data()), maxFindsInARow };
}

function instance(id: string, key: string): VendorInstance {
  return { id, region: 'eu', displayName: '', idempotencyKey: key, createdAt: '', updatedAt: '' };
}

describe('the late-create sweep against a reference model', () => {
  it('deletes every late instance once and nothing else, drops an entry only after its last look, and looks up at most 3 keys one by one per pass', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const r = await run(s);
        const late = s.releases.flatMap((x, i) => (x.landsAfterMs === undefined ? [] : [`i-k${i}`])).sort();
        assert.deepEqual([...r.deleted].sort(), late, 'every late instance deleted, each once');
        for (let i = 0; i < s.foreign; i++) assert.ok(r.instances.has(`f-${i}`), `someone else's instance f-${i} stays`);
        assert.deepEqual(r.left, [], 'the ledger is empty at the end');
        for (const [uid, at] of r.removedAt) assert.ok(at >= r.until.get(uid)!, `${uid} left the ledger at ${at - NOW}, before its until ${r.until.get(uid)! - NOW}`);
        assert.ok(r.maxFindsInARow <= 3, `at most 3 lookups by key in one pass (saw ${r.maxFindsInARow})`);
      }),
      { numRuns: 40 },
    );
  });
});
