/**
 * Property test of leader election: two or three electors against one in-memory Lease with
 * compare-and-swap on resourceVersion, on one shared FakeClock, under random schedules of
 * request latencies (up to 1.5 × the renew deadline), requests lost on the way, answers lost
 * after the write committed, wall-clock steps of up to ±2 h on any replica, graceful stops
 * (release), crashes (no release) and restarts. Each replica has its own monotonic origin and
 * wall-clock offset, and random timings with leaseDuration > renewDeadline.
 *
 * Invariants, checked at every committed write, at every "became leader" and every 50 ms:
 * - never two electors believe they lead at the same (monotonic) instant;
 * - while an elector believes it leads, nobody else commits a write to the Lease;
 * and at the end, after a quiet tail with a clean network: exactly one elector leads.
 *
 * `CONVERGE_RELIABILITY_LONG=1` runs many more schedules.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { FakeClock } from '../clock/index.ts';
import { LeaderElector } from './index.ts';
import { InMemoryLeases, clockView, type Hop, type LeaseWrite } from './in-memory-leases.test-support.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const quiet = pino({ level: 'silent' });
/** Faults (latencies, losses, steps, stops) happen only in this first window of fake time. */
const FAULT_WINDOW_MS = 6_000;
const STEP_MS = 50;

interface Timings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

type Event =
  | { kind: 'stepWall'; at: number; replica: number; deltaMs: number }
  | { kind: 'stop' | 'crash'; at: number; replica: number };

interface ReplicaPlan {
  hops: Hop[];
  monotonicOriginMs: number;
  wallOffsetMs: number;
  restartAfterMs: number;
}

interface Scenario {
  timings: Timings;
  replicas: ReplicaPlan[];
  events: Event[];
  seed: number;
}

const timingsArb: fc.Arbitrary<Timings> = fc
  .record({ retryPeriodMs: fc.integer({ min: 100, max: 400 }), leaseSeconds: fc.integer({ min: 1, max: 3 }) })
  .chain(({ retryPeriodMs, leaseSeconds }) =>
    // Whole seconds: the Lease stores seconds, so the margin under test is exactly lease - renew.
    fc.integer({ min: Math.floor(retryPeriodMs * 1.2) + 1, max: leaseSeconds * 1000 - 1 }).map((renewDeadlineMs) => ({
      leaseDurationMs: leaseSeconds * 1000,
      renewDeadlineMs,
      retryPeriodMs,
    })),
  );

function hopArb(maxLatencyMs: number): fc.Arbitrary<Hop> {
  const latency = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 20 }) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: maxLatencyMs }) });
  const fail = fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constant('before' as const) },
    { weight: 2, arbitrary: fc.constant('after' as const) },
  );
  return fc.record({ requestMs: latency, responseMs: latency, fail }).map(({ fail: f, ...h }) => (f ? { ...h, fail: f } : h));
}

const scenarioArb: fc.Arbitrary<Scenario> = timingsArb.chain((timings) =>
  fc.integer({ min: 2, max: 3 }).chain((n) =>
    fc.record({
      timings: fc.constant(timings),
      replicas: fc.array(
        fc.record({
          hops: fc.array(hopArb(Math.round(timings.renewDeadlineMs * 1.5)), { maxLength: 60 }),
          monotonicOriginMs: fc.integer({ min: -1e9, max: 1e9 }),
          wallOffsetMs: fc.integer({ min: -3_600_000, max: 3_600_000 }),
          restartAfterMs: fc.integer({ min: 0, max: 2_000 }),
        }),
        { minLength: n, maxLength: n },
      ),
      events: fc.array(
        fc.oneof(
          { weight: 5, arbitrary: fc.record({ kind: fc.constant('stepWall' as const), at: fc.integer({ min: 0, max: FAULT_WINDOW_MS }), replica: fc.nat(n - 1), deltaMs: fc.integer({ min: -7_200_000, max: 7_200_000 }) }) },
          { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('stop' as const, 'crash' as const), at: fc.integer({ min: 0, max: FAULT_WINDOW_MS }), replica: fc.nat(n - 1) }) },
        ),
        { maxLength: 12 },
      ),
      seed: fc.integer(),
    }),
  ),
);

