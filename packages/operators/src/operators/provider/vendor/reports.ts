/**
 * The vendor's limits and usage reports, read from its JSON into what the operator keeps: every
 * field checked, counts as safe integers, times as RFC 3339. Pure; `undefined` for a report that
 * is not one (the client turns that into a malformed-answer error).
 *
 * Times: the vendor may write any form `Date.parse` reads; the status's `date-time` fields refuse
 * all but RFC 3339 ("2026-12-06" is refused), and one refused field fails the whole status write,
 * so a time that is not RFC 3339 is rewritten as one. An RFC 3339 time is kept as written. A date
 * alone is midnight UTC; a time without a zone is read in the process's zone (UTC in the image),
 * as `Date.parse` reads it. Held to the API server by
 * `test/integration/provider/status-differential.test.ts`.
 * @module
 */
import type { VendorLimits, VendorUsage } from './types.ts';

export const LIMIT_FIELDS = ['maxConcurrency', 'requestsPerMinute', 'dailyQuota'] as const;
const USAGE_COUNTS = ['callsToday', 'dailyQuota', 'quotaRemaining', 'refusedToday', 'throttledRequests', 'throttleWindowSeconds'] as const;

const isCount = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** A time in any form `Date.parse` reads, as RFC 3339; undefined when it reads none. */
export function vendorTime(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) return undefined;
  return RFC3339.test(v) ? v : new Date(ms).toISOString();
}

export function readLimits(value: unknown): VendorLimits | undefined {
  const v = value as Record<string, unknown> | null;
  if (!v || !LIMIT_FIELDS.every((k) => isCount(v[k], 1))) return undefined;
  return { maxConcurrency: v.maxConcurrency as number, requestsPerMinute: v.requestsPerMinute as number, dailyQuota: v.dailyQuota as number };
}

export function readUsage(value: unknown): VendorUsage | undefined {
  const v = value as Record<string, unknown> | null;
  if (!v || !USAGE_COUNTS.every((k) => isCount(v[k], 0))) return undefined;
  const quotaResetAt = vendorTime(v.quotaResetAt);
  const observedAt = vendorTime(v.observedAt);
  if (quotaResetAt === undefined || observedAt === undefined) return undefined;
  return {
    callsToday: v.callsToday as number,
    dailyQuota: v.dailyQuota as number,
    quotaRemaining: v.quotaRemaining as number,
    refusedToday: v.refusedToday as number,
    throttledRequests: v.throttledRequests as number,
    throttleWindowSeconds: v.throttleWindowSeconds as number,
    quotaResetAt,
    observedAt,
  };
}
