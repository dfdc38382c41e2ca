/**
 * Reading a server's `Retry-After` header (RFC 9110 §10.2.3): delta-seconds or an HTTP date.
 *
 * @module
 */

/**
 * Milliseconds a server asked us to wait, measured from `nowMs`.
 *
 * - `"120"` → 120 000; fractional seconds (`"0.5"`) are accepted although the RFC only allows
 *   integers; negative values clamp to 0.
 * - An HTTP date (`"Wed, 21 Oct 2015 07:28:00 GMT"`) → the time left until then, 0 when past.
 * - Absent, empty or unreadable → `undefined` (the caller decides on a fallback).
 *
 * Pure: no clock is read except through `nowMs`.
 */
export function parseRetryAfterMs(header: string | null | undefined, nowMs: number): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = header.trim();
  if (text === '') return undefined;
  if (/^-?\d+(\.\d+)?$/.test(text)) return Math.max(0, Math.round(Number(text) * 1000));
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
