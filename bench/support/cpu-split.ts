/**
 * `--split-cpus`: the control plane on one half of the CPUs the benchmark may use, the benchmark
 * and everything it starts afterwards (contenders, its observers) on the other half, as on a
 * cluster where an operator runs on a node of its own and never takes CPU from the API server or
 * etcd.
 *
 * Guarantees: after `splitCpus` resolves, every thread of every control-plane process runs only on
 * the control plane's CPUs, and every thread of this process only on the benchmark's; threads and
 * processes created later inherit their creator's CPUs. Fails (nothing half-pinned is left
 * unreported: the error names what was pinned) when fewer than 2 CPUs are available or `taskset`
 * is missing.
 * Assumptions: Linux with util-linux's `taskset` (sched_setaffinity, which Node does not expose).
 * Caveats: a control-plane component restarted later is started by this process and so runs on
 * the benchmark's CPUs; the compare scenario restarts none. Go processes started before the split
 * adjust GOMAXPROCS to their new CPUs on their own (Go ≥ 1.25).
 * @module
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CpuSplit {
  readonly controlPlane: readonly number[];
  readonly bench: readonly number[];
}

/** Parses a Linux CPU list ("0-3,6,8-9") into CPU numbers, ascending. */
export function parseCpuList(text: string): number[] {
  const cpus = new Set<number>();
  for (const part of text.trim().split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`not a CPU list: ${JSON.stringify(text)}`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`not a CPU list: ${JSON.stringify(text)}`);
    for (let c = from; c <= to; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** The lower half of the CPUs (at least one) for the control plane, the rest for the benchmark. */
export function splitCpuSet(cpus: readonly number[]): CpuSplit {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  if (sorted.length < 2) throw new Error(`--split-cpus needs at least 2 CPUs; this process may use ${sorted.length} (${sorted.join(',') || 'none'})`);
  const half = Math.floor(sorted.length / 2);
  return { controlPlane: sorted.slice(0, half), bench: sorted.slice(half) };
}

async function taskset(args: string[]): Promise<string> {
  try {
    return (await run('taskset', args)).stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error('--split-cpus needs `taskset` (Debian: util-linux), which is not on PATH');
    throw new Error(`taskset ${args.join(' ')} failed: ${(e.stderr ?? e.message).trim()}`);
  }
}

/** The CPUs a process may run on now. */
export async function cpusOf(pid: number): Promise<number[]> {
  const out = await taskset(['-p', '-c', String(pid)]);
  return parseCpuList(out.slice(out.lastIndexOf(':') + 1));
}

/** Pins every thread of `pid` to `cpus`. */
export async function pinProcess(pid: number, cpus: readonly number[]): Promise<void> {
  await taskset(['-a', '-p', '-c', cpus.join(','), String(pid)]);
}

/**
 * Splits the CPUs this process may use between the control plane (`controlPlanePids`) and this
 * process. Returns the split.
 */
export async function splitCpus(controlPlanePids: readonly number[], log: (m: string) => void): Promise<CpuSplit> {
  const split = splitCpuSet(await cpusOf(process.pid));
  const pinned: number[] = [];
  try {
    for (const pid of controlPlanePids) {
      await pinProcess(pid, split.controlPlane);
      pinned.push(pid);
    }
    await pinProcess(process.pid, split.bench);
  } catch (err) {
    throw new Error(`${(err as Error).message} (control-plane processes pinned so far: ${pinned.join(', ') || 'none'})`, { cause: err });
  }
  log(`--split-cpus: control plane (pids ${controlPlanePids.join(', ')}) on CPU ${split.controlPlane.join(',')}, the benchmark and what it starts on CPU ${split.bench.join(',')}`);
  return split;
}
