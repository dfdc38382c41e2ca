/**
 * The client's error taxonomy: every failed API call becomes an `ApiError` whose `reason`
 * code can branch on. Network failures and timeouts are `ApiError`s too, so a caller never
 * has to inspect Node's errors.
 * @module
 */
import { parseRetryAfterMs } from '../external/retry-after.ts';

export type ApiErrorReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Gone'
  /**
   * 504 "Too large resource version": the API server's history is behind the resourceVersion
   * asked for (etcd restored from a backup, or a lagging watch cache). Relist from "".
   */
  | 'ResourceVersionTooLarge'
  | 'TooManyRequests'
  | 'Forbidden'
  | 'Unauthorized'
  | 'ServerError'
  | 'Timeout'
  | 'Network';

/** One field problem reported by the API server with an `Invalid` answer. */
export interface FieldCause {
  field?: string;
  /** The cause's type (`FieldValueInvalid`, `ResourceVersionTooLarge`, …), serialized as `reason`. */
  reason?: string;
  message?: string;
}

/** The `metav1.Status` body the API server sends with a failure. */
export interface ApiStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; causes?: FieldCause[]; retryAfterSeconds?: number };
  /**
   * `continue`: with a 410 for a list page whose continue token was compacted away, a token to go
   * on with from the same key, at the latest version (the rest of the list is then not consistent
   * with its first pages).
   */
  metadata?: { continue?: string };
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly reason: ApiErrorReason;
  /** HTTP status code; 0 for network failures and client-side timeouts. */
  readonly code: number;
  /** Field causes of an `Invalid` answer. */
  readonly causes: FieldCause[];
  /** How long the server asked us to wait (Retry-After), in milliseconds. */
  readonly retryAfterMs: number | undefined;
  readonly status: ApiStatus | undefined;

  constructor(init: {
    reason: ApiErrorReason;
    code: number;
    message: string;
    causes?: FieldCause[];
    retryAfterMs?: number;
    status?: ApiStatus;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.reason = init.reason;
    this.code = init.code;
    this.causes = init.causes ?? [];
    this.retryAfterMs = init.retryAfterMs;
    this.status = init.status;
  }

  /** True for failures that may succeed when retried unchanged. */
  get transient(): boolean {
    return TRANSIENT.has(this.reason) && !isFieldManagerConflict(this);
  }
}

const TRANSIENT = new Set<ApiErrorReason>(['Conflict', 'TooManyRequests', 'ServerError', 'Timeout', 'Network', 'Gone', 'ResourceVersionTooLarge']);

/** The longest wait a Retry-After (header or `details.retryAfterSeconds`) is taken for: 5 minutes. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** The longest message an `ApiError` carries; a longer one is cut and marked with `…`. */
const MAX_MESSAGE = 4_096;

/**
 * Maps an HTTP answer (status code, parsed body, Retry-After header) to an `ApiError`. The body
 * is read defensively: it may come from a proxy or an aggregated API server rather than
 * kube-apiserver, so a `Status` field of the wrong type is left out rather than trusted (never
 * an exception here), the message is bounded, and a wait is taken only from a readable
 * Retry-After (`parseRetryAfterMs`) or an integer `details.retryAfterSeconds`, at most
 * `MAX_RETRY_AFTER_MS`.
 */
export function apiErrorFromResponse(code: number, body: unknown, retryAfterHeader?: string | null): ApiError {
  const status = statusOf(body);
  const statusReason = status?.reason;
  let reason: ApiErrorReason;
  if (code === 404) reason = 'NotFound';
  else if (code === 409) reason = statusReason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
  else if (code === 422) reason = 'Invalid';
  else if (code === 410) reason = 'Gone';
  else if (code === 429) reason = 'TooManyRequests';
  else if (code === 403) reason = 'Forbidden';
  else if (code === 401) reason = 'Unauthorized';
  else if (code === 400) reason = statusReason === 'Invalid' ? 'Invalid' : 'BadRequest';
  else if (isTooLargeResourceVersion(code, status)) reason = 'ResourceVersionTooLarge';
  else if (code === 504 || statusReason === 'Timeout') reason = 'Timeout';
  else reason = 'ServerError';
  const retryAfterDetails = status?.details?.retryAfterSeconds;
  const retryAfterMs = parseRetryAfterMs(retryAfterHeader, Date.now()) ?? (retryAfterDetails === undefined ? undefined : retryAfterDetails * 1000);
  const text = status?.message || (typeof body === 'string' && body ? body : `HTTP ${code}`);
  return new ApiError({
    reason,
    code,
    message: text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text,
    causes: status?.details?.causes ?? [],
    ...(retryAfterMs === undefined ? {} : { retryAfterMs: Math.min(retryAfterMs, MAX_RETRY_AFTER_MS) }),
    ...(status ? { status } : {}),
  });
}

