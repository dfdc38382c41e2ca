#!/usr/bin/env node
/**
 * `converge`: the command line. Each command lives in `commands/<name>.ts` and exports
 * `run(argv): Promise<number>` (the exit code); this file only dispatches.
 *
 * Conventions every command keeps: `--help` (usage on stdout, exit 0), errors on stderr with a
 * non-zero exit code (a usage error, the command's missing included: exit 2 with nothing on
 * stdout), colours only on a TTY, `--kubeconfig` and `KUBECONFIG` honoured as kubectl does.
 * Output nobody reads ends the command here: a reader that went away (`converge … | head -1`)
 * quietly, with the exit code so far; any other write error (a full disk) with one line on
 * stderr and exit 1 — never Node's crash report.
 * @module
 */
import { stopSignal } from './shared/stop-signal.ts';
import { nodeVersionProblem } from './shared/node-version.ts';

const COMMANDS: Record<string, string> = {
  dev: 'start the local control plane, the vendor simulator and both operators, apply the samples, show a live table',
  run: 'run the operators against a cluster (in-cluster or --kubeconfig)',
  status: 'show Microservices and DigitalHumanProviders with rollout detail and reasons',
  explain: 'explain why an object is or is not converged',
  providers: 'list the DigitalHumanProviders usable now, best first (the upstream\'s pick)',
  dashboard: 'serve a live web page and a read-only JSON API over one or more clusters',
  cluster: 'run the local Kubernetes control plane (cluster up --kubeconfig <path>)',
  'vendor-sim': 'run the vendor API simulator',
  crds: 'print or apply the CustomResourceDefinitions',
  manifests: 'print or apply the deployment manifests (namespace or cluster mode)',
  uninstall: 'remove the install (operator, RBAC, namespace; CRDs with --crds), checked to strand nothing',
  init: 'create a new operator project on @converge/runtime (schema, CRD, reconciler, tests)',
  'migrate-storage': 'rewrite stored objects in the storage version and prune status.storedVersions',
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'Usage: converge <command> [flags]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`),
    '',
    'Run `converge <command> --help` for the flags of a command.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const tooOld = nodeVersionProblem();
  if (tooOld) {
    process.stderr.write(tooOld);
    return 1;
  }
  const [command, ...rest] = argv;
  if (!command) {
    // No command is a usage error: the usage goes to stderr, so stdout stays empty for a pipe.
    process.stderr.write(`converge: missing command\n\n${usage()}\n`);
    return 2;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    process.stderr.write(`converge: unknown command "${command}"\n\n${usage()}\n`);
    return 2;
  }
  // `run` lives in a pod: take SIGTERM as a graceful stop from now on, also while it loads.
  if (command === 'run' || command === 'migrate-storage' || command === 'dashboard') stopSignal();
  running = command;
  const module = (await import(`./commands/${command}.ts`)) as { run(argv: string[]): Promise<number> };
  return module.run(rest);
}

/** The command running, for the line of an error no command reported itself. */
let running = '';

/**
 * An output can no longer be written: stdout (its reader gone, EPIPE: quiet; a full disk: one line
 * on stderr) or stderr (a closed terminal: nothing can be said; only the exit code tells). Writes
 * to it become no-ops. A command that runs until stopped (it listens for SIGTERM: `dev`,
 * `vendor-sim`, `status --watch`, `vendor-sim fault --for`) finishes the stop it is in, or is
 * stopped as SIGTERM stops it when stdout went, so it tears down what it started (the control
 * plane, a temp folder, the faults it set) before the process ends, at most 20 s later; any other
 * command ends at once (it holds nothing to undo).
 */
function outputGone(stream: NodeJS.WriteStream, code: number, stopTheCommand: boolean): void {
  stream.write = () => true;
  if (process.listenerCount('SIGTERM') === 0) process.exit(code);
  if (code !== 0) process.exitCode = code;
  setTimeout(() => process.exit(code), 20_000).unref();
  if (stopTheCommand) stopAsSigterm();
}

/** Whether this process emitted SIGTERM to its own listeners already (a second would be a hard stop). */
let stopAsked = false;
function stopAsSigterm(): void {
  if (stopAsked) return;
  stopAsked = true;
  process.emit('SIGTERM', 'SIGTERM');
}

// A closed terminal (SIGHUP) stops a long-running command as SIGTERM does, so that it tears down
// what it started (the faults of `vendor-sim fault --for`, the control plane of `dev`), at most
// 20 s; any other command ends as SIGHUP's default ends it. Under `nohup` too: Node resets every
// signal's disposition at start (SIGHUP to its default), so `nohup`'s ignore never reached the
// command; it ended at the hangup either way, and now tears down first. The listener stays while
// the stop runs (another SIGHUP is nothing new; and other SIGHUP hooks, such as the control
// plane's, must see that SIGHUP is handled, or they kill and re-raise it).
const onHangup = (): void => {
  if (process.listenerCount('SIGTERM') === 0 && !stopAsked) {
    process.removeListener('SIGHUP', onHangup);
    process.kill(process.pid, 'SIGHUP'); // no listener now: the default action
    return;
  }
  setTimeout(() => process.exit(129), 20_000).unref();
  stopAsSigterm();
};
process.on('SIGHUP', onHangup);

let outputClosed = false;
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (outputClosed) return;
  outputClosed = true;
  if (err.code !== 'EPIPE') process.stderr.write(`converge: cannot write the output: ${err.message}\n`);
  outputGone(process.stdout, err.code === 'EPIPE' ? Number(process.exitCode ?? 0) : 1, true);
});
let stderrGone = false;
process.stderr.on('error', () => {
  if (stderrGone) return;
  stderrGone = true;
  outputGone(process.stderr, Number(process.exitCode) || 1, false);
});

main(process.argv.slice(2)).then(
  (code) => {
    // A full disk stays a failure, whatever the command made of the stop it caused.
    process.exitCode = outputClosed && process.exitCode ? process.exitCode : code;
  },
  (err: unknown) => {
    process.stderr.write(`converge${running ? ` ${running}` : ''}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
