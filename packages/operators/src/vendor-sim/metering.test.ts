import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_LIMITS, LimitValidationError, Meter, Metering, QuotaCalendar, parseLimitsPatch, type Limits } from './metering.ts';

const DAY = 86_400_000;

function clock(start = Date.UTC(2025, 0, 1, 10, 0, 0)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => { t += ms; } };
}

describe('metering', () => {
  it('limits: integers within bounds only, readable messages naming the field', () => {
    assert.deepEqual(parseLimitsPatch({ dailyQuota: 5, maxConcurrency: 1 }), { dailyQuota: 5, maxConcurrency: 1 });
    assert.deepEqual(parseLimitsPatch({}), {});
    const cases: [unknown, string, RegExp][] = [
      [{ dailyQuota: 0 }, 'dailyQuota', /dailyQuota must be an integer from 1 to 1000000000, got 0/],
      [{ requestsPerMinute: -3 }, 'requestsPerMinute', /from 1 to 1000000/],
      [{ maxConcurrency: 10_001 }, 'maxConcurrency', /from 1 to 10000, got 10001/],
      [{ dailyQuota: 1.5 }, 'dailyQuota', /integer/],
      [{ dailyQuota: '5' }, 'dailyQuota', /got "5"/],
      [{ dailyQuota: null }, 'dailyQuota', /got null/],
      [{ burst: 1 }, 'burst', /unknown field "burst"/],
      [[1], 'limits', /JSON object/],
    ];
    for (const [body, field, message] of cases) {
      assert.throws(() => parseLimitsPatch(body), (err: unknown) => err instanceof LimitValidationError && err.field === field && message.test(err.message), JSON.stringify(body));
    }
  });

  it('quota first, then the minute: exhausted calls are refused, over-the-minute calls throttled', () => {
    const c = clock();
    const metering = new Metering({ now: c.now });
    const meter = metering.meter('i');
    const limits: Limits = { ...DEFAULT_LIMITS, requestsPerMinute: 10, dailyQuota: 25 };
    assert.deepEqual(meter.consume(12, limits), { accepted: 10, throttled: 2, refused: 0 });
    assert.equal(meter.report(limits).throttledRequests, 2);
    c.advance(60_000);
    assert.deepEqual(meter.consume(10, limits), { accepted: 10, throttled: 0, refused: 0 });
    c.advance(60_000);
    // 5 left in the quota, 10 in the minute: the quota runs out first, the rest is refused.
    assert.deepEqual(meter.consume(8, limits), { accepted: 5, throttled: 0, refused: 3 });
    const usage = meter.report(limits);
    assert.deepEqual([usage.callsToday, usage.quotaRemaining, usage.refusedToday], [25, 0, 3]);
    assert.equal(usage.quotaResetAt, '2025-01-02T00:00:00.000Z');
    assert.equal(usage.throttledRequests, 0, 'the throttled calls of two minutes ago are out of the 60 s window');
  });

  it('advancing the quota day resets today for every meter, lazily; the next reset is 24 h away', () => {
    const c = clock();
    const metering = new Metering({ now: c.now });
    const limits: Limits = { ...DEFAULT_LIMITS, dailyQuota: 3 };
    for (const id of ['a', 'b']) metering.meter(id).consume(5, limits);
    assert.equal(metering.meter('a').report(limits).quotaRemaining, 0);
    const before = metering.calendar.day();
    assert.equal(metering.calendar.advance(), before + 1);
    assert.equal(metering.calendar.resetAt(), c.now() + DAY);
    for (const id of ['a', 'b']) assert.deepEqual([metering.meter(id).report(limits).callsToday, metering.meter(id).report(limits).refusedToday], [0, 0]);
    // And the day also rolls over by itself when the clock gets there.
    metering.meter('a').consume(2, limits);
    c.advance(DAY);
    assert.equal(metering.meter('a').report(limits).callsToday, 0);
  });

  it('throttled calls count for the window, then drop out; clearThrottle forgets them at once', () => {
    const c = clock();
    const meter = new Meter(new QuotaCalendar(c.now), 5);
    meter.throttle(4);
    c.advance(3_000);
    meter.throttle(1);
    assert.equal(meter.report(DEFAULT_LIMITS).throttledRequests, 5);
    c.advance(2_000);
    assert.equal(meter.report(DEFAULT_LIMITS).throttledRequests, 1, 'the first 4 are 5 s old');
    c.advance(3_000);
    assert.equal(meter.report(DEFAULT_LIMITS).throttledRequests, 0);
    meter.throttle(7);
    meter.clearThrottle();
    assert.equal(meter.report(DEFAULT_LIMITS).throttledRequests, 0);
    assert.throws(() => new Metering({ throttleWindowSeconds: 0 }), /1 to 3600/);
  });

  it('property: consume(n) decides exactly as n single calls in a row', () => {
    fc.assert(
      fc.property(
        fc.record({ requestsPerMinute: fc.integer({ min: 1, max: 20 }), dailyQuota: fc.integer({ min: 1, max: 60 }) }),
        fc.array(fc.record({ calls: fc.integer({ min: 1, max: 30 }), waitMs: fc.integer({ min: 0, max: 90_000 }) }), { maxLength: 12 }),
        (l, steps) => {
          const limits = { ...DEFAULT_LIMITS, ...l };
          const a = clock();
          const b = clock();
          const bulk = new Meter(new QuotaCalendar(a.now), 60);
          const single = new Meter(new QuotaCalendar(b.now), 60);
          for (const { calls, waitMs } of steps) {
            const got = bulk.consume(calls, limits);
            const want = { accepted: 0, throttled: 0, refused: 0 };
            for (let i = 0; i < calls; i++) {
              const one = single.consume(1, limits);
              want.accepted += one.accepted;
              want.throttled += one.throttled;
              want.refused += one.refused;
            }
            assert.deepEqual(got, want);
            assert.deepEqual(bulk.report(limits), single.report(limits));
            a.advance(waitMs);
            b.advance(waitMs);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
