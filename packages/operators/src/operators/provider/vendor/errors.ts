/**
 * The vendor client's error taxonomy: every failed call becomes one `VendorError` whose `kind`
 * the reconciler branches on, and whose `transient` says whether retrying unchanged may help.
 *
 * | kind              | from                                              | transient | pauses the endpoint |
 * |-------------------|---------------------------------------------------|-----------|---------------------|
 * | NotFound          | 404                                               | no        | no                  |
 * | Unauthorized      | 401, 403 (other codes)                            | no        | no                  |
 * | AccountSuspended  | code `AccountSuspended` (403), or 402             | no        | no                  |
 * | QuotaExhausted    | code `QuotaExhausted` (429): one instance's day   | yes¹      | no                  |
 * | InstanceThrottled | code `InstanceThrottled` (429): one instance      | yes       | no                  |
 * | Invalid           | 400, 405, 409, 413, 422 and other 4xx; bad config | no        | no                  |
 * | RateLimited       | 429 (other codes); or the endpoint is paused      | yes       | yes (Retry-After, 1 s when absent) |
 * | Server            | 5xx; a status < 400 not accepted²; a bad answer³  | yes       | only with Retry-After |
 * | Timeout           | no answer within `timeoutMs`; 408                 | yes       | no                  |
 * | Network           | connection refused/reset, DNS, TLS failures       | yes       | no                  |
 *
 * ¹ after `retryAfterMs` (the quota day's reset). An account's suspension ends by a change
 * outside the cluster (someone pays), so it is not transient: the caller watches the account
 * (`getAccount`) rather than retrying the refused call.
 * ² a status the operation does not accept below 400, whatever the body says: a redirect (never
 * followed: from a proxy in between, most likely), a 204 or 201 where only 200 is accepted, an
 * unexpected 1xx. The vendor answered unexpectedly; nothing in the request is wrong, so it is
 * not `Invalid` (which waits for a change of the spec). Message: `unexpected answer (HTTP 302)`.
 * ³ a malformed success body, or an answer of any status larger than the client's
 * `maxResponseBytes` (16 MiB by default): not read further, its connection closed, message
 * `answer larger than N bytes`; its status and Retry-After still pause the endpoint as those of
 * an answer whose body is not JSON would (a 5xx's Retry-After, a 429's).
 *
 * Why the vendor's `error.code` decides before the status: a 429 `RateLimited` says "this
 * client is too fast for the endpoint" (slow down for every instance), a 429 `QuotaExhausted`
 * says "this instance has used its day" — pausing the whole endpoint for it would stop every
 * other instance's work for hours.
 *
 * Messages never contain the bearer token (redacted defensively even if a server echoes it);
 * the vendor's own words are bounded (`vendorText`). An untrusted server certificate names the
 * setting that fixes it (the client's `untrustedCertificateHint`).
 *
 * @module
 */
import type { VendorOperationName } from './types.ts';
import { redact, vendorText } from './vendor-text.ts';

export { redact } from './vendor-text.ts';

export type VendorErrorKind =
  | 'NotFound'
  | 'Unauthorized'
  | 'AccountSuspended'
  | 'QuotaExhausted'
  | 'InstanceThrottled'
  | 'RateLimited'
  | 'Invalid'
  | 'Server'
  | 'Timeout'
  | 'Network';

export const VENDOR_ERROR_KINDS: readonly VendorErrorKind[] = [
  'NotFound',
  'Unauthorized',
  'AccountSuspended',
  'QuotaExhausted',
  'InstanceThrottled',
  'RateLimited',
  'Invalid',
  'Server',
  'Timeout',
  'Network',
];

const TRANSIENT: ReadonlySet<VendorErrorKind> = new Set(['QuotaExhausted', 'InstanceThrottled', 'RateLimited', 'Server', 'Timeout', 'Network']);
const NO_ANSWER: ReadonlySet<VendorErrorKind> = new Set(['Server', 'Timeout', 'Network']);

/**
 * True for failures that say the vendor did not answer usefully (5xx, an unexpected, malformed
 * or oversized answer, timeout, network error); false for answers, including a 429 (the vendor
 * is up and asks us to slow down).
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

/**
 * The kind for a failed answer: `Server` for a status below 400 (an unexpected answer, whatever
 * its body says); else the vendor's `error.code` first (see the table), else the status.
 */
