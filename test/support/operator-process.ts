/**
 * Runs `converge run` as a child process (a real operator replica: its own event loop, its own
 * connections, killable with SIGKILL) and follows its JSON log lines.
 * @module
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { kubeconfigPath } from './operator-harness.ts';

const MAIN = fileURLToPath(new URL('../../packages/operators/src/cli/main.ts', import.meta.url));

export interface OperatorReplica {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first log line matching; rejects after timeoutMs. */
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal) once the process has exited. */
  readonly exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

export function startReplica(name: string, args: string[], env: NodeJS.ProcessEnv = {}): OperatorReplica {
  // Unless a test asks for it, no webhook: the suite's shared one serves conversion (scripts/test.ts),
  // and replicas started side by side must not compete for :9443.
  const webhook = args.some((a) => a.startsWith('--webhook-')) ? [] : ['--webhook-bind-address=0'];
  return startCommand(name, MAIN, ['run', '--kubeconfig', kubeconfigPath(), ...webhook, ...args], env);
}

/** Runs any `converge`-style entry point (`main`, e.g. an older build's) with `args`, following its log. */
export function startCommand(name: string, main: string, args: string[], env: NodeJS.ProcessEnv = {}): OperatorReplica {
  const child = spawn(process.execPath, [main, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<{ match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }>();
  const onLine = (text: string) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      line = { msg: text, raw: true };
    }
    line._at = Date.now();
    lines.push(line);
    for (const w of waiters) if (w.match(line)) { waiters.delete(w); w.resolve(line); }
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', onLine);
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    name,
    child,
    lines,
    exited,
    kill: (signal = 'SIGTERM') => { if (child.exitCode === null && child.signalCode === null) child.kill(signal); },
    waitFor(match, timeoutMs = 60_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = { match, resolve: (l: Record<string, unknown>) => { clearTimeout(timer); resolve(l); } };
        const timer = setTimeout(() => { waiters.delete(w); reject(new Error(`${name}: no matching log line within ${timeoutMs} ms; last lines: ${JSON.stringify(lines.slice(-5))}`)); }, timeoutMs);
        waiters.add(w);
      });
    },
  };
}

export const isLeading = (l: Record<string, unknown>) => l.msg === 'leading; starting controllers';
