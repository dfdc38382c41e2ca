/**
 * A kubeconfig's `-data` fields (`certificate-authority-data`, `client-certificate-data`,
 * `client-key-data`) as kubectl reads them: padded standard base64, line breaks (`\n`, `\r`)
 * skipped — Go's `encoding/json` decoding of `[]byte`. Node's own decoder skips anything it cannot
 * read, so a PEM pasted where its base64 belongs became a few bytes of nothing: a CA bundle that
 * trusts no server, failing every request with a TLS error that names no kubeconfig. Pure.
 * @module
 */

const ALPHABET = /[A-Za-z0-9+/]/;

/**
 * `text` without its line breaks when it is base64 as kubectl reads it; else the offset kubectl
 * names in "illegal base64 data at input byte N" (the first character it cannot read, or the start
 * of an unfinished group of four).
 */
export function readDataField(text: string): { base64: string } | { badAt: number } {
  let inGroup = 0; // characters of the current group of four, padding included
  let groupStart = 0;
  let padding = 0;
  let ended = false; // a group ended with padding: only line breaks may follow
  let base64 = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n' || c === '\r') continue;
    if (ended) return { badAt: i };
    if (inGroup === 0) groupStart = i;
    if (c === '=') {
      // Padding fills a group after two or three characters: `xx==`, `xxx=`.
      if (inGroup < 2) return { badAt: i };
      padding++;
    } else if (!ALPHABET.test(c) || padding > 0) {
      return { badAt: i };
    }
    base64 += c;
    inGroup++;
    if (inGroup === 4) {
      inGroup = 0;
      if (padding > 0) ended = true;
    }
  }
  return inGroup === 0 ? { base64 } : { badAt: groupStart };
}
