/**
 * Reading a server's `Retry-After` header (RFC 9110 §10.2.3): delta-seconds or an HTTP date.
 *
 * @module
 */

/** An HTTP date starts with the day's name (IMF-fixdate, RFC 850 and asctime forms alike). */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/;

/**
 * Milliseconds a server asked us to wait, measured from `nowMs`. The one reading of the header
 * in the runtime: the API client, the endpoint limiter and the vendor client all use it.
 *
 * - `"120"` → 120 000; fractional seconds (`"0.5"`) are accepted although the RFC only allows
 *   integers; negative values clamp to 0. Other number forms (`1e3`, `0x10`, `+5`) are unreadable.
 * - An HTTP date (`"Wed, 21 Oct 2015 07:28:00 GMT"`) → the time left until then, 0 when past.
 *   Text that only `Date.parse` would read as a time (`"2026-12-05"`) is unreadable.
 * - Absent, empty or unreadable → `undefined` (the caller decides on a fallback), and so is a
 *   wait that is no safe integer of ms (`"1e20"` seconds written out): callers cap what they take.
 *
 * Pure: no clock is read except through `nowMs`.
 */
export function parseRetryAfterMs(header: string | null | undefined, nowMs: number): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = header.trim();
  if (text === '') return undefined;
  if (/^-?\d+(\.\d+)?$/.test(text)) {
    const ms = Math.max(0, Math.round(Number(text) * 1000));
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  if (!HTTP_DATE.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
