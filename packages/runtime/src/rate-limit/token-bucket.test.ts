import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/index.ts';
import { TokenBucket, jitter } from './index.ts';

describe('TokenBucket.reserve', () => {
  it('serves the burst at once, then spaces reservations 1000/qps ms apart', () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 10, burst: 3 }, clock);
    assert.deepEqual(
      Array.from({ length: 6 }, () => bucket.reserve()),
      [0, 0, 0, 100, 200, 300],
    );
  });

  it('refills at qps over time, never above burst', () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 10, burst: 2 }, clock);
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 100); // debt: -1
    clock.advance(100); // back to 0
    assert.equal(bucket.reserve(), 100);
    clock.advance(50);
    assert.equal(bucket.reserve(), 150); // 0.5 refilled, then debt -1.5: 150 ms
    clock.advance(10_000); // long quiet period: full again, but only up to burst
    assert.equal(bucket.available(), 2);
    assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 0, 100]);
  });

  it('rounds waits up to whole ms and ignores float residue', () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 3, burst: 1 }, clock);
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 334); // 333.33 rounded up
    assert.equal(bucket.reserve(), 667);
    // Many small steps that add up exactly to one token must leave no 1 ms residue.
    const b2 = new TokenBucket({ qps: 10, burst: 1 }, new FakeClock(0));
    const c2 = new FakeClock(0);
    const b3 = new TokenBucket({ qps: 10, burst: 1 }, c2);
    b3.reserve();
    for (let i = 0; i < 10; i++) c2.advance(10);
    assert.equal(b3.reserve(), 0);
    assert.equal(b2.reserve(), 0);
  });

  it('steady state matches qps over a long run', () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 50, burst: 10 }, clock);
    let granted = 0;
    for (let t = 0; t < 10_000; t++) {
      while (bucket.tryTake()) granted++;
      clock.advance(1);
    }
    // 10 burst + 50/s * 10 s (minus the last partial token)
    assert.ok(granted >= 509 && granted <= 510, `granted ${granted}`);
  });

  it('tryTake never goes into debt', () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 1, burst: 2 }, clock);
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), false);
    assert.equal(bucket.available(), 0);
    clock.advance(999);
    assert.equal(bucket.tryTake(), false);
    clock.advance(1);
    assert.equal(bucket.tryTake(), true);
  });

  it('qps Infinity never limits; invalid options throw', () => {
    const bucket = new TokenBucket({ qps: Infinity, burst: 1 }, new FakeClock());
    for (let i = 0; i < 1000; i++) assert.equal(bucket.reserve(), 0);
    assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: -1, burst: 1 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: Number.NaN, burst: 1 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: 1, burst: 0 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: 1, burst: 1.5 }), RangeError);
  });

  it('measures on monotonic time: wall-clock steps neither add nor take tokens', () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 10, burst: 1 }, clock);
    assert.equal(bucket.reserve(), 0);
    clock.stepWall(-60_000);
    assert.equal(bucket.reserve(), 100, 'a step back does not stretch the wait');
    clock.stepWall(3_600_000);
    assert.equal(bucket.reserve(), 200, 'a step forward does not refill the bucket');
    clock.advance(300);
    assert.equal(bucket.reserve(), 0);
  });
});

describe('TokenBucket.take', () => {
  it('resolves at once within the burst, then after the reserved wait', async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 10, burst: 2 }, clock);
    await bucket.take();
    await bucket.take();
    const order: string[] = [];
    const third = bucket.take().then(() => order.push(`3@${clock.now()}`));
    const fourth = bucket.take().then(() => order.push(`4@${clock.now()}`));
    assert.equal(clock.pendingTimers(), 2);
    clock.advance(99);
    await Promise.resolve();
    assert.deepEqual(order, []);
    clock.advance(1);
    await third;
    clock.advance(100);
    await fourth;
    assert.deepEqual(order, ['3@100', '4@200']);
  });

  it('rejects with the abort reason; an already aborted signal takes no token', async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 10, burst: 1 }, clock);
    await assert.rejects(bucket.take(AbortSignal.abort(new Error('pre'))), /pre/);
    assert.equal(bucket.available(), 1);
    await bucket.take();
    const ac = new AbortController();
    const p = bucket.take(ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('an aborted wait gives its token back to the next caller', async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 10, burst: 1 }, clock);
    assert.equal(bucket.reserve(), 0);
    const ac = new AbortController();
    const p = bucket.take(ac.signal); // would wait 100
    ac.abort();
    await assert.rejects(p);
    assert.equal(bucket.reserve(), 100); // not 200: the aborted reservation was returned
  });

  it('an aborted wait does not give away a token a later reservation counts on', async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 10, burst: 1 }, clock);
    assert.equal(bucket.reserve(), 0);
    const ac = new AbortController();
    const p = bucket.take(ac.signal); // acts at 100
    assert.equal(bucket.reserve(), 200); // acts at 200
    ac.abort();
    await assert.rejects(p);
    // Handing the token back would let the next reservation share the 200 ms slot: it must not.
    assert.equal(bucket.reserve(), 300);
  });

  it('concurrent takers are served in reservation order at qps', async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ qps: 20, burst: 5 }, clock);
    const times: number[] = [];
    const all = Promise.all(Array.from({ length: 15 }, () => bucket.take().then(() => times.push(clock.now()))));
    await clock.advanceAsync(1_000);
    await all;
    assert.deepEqual(times, [0, 0, 0, 0, 0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500]);
  });
});

describe('jitter', () => {
  it('stretches by [0, factor) of the delay', () => {
    assert.equal(jitter(1000, 0.1, () => 0), 1000);
    assert.equal(jitter(1000, 0.1, () => 0.5), 1050);
    assert.ok(jitter(1000, 0.1, () => 0.999999) < 1100);
    assert.equal(jitter(1000, 0, () => 0.5), 1000);
    assert.equal(jitter(0, 0.5, () => 0.5), 0);
    for (let i = 0; i < 100; i++) {
      const v = jitter(200, 1);
      assert.ok(v >= 200 && v < 400);
    }
  });
});
