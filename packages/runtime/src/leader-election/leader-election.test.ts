import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock, type Clock } from '../clock/index.ts';
import { assessLease, candidateDelayMs, leaseSpecFor, releasedLeaseSpec, LeadershipTerm, LeaderElector, Leases } from './index.ts';
import type { LeaderElectorOptions, LeaseObject, Observation } from './index.ts';
import type { KubeClient } from '../client/index.ts';
import { InMemoryLeases, clockView, type Hop } from './in-memory-leases.test-support.ts';

function lease(rv: string, holder: string | undefined, seconds = 15): LeaseObject {
  return {
    metadata: { namespace: 'ns', name: 'l', resourceVersion: rv },
    spec: { ...(holder === undefined ? {} : { holderIdentity: holder }), leaseDurationSeconds: seconds, leaseTransitions: 3, acquireTime: 'A', renewTime: 'R' },
  };
}

describe('assessLease', () => {
  it('renews its own lease, takes a free one', () => {
    assert.equal(assessLease(lease('1', 'me'), undefined, 'me', 0, 15_000).action, 'renew');
    assert.equal(assessLease(lease('1', ''), undefined, 'me', 0, 15_000).action, 'take');
    assert.equal(assessLease(lease('1', undefined), undefined, 'me', 0, 15_000).action, 'take');
  });

  it('measures expiry from when *it* saw the lease change, not from renewTime', () => {
    // First sight at t=100 s: the holder's renewTime (whatever its clock says) is not trusted.
    let v = assessLease(lease('7', 'other'), undefined, 'me', 100_000, 15_000);
    assert.deepEqual(v, { action: 'wait', expiresAtMs: 115_000, observation: { resourceVersion: '7', holder: 'other', leaseDurationMs: 15_000, observedAtMs: 100_000 } });
    // Unchanged at t=110 s: still counting from 100 s.
    v = assessLease(lease('7', 'other'), v.observation, 'me', 110_000, 15_000);
    assert.equal(v.action, 'wait');
    // Unchanged at t=115 s: expired.
    assert.equal(assessLease(lease('7', 'other'), v.observation, 'me', 115_000, 15_000).action, 'take');
    // Renewed (new resourceVersion) at t=114 s: the clock restarts.
    const renewed = assessLease(lease('8', 'other'), v.observation, 'me', 114_000, 15_000);
    assert.deepEqual([renewed.action, renewed.observation.observedAtMs], ['wait', 114_000]);
  });

  it("uses the lease's own duration (a released lease says 1 s)", () => {
    const v = assessLease(lease('1', 'other', 1), undefined, 'me', 0, 15_000);
    assert.equal(v.action === 'wait' && v.expiresAtMs, 1_000);
    const prev: Observation = { resourceVersion: '1', holder: 'other', leaseDurationMs: 1000, observedAtMs: 0 };
    assert.equal(assessLease(lease('1', 'other', 1), prev, 'me', 1_000, 15_000).action, 'take');
  });
});

describe('lease specs', () => {
  it('renewing keeps acquireTime and transitions; taking over counts one', () => {
    assert.deepEqual(leaseSpecFor(lease('1', 'me').spec, 'me', 15, 'NOW'), {
      holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: 'A', renewTime: 'NOW', leaseTransitions: 3,
    });
    assert.deepEqual(leaseSpecFor(lease('1', 'other').spec, 'me', 15, 'NOW'), {
      holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: 'NOW', renewTime: 'NOW', leaseTransitions: 4,
    });
    assert.equal(leaseSpecFor(undefined, 'me', 15, 'NOW').leaseTransitions, 0);
    assert.equal(leaseSpecFor({ preferredHolder: 'x', strategy: 'OldestEmulationVersion' }, 'me', 15, 'N').preferredHolder, 'x');
  });
  it('a released lease has no holder and a 1 s duration', () => {
    assert.deepEqual(releasedLeaseSpec(lease('1', 'me').spec, 'NOW'), {
      holderIdentity: '', leaseDurationSeconds: 1, acquireTime: 'NOW', renewTime: 'NOW', leaseTransitions: 3,
    });
  });
});

describe('candidateDelayMs', () => {
  it('waits the retry period, but wakes when the holder expires', () => {
    assert.equal(candidateDelayMs(2_200, undefined, 0), 2_200);
    assert.equal(candidateDelayMs(2_200, 10_000, 0), 2_200);
    assert.equal(candidateDelayMs(2_200, 10_000, 9_000), 1_000);
    assert.equal(candidateDelayMs(2_200, 10_000, 11_000), 0);
  });
});

