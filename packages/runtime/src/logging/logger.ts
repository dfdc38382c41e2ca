/**
 * `createLogger`: the runtime's pino logger (JSON lines, secrets redacted), and
 * `childLoggerFor`: the per-reconcile child logger.
 * @module
 */
import { hostname } from 'node:os';
import { loadOnFirstUse } from '../loading/index.ts';
import type { Logger, DestinationStream, LevelWithSilent, LogFn } from 'pino';

/** pino is loaded by the first `createLogger`, not when the runtime is imported. */
let pinoModule: typeof import('pino') | undefined;
import { redact, serializeError } from './redaction.ts';

export type LogLevel = LevelWithSilent;

export interface LoggerOptions {
  /** `trace` | `debug` | `info` | `warn` | `error` | `fatal` | `silent` (default `info`). */
  level?: LogLevel | string;
  /** Logged as the `logger` field of every line (not pino's `name`, which would clash with the object name). */
  name?: string;
  /** Where lines go: a stream with `write(line)` (default stdout, synchronously). */
  destination?: DestinationStream;
  /** Extra fields on every line. Redacted like everything else. */
  base?: Record<string, unknown>;
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/**
 * A pino logger writing one JSON object per line. Every merged object and every child binding
 * passes through `redact` (secret-bearing keys at any depth, Secret `data`/`stringData`); errors,
 * under any key, are reduced by `serializeError` (no headers, bodies or sockets).
 * Throws a RangeError for an unknown level.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = (options.level ?? 'info').toLowerCase();
  if (!LEVELS.has(level)) throw new RangeError(`unknown log level ${JSON.stringify(options.level)}; use one of ${[...LEVELS].join(', ')}`);
  const base = redact({ pid: process.pid, hostname: hostname(), ...(options.name ? { logger: options.name } : {}), ...options.base }) as Record<string, unknown>;
  const { pino } = (pinoModule ??= loadOnFirstUse<typeof import('pino')>('pino'));
  const logger = pino(
    {
      level,
      base,
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      errorKey: 'err',
      serializers: { err: serializeError, error: serializeError },
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => redact(obj) as Record<string, unknown>,
        bindings: (bindings) => redact(bindings) as Record<string, unknown>,
      },
      hooks: {
        // Before any formatter runs, pino reads `message`, `method`, `headers`… of an error logged
        // first, and `err.message` for a line without a message: a getter or Proxy trap that throws
        // there escaped the log call. Give pino the serialized error (and the message it would take).
        logMethod(args, method) {
          const call = (a: unknown[]): void => method.apply(this, a as Parameters<LogFn>);
          const [first, ...rest] = args as unknown[];
          try {
            if (first instanceof Error) {
              const err = serializeError(first);
              return call([{ err }, ...(rest.length > 0 ? rest : [err.message])]);
            }
            if (rest.length === 0 && typeof first === 'object' && first !== null && 'err' in first) return call([redact(first)]);
            return call(args);
          } catch {
            // A first argument pino reads before any formatter (`instanceof`, `method`, `err`…)
            // threw: a revoked Proxy, a throwing trap or getter. pino writes nothing when that
            // happens; log what redaction can read of it instead (it never throws).
            return call(readableArgs(first, rest));
          }
        },
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
  // pino applies `formatters.bindings` to the root only; children (and theirs, which inherit
  // this method through the prototype chain) get their bindings redacted here.
  const child = logger.child;
  const setBindings = logger.setBindings;
  Object.assign(logger, {
    child(this: Logger, bindings: Record<string, unknown>, opts?: unknown) {
      return child.call(this, plainBindings(bindings), opts as never);
    },
    setBindings(this: Logger, bindings: Record<string, unknown>) {
      setBindings.call(this, plainBindings(bindings));
    },
  });
  return logger;
}

/** A log call's arguments as plain data: the merge object redacted, format arguments redacted unless text. */
function readableArgs(first: unknown, rest: unknown[]): unknown[] {
  const merge = redact(first);
  const args = rest.map((a) => (typeof a === 'string' ? a : redact(a)));
  return [typeof merge === 'object' && merge !== null ? merge : { value: merge }, ...args];
}

/**
 * Bindings redacted, as a plain object: pino calls `bindings.hasOwnProperty(key)`, which threw for
 * a null-prototype object or a binding named `hasOwnProperty` (that one is dropped).
 */
function plainBindings(bindings: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(redact(bindings) as Record<string, unknown>) };
  Reflect.deleteProperty(out, 'hasOwnProperty');
  return out;
}

/**
 * The logger of one reconcile: `controller`, `namespace`, `name` and `reconcileID` on every line
 * (controller-runtime's field names, so existing log queries keep working).
 */
export function childLoggerFor(
  parent: Logger,
  controller: string,
  request: { namespace: string; name: string },
  reconcileId: string,
): Logger {
  return parent.child({ controller, namespace: request.namespace, name: request.name, reconcileID: reconcileId });
}
