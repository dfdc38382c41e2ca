import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { percentile, ratio, round, summarize } from './stats.ts';

describe('bench stats', () => {
  it('nearest-rank percentiles', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted order
    assert.equal(percentile(xs, 50), 50);
    assert.equal(percentile(xs, 99), 99);
    assert.equal(percentile(xs, 100), 100);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
  });
  it('summaries, rounding and ratios keep JSON valid', () => {
    const s = summarize([1, 2, 3, 4]);
    assert.deepEqual([s.count, s.min, s.p50, s.max, s.mean], [4, 1, 2, 4, 2.5]);
    assert.equal(round(1.23456, 2), 1.23);
    assert.equal(round(Number.NaN), null);
    assert.equal(ratio(3, 2), 1.5);
    assert.equal(ratio(3, 0), null);
  });
});
