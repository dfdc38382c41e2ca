import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/index.ts';
import {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  exponentialBackoff,
  maxOfRateLimiters,
  type RateLimiter,
} from './index.ts';

describe('exponentialBackoff', () => {
  it('doubles from 5 ms and caps at 1000 s by default', () => {
    const rl = exponentialBackoff();
    const seq = Array.from({ length: 30 }, () => rl.when('a'));
    assert.deepEqual(seq.slice(0, 8), [5, 10, 20, 40, 80, 160, 320, 640]);
    // 5 * 2^17 = 655_360 is the last uncapped value; 5 * 2^18 = 1_310_720 is capped.
    assert.equal(seq[17], 655_360);
    assert.ok(seq.slice(18).every((d) => d === 1_000_000));
    assert.equal(rl.retries('a'), 30);
  });

  it('stays capped (no overflow) after very many failures', () => {
    const rl = exponentialBackoff({ baseMs: 1, maxMs: 50 });
    let last = 0;
    for (let i = 0; i < 2_000; i++) last = rl.when('k');
    assert.equal(last, 50);
  });

  it('counts per key; forget resets only that key', () => {
    const rl = exponentialBackoff({ baseMs: 10, maxMs: 1_000 });
    assert.equal(rl.when('a'), 10);
    assert.equal(rl.when('a'), 20);
    assert.equal(rl.when('b'), 10);
    assert.equal(rl.retries('a'), 2);
    rl.forget('a');
    assert.equal(rl.retries('a'), 0);
    assert.equal(rl.retries('b'), 1);
    assert.equal(rl.when('a'), 10);
    assert.equal(rl.when('b'), 20);
  });

  it('jitter shortens within (d*(1-jitter), d], also at the cap, and never exceeds the cap', () => {
    const rl = exponentialBackoff({ baseMs: 100, maxMs: 500, jitter: 0.5, random: () => 0.5 });
    assert.deepEqual([rl.when('k'), rl.when('k'), rl.when('k'), rl.when('k')], [75, 150, 300, 375]);
    const none = exponentialBackoff({ baseMs: 100, maxMs: 500, jitter: 0.5, random: () => 0 });
    assert.deepEqual([none.when('k'), none.when('k'), none.when('k'), none.when('k')], [100, 200, 400, 500]);
  });

  it('spreads keys that failed together once they reach the cap', () => {
    const rl = exponentialBackoff({ baseMs: 1000, maxMs: 30_000, jitter: 0.5 });
    const delays = new Set<number>();
    for (let k = 0; k < 10; k++) {
      let d = 0;
      for (let i = 0; i < 8; i++) d = rl.when(`k${k}`);
      assert.ok(d > 15_000 && d <= 30_000, `delay ${d} within (15 s, 30 s]`);
      delays.add(Math.round(d));
    }
    assert.ok(delays.size > 1, 'not in lockstep');
  });

  it('rejects nonsense options', () => {
    assert.throws(() => exponentialBackoff({ baseMs: -1 }), RangeError);
    assert.throws(() => exponentialBackoff({ baseMs: 10, maxMs: 5 }), RangeError);
    assert.throws(() => exponentialBackoff({ jitter: 1.5 }), RangeError);
  });
});

describe('bucketRateLimiter', () => {
  it('defaults to 10 qps with a burst of 100, shared by all keys', () => {
    const clock = new FakeClock();
    const rl = bucketRateLimiter(undefined, clock);
    for (let i = 0; i < 100; i++) assert.equal(rl.when(`k${i}`), 0);
    assert.equal(rl.when('x'), 100);
    assert.equal(rl.when('y'), 200);
    assert.equal(rl.retries('x'), 0);
    rl.forget('x');
    clock.advance(300);
    assert.equal(rl.when('z'), 0);
  });

  it('takes custom qps/burst', () => {
    const rl = bucketRateLimiter({ qps: 2, burst: 1 }, new FakeClock());
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [0, 500, 1000]);
  });
});

describe('maxOfRateLimiters', () => {
  const fixed = (delays: number[], retries: number): RateLimiter & { forgotten: string[] } => {
    const forgotten: string[] = [];
    let i = 0;
    return { when: () => delays[i++] ?? 0, forget: (k) => void forgotten.push(k), retries: () => retries, forgotten };
  };

  it('returns the largest delay, calling every limiter', () => {
    const a = fixed([1, 50, 3], 2);
    const b = fixed([10, 20, 30], 7);
    const rl = maxOfRateLimiters(a, b);
    assert.deepEqual([rl.when('k'), rl.when('k'), rl.when('k')], [10, 50, 30]);
    assert.equal(rl.retries('k'), 7);
    rl.forget('k');
    assert.deepEqual(a.forgotten, ['k']);
    assert.deepEqual(b.forgotten, ['k']);
  });

  it('with no limiters is 0', () => {
    const rl = maxOfRateLimiters();
    assert.equal(rl.when('k'), 0);
    assert.equal(rl.retries('k'), 0);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is per-key exponential until the overall bucket is exhausted', () => {
    const clock = new FakeClock();
    const rl = defaultControllerRateLimiter(clock);
    assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [5, 10, 20]);
    assert.equal(rl.retries('a'), 3);
    // 97 more tokens left in the burst of 100 ...
    for (let i = 0; i < 97; i++) assert.equal(rl.when(`k${i}`), 5);
    // ... then the bucket dominates for fresh keys: 10 qps.
    assert.equal(rl.when('fresh-1'), 100);
    assert.equal(rl.when('fresh-2'), 200);
    rl.forget('a');
    assert.equal(rl.retries('a'), 0);
  });
});
