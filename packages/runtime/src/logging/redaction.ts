/**
 * Removes secrets from anything about to be logged: values under secret-bearing keys at any
 * depth, the `data`/`stringData` of Secret objects, and errors reduced to a safe shape.
 * @module
 */

export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are never logged, compared case-insensitively with `-` and `_` removed
 * (so `client-key-data`, `client_key_data` and `clientKeyData` all match `clientkeydata`).
 */
const SECRET_KEYS = new Set([
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'bearertoken',
  'apikey',
  'xapikey',
  'password',
  'passwd',
  'passphrase',
  'clientsecret',
  'secretkey',
  'secretaccesskey',
  'privatekey',
  'clientkey',
  'clientkeydata',
  'clientcertificatedata',
  'stringdata',
  'credentials',
]);

const MAX_DEPTH = 12;

function normalizeKey(key: string): string {
  return key.replace(/[-_]/g, '').toLowerCase();
}

/** True when values under this key are never logged. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(normalizeKey(key));
}

/** A Kubernetes Secret (any group: a custom kind named Secret is treated alike, to be safe). */
function isSecretObject(value: Record<string, unknown>): boolean {
  return value.kind === 'Secret';
}

/**
 * Returns `value` with secrets replaced by `[REDACTED]`. Never mutates its input: objects are
 * copied only along the paths that change, so a clean object comes back as the same reference.
 * Errors become `serializeError(err)`; cycles become `[Circular]`; past depth 12, `[Truncated]`.
 */
export function redact(value: unknown): unknown {
  return walk(value, 0, new Set());
}

function walk(value: unknown, depth: number, ancestors: Set<object>): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return serializeError(value);
  if (ancestors.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  if (ArrayBuffer.isView(value) || value instanceof Date || value instanceof URL) return value;
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = walk(value[i], depth + 1, ancestors);
        if (v !== value[i]) (out ??= value.slice())[i] = v;
      }
      return out ?? value;
    }
    if (value instanceof Map) return walk(Object.fromEntries(value), depth, ancestors);
    const record = value as Record<string, unknown>;
    const secret = isSecretObject(record);
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(record)) {
      const v = record[key];
      let next: unknown;
      if (v === undefined || v === null || v === '') next = v;
      else if (isSecretKey(key) || (secret && (key === 'data' || key === 'binaryData'))) next = REDACTED;
      else next = walk(v, depth + 1, ancestors);
      if (next !== v) (out ??= { ...record })[key] = next;
    }
    return out ?? value;
  } finally {
    ancestors.delete(value);
  }
}

export interface SerializedError {
  type: string;
  message: string;
  stack?: string;
  /** ApiError / PermanentError / TemporaryError reason. */
  reason?: string;
  /** HTTP status code (ApiError) or a Node error code (`ECONNREFUSED`). */
  code?: number | string;
  /** Field causes of an `Invalid` answer. */
  causes?: unknown[];
  retryAfterMs?: number;
  cause?: SerializedError | string;
}

/**
 * An error as a log line may show it: type, message, stack, and a whitelist of plain fields
 * (`reason`, `code`, field `causes`, `retryAfterMs`), plus its `cause` chain (depth 5). Nothing
 * else is copied, so request options, headers, bodies or sockets hanging off library errors
 * never reach the output. Non-errors are redacted like any other value.
 */
export function serializeError(err: unknown, depth = 0): SerializedError {
  if (!(err instanceof Error)) {
    if (err && typeof err === 'object' && 'message' in err && 'type' in err) return redact(err) as SerializedError;
    return { type: typeof err, message: describe(err) };
  }
  const e = err as Error & { reason?: unknown; code?: unknown; causes?: unknown; retryAfterMs?: unknown };
  const out: SerializedError = { type: e.name || e.constructor?.name || 'Error', message: e.message };
  if (e.stack) out.stack = e.stack;
  if (typeof e.reason === 'string') out.reason = e.reason;
  if (typeof e.code === 'number' || typeof e.code === 'string') out.code = e.code;
  if (Array.isArray(e.causes) && e.causes.length > 0) out.causes = redact(e.causes) as unknown[];
  if (typeof e.retryAfterMs === 'number') out.retryAfterMs = e.retryAfterMs;
  if (e.cause !== undefined) {
    out.cause = depth >= 4 ? '[Truncated]' : e.cause instanceof Error ? serializeError(e.cause, depth + 1) : describe(e.cause);
  }
  return out;
}

function describe(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  try {
    return JSON.stringify(redact(value))?.slice(0, 1000) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
