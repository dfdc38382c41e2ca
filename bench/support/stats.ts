/**
 * Small statistics over samples: percentiles (nearest-rank), summaries, rounding for reports.
 * Pure functions; unit-tested in stats.test.ts.
 * @module
 */

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export interface Summary {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(samples: readonly number[]): Summary {
  const count = samples.length;
  const mean = count ? samples.reduce((a, b) => a + b, 0) / count : Number.NaN;
  return {
    count,
    min: count ? Math.min(...samples) : Number.NaN,
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    max: count ? Math.max(...samples) : Number.NaN,
    mean,
  };
}

/** Rounds to `digits` decimals; keeps NaN/Infinity as null so JSON stays valid. */
export function round(value: number, digits = 2): number | null {
  if (!Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Milliseconds → seconds, rounded. */
export function seconds(ms: number, digits = 2): number | null {
  return round(ms / 1000, digits);
}

/** A ratio a ÷ b, or null when b is not positive. */
export function ratio(a: number, b: number, digits = 2): number | null {
  return b > 0 && Number.isFinite(a) ? round(a / b, digits) : null;
}
