/**
 * Kubeconfig strings (a token, impersonated names) as HTTP header values, sent as kubectl (Go)
 * sends them: the UTF-8 bytes of the string. Node writes a header string as Latin-1, one byte per
 * character, and refuses a character above U+00FF; so a value goes as the Latin-1 string of its
 * UTF-8 bytes (the transport writes every header block as Latin-1: `client/transport.ts`).
 * A control character (tab aside) cannot be carried by any header: kubectl's requests fail on it
 * too. Pure.
 * @module
 */

const CONTROL = /[\0-\x08\x0a-\x1f\x7f]/;

/** Whether `value` holds a character no HTTP header value can carry (a line break, NUL, …). */
export function holdsControlCharacter(value: string): boolean {
  return CONTROL.test(value);
}

/** `value` as a Node header string carrying its UTF-8 bytes; check `holdsControlCharacter` first. */
export function utf8HeaderValue(value: string): string {
  // ASCII is its own UTF-8: no copy for the common case.
  return /^[\x20-\x7e\t]*$/.test(value) ? value : Buffer.from(value, 'utf8').toString('latin1');
}
