/**
 * Comparing resourceVersions, as apimachinery's `resourceversion.CompareResourceVersion` does
 * (Kubernetes 1.35+): a resourceVersion the API server hands out is a positive decimal integer
 * without leading zeros (etcd's revision), and two of them of the same resource compare as
 * numbers. Anything else (an empty string, "0", another storage's opaque token) is not
 * comparable, and callers must then treat resourceVersions as opaque, as before.
 * @module
 */

const WELL_FORMED = /^[1-9][0-9]*$/;

/** -1, 0 or 1 as `a` is older than, the same as or newer than `b`; `undefined` when either is not well formed. */
export function compareResourceVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  if (!WELL_FORMED.test(a) || !WELL_FORMED.test(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
