/**
 * `vendorText`: what the vendor says in its own words (a health message, an account's
 * suspension note, an error's detail), made safe to put into a status, an Event or a log line:
 * one line, bounded in length, with the bearer token and anything that looks like a credential
 * taken out (the runtime's `scrubCredentials`, which also scrubs exec plugins' stderr). Pure.
 *
 * Guarantees: the result never contains `secret` (when it is non-empty), never a newline or
 * another control character, and is at most `max` characters long (an ellipsis marks a cut).
 * @module
 */
import { scrubCredentials } from '@converge/runtime';

/** Default bound: long enough for a sentence, short enough for a condition message. */
export const VENDOR_TEXT_MAX = 200;

/** Replaces every occurrence of `secret` in `text`. */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('[redacted]') : text;
}

// Control characters (C0, DEL, C1) and the Unicode line/paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

export function vendorText(text: string, secret?: string, max = VENDOR_TEXT_MAX): string {
  // Redacted again after folding whitespace: "ab\ncd" folds into a secret "ab cd".
  const clean = redact(scrubCredentials(redact(text, secret)).replace(CONTROL, ' ').replace(/\s+/g, ' ').trim(), secret);
  // Count code points, so a cut never splits a surrogate pair.
  const chars = [...clean];
  if (chars.length <= max) return clean;
  return max <= 1 ? '…' : `${chars.slice(0, max - 1).join('').trimEnd()}…`;
}
