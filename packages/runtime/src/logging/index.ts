/**
 * Structured logs for the runtime and its operators: pino JSON lines with secrets removed.
 *
 * Guarantees:
 * - One JSON object per line, with `level` as a label, `time` in ISO 8601, `msg`, `pid`, `hostname`, and
 *   `logger` when a name is given. The level is configurable; an unknown level throws.
 * - Values under secret-bearing keys (authorization, cookie, token, password, apiKey,
 *   client-key-data, keyData, stringData, credentials, … — at any depth, any case, `-`/`_`
 *   ignored), the `data`/`binaryData` of any object whose `kind` is `Secret` (and of the `items`
 *   of a `SecretList`, which the API server sends without their kind), and the `value` of every
 *   entry of an `env` list (an exec credential plugin's `{ name, value }` pairs, a container's;
 *   the names stay) are written as `[REDACTED]`, in log calls and child bindings alike. The
 *   caller's objects are never mutated.
 * - Errors, under any key, are logged as `{type, message, stack, reason, code, causes,
 *   retryAfterMs, cause}` only: request options, headers and bodies that libraries hang on
 *   their errors are never copied.
 * - `childLoggerFor` adds `controller`, `namespace`, `name`, `reconcileID` (controller-runtime's
 *   names) for the lines of one reconcile.
 *
 * Caveats: redaction works on structure, not on text. A secret interpolated into a message
 * string (`log.info(\`token ${t}\`)`) or into an error message is written as is: pass values as
 * fields, never format them into messages. Text that must be quoted although it may hold
 * credentials (a plugin's stderr, a vendor's message) goes through `scrubCredentials` first, a
 * heuristic (its own caveats). Logging walks every logged object (copy-on-write),
 * so logging whole large objects at high rates costs CPU; log keys and reasons instead.
 * @module
 */
export { createLogger, childLoggerFor } from './logger.ts';
export type { LoggerOptions, LogLevel } from './logger.ts';
export { redact, serializeError, describeError, isSecretKey, scrubCredentials, REDACTED } from './redaction.ts';
export type { SerializedError } from './redaction.ts';
export type { Logger } from 'pino';