/** mulberry32: a small seeded PRNG for the electors' jitter, so a schedule replays exactly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Incarnation {
  label: string;
  elector: LeaderElector;
  ac: AbortController;
}

/** Runs one schedule; resolves with the violations found (empty: the invariants held). */
async function simulate(s: Scenario): Promise<string[]> {
  const base = new FakeClock(1_700_000_000_000);
  const violations: string[] = [];
  const live: Incarnation[] = [];
  const leaders = (): Incarnation[] => live.filter((i) => i.elector.isLeader());
  const onCommit = (w: LeaseWrite): void => {
    for (const i of leaders()) {
      if (i.elector.identity !== w.by) violations.push(`t=${base.monotonic()}: ${w.by} committed rv ${w.resourceVersion} (holder "${w.holder}") while ${i.label} leads`);
    }
  };
  const store = new InMemoryLeases(base, onCommit);
  const random = prng(s.seed);
  let finished = false;
  const clean: Hop = { requestMs: 1, responseMs: 1 };
  const controls: { incarnation: Incarnation; stepWall: (deltaMs: number) => void }[] = [];
  const START = base.monotonic();

  const lifecycles = s.replicas.map(async (plan, index) => {
    const identity = `replica-${index}`;
    const view = clockView(base, { monotonicOriginMs: plan.monotonicOriginMs, wallOffsetMs: plan.wallOffsetMs });
    const hops = [...plan.hops];
    const client = store.client(identity, () => (base.monotonic() - START < FAULT_WINDOW_MS ? (hops.shift() ?? clean) : clean));
    for (let n = 0; !finished; n++) {
      const label = `${identity}#${n}`;
      const ac = new AbortController();
      const incarnation: Incarnation = {
        label,
        ac,
        elector: new LeaderElector({
          client,
          namespace: 'ns',
          name: 'lease',
          identity,
          clock: view.clock,
          random,
          log: quiet,
          ...s.timings,
          onLeaderChange: (leading) => {
            if (!leading) return;
            for (const other of leaders()) {
              if (other !== incarnation) violations.push(`t=${base.monotonic()}: ${label} became leader while ${other.label} leads`);
            }
          },
        }),
      };
      live.push(incarnation);
      controls[index] = { incarnation, stepWall: (d) => view.stepWall(d) };
      await incarnation.elector.run(ac.signal);
      live.splice(live.indexOf(incarnation), 1);
      if (finished) break;
      await base.sleep(plan.restartAfterMs);
    }
  });
  for (const e of s.events) {
    base.setTimer(e.at, () => {
      const c = controls[e.replica];
      if (!c) return;
      if (e.kind === 'stepWall') c.stepWall(e.deltaMs);
      else if (e.kind === 'stop') c.incarnation.ac.abort();
      else c.incarnation.elector.abandon();
    });
  }
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = s.timings;
  const tailMs = 2 * Math.round(renewDeadlineMs * 1.5) * 2 + 3 * leaseDurationMs + 4 * retryPeriodMs + 2_000 + 1_000;
  for (let t = 0; t < FAULT_WINDOW_MS + tailMs; t += STEP_MS) {
    await base.advanceAsync(STEP_MS);
    if (leaders().length > 1) violations.push(`t=${base.monotonic()}: ${leaders().map((i) => i.label).join(' and ')} lead at once`);
    if (violations.length) break;
  }
  if (!violations.length && leaders().length !== 1) violations.push(`after a quiet tail of ${tailMs} ms, ${leaders().length} electors lead (want exactly 1)`);
  finished = true;
  for (const i of live) i.ac.abort();
  for (let k = 0; k < 20 && live.length; k++) await base.advanceAsync(STEP_MS);
  await Promise.race([Promise.all(lifecycles), base.advanceAsync(60_000)]);
  return violations;
}

describe('leader election under random schedules (property)', () => {
  it('never two leaders at one instant; one leader once the network is clean again', { timeout: LONG ? 1_800_000 : 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const violations = await simulate(s);
        assert.deepEqual(violations, []);
      }),
      { numRuns: LONG ? 3_000 : 150 },
    );
  });
});
