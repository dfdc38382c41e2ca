/**
 * `readAnswer`: one HTTP answer of the vendor as the client (`client.ts`) goes on with it: its
 * body read within a bound, the endpoint paused as its status and Retry-After ask (before the
 * limiter's permit goes to the next caller), its request id made safe.
 *
 * @module
 */
import type { Dispatcher } from 'undici';
import { parseRetryAfterMs } from '@converge/runtime';
import type { EndpointLimiter } from '@converge/runtime';
import { endpointPause, errorCodeOf, vendorField } from './errors.ts';

/** What reading an answer needs from the endpoint's limiter. */
type PauseLimiter = Pick<EndpointLimiter, 'honourRetryAfter' | 'pausedForMs' | 'maxPauseMs'>;

/** One answer, read. */
export interface Answer {
  status: number;
  /** The body as UTF-8 text (a BOM dropped); '' when `tooLarge`. */
  text: string;
  /** The body was larger than the bound: not read further, its connection closed. */
  tooLarge: boolean;
  /** The wait a 429 (or a 5xx with Retry-After) asked for; the limiter has already paused for it. */
  retryAfterMs: number | undefined;
  /** The vendor's x-request-id, bounded and redacted (`vendorField`). */
  requestId: string | undefined;
}

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * What to report as `retryAfterMs` for a Retry-After the limiter has just honoured (`asked`, its
 * return value): the wait asked for, unless the limiter paused for less (it caps one pause,
 * 5 minutes by default; an asked wait may even be Infinity): then the pause it set. A caller
 * that waits that long finds the endpoint open again.
 */
function honouredMs(asked: number | undefined, limiter: PauseLimiter): number | undefined {
  if (asked === undefined) return undefined;
  // Compared with the cap, not with the pause left: the limiter's clock moves between setting the
  // pause and any reading of it (by 2 ms on a loaded CI machine, which reported 998 for 1000).
  return Number.isFinite(asked) && asked <= limiter.maxPauseMs ? Math.max(0, Math.ceil(asked)) : limiter.pausedForMs();
}

const ignore = (): void => {};

/**
 * The body as text, or undefined when it is larger than `maxBytes`: by its Content-Length, before
 * anything is read, or by the bytes received so far. Reading then stops and the body is
 * destroyed, which aborts the exchange and closes its connection (undici never reuses a
 * connection whose answer was not read to its end). Rejects as reading the body does (a reset,
 * the deadline).
 */
async function readBody(res: Dispatcher.ResponseData, maxBytes: number): Promise<string | undefined> {
  const refuse = (): undefined => {
    res.body.on('error', ignore); // destroying emits an 'aborted' error nobody else waits for
    res.body.destroy();
    return undefined;
  };
  const hasBody = res.statusCode >= 200 && res.statusCode !== 204 && res.statusCode !== 304;
  const length = header(res.headers['content-length'])?.trim();
  if (hasBody && length !== undefined && /^\d+$/.test(length) && Number(length) > maxBytes) return refuse();
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) return refuse();
    chunks.push(chunk);
  }
  // As undici's `body.text()`: UTF-8, a leading BOM dropped, invalid bytes as U+FFFD.
  return new TextDecoder().decode(Buffer.concat(chunks, bytes));
}

/**
 * Reads one answer: its body within `maxBytes`, then pauses the whole endpoint at once when the
 * answer asks (errors.ts: `endpointPause`; an answer about one instance, its quota or its own
 * rate, pauses nothing). A body too large to read counts as one that is not JSON (no `error.code`).
 * `secret` never reaches the request id.
 */
export async function readAnswer(res: Dispatcher.ResponseData, limiter: PauseLimiter, maxBytes: number, secret: string): Promise<Answer> {
  const body = await readBody(res, maxBytes);
  const text = body ?? '';
  const retryAfter = header(res.headers['retry-after']);
  const pause = res.statusCode >= 400 ? endpointPause(res.statusCode, errorCodeOf(text)) : undefined;
  const retryAfterMs =
    pause === 'rate-limit'
      ? honouredMs(limiter.honourRetryAfter(retryAfter, 1000), limiter)
      : pause === 'server'
        ? honouredMs(limiter.honourRetryAfter(retryAfter), limiter)
        : res.statusCode === 429
          ? parseRetryAfterMs(retryAfter, Date.now())
          : undefined;
  // The request id is the vendor's word too (it may echo anything, the token included).
  return { status: res.statusCode, text, tooLarge: body === undefined, retryAfterMs, requestId: vendorField(header(res.headers['x-request-id']), secret, 128) };
}
