/**
 * Runs a benchmarked Node.js child: the operator (`converge run`) or the ceiling client. The
 * child is started with `--expose-gc` and the memory probe preloaded (see memory-probe.mjs), and
 * optionally with `--cpu-prof` so a CPU profile is written when it exits. Its output goes to a
 * log file; `stop()` sends SIGTERM, waits for a graceful exit (the profile is written then) and
 * SIGKILLs after a grace period. Children are also killed when the benchmark process exits.
 * @module
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROBE = fileURLToPath(new URL('./memory-probe.mjs', import.meta.url));
const live = new Set<ChildProcess>();
process.on('exit', () => killAllChildren());

/** SIGKILLs every child still running (for exits and interrupts; `stop()` is the graceful way). */
export function killAllChildren(): void {
  for (const c of live) c.kill('SIGKILL');
}

export interface MemorySnapshot {
  heapUsed: number;
  /** Heap used without code and bytecode: the data (memory-probe.mjs). */
  dataHeapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  /** CPU time the child used so far (user + system), in ms. */
  cpuMs: number;
  gcForced: boolean;
}

export interface BenchChild {
  readonly name: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly logPath: string;
  /** Resolves with the exit code (or signal name) when the child exits. */
  readonly exited: Promise<number | string>;
  /** Full GC in the child, then its memory and CPU time. */
  memory(timeoutMs?: number): Promise<MemorySnapshot>;
  /** SIGTERM, wait up to graceMs, then SIGKILL. Idempotent. */
  stop(graceMs?: number): Promise<number | string>;
}

export interface StartChildOptions {
  name: string;
  /** Script (a .ts file) and its arguments. */
  script: string;
  args: string[];
  outDir: string;
  /** Write a CPU profile into `<profileDir>/<name>.cpuprofile` when the child exits. */
  profileDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Node.js flags before the script (the operator's production flags, node-flags.ts). */
  nodeFlags?: readonly string[];
}

export function startChild(options: StartChildOptions): BenchChild {
  const memoryFile = join(options.outDir, `${options.name}.memory.json`);
  const logPath = join(options.outDir, `${options.name}.log`);
  const nodeArgs = [...(options.nodeFlags ?? []), '--expose-gc', '--import', PROBE];
  if (options.profileDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.profileDir}`, `--cpu-prof-name=${options.name}.cpuprofile`);
  const child = spawn(process.execPath, [...nodeArgs, options.script, ...options.args], {
    env: { ...process.env, ...options.env, BENCH_MEMORY_FILE: memoryFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const log = createWriteStream(logPath);
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  // 'close' comes after the child's output has been read; the log is flushed before resolving.
  const exited = new Promise<number | string>((resolve) =>
    child.on('close', (code, signal) => {
      live.delete(child);
      log.end(() => resolve(code ?? signal ?? -1));
    }),
  );
  let stopping: Promise<number | string> | undefined;
  let seq = 0;
  return {
    name: options.name,
    pid: child.pid ?? -1,
    startedAt: performance.now(),
    logPath,
    exited,
    async memory(timeoutMs = 15_000) {
      const want = seq + 1;
      child.kill('SIGUSR2');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (existsSync(memoryFile)) {
          try {
            const m = JSON.parse(readFileSync(memoryFile, 'utf8')) as Record<string, number | boolean>;
            if ((m.seq as number) >= want) {
              seq = m.seq as number;
              return {
                heapUsed: m.heapUsed as number,
                dataHeapUsed: m.dataHeapUsed as number,
                heapTotal: m.heapTotal as number,
                rss: m.rss as number,
                external: m.external as number,
                arrayBuffers: m.arrayBuffers as number,
                cpuMs: ((m.cpuUserMicros as number) + (m.cpuSystemMicros as number)) / 1000,
                gcForced: m.gcForced as boolean,
              };
            }
          } catch {
            // being replaced; read again
          }
        }
        if (Date.now() > deadline) throw new Error(`${options.name}: no memory snapshot within ${timeoutMs} ms (see ${logPath})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop(graceMs = 40_000) {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const code = await exited;
        clearTimeout(timer);
        return code;
      })();
      return stopping;
    },
  };
}
