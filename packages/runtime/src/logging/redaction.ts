/**
 * Removes secrets from anything about to be logged: values under secret-bearing keys at any
 * depth, the `data`/`stringData` of Secret objects (also the kind-less `items` of a `SecretList`, as
 * the API server sends them), the values of `env` lists of `{ name, value }` entries (an exec
 * credential plugin's, a container's), and errors reduced to a safe shape.
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
  // `KubeConfigUser.keyData`: the runtime's own name for `client-key-data`.
  'keydata',
  'clientcertificatedata',
  'stringdata',
  'credentials',
]);

const MAX_DEPTH = 12;
/** Longer arrays are walked by the indices they have: a sparse one may be 2^32-1 long. */
const LONG_ARRAY = 65_536;

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
 * What the walk knows of a value from its container: the `items` of a `SecretList` (which the API
 * server sends without their kind) are Secrets; the entries of an `env` list are `{ name, value }`
 * pairs whose value may be a credential (`AWS_SECRET_ACCESS_KEY`), whatever the name says.
 */
type Known = 'secret' | 'secret-items' | 'env-list' | 'env-entry' | undefined;

/**
 * Returns `value` with secrets replaced by `[REDACTED]`. Never mutates its input: objects are
 * copied only along the paths that change, so a clean object comes back as the same reference.
 * Errors become `serializeError(err)`; cycles become `[Circular]`; past depth 12, `[Truncated]`;
 * an object that throws when read (a getter, a Proxy trap, a revoked Proxy), `[Unreadable]`.
 * An object with a `toJSON` method is redacted as what that method returns (what is written).
 * Never throws.
 */
export function redact(value: unknown): unknown {
  return walk(value, 0, new Set());
}

/**
 * What a thrown value says, as text; never throws: an Error's message (of any realm), anything
 * else as `String()` has it, and `fallback` for a value that cannot be printed (a Proxy whose traps
 * throw, an object whose `toString` throws, even throws itself, an Error whose `message` getter
 * throws). For catch blocks that must not throw again.
 */
export function describeError(err: unknown, fallback = 'unprintable error'): string {
  try {
    return isError(err) ? String(err.message) : String(err);
  } catch {
    return fallback;
  }
}

/**
 * Credentials taken out of free text meant for a person (an exec plugin's stderr, a vendor's
 * message), the rest kept as it is, so the text still says what went wrong. Replaced by
 * `[redacted]`:
 * - the value after a key naming a credential (one containing token, secret, password, passwd,
 *   passphrase, api-key, access-key, private-key, client-key, key-data, credential,
 *   authorization, cookie or session, any case, up to 64 characters), written `key=value`,
 *   `key: value`, `"key": "value"` or `key='a b'`; a `Bearer`/`Basic` scheme before it is kept;
 * - the word after `Bearer`;
 * - JWTs (`eyJ….….…`), and runs of 32 or more base64/base64url characters mixing upper case,
 *   lower case and digits (a key, a random token).
 *
 * Guarantees: never throws; linear in the length of `text` (no backtracking blow-up); what it
 * returns is `text` where it found nothing.
 * Caveats: a heuristic. A credential without a telling key or shape (`the password is hunter2`,
 * 40 hex digits, a run without one of the three character classes) stays; so can one behind a
 * key longer than 64 characters. Prefer never quoting untrusted text where it is not needed.
 */
export function scrubCredentials(text: string): string {
  return text
    .replace(KEYED_CREDENTIAL, (_m, key: string, scheme: string | undefined) => `${key}${scheme ?? ''}${SCRUBBED}`)
    .replace(BEARER, `$1${SCRUBBED}`)
    .replace(JWT, SCRUBBED)
    .replace(LONG_RUN, (run) => (/[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run) ? SCRUBBED : run));
}

const SCRUBBED = '[redacted]';
/**
 * A key (a whole run of word characters, `.` and `-`, at most 64, one of which spells a
 * credential: checked by a lookahead that cannot leave the run), its separator, an optional
 * scheme, and the value: quoted (bounded, one line) or up to a space, comma, semicolon, quote or `&`.
 */
