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

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
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

/** Bytes → whole megabytes (10^6), or null when there is no reading. */
export function megabytes(bytes: number | undefined): number | null {
  return bytes === undefined ? null : round(bytes / 1e6, 0);
}

/** A ratio a ÷ b, or null when b is not positive. */
export function ratio(a: number, b: number, digits = 2): number | null {
  return b > 0 && Number.isFinite(a) ? round(a / b, digits) : null;
}

/** A confidence interval for the median of the population the samples came from. */
export interface MedianInterval {
  low: number;
  high: number;
  /** The probability that the interval holds the population's median (exact, not the asked-for level). */
  coverage: number;
}

/**
 * The distribution-free interval for a median from order statistics: the k-th smallest and k-th
 * largest samples hold the median with probability 1 − 2·P(B ≤ k − 1), B ~ Binomial(n, ½),
 * assuming only independent samples. The narrowest such interval whose coverage reaches
 * `confidence`; when even the smallest and largest sample do not reach it (n < 6 at 95 %), those
 * two with the coverage they have. Undefined for no samples.
 *
 * Why in the bench: one set of seven rounds on a two-CPU machine has spread enough that its
 * median alone cannot say whether a 10 % goal is met (issue 17, goal 1).
 */
export function medianInterval(samples: readonly number[], confidence = 0.95): MedianInterval | undefined {
  const n = samples.length;
  if (n === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  // below[j] = P(B ≤ j) for B ~ Binomial(n, ½), each term from its logarithm: 2^n and C(n, j)
  // overflow a double past n ≈ 1,000, their quotient does not (terms too small underflow to 0).
  const below: number[] = [];
  let logTerm = -n * Math.LN2; // ln P(B = 0)
  let sum = 0;
  for (let j = 0; j < n; j++) {
    sum += Math.exp(logTerm);
    below.push(sum);
    logTerm += Math.log((n - j) / (j + 1));
  }
  const coverage = (k: number) => 1 - 2 * below[k - 1]!;
  let k = 1;
  while (k + 1 <= Math.ceil(n / 2) && coverage(k + 1) >= confidence) k++;
  return { low: sorted[k - 1]!, high: sorted[n - k]!, coverage: Math.max(0, coverage(k)) };
}
