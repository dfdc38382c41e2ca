import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { median, medianInterval, percentile, ratio, round, summarize } from './stats.ts';

describe('bench stats', () => {
  it('nearest-rank percentiles', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted order
    assert.equal(percentile(xs, 50), 50);
    assert.equal(percentile(xs, 99), 99);
    assert.equal(percentile(xs, 100), 100);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
  });
  it('the median: the middle value, the mean of the two middle ones, NaN for none; the input is left as it was', () => {
    const xs = [3, 1, 2];
    assert.equal(median(xs), 2);
    assert.deepEqual(xs, [3, 1, 2]);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
  it('summaries, rounding and ratios keep JSON valid', () => {
    const s = summarize([1, 2, 3, 4]);
    assert.deepEqual([s.count, s.min, s.p50, s.max, s.mean], [4, 1, 2, 4, 2.5]);
    assert.equal(round(1.23456, 2), 1.23);
    assert.equal(round(Number.NaN), null);
    assert.equal(ratio(3, 2), 1.5);
    assert.equal(ratio(3, 0), null);
  });
  it('an interval for the median from order statistics, with its exact coverage', () => {
    // Seven rounds: only the smallest and the largest reach 95 % (1 − 2/128 = 98.4 %).
    const seven = [1.12, 1.21, 1.47, 0.88, 1.39, 1.04, 1.36];
    assert.deepEqual(medianInterval(seven), { low: 0.88, high: 1.47, coverage: 1 - 2 / 128 });
    // At 85 %, the second smallest and second largest (1 − 2·8/128 = 87.5 %).
    assert.deepEqual(medianInterval(seven, 0.85), { low: 1.04, high: 1.39, coverage: 1 - 16 / 128 });
    // Fourteen rounds: the 3rd and 12th values cover 98.7 %, the 4th and 11th only 94.3 %.
    const fourteen = Array.from({ length: 14 }, (_, i) => i + 1);
    const i14 = medianInterval(fourteen)!;
    assert.deepEqual([i14.low, i14.high], [3, 12]);
    assert.ok(Math.abs(i14.coverage - (1 - 2 * (1 + 14 + 91) / 16384)) < 1e-12);
    // Too few samples for 95 %: all of them, with the coverage they have.
    assert.deepEqual(medianInterval([3, 1, 2]), { low: 1, high: 3, coverage: 0.75 });
    assert.deepEqual(medianInterval([5]), { low: 5, high: 5, coverage: 0 });
    assert.equal(medianInterval([]), undefined);
  });
  it('the interval holds the sample median, lies within the samples and covers at least what was asked when it can', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 10, noNaN: true }), { minLength: 1, maxLength: 60 }), fc.double({ min: 0.5, max: 0.99, noNaN: true }), (xs, confidence) => {
        const { low, high, coverage } = medianInterval(xs, confidence)!;
        const m = percentile(xs, 50);
        assert.ok(low <= m && m <= high);
        assert.ok(low >= Math.min(...xs) && high <= Math.max(...xs));
        const widest = 1 - 2 / 2 ** xs.length;
        if (widest >= confidence) assert.ok(coverage >= confidence - 1e-12);
        else assert.ok(Math.abs(coverage - Math.max(0, widest)) < 1e-12);
      }),
    );
  });
  it('large samples: the coverage is the exact one (BigInt reference), not NaN from 2^n overflowing', () => {
    // P(B ≤ j), B ~ Binomial(n, ½), exactly, in integers; its first 15 digits as a double.
    const exactBelow = (n: number, j: number): number => {
      let choose = 1n;
      let sum = 0n;
      for (let i = 0; i <= j; i++) {
        sum += choose;
        choose = (choose * BigInt(n - i)) / BigInt(i + 1);
      }
      const scale = 10n ** 15n;
      return Number((sum * scale) / 2n ** BigInt(n)) / 1e15;
    };
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3000 }), fc.double({ min: 0.5, max: 0.999, noNaN: true }), (n, confidence) => {
        const xs = Array.from({ length: n }, (_, i) => n - i);
        const { low, high, coverage } = medianInterval(xs, confidence)!;
        const k = low; // the samples are 1..n, so the k-th smallest is k
        assert.equal(high, n - k + 1);
        assert.ok(Math.abs(coverage - Math.max(0, 1 - 2 * exactBelow(n, k - 1))) < 1e-9, `n=${n} k=${k} coverage=${coverage}`);
        // The narrowest: one step further in would not reach the level asked for.
        if (k + 1 <= Math.ceil(n / 2) && coverage >= confidence) assert.ok(1 - 2 * exactBelow(n, k) < confidence + 1e-9);
      }),
      { numRuns: 60 },
    );
  });
});
