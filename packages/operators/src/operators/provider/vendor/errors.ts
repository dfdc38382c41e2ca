/**
 * The vendor client's error taxonomy: every failed call becomes one `VendorError` whose `kind`
 * the reconciler branches on, and whose `transient` says whether retrying unchanged may help.
 *
 * | kind         | from                                              | transient |
 * |--------------|---------------------------------------------------|-----------|
 * | NotFound     | 404                                               | no        |
 * | Unauthorized | 401, 403                                          | no        |
 * | Invalid      | 400, 405, 409, 413, 422 and other 4xx; bad config | no        |
 * | RateLimited  | 429; or the endpoint is paused by an earlier one  | yes       |
 * | Server       | 5xx; a malformed success body                     | yes       |
 * | Timeout      | no answer within `timeoutMs`; 408                 | yes       |
 * | Network      | connection refused/reset, DNS, TLS failures       | yes       |
 *
 * Messages never contain the bearer token (it is redacted defensively even if a server echoes it).
 *
 * @module
 */
import type { VendorOperationName } from './types.ts';

export type VendorErrorKind = 'NotFound' | 'Unauthorized' | 'RateLimited' | 'Invalid' | 'Server' | 'Timeout' | 'Network';

const TRANSIENT: ReadonlySet<VendorErrorKind> = new Set(['RateLimited', 'Server', 'Timeout', 'Network']);
const NO_ANSWER: ReadonlySet<VendorErrorKind> = new Set(['Server', 'Timeout', 'Network']);

/**
 * True for failures that say the vendor did not answer usefully (5xx, timeout, network error);
 * false for answers, including a 429 (the vendor is up and asks us to slow down).
 */
export const isNoAnswer = (kind: VendorErrorKind | string): boolean => NO_ANSWER.has(kind as VendorErrorKind);

export interface VendorErrorInit {
  kind: VendorErrorKind;
  operation: VendorOperationName | 'createClient';
  message: string;
  /** HTTP status; 0 when no answer was received (or the client refused to send). */
  status?: number;
  /** The vendor's `error.code` (e.g. `ImmutableField`) or a system code (e.g. `ECONNREFUSED`). */
  code?: string;
  /** The field the vendor blamed. */
  field?: string;
  /** The vendor's request id, for support tickets. */
  requestId?: string;
  /** How long to wait before retrying, when known (Retry-After, or the endpoint's pause). */
  retryAfterMs?: number;
  cause?: unknown;
}

export class VendorError extends Error {
  override readonly name = 'VendorError';
  readonly kind: VendorErrorKind;
  readonly transient: boolean;
  readonly operation: VendorOperationName | 'createClient';
  readonly status: number;
  readonly code: string | undefined;
  readonly field: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(init: VendorErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.transient = TRANSIENT.has(init.kind);
    this.operation = init.operation;
    this.status = init.status ?? 0;
    this.code = init.code;
    this.field = init.field;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }
}

export const isVendorError = (err: unknown, kind?: VendorErrorKind): err is VendorError =>
  err instanceof VendorError && (kind === undefined || err.kind === kind);

/** The kind for an HTTP status that is a failure. */
export function kindForStatus(status: number): VendorErrorKind {
  if (status === 404) return 'NotFound';
  if (status === 401 || status === 403) return 'Unauthorized';
  if (status === 429) return 'RateLimited';
  if (status === 408) return 'Timeout';
  if (status >= 500) return 'Server';
  return 'Invalid';
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown; field?: unknown; requestId?: unknown };
}

/** Replaces every occurrence of `secret` in `text`. */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('[redacted]') : text;
}

/** Builds the error for a failed HTTP answer from its status, body text and Retry-After (ms). */
export function vendorErrorFromResponse(
  operation: VendorOperationName,
  status: number,
  bodyText: string,
  opts: { retryAfterMs?: number | undefined; requestId?: string | undefined; secret?: string | undefined } = {},
): VendorError {
  let parsed: ErrorBody | undefined;
  try {
    parsed = JSON.parse(bodyText) as ErrorBody;
  } catch {
    parsed = undefined;
  }
  const e = parsed?.error;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const code = str(e?.code);
  const field = str(e?.field);
  const requestId = str(e?.requestId) ?? opts.requestId;
  const detail = str(e?.message) ?? (bodyText.trim().slice(0, 200) || 'no details');
  const kind = kindForStatus(status);
  return new VendorError({
    kind,
    operation,
    status,
    message: redact(`vendor ${operation}: HTTP ${status}${code ? ` ${code}` : ''}: ${detail}`, opts.secret),
    ...(code ? { code } : {}),
    ...(field ? { field } : {}),
    ...(requestId ? { requestId } : {}),
    ...(opts.retryAfterMs !== undefined ? { retryAfterMs: opts.retryAfterMs } : {}),
  });
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/**
 * Builds the error for a call that got no answer. `timedOut` says the client's own deadline
 * fired. Only the failure's code and message survive as `cause` (never request options).
 */
export function vendorErrorFromException(operation: VendorOperationName, err: unknown, timedOut: boolean, timeoutMs: number, secret?: string): VendorError {
  const code = findCode(err);
  const text = redact(err instanceof Error ? err.message : String(err), secret);
  const cause = { code, message: text };
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new VendorError({ kind: 'Timeout', operation, message: `vendor ${operation}: no answer within ${timeoutMs} ms`, ...(code ? { code } : {}), cause });
  }
  return new VendorError({ kind: 'Network', operation, message: `vendor ${operation}: ${code ?? 'network error'}: ${text}`, ...(code ? { code } : {}), cause });
}

/** The most specific system code on an error or its causes (undici wraps socket errors). */
function findCode(err: unknown): string | undefined {
  let found: string | undefined;
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') found = code;
  }
  return found;
}