const KEYED_CREDENTIAL =
  /(?<![\w.-])((?=[\w.-]{0,63}?(?:token|secret|passw(?:or)?d|passphrase|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?key|key[_-]?data|credential|authorization|cookie|session))[\w.-]{1,64}["']?\s*[=:]\s*)((?:bearer|basic)\s+)?(?:"[^"\n]{0,1024}"|'[^'\n]{0,1024}'|["']?[^\s,;"'&]+)/gi;
const BEARER = /\b(bearer\s+)(?!\[redacted\])[^\s,;"']+/gi;
const JWT = /\beyJ[\w-]{2,}\.[\w-]{2,}\.[\w-]*/g;
const LONG_RUN = /[A-Za-z0-9+/_-]{32,}={0,2}/g;

/** An Error of this realm or of another one (a `vm` context), which `instanceof` misses. */
function isError(value: unknown): value is Error {
  try {
    return value instanceof Error || Object.prototype.toString.call(value) === '[object Error]';
  } catch {
    return false; // a Proxy whose traps throw
  }
}

function walk(value: unknown, depth: number, ancestors: Set<object>, known?: Known): unknown {
  if (value === null || typeof value !== 'object') return value;
  try {
    return walkObject(value, depth, ancestors, known);
  } catch {
    return '[Unreadable]';
  }
}

function walkObject(value: object, depth: number, ancestors: Set<object>, known: Known): unknown {
  if (isError(value)) return serializeError(value);
  if (ancestors.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  if (ArrayBuffer.isView(value) || value instanceof Date || value instanceof URL) return value;
  ancestors.add(value);
  try {
    const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      const json: unknown = toJSON.call(value);
      if (json !== value) {
        const out = walk(json, depth + 1, ancestors);
        return out === json ? value : out;
      }
    }
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      // Visiting (or slicing) every slot of a long sparse array would hang.
      const long = value.length > LONG_ARRAY;
      const indices = long ? Object.keys(value).map(Number).filter(Number.isInteger) : undefined;
      for (let n = 0; n < (indices?.length ?? value.length); n++) {
        const i = indices ? indices[n]! : n;
        const v = walk(value[i], depth + 1, ancestors, known === 'secret-items' ? 'secret' : known === 'env-list' ? 'env-entry' : undefined);
        if (v !== value[i]) (out ??= long ? Object.assign(new Array<unknown>(value.length), value) : value.slice())[i] = v;
      }
      return out ?? value;
    }
    if (value instanceof Map) return walk(Object.fromEntries(value), depth, ancestors, known);
    const record = value as Record<string, unknown>;
    const secret = known === 'secret' || isSecretObject(record);
    const secretList = record.kind === 'SecretList';
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(record)) {
      const v = record[key];
      let next: unknown;
      if (v === undefined || v === null || v === '') next = v;
      else if (isSecretKey(key) || (secret && (key === 'data' || key === 'binaryData')) || (known === 'env-entry' && key === 'value')) next = REDACTED;
      else next = walk(v, depth + 1, ancestors, secretList && key === 'items' ? 'secret-items' : normalizeKey(key) === 'env' ? 'env-list' : undefined);
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
  try {
    if (!isError(err)) {
      if (err && typeof err === 'object' && 'message' in err && 'type' in err) return redact(err) as SerializedError;
      return { type: typeof err, message: describe(err) };
    }
    // An error reached again through its own `causes` or `cause` (a cycle).
    if (serializing.has(err)) return { type: 'Error', message: '[Circular]' };
    serializing.add(err);
    try {
      const e = err as Error & { reason?: unknown; code?: unknown; causes?: unknown; retryAfterMs?: unknown };
      const out: SerializedError = { type: text(e.name || e.constructor?.name || 'Error'), message: text(e.message) };
      if (e.stack) out.stack = text(e.stack);
      if (typeof e.reason === 'string') out.reason = e.reason;
      if (typeof e.code === 'number' || typeof e.code === 'string') out.code = e.code;
      if (Array.isArray(e.causes) && e.causes.length > 0) out.causes = redact(e.causes) as unknown[];
      if (typeof e.retryAfterMs === 'number') out.retryAfterMs = e.retryAfterMs;
      if (e.cause !== undefined) {
        out.cause = depth >= 4 ? '[Truncated]' : isError(e.cause) ? serializeError(e.cause, depth + 1) : describe(e.cause);
      }
      return out;
    } finally {
      serializing.delete(err);
    }
  } catch {
    // A getter or Proxy trap that throws.
    return { type: 'Error', message: '[Unreadable]' };
  }
}

/** The errors `serializeError` is inside of. */
const serializing = new Set<object>();

/** `type`, `message` and `stack` are text; anything else (a library's odd error) is redacted into text. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : describe(value);
}

function describe(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  try {
    return JSON.stringify(redact(value))?.slice(0, 1000) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
