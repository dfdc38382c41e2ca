import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/index.ts';
import { EndpointLimiter, EndpointPausedError, createEndpointLimiters, endpointKey, parseRetryAfterMs, type Permit } from './index.ts';

/** Lets promise continuations run. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Starts `n` acquires and records when (fake time) each was admitted. */
function acquireMany(limiter: EndpointLimiter, clock: FakeClock, n: number, signal?: AbortSignal) {
  const admittedAt: (number | undefined)[] = Array.from({ length: n }, () => undefined);
  const permits: Permit[] = [];
  const done = Array.from({ length: n }, (_, i) =>
    limiter.acquire(signal).then((p) => {
      admittedAt[i] = clock.now();
      permits.push(p);
    }),
  );
  return { admittedAt, permits, done };
}

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads delta-seconds, fractional seconds and HTTP dates', () => {
    assert.equal(parseRetryAfterMs('3', now), 3000);
    assert.equal(parseRetryAfterMs(' 0 ', now), 0);
    assert.equal(parseRetryAfterMs('0.25', now), 250);
    assert.equal(parseRetryAfterMs('Wed, 01 Jan 2025 00:00:10 GMT', now), 10_000);
  });
  it('clamps past dates to 0 and rejects garbage', () => {
    assert.equal(parseRetryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now), 0);
    assert.equal(parseRetryAfterMs(undefined, now), undefined);
    assert.equal(parseRetryAfterMs(null, now), undefined);
    assert.equal(parseRetryAfterMs('', now), undefined);
    assert.equal(parseRetryAfterMs('soon', now), undefined);
    for (const bad of ['1e3', '0x10', '+5', '2025-01-01', 'Jan 1 2025', '9'.repeat(400)]) assert.equal(parseRetryAfterMs(bad, now), undefined, bad);
    assert.equal(parseRetryAfterMs('-3', now), 0);
  });
});

