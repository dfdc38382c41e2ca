import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readLimits, readUsage, vendorTime } from './reports.ts';

test('vendor times come out as RFC 3339: kept when they are, rewritten when Date.parse reads another form', () => {
  assert.equal(vendorTime('2026-12-06T00:00:00Z'), '2026-12-06T00:00:00Z');
  assert.equal(vendorTime('2026-12-06T09:00:00.123456+09:00'), '2026-12-06T09:00:00.123456+09:00');
  assert.equal(vendorTime('2026-12-06'), '2026-12-06T00:00:00.000Z', 'a date alone is midnight UTC (the status refused it as it was)');
  assert.equal(vendorTime('Sun, 06 Dec 2026 00:00:00 GMT'), '2026-12-06T00:00:00.000Z');
  assert.equal(vendorTime('tomorrow'), undefined);
  assert.equal(vendorTime(1_765_000_000), undefined);
});

test('a usage report needs every count as a safe integer ≥ 0 and both times; limits need counts ≥ 1', () => {
  const usage = { callsToday: 1, dailyQuota: 10, quotaRemaining: 9, refusedToday: 0, throttledRequests: 0, throttleWindowSeconds: 60, quotaResetAt: '2026-12-06', observedAt: '2026-12-05T12:00:00Z' };
  assert.deepEqual(readUsage(usage), { ...usage, quotaResetAt: '2026-12-06T00:00:00.000Z' });
  assert.equal(readUsage({ ...usage, callsToday: -1 }), undefined);
  assert.equal(readUsage({ ...usage, dailyQuota: 1.5 }), undefined);
  assert.equal(readUsage({ ...usage, observedAt: 'soon' }), undefined);
  assert.equal(readUsage(null), undefined);
  assert.deepEqual(readLimits({ maxConcurrency: 2 ** 40, requestsPerMinute: 1, dailyQuota: 1 }), { maxConcurrency: 2 ** 40, requestsPerMinute: 1, dailyQuota: 1 });
  assert.equal(readLimits({ maxConcurrency: 0, requestsPerMinute: 1, dailyQuota: 1 }), undefined);
});