/**
 * The error a watch's `ERROR` event carries (a `Status` in place of an object). Its `code` is
 * taken when it is an HTTP status; else (a proxy or an aggregated server that wrote it some other
 * way) a reason `Expired` or `Gone` stands for 410, as client-go reads those reasons, so the
 * watcher relists instead of resuming from a version the server no longer has; else 500.
 */
export function apiErrorFromWatchEvent(object: unknown): ApiError {
  const { code, reason } = (typeof object === 'object' && object !== null ? object : {}) as { code?: unknown; reason?: unknown };
  const http = typeof code === 'number' && Number.isInteger(code) && code >= 100 && code <= 599 ? code : undefined;
  return apiErrorFromResponse(http ?? (reason === 'Expired' || reason === 'Gone' ? 410 : 500), object);
}

/**
 * client-go's test: a Timeout whose causes include `ResourceVersionTooLarge`, or (API servers
 * 1.17–1.18.5 set no cause) whose message says so.
 */
function isTooLargeResourceVersion(code: number, status: ApiStatus | undefined): boolean {
  if (!status) return false;
  if (status.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  return (code === 504 || status.reason === 'Timeout') && /Too large resource version/i.test(status.message ?? '');
}

/** The body as a `Status`, with only the fields of the types the API defines; undefined for any other body. */
function statusOf(body: unknown): ApiStatus | undefined {
  if (typeof body !== 'object' || body === null || (body as { kind?: unknown }).kind !== 'Status') return undefined;
  const b = body as Record<string, unknown>;
  const out: ApiStatus = { kind: 'Status' };
  if (typeof b.status === 'string') out.status = b.status;
  if (typeof b.message === 'string') out.message = b.message;
  if (typeof b.reason === 'string') out.reason = b.reason;
  if (Number.isInteger(b.code)) out.code = b.code as number;
  const meta = b.metadata as Record<string, unknown> | null | undefined;
  if (typeof meta === 'object' && meta !== null && typeof meta.continue === 'string' && meta.continue) out.metadata = { continue: meta.continue };
  if (typeof b.details === 'object' && b.details !== null) {
    const d = b.details as Record<string, unknown>;
    const details: NonNullable<ApiStatus['details']> = {};
    if (typeof d.name === 'string') details.name = d.name;
    if (typeof d.kind === 'string') details.kind = d.kind;
    if (Array.isArray(d.causes)) details.causes = d.causes.filter((c): c is object => typeof c === 'object' && c !== null && !Array.isArray(c)).map(causeOf);
    if (Number.isSafeInteger(d.retryAfterSeconds) && (d.retryAfterSeconds as number) >= 0) details.retryAfterSeconds = d.retryAfterSeconds as number;
    out.details = details;
  }
  return out;
}

function causeOf(c: object): FieldCause {
  const { field, reason, message } = c as Record<string, unknown>;
  return {
    ...(typeof field === 'string' ? { field } : {}),
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(typeof message === 'string' ? { message } : {}),
  };
}

/**
 * Seconds from a Retry-After header (`parseRetryAfterMs`, rounded up), at most
 * `MAX_RETRY_AFTER_MS`; undefined when absent or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  const ms = parseRetryAfterMs(header, nowMs);
  return ms === undefined ? undefined : Math.ceil(Math.min(ms, MAX_RETRY_AFTER_MS) / 1000);
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.reason === 'NotFound';
export const isAlreadyExists = (e: unknown): boolean => e instanceof ApiError && e.reason === 'AlreadyExists';
export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.reason === 'Conflict';

/**
 * A Server-Side Apply refused because another field manager owns a field it sets (409 with the
 * cause `FieldManagerConflict`). Unlike an optimistic-lock conflict, reading again does not help:
 * the same apply is refused the same way until it gives the field up, forces, or the other
 * manager lets go.
 */
export const isFieldManagerConflict = (e: unknown): boolean =>
  e instanceof ApiError && e.reason === 'Conflict' && e.causes.some((c) => c.reason === 'FieldManagerConflict');
export const isInvalid = (e: unknown): boolean => e instanceof ApiError && e.reason === 'Invalid';
export const isGone = (e: unknown): boolean => e instanceof ApiError && e.reason === 'Gone';
export const isResourceVersionTooLarge = (e: unknown): boolean => e instanceof ApiError && e.reason === 'ResourceVersionTooLarge';
export const isForbidden = (e: unknown): boolean => e instanceof ApiError && e.reason === 'Forbidden';

/**
 * The API server refused to create something in a namespace that is being deleted (403 with the
 * cause `NamespaceTerminating`, client-go's `HasStatusCause(err, NamespaceTerminatingCause)`; API
 * servers before 1.19 set no cause, only the message). Nothing can be created there any more and
 * everything in it is on its way out: an expected state, not a failure.
 */
export function isNamespaceTerminating(e: unknown): boolean {
  if (!(e instanceof ApiError) || e.reason !== 'Forbidden') return false;
  return e.causes.some((c) => c.reason === 'NamespaceTerminating') || /because it is being terminated/.test(e.message);
}
