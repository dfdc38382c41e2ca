/**
 * The `--log-level` flag every long-running command takes: one list of accepted levels, which
 * the help texts print and the commands check before starting anything, so the help never
 * lists fewer levels than are accepted and a typo is a usage error (exit 2), not a crash.
 * @module
 */

/** What `--log-level` accepts: pino's levels, least severe first, and `silent` (nothing). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type CliLogLevel = (typeof LOG_LEVELS)[number];

/** `trace|debug|info|warn|error|fatal|silent`, for help texts. */
export const LOG_LEVEL_CHOICES = LOG_LEVELS.join('|');

/** The usage error for a level that is not accepted, or undefined when it is (case-insensitive, as the logger takes it). */
export function logLevelError(command: string, value: string): string | undefined {
  if ((LOG_LEVELS as readonly string[]).includes(value.toLowerCase())) return undefined;
  return `converge ${command}: unknown --log-level "${value}"; use one of ${LOG_LEVEL_CHOICES}\n`;
}
