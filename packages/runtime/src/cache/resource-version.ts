/**
 * Comparing resourceVersions, as apimachinery's `resourceversion.CompareResourceVersion` does
 * (Kubernetes 1.35+): a resourceVersion the API server hands out is a positive decimal integer
 * without leading zeros (etcd's revision), and two of them of the same resource compare as
 * numbers. Anything else (absent, an empty string, "0", leading zeros, another storage's opaque
 * token) is not comparable, and callers must then treat resourceVersions as opaque, as before.
 * @module
 */

const WELL_FORMED = /^[1-9][0-9]*$/;

/**
 * Negative, zero or positive (-1, 0, 1) as `a` is older than, the same as or newer than `b`;
 * `NaN` when either is not well formed, so that every `<`, `<=`, `>`, `>=` or `===` test of the
 * answer is false for resourceVersions that cannot be ordered. Runs for every watch event: it
 * compares lengths, then text, without converting to numbers.
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined || !WELL_FORMED.test(a) || !WELL_FORMED.test(b)) return Number.NaN;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