export function kindForStatus(status: number, code?: string): VendorErrorKind {
  if (status < 400) return 'Server';
  if (code === 'AccountSuspended' || status === 402) return 'AccountSuspended';
  if (code === 'QuotaExhausted') return 'QuotaExhausted';
  if (code === 'InstanceThrottled') return 'InstanceThrottled';
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

/**
 * How a failed answer throttles the whole endpoint: `rate-limit` (a 429 about this client's pace:
 * honour Retry-After, 1 s when absent), `server` (a 5xx: honour Retry-After only when given), or
 * undefined (an answer about one instance or one request: the endpoint goes on).
 */
export function endpointPause(status: number, code: string | undefined): 'rate-limit' | 'server' | undefined {
  if (status === 429) return code === 'QuotaExhausted' || code === 'InstanceThrottled' ? undefined : 'rate-limit';
  return status >= 500 ? 'server' : undefined;
}

/** The `error.code` of a standard error body, or undefined (never throws). */
export function errorCodeOf(bodyText: string): string | undefined {
  try {
    const code = (JSON.parse(bodyText) as ErrorBody)?.error?.code;
    return typeof code === 'string' && code !== '' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A short identifier the vendor sent (an error code, a field name, a request id) as it may go
 * into an error: `vendorText` (one line, bounded, redacted); undefined when absent, not a
 * string, or empty once cleaned.
 */
export function vendorField(value: unknown, secret?: string, max = 64): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return vendorText(value, secret, max) || undefined;
}

/**
 * Builds the error for a failed HTTP answer from its status, body text and Retry-After (ms). A
 * status below 400 is an unexpected answer (`Server`): its body is no error body and is not read.
 */
export function vendorErrorFromResponse(
  operation: VendorOperationName,
  status: number,
  bodyText: string,
  opts: { retryAfterMs?: number | undefined; requestId?: string | undefined; secret?: string | undefined } = {},
): VendorError {
  if (status < 400) {
    const requestId = vendorField(opts.requestId, opts.secret, 128);
    return new VendorError({
      kind: 'Server',
      operation,
      status,
      message: `vendor ${operation}: unexpected answer (HTTP ${status})`,
      ...(requestId ? { requestId } : {}),
      ...(opts.retryAfterMs !== undefined ? { retryAfterMs: opts.retryAfterMs } : {}),
    });
  }
  let parsed: ErrorBody | undefined;
  try {
    parsed = JSON.parse(bodyText) as ErrorBody;
  } catch {
    parsed = undefined;
  }
  const e = parsed?.error;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  // The vendor's code, field and request id are its words too: one bounded line, never the token.
  const code = vendorField(e?.code, opts.secret);
  const field = vendorField(e?.field, opts.secret);
  const requestId = vendorField(e?.requestId, opts.secret, 128) ?? vendorField(opts.requestId, opts.secret, 128);
  // Only the first 200 characters survive, so a large body (an HTML error page) is cut early.
  const detail = vendorText((str(e?.message) ?? bodyText).slice(0, 4096), opts.secret) || 'no details';
  const kind = kindForStatus(status, code);
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

/** OpenSSL's codes for "no trusted CA signed this certificate". */
const UNTRUSTED_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/** What a person does about an untrusted certificate when the caller says nothing more specific. */
export const DEFAULT_UNTRUSTED_HINT = "pass the PEM of the CA that signed it as the client's `ca`";

/**
 * Builds the error for a call that got no answer. `timedOut` says the client's own deadline
 * fired; `untrustedHint` says how to trust the vendor's CA (an untrusted certificate gets it
 * instead of Node's generic advice). Only the failure's code and message survive as `cause`
 * (never request options).
 */
export function vendorErrorFromException(
  operation: VendorOperationName,
  err: unknown,
  timedOut: boolean,
  timeoutMs: number,
  secret?: string,
  untrustedHint = DEFAULT_UNTRUSTED_HINT,
): VendorError {
  const code = findCode(err);
  // One bounded line: an HTTP library's message can span lines (undici's internal assertions do).
  const text = vendorText(err instanceof Error ? err.message : typeof err === 'string' ? err : 'unknown failure', secret, 300);
  const cause = { code, message: text };
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new VendorError({ kind: 'Timeout', operation, message: `vendor ${operation}: no answer within ${timeoutMs} ms`, ...(code ? { code } : {}), cause });
  }
  if (code !== undefined && UNTRUSTED_CODES.has(code)) {
    return new VendorError({ kind: 'Network', operation, code, cause, message: `vendor ${operation}: the vendor's TLS certificate is not signed by a trusted CA (${code}): ${untrustedHint}` });
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return new VendorError({ kind: 'Network', operation, code, cause, message: `vendor ${operation}: the vendor's TLS certificate is ${code === 'CERT_HAS_EXPIRED' ? 'expired' : 'not valid yet'} (${code}); the vendor must renew it (or this machine's clock is wrong)` });
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return new VendorError({ kind: 'Network', operation, code, cause, message: `vendor ${operation}: the vendor's TLS certificate is not for this host (${code}): check the host in spec.endpoint` });
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
