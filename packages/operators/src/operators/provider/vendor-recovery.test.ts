import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@converge/runtime';
import { VendorRecovery } from './vendor-recovery.ts';

const A = 'https://vendor-a.example';
const B = 'https://vendor-b.example';

/** A started recovery on a fake clock, and the keys it woke. */
function started(options: { downAfter?: number; probeIntervalMs?: number } = {}) {
  const clock = new FakeClock();
  const recovery = new VendorRecovery({ clock, ...options });
  const woken: string[] = [];
  recovery.onWake((key) => woken.push(key));
  const abort = new AbortController();
  const running = recovery.start(abort.signal);
  const fail = (endpoint: string, n = 1) => {
    for (let i = 0; i < n; i++) recovery.observe(endpoint, { outcome: 'Network' });
  };
  return { clock, recovery, woken, fail, stop: async () => (abort.abort(), await running) };
}

describe('VendorRecovery', () => {
  it('wakes every key blocked on an endpoint once, when the endpoint answers after being down', async () => {
    const r = started({ probeIntervalMs: 0 });
    r.recovery.blocked(A, 'ns/a');
    r.recovery.blocked(A, 'ns/b');
    r.recovery.blocked(B, 'ns/c');
    r.fail(A, 3);
    r.recovery.observe(A, { outcome: 'ok' });
    assert.deepEqual(r.woken, ['ns/a', 'ns/b']);
    r.recovery.observe(A, { outcome: 'ok' });
    assert.deepEqual(r.woken, ['ns/a', 'ns/b'], 'not twice');
    assert.deepEqual(r.recovery.stats(), { blocked: 1, downEndpoints: 0, woken: 2 });
    await r.stop();
  });

  it('a flaky endpoint that never fails downAfter calls in a row wakes nobody (the backoff stays in charge)', async () => {
    const r = started({ downAfter: 3 });
    r.recovery.blocked(A, 'ns/a');
    for (let i = 0; i < 20; i++) {
      r.fail(A, 2);
      r.recovery.observe(A, { outcome: 'ok' });
    }
    assert.deepEqual(r.woken, []);
    await r.stop();
  });

  it('429s and aborted calls say nothing about reachability; a 404 or 401 is an answer', async () => {
    const r = started({ probeIntervalMs: 0 });
    r.recovery.blocked(A, 'ns/a');
    r.fail(A, 2);
    r.recovery.observe(A, { outcome: 'RateLimited' });
    r.recovery.observe(A, { outcome: 'Aborted' });
    r.fail(A, 1);
    assert.equal(r.recovery.stats().downEndpoints, 1, 'three unanswered in a row, 429s in between');
    r.recovery.observe(A, { outcome: 'NotFound' });
    assert.deepEqual(r.woken, ['ns/a']);
    await r.stop();
  });

  it('while down, one blocked key per probe interval is woken, in turn; none once nothing waits', async () => {
    const r = started({ probeIntervalMs: 5_000 });
    r.fail(A, 3);
    r.recovery.blocked(A, 'ns/a');
    r.recovery.blocked(A, 'ns/b');
    r.clock.advance(4_999);
    assert.deepEqual(r.woken, []);
    r.clock.advance(1);
    assert.deepEqual(r.woken, ['ns/a']);
    r.recovery.blocked(A, 'ns/a'); // its probe failed again: back in line, behind ns/b
    r.clock.advance(5_000);
    assert.deepEqual(r.woken, ['ns/a', 'ns/b']);
    r.clock.advance(5_000);
    assert.deepEqual(r.woken, ['ns/a', 'ns/b', 'ns/a']);
    r.clock.advance(60_000);
    assert.deepEqual(r.woken, ['ns/a', 'ns/b', 'ns/a'], 'nothing blocked, nothing probed');
    assert.equal(r.clock.pendingTimers(), 0);
    await r.stop();
  });

  it('a settled key is not woken; a key blocked on another endpoint moves there', async () => {
    const r = started({ probeIntervalMs: 0 });
    r.recovery.blocked(A, 'ns/a');
    r.recovery.blocked(A, 'ns/b');
    r.recovery.settled('ns/a');
    r.recovery.blocked(B, 'ns/b');
    r.fail(A, 3);
    r.recovery.observe(A, { outcome: 'ok' });
    assert.deepEqual(r.woken, []);
    r.fail(B, 3);
    r.recovery.observe(B, { outcome: 'ok' });
    assert.deepEqual(r.woken, ['ns/b']);
    await r.stop();
  });

  it('an endpoint nothing waits on and nothing has called for 10 minutes is forgotten, down or not', async () => {
    const r = started({ probeIntervalMs: 0 });
    // A provider with a mistyped endpoint: three calls without an answer, then its spec fixed.
    r.recovery.blocked(A, 'ns/a');
    r.fail(A, 3);
    r.recovery.observe(B, { outcome: 'ok' });
    r.recovery.settled('ns/a');
    assert.equal(r.recovery.stats().downEndpoints, 1, 'down as last seen');
    r.clock.advance(9 * 60_000);
    r.recovery.observe(B, { outcome: 'ok' });
    assert.equal(r.recovery.stats().downEndpoints, 1, 'still within the 10 minutes');
    r.clock.advance(61_000);
    assert.equal(r.recovery.stats().downEndpoints, 0, 'forgotten: converge_vendor_endpoints_down no longer counts it');
    // An endpoint that keys still wait on is kept however long it has been quiet.
    r.recovery.blocked(B, 'ns/b');
    r.fail(B, 3);
    r.clock.advance(3_600_000);
    assert.deepEqual(r.recovery.stats(), { blocked: 1, downEndpoints: 1, woken: 0 });
    // Called again after it was forgotten: counted from scratch.
    r.fail(A, 2);
    assert.equal(r.recovery.stats().downEndpoints, 1);
    r.fail(A, 1);
    assert.equal(r.recovery.stats().downEndpoints, 2);
    await r.stop();
  });

  it('wakes nothing and holds no timer unless started, and after it stops', async () => {
    const clock = new FakeClock();
    const recovery = new VendorRecovery({ clock, probeIntervalMs: 1_000 });
    const woken: string[] = [];
    recovery.onWake((key) => woken.push(key));
    recovery.blocked(A, 'ns/a');
    for (let i = 0; i < 3; i++) recovery.observe(A, { outcome: 'Timeout' });
    assert.equal(clock.pendingTimers(), 0, 'no probe before start');
    const abort = new AbortController();
    const running = recovery.start(abort.signal);
    assert.equal(clock.pendingTimers(), 1, 'the probe is armed on start');
    abort.abort();
    await running;
    assert.equal(clock.pendingTimers(), 0);
    recovery.observe(A, { outcome: 'ok' });
    assert.deepEqual(woken, []);
  });
});
