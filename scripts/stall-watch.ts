/**
 * Ends a `node --test` run that has stopped moving. A test file's process that never ends — its
 * main thread stuck, the process stopped, a process it started holding its output open, the
 * runner itself waiting for something that will not come — holds the whole run, with no word,
 * until CI's limit kills it: CI's run at stop 62 waited 60 minutes on one file that printed
 * nothing. The per-test timeout and the test-process watchdogs (test/support/exit-watchdog.ts,
 * blocked-watchdog.ts) catch what they can from inside a process; this watches from outside.
 *
 * `watchForStall` reads how far the run's report (scripts/test-reporter.ts: a line per finished test) has grown;
 * when it has not grown for `stallMs`, it reports the last test that finished and every process
 * under the runner — pid, state (`T` is stopped, `D` waits on the disk), where in the kernel it
 * waits, command line — and ends the runner (SIGTERM: node prints the files it was still
 * running; SIGKILL 30 s later if it is still there).
 *
 * Caveat: node reports a file's tests only once the files before it have ended, so a long file
 * first in line looks like a pause of the whole run; `stallMs` must exceed the longest file.
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { FinishedRecord } from './test-reporter.ts';

export interface StallWatchOptions {
  /** The `node --test` process. */
  runner: ChildProcess;
  /** The file scripts/test-reporter.ts writes to. */
  reportFile: string;
  stallMs: number;
  /** Told once, with the report, before the runner is ended. */
  onStall(report: string): void;
  /** How often the file is looked at (default: a quarter of `stallMs`, at most 30 s). */
  pollMs?: number;
}

export function watchForStall(options: StallWatchOptions): { stop(): void } {
  const { runner, reportFile, stallMs } = options;
  let size = -1;
  let since = performance.now();
  let kill: NodeJS.Timeout | undefined;
  const poll = setInterval(() => {
    const now = sizeOf(reportFile);
    if (now !== size) {
      size = now;
      since = performance.now();
      return;
    }
    if (performance.now() - since < stallMs) return;
    clearInterval(poll);
    options.onStall(stallReport(runner.pid, reportFile, stallMs));
    runner.kill('SIGTERM');
    kill = setTimeout(() => runner.kill('SIGKILL'), 30_000);
    kill.unref();
  }, options.pollMs ?? Math.min(30_000, Math.max(100, stallMs / 4)));
  poll.unref();
  return {
    stop() {
      clearInterval(poll);
      clearTimeout(kill);
    },
  };
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The last test that finished, and the processes under `pid`, one line each. */
export function stallReport(pid: number | undefined, reportFile: string, stallMs: number): string {
  let last = '';
  try {
    const line = readFileSync(reportFile, 'utf8').split('\n').findLast((l) => l.startsWith('{"finished"'));
    const f = line ? (JSON.parse(line) as FinishedRecord) : undefined;
    if (f) last = `${f.finished} ${f.file ?? '?'} ${JSON.stringify(f.name)}`;
  } catch {
    // nothing finished yet
  }
  const limit = stallMs >= 120_000 ? `${Math.round(stallMs / 60_000)} min` : `${Math.round(stallMs / 1000)} s`;
  const lines = [
    `npm test: no test has finished for ${limit} (CONVERGE_TEST_STALL_MS); the run is ended.`,
    `  last test that finished: ${last || '(none)'}`,
    '  processes under the runner (pid, state, waiting in the kernel at, command):',
    ...(pid === undefined ? [] : descendants(pid).map((p) => `    ${p.pid} ${p.state} ${p.wchan} ${p.command}`)),
  ];
  return lines.join('\n');
}

interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
  wchan: string;
  command: string;
}

/** `pid` and every process under it, parents first (Linux /proc). */
export function descendants(pid: number): ProcessInfo[] {
  const all = new Map<number, ProcessInfo>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const info = processInfo(Number(name));
    if (info) all.set(info.pid, info);
  }
  const children = new Map<number, ProcessInfo[]>();
  for (const info of all.values()) {
    const siblings = children.get(info.ppid);
    if (siblings) siblings.push(info);
    else children.set(info.ppid, [info]);
  }
  const out: ProcessInfo[] = [];
  const visit = (info: ProcessInfo | undefined) => {
    if (!info) return;
    out.push(info);
    for (const child of children.get(info.pid) ?? []) visit(child);
  };
  visit(all.get(pid));
  return out;
}

function processInfo(pid: number): ProcessInfo | undefined {
  const read = (what: string) => {
    try {
      return readFileSync(`/proc/${pid}/${what}`, 'utf8');
    } catch {
      return undefined;
    }
  };
  const stat = read('stat');
  if (!stat) return undefined;
  // "pid (comm) state ppid …": comm may hold spaces and parentheses; it ends at the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const command = (read('cmdline') ?? '').replace(/\0+$/, '').replace(/\0/g, ' ');
  // A test file's process names its file last, after node's flags: keep both ends of a long line.
  const shown = command.length > 240 ? `${command.slice(0, 80)} … ${command.slice(-150)}` : command;
  return { pid, ppid: Number(rest[1]), state: rest[0] ?? '?', wchan: (read('wchan') ?? '').trim() || '-', command: shown || stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1) };
}
