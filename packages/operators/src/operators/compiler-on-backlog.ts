/**
 * Turns V8's optimizing compiler (TurboFan) back on when the operator has a large backlog of
 * work, such as the first sync of a big fleet.
 *
 * The operator's image starts Node with the compiler off (`--no-opt`, `node-flags.ts`, ADR 0034):
 * its code and the compiler's own pages in the `node` binary cost ≈ 7 MiB that an operator which
 * mostly waits never earns back. A burst of hundreds of queued reconciles is the opposite case:
 * there the interpreter's extra CPU competes with the API server and etcd on the same machine and
 * slows the whole cold start (issue 17, goal 1). ADR 0039 has the figures.
 *
 * Guarantees:
 * - Nothing happens unless the process was started with the compiler off (`--no-opt` or
 *   `--no-turbofan` in `process.execArgv`): a process started without the image's flags is
 *   already optimizing.
 * - The compiler is turned on at most once, the first time `queued()` is at least `threshold`
 *   at a check (one check per `intervalMs`), and stays on: code it made is not thrown away when
 *   the backlog drains, so turning it off again would save nothing.
 * - An operator that never has `threshold` reconciles waiting never loads the compiler.
 * - With a `registry`, `converge_optimizing_compiler` is 1 while the compiler is on (from the
 *   start in a process started with it on), else 0: a step in the process's memory has a cause
 *   a dashboard can show.
 * Caveats:
 * - `v8.setFlagsFromString` after start-up is, in Node's words, for use with care; the flag it
 *   sets is read each time V8 decides whether to optimize a function, and
 *   `test/packaging/node-flags.test.ts` checks on the shipped Node that it takes effect.
 * @module
 */
import { setFlagsFromString } from 'node:v8';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { Logger } from '@converge/runtime';

/** Queued reconciles (waiting for a worker) at which the compiler is turned on. */
export const COMPILER_BACKLOG_THRESHOLD = 200;

export interface CompilerOnBacklogOptions {
  /** Reconciles waiting for a worker now (`Manager.queuedReconciles`). */
  queued: () => number;
  threshold?: number;
  intervalMs?: number;
  log: Pick<Logger, 'info'>;
  /** The process's Node flags (default `process.execArgv`). */
  execArgv?: readonly string[];
  /** Sets a V8 flag (default `v8.setFlagsFromString`). */
  setFlags?: (flags: string) => void;
  /** Where `converge_optimizing_compiler` is registered (the manager's metrics registry). */
  registry?: Registry;
}

/** Whether a process started with these flags runs with the optimizing compiler off. */
export function startedWithoutOptimizingCompiler(execArgv: readonly string[]): boolean {
  return execArgv.some((f) => f === '--no-opt' || f === '--no-turbofan');
}

/**
 * Checks the backlog every `intervalMs` until the compiler is on or `signal` aborts. Returns at
 * once; the timer does not keep the process alive.
 */
export function optimizeOnBacklog(options: CompilerOnBacklogOptions, signal: AbortSignal): void {
  const off = startedWithoutOptimizingCompiler(options.execArgv ?? process.execArgv);
  const gauge = options.registry
    ? new Gauge({ name: 'converge_optimizing_compiler', help: "1 while V8's optimizing compiler is on in this process, 0 while it is off", registers: [options.registry] })
    : undefined;
  gauge?.set(off ? 0 : 1);
  if (!off || signal.aborted) return;
  const threshold = options.threshold ?? COMPILER_BACKLOG_THRESHOLD;
  const setFlags = options.setFlags ?? setFlagsFromString;
  const timer = setInterval(() => {
    const queued = options.queued();
    if (queued < threshold) return;
    stop();
    setFlags('--turbofan');
    gauge?.set(1);
    options.log.info({ queued, threshold }, 'optimizing compiler turned on: a backlog of reconciles');
  }, options.intervalMs ?? 1_000);
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    signal.removeEventListener('abort', stop);
  };
  signal.addEventListener('abort', stop, { once: true });
}
