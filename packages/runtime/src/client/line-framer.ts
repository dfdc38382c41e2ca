/**
 * Frames a newline-delimited stream (a watch response: one JSON event per line) on bytes.
 *
 * A network chunk ends anywhere, also inside a multi-byte UTF-8 character; decoding each chunk
 * on its own turns such a character into U+FFFD on both sides of the cut and the JSON still
 * parses, silently corrupting the object (issue 12, item 1). So chunks are cut at the newline
 * byte (0x0A never occurs inside a multi-byte UTF-8 sequence) and only whole lines are decoded.
 *
 * Guarantee: the lines returned, decoded, are exactly the stream's lines, however it was cut.
 * A last line without a newline is never returned (an event cut off by the end of the stream).
 * @module
 */

const NEWLINE = 0x0a;

export class LineFramer {
  /** Bytes of the current, unfinished line. */
  #pending: Buffer[] = [];

  /** Takes the next chunk; returns the lines it completes (without their newline), decoded. */
  push(chunk: Uint8Array): string[] {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lines: string[] = [];
    let start = 0;
    for (let nl = buf.indexOf(NEWLINE, start); nl >= 0; nl = buf.indexOf(NEWLINE, start)) {
      const tail = buf.subarray(start, nl);
      const line = this.#pending.length ? Buffer.concat([...this.#pending, tail]) : tail;
      this.#pending = [];
      lines.push(line.toString('utf8'));
      start = nl + 1;
    }
    if (start < buf.length) this.#pending.push(buf.subarray(start));
    return lines;
  }
}