describe('LeadershipTerm', () => {
  it('aborts exactly renewDeadline after the last successful renewal was sent', () => {
    const clock = new FakeClock(0);
    let expired = 0;
    const term = new LeadershipTerm(clock, 10_000, 0, () => expired++);
    clock.advance(1_500);
    term.renewed(1_000); // sent at 1.0 s, answered at 1.5 s: deadline 11 s
    assert.equal(term.deadlineMs, 11_000);
    clock.advance(9_499);
    assert.equal(term.active, true);
    clock.advance(1);
    assert.equal(term.active, false);
    assert.equal(expired, 1);
    assert.match((term.signal.reason as Error).message, /not renewed within 10000 ms/);
    term.renewed(20_000); // too late: no resurrection
    assert.equal(term.active, false);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('a late answer to an older renewal never moves the deadline back', () => {
    const clock = new FakeClock(0);
    const term = new LeadershipTerm(clock, 10_000, 0, () => {});
    term.renewed(4_000);
    term.renewed(2_000);
    assert.equal(term.deadlineMs, 14_000);
  });

  it('end() aborts with the reason, cancels the timer, fires no expiry', () => {
    const clock = new FakeClock(0);
    let expired = 0;
    const term = new LeadershipTerm(clock, 10_000, 0, () => expired++);
    term.end(new Error('stopping'));
    clock.advance(20_000);
    assert.equal(expired, 0);
    assert.equal((term.signal.reason as Error).message, 'stopping');
  });
});

describe('LeaderElector options', () => {
  const client = {} as KubeClient;
  const base = { client, namespace: 'ns', name: 'l', identity: 'me' };
  it('enforce leaseDuration > renewDeadline > retryPeriod * (1 + jitter)', () => {
    assert.doesNotThrow(() => new LeaderElector(base));
    assert.throws(() => new LeaderElector({ ...base, leaseDurationMs: 10_000 }), /leaseDurationMs must exceed/);
    assert.throws(() => new LeaderElector({ ...base, renewDeadlineMs: 2_200 }), /renewDeadlineMs must exceed/);
    assert.throws(() => new LeaderElector({ ...base, identity: '' }), /identity/);
  });
  it('not leading before run: leadership() is aborted, whenLeader waits and honours abort', async () => {
    const e = new LeaderElector(base);
    assert.equal(e.isLeader(), false);
    assert.equal(e.leadership().aborted, true);
    const ac = new AbortController();
    const p = e.whenLeader(ac.signal);
    ac.abort(new Error('bye'));
    await assert.rejects(p, /bye/);
  });
});

describe('LeadershipTerm on monotonic time', () => {
  it('is over at its deadline even when the event loop has not run its timer yet', () => {
    let mono = 0;
    const stalled: Clock = { now: () => 0, monotonic: () => mono, setTimer: () => ({ cancel() {} }), sleep: () => new Promise(() => {}) };
    let expired = 0;
    const term = new LeadershipTerm(stalled, 10_000, 0, () => expired++);
    mono = 9_999;
    assert.equal(term.active, true);
    mono = 10_000;
    assert.equal(term.active, false, 'believes it leads no longer, timer or not');
    assert.equal(term.signal.aborted, false);
    term.renewed(9_000); // an answer that arrives after the deadline does not revive the term
    assert.equal(term.signal.aborted, true);
    assert.equal(expired, 1);
    assert.match((term.signal.reason as Error).message, /not renewed within 10000 ms/);
  });
});

/** Timings of the in-memory tests: lease 1.5 s, renew deadline 1 s, retry 200 ms. */
const FAST = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 } as const;
const quiet = pino({ level: 'silent' });

function replica(base: FakeClock, store: InMemoryLeases, identity: string, hop?: () => Hop, extra: Partial<LeaderElectorOptions> = {}) {
  const view = clockView(base, { monotonicOriginMs: identity.length * 7_777 });
  const elector = new LeaderElector({
    client: store.client(identity, hop),
    namespace: 'ns',
    name: 'lease',
    identity,
    clock: view.clock,
    random: () => 0.5,
    log: quiet,
    ...FAST,
    ...extra,
  });
  const ac = new AbortController();
  let settled = false;
  const done = elector.run(ac.signal).finally(() => (settled = true));
  return { elector, view, ac, done, settled: () => settled };
}

/** Advances the shared clock in 10 ms steps, calling `check` after each. */
async function runFor(base: FakeClock, ms: number, check: () => void = () => {}): Promise<void> {
  for (let t = 0; t < ms; t += 10) {
    await base.advanceAsync(10);
    check();
  }
}

describe('LeaderElector on an in-memory Lease (monotonic decisions, wall-clock steps)', () => {
  it('a standby whose wall clock jumps an hour forward does not take a live lease', async () => {
    const base = new FakeClock(1_000_000);
    const store = new InMemoryLeases(base);
    let flaky = false;
    const a = replica(base, store, 'a', () => (flaky ? { requestMs: 0, responseMs: 0, fail: 'before' } : { requestMs: 0, responseMs: 0 }));
    await runFor(base, 100);
    assert.equal(a.elector.isLeader(), true);
    const b = replica(base, store, 'b');
    await runFor(base, 500);
    // The leader's renewals fail for a while (shorter than its renew deadline: it still leads);
    // once the standby has seen the last renewal, its wall clock is stepped an hour forward.
    const noTwoLeaders = () => assert.ok(!(a.elector.isLeader() && b.elector.isLeader()), 'the standby took a lease its holder still leads on');
    flaky = true;
    await runFor(base, 300, noTwoLeaders);
    b.view.stepWall(3_600_000);
    await runFor(base, 300, noTwoLeaders);
    flaky = false;
    await runFor(base, 5_000, noTwoLeaders);
    assert.equal(a.elector.isLeader(), true, 'the leader kept its lease');
    assert.equal(b.elector.isLeader(), false);
    a.ac.abort();
    b.ac.abort();
    await runFor(base, 100);
    await Promise.all([a.done, b.done]);
  });

  it('a leader whose wall clock jumps back still gives up at its renew deadline when cut off', async () => {
    const base = new FakeClock(1_000_000);
    const store = new InMemoryLeases(base);
    let cut = false;
    const a = replica(base, store, 'a', () => (cut ? { requestMs: 0, responseMs: 0, fail: 'before' } : { requestMs: 5, responseMs: 5 }));
    await runFor(base, 100);
    assert.equal(a.elector.isLeader(), true);
    const b = replica(base, store, 'b');
    await runFor(base, 500);
    a.view.stepWall(-3_600_000);
    await runFor(base, 500); // renewals keep succeeding after the step
    assert.equal(a.elector.isLeader(), true);
    cut = true;
    const cutAt = base.monotonic();
    let gaveUpAt: number | undefined;
    await runFor(base, 4_000, () => {
      if (gaveUpAt === undefined && !a.elector.isLeader()) gaveUpAt = base.monotonic();
      assert.ok(!(a.elector.isLeader() && b.elector.isLeader()), 'two leaders at once');
    });
    assert.ok(gaveUpAt !== undefined && gaveUpAt - cutAt <= FAST.renewDeadlineMs, `gave up ${gaveUpAt === undefined ? 'never' : `${gaveUpAt - cutAt} ms after the cut`}`);
    assert.equal(b.elector.isLeader(), true, 'the standby took over');
    a.ac.abort();
    b.ac.abort();
    await runFor(base, 100);
    await Promise.all([a.done, b.done]);
  });

  it('writes wall-clock times into the Lease (RFC 3339, microseconds), whatever the monotonic origin', async () => {
    const base = new FakeClock(Date.UTC(2030, 0, 1));
    const store = new InMemoryLeases(base);
    const a = replica(base, store, 'a');
    await runFor(base, 100);
    assert.equal(store.lease?.spec?.acquireTime, '2030-01-01T00:00:00.000000Z');
    a.view.stepWall(3_600_000);
    await runFor(base, 300);
    assert.match(store.lease?.spec?.renewTime ?? '', /^2030-01-01T01:00:00\.\d{6}Z$/);
    a.ac.abort();
    await runFor(base, 50);
    await a.done;
  });

  it('a lost term ends the run: no new campaign, no release, no write after the loss', async () => {
    const base = new FakeClock(0);
    const store = new InMemoryLeases(base);
    const a = replica(base, store, 'a');
    await runFor(base, 100);
    const term = a.elector.leadership();
    const lease = store.lease!;
    await store.client('intruder').replace(Leases, { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder' } });
    await runFor(base, 400);
    assert.equal(term.aborted, true);
    assert.match((term.reason as Error).message, /taken by intruder/);
    assert.equal(a.settled(), true, 'run settled after the loss');
    const writes = store.writes.length;
    await runFor(base, 5_000); // the intruder never renews: its lease expires, and still nobody campaigns
    assert.equal(store.writes.length, writes, 'no write after the loss');
    assert.equal(store.lease?.spec?.holderIdentity, 'intruder');
    assert.equal(a.elector.isLeader(), false);
    // A new run campaigns again.
    const again = a.elector.run(a.ac.signal);
    await runFor(base, 100);
    assert.equal(a.elector.isLeader(), true);
    assert.notEqual(a.elector.leadership(), term);
    a.ac.abort();
    await runFor(base, 50);
    await again;
  });

  it('keeps leading under steady API latency below half the renew deadline: renewals follow one another from when each was sent, not a retry period after each answer', async () => {
    const base = new FakeClock(0);
    const store = new InMemoryLeases(base);
    let slow = false;
    // Round trip 440 ms, renew deadline 1,000 ms, retry period 200 ms: a renewal sent a retry
    // period after the previous answer (640 ms after the previous send) is answered at 1,080 ms,
    // past the deadline that send set, though every write succeeds.
    const a = replica(base, store, 'a', () => (slow ? { requestMs: 220, responseMs: 220 } : { requestMs: 0, responseMs: 0 }));
    await runFor(base, 100);
    assert.equal(a.elector.isLeader(), true);
    slow = true;
    await runFor(base, 10_000, () => assert.equal(a.elector.isLeader(), true, `lost at ${base.monotonic()} ms though every renewal succeeded`));
    const renewals = store.writes.filter((w) => w.by === 'a').length;
    assert.ok(renewals <= 10_000 / FAST.retryPeriodMs + 2, `renewals stay at most one per retry period (${renewals})`);
    a.ac.abort();
    await runFor(base, 1_000);
  });

  it('a term that runs out (partition) ends the run without a release', async () => {
    const base = new FakeClock(0);
    const store = new InMemoryLeases(base);
    let cut = false;
    const a = replica(base, store, 'a', () => (cut ? { requestMs: 0, responseMs: 0, fail: 'before' } : { requestMs: 0, responseMs: 0 }));
    await runFor(base, 100);
    cut = true;
    await runFor(base, FAST.renewDeadlineMs + 50);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.settled(), true);
    cut = false;
    const writes = store.writes.length;
    await runFor(base, 3_000);
    assert.equal(store.writes.length, writes, 'neither a release nor a new campaign');
  });

  it('abandon() ends the term at once and keeps the Lease: the standby waits out the lease duration', async () => {
    const base = new FakeClock(0);
    const store = new InMemoryLeases(base);
    const a = replica(base, store, 'a');
    await runFor(base, 100);
    const b = replica(base, store, 'b');
    await runFor(base, 300);
    const term = a.elector.leadership();
    const abandonedAt = base.monotonic();
    a.elector.abandon();
    assert.equal(term.aborted, true);
    assert.equal(a.elector.isLeader(), false);
    await runFor(base, 20);
    assert.equal(a.settled(), true);
    assert.equal(store.lease?.spec?.holderIdentity, 'a', 'not released');
    let tookOverAt: number | undefined;
    await runFor(base, 3_000, () => {
      if (tookOverAt === undefined && b.elector.isLeader()) tookOverAt = base.monotonic();
    });
    assert.ok(tookOverAt !== undefined && tookOverAt - abandonedAt >= FAST.leaseDurationMs - FAST.retryPeriodMs, `took over ${tookOverAt === undefined ? 'never' : `after ${tookOverAt - abandonedAt} ms`}`);
    b.ac.abort();
    await runFor(base, 50);
    await b.done;
  });

  it('a graceful stop releases the Lease and the standby takes it at its next attempt', async () => {
    const base = new FakeClock(0);
    const store = new InMemoryLeases(base);
    const a = replica(base, store, 'a');
    await runFor(base, 100);
    const b = replica(base, store, 'b');
    await runFor(base, 300);
    a.ac.abort();
    await runFor(base, 20);
    await a.done;
    assert.equal(store.writes.at(-1)?.holder, '', 'released');
    await runFor(base, 300);
    assert.equal(b.elector.isLeader(), true);
    b.ac.abort();
    await runFor(base, 50);
    await b.done;
  });
});
