/**
 * Flag parsing every command shares: `node:util` parseArgs in strict mode, `-h/--help` printing
 * the command's help to stdout (exit 0), and a usage error printed to stderr with the help
 * (exit 2): a one-line `converge <command>: …` message (parseArgs's own may span lines), a
 * blank line, the help. A caller returns `exitCode` when it is set.
 * @module
 */
import { parseArgs } from 'node:util';
import type { ParseArgsOptionsConfig } from 'node:util';
import { processIO } from './command-io.ts';
import type { CommandIO } from './command-io.ts';

const HELP_FLAG = { help: { type: 'boolean', short: 'h', default: false } } as const;

export function parseCommandArgs<const O extends ParseArgsOptionsConfig>(
  command: string,
  help: string,
  argv: string[],
  options: O,
  allowPositionals = false,
  io: Pick<CommandIO, 'stdout' | 'stderr'> = processIO,
) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, ...HELP_FLAG }, strict: true, allowPositionals });
  } catch (err) {
    io.stderr(`converge ${command}: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}\n\n${help}`);
    return { exitCode: 2 as const };
  }
  if ((parsed.values as { help?: boolean }).help) {
    io.stdout(help);
    return { exitCode: 0 as const };
  }
  return { ...parsed, exitCode: undefined };
}
