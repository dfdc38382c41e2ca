/**
 * Flag parsing every command shares: `node:util` parseArgs in strict mode, `-h/--help` printing
 * the command's help to stdout (exit 0), and a usage error printed to stderr with the help
 * (exit 2): a one-line `converge <command>: …` message (parseArgs's own may span lines), a
 * blank line, the help. A caller returns `exitCode` when it is set. A short flag written with
 * `=` (`-n=team-a`) takes what follows the `=`, as kubectl's flags do (Node's parser would read
 * `=team-a`).
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
    parsed = parseArgs({ args: shortEquals(argv, options), options: { ...options, ...HELP_FLAG }, strict: true, allowPositionals });
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

/** `-n=value` → `-n value` for a short flag that takes a value, up to `--` (pflag's reading). */
function shortEquals(argv: readonly string[], options: ParseArgsOptionsConfig): string[] {
  const valued = new Set(Object.values(options).filter((o) => o.type === 'string' && o.short).map((o) => o.short));
  const end = argv.indexOf('--');
  return argv.flatMap((word, i) => {
    const m = /^-([^-])=(.*)$/s.exec(word);
    return m && valued.has(m[1]!) && (end === -1 || i < end) ? [`-${m[1]}`, m[2]!] : [word];
  });
}