describe('EndpointLimiter', () => {
  it('admits at once when nothing limits it', async () => {
    const limiter = new EndpointLimiter({ clock: new FakeClock() });
    const permits = await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
    assert.equal(limiter.stats().inFlight, 3);
    for (const p of permits) p.release();
    assert.equal(limiter.stats().inFlight, 0);
  });

  it('spaces requests at the sustained rate after the burst, FIFO', async () => {
    const clock = new FakeClock(0);
    const limiter = new EndpointLimiter({ ratePerSecond: 5, burst: 2, clock });
    const { admittedAt } = acquireMany(limiter, clock, 5);
    await tick();
    assert.deepEqual(admittedAt, [0, 0, undefined, undefined, undefined]);
    for (let i = 0; i < 6; i++) await clock.advanceAsync(100);
    assert.deepEqual(admittedAt, [0, 0, 200, 400, 600]);
    assert.equal(limiter.stats().granted, 5);
  });

  it('caps requests in flight and admits the next one on release', async () => {
    const clock = new FakeClock();
    const limiter = new EndpointLimiter({ maxConcurrency: 2, clock });
    const { admittedAt, permits } = acquireMany(limiter, clock, 4);
    await tick();
    assert.equal(admittedAt.filter((t) => t !== undefined).length, 2);
    assert.equal(limiter.stats().queued, 2);
    permits[0]!.release();
    permits[0]!.release(); // idempotent: frees one slot only
    await tick();
    assert.equal(admittedAt.filter((t) => t !== undefined).length, 3);
    assert.equal(limiter.stats().inFlight, 2);
    assert.equal(clock.pendingTimers(), 0, 'concurrency waits hold no timer');
  });

  it('schedule releases the permit when fn throws', async () => {
    const limiter = new EndpointLimiter({ maxConcurrency: 1, clock: new FakeClock() });
    await assert.rejects(
      limiter.schedule(async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await limiter.schedule(async () => 42), 42);
    assert.equal(limiter.stats().inFlight, 0);
  });

  it('an aborted waiter leaves the queue, consumes nothing and rejects with the reason', async () => {
    const clock = new FakeClock();
    const limiter = new EndpointLimiter({ ratePerSecond: 1, burst: 1, clock });
    await limiter.acquire(); // spends the only token
    const ac = new AbortController();
    const waiting = limiter.acquire(ac.signal);
    const behind = acquireMany(limiter, clock, 1);
    ac.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    assert.equal(limiter.stats().abandoned, 1);
    await clock.advanceAsync(1000);
    assert.deepEqual(behind.admittedAt, [1000], 'the next waiter gets the token the aborted one would have had');
    await assert.rejects(limiter.acquire(AbortSignal.abort(new Error('already'))), /already/);
  });

  it('no timer is left once the queue empties', async () => {
    const clock = new FakeClock();
    const limiter = new EndpointLimiter({ ratePerSecond: 1, clock });
    await limiter.acquire();
    const ac = new AbortController();
    const waiting = limiter.acquire(ac.signal);
    await tick();
    assert.equal(clock.pendingTimers(), 1);
    ac.abort();
    await waiting.catch(() => {});
    assert.equal(clock.pendingTimers(), 0);
  });

  it('Retry-After pauses the endpoint; afterwards one goes first and the rest follow at the rate', async () => {
    const clock = new FakeClock(0);
    const limiter = new EndpointLimiter({ ratePerSecond: 10, burst: 5, clock });
    assert.equal(limiter.honourRetryAfter('2'), 2000);
    assert.equal(limiter.pausedForMs(), 2000);
    const { admittedAt } = acquireMany(limiter, clock, 3);
    await clock.advanceAsync(1999);
    assert.deepEqual(admittedAt, [undefined, undefined, undefined]);
    await clock.advanceAsync(1);
    assert.deepEqual(admittedAt, [2000, undefined, undefined], 'the bucket refilled during the pause but no burst follows');
    for (let i = 0; i < 3; i++) await clock.advanceAsync(100);
    assert.deepEqual(admittedAt, [2000, 2100, 2200]);
    assert.equal(limiter.stats().pauses, 1);
  });

  it('pauses only extend, are capped, and fall back when the header is unreadable', async () => {
    const clock = new FakeClock(0);
    const limiter = new EndpointLimiter({ clock, maxPauseMs: 10_000 });
    limiter.pauseFor(5000);
    limiter.pauseFor(1000);
    assert.equal(limiter.pausedForMs(), 5000);
    assert.equal(limiter.honourRetryAfter('3600'), 3_600_000);
    assert.equal(limiter.pausedForMs(), 10_000, 'capped by maxPauseMs');
    assert.deepEqual([limiter.maxPauseMs, new EndpointLimiter().maxPauseMs], [10_000, 300_000], 'the cap, as given or by default');
    assert.equal(limiter.honourRetryAfter('garbage'), undefined);
    assert.equal(limiter.honourRetryAfter(undefined, 750), 750);
    const at = new Date(Date.UTC(1970, 0, 1, 0, 0, 4)).toUTCString();
    assert.equal(limiter.honourRetryAfter(at), 4000, 'HTTP date relative to the clock');
  });

  it('a pause set while waiting for a token delays that waiter', async () => {
    const clock = new FakeClock(0);
    const limiter = new EndpointLimiter({ ratePerSecond: 1, clock });
    await limiter.acquire();
    const { admittedAt } = acquireMany(limiter, clock, 1);
    await clock.advanceAsync(500);
    limiter.pauseFor(3000); // until 3500
    await clock.advanceAsync(1000);
    assert.deepEqual(admittedAt, [undefined]);
    await clock.advanceAsync(2000);
    assert.deepEqual(admittedAt, [3500]);
  });

  it('a waiter bounded by maxPauseWaitMs waits out a shorter pause and is refused at once when a longer one begins', async () => {
    const clock = new FakeClock(0);
    const limiter = new EndpointLimiter({ ratePerSecond: 1, clock });
    await limiter.acquire(); // spends the only token: the next callers wait for one
    const outcomes: unknown[] = [];
    const settle = (p: Promise<Permit>, i: number): void => void p.then(
      () => void (outcomes[i] = clock.monotonic()),
      (err: unknown) => void (outcomes[i] = err),
    );
    settle(limiter.acquire(undefined, { maxPauseWaitMs: 2_000 }), 0);
    settle(limiter.acquire(undefined, { maxPauseWaitMs: 500 }), 1);
    settle(limiter.acquire(), 2);
    await clock.advanceAsync(100);
    limiter.pauseFor(400); // until 500: within every bound
    await tick();
    assert.equal(outcomes.length, 0, 'a pause within the bound keeps everyone waiting');
    await clock.advanceAsync(100);
    limiter.pauseFor(1_000); // until 1200, 1000 ms left: more than the second caller's 500
    await tick();
    assert.ok(outcomes[1] instanceof EndpointPausedError, `refused at once: ${String(outcomes[1])}`);
    assert.equal((outcomes[1] as EndpointPausedError).pausedForMs, 1_000);
    assert.match(String(outcomes[1]), /endpoint paused for 1000 ms more, longer than the 500 ms this caller waits/);
    assert.equal(outcomes[0], undefined, 'the first caller (bound 2000) keeps its place');
    await assert.rejects(limiter.acquire(undefined, { maxPauseWaitMs: 999 }), (err: unknown) => err instanceof EndpointPausedError && err.pausedForMs === 1_000, 'refused on arrival too');
    await clock.advanceAsync(1_000);
    await tick();
    assert.equal(outcomes[0], 1_200, 'admitted when the pause ends');
    assert.equal(limiter.stats().refused, 2);
    assert.equal(limiter.stats().queued, 1);
    for (const bad of [-1, Number.NaN]) await assert.rejects(limiter.acquire(undefined, { maxPauseWaitMs: bad }), RangeError);
  });

  it('validates its options', () => {
    assert.throws(() => new EndpointLimiter({ maxConcurrency: 0 }), RangeError);
    assert.throws(() => new EndpointLimiter({ ratePerSecond: 0 }), RangeError);
  });
});

describe('createEndpointLimiters', () => {
  it('shares one limiter per origin and applies overrides', async () => {
    const limiters = createEndpointLimiters({ maxConcurrency: 3, overrides: { 'https://slow.example:8443': { maxConcurrency: 1 } } });
    const a = limiters.get('https://Vendor.example/v1/instances');
    assert.equal(limiters.get('https://vendor.example:443/other'), a);
    assert.notEqual(limiters.get('https://vendor.example:8443'), a);
    const slow = limiters.get('https://slow.example:8443/x');
    await slow.acquire();
    const pending = slow.acquire(AbortSignal.timeout(20));
    await assert.rejects(pending);
    assert.deepEqual(Object.keys(limiters.stats()).sort(), ['https://slow.example:8443', 'https://vendor.example', 'https://vendor.example:8443']);
  });

  it('endpointKey keeps non-URLs as they are', () => {
    assert.equal(endpointKey('not a url'), 'not a url');
    assert.equal(endpointKey('HTTPS://A.B:443/c?d'), 'https://a.b');
  });
});
