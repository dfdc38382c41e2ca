import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/index.ts';
import { assessLease, candidateDelayMs, leaseSpecFor, releasedLeaseSpec, LeadershipTerm, LeaderElector } from './index.ts';
import type { LeaseObject, Observation } from './index.ts';
import type { KubeClient } from '../client/index.ts';

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
