/**
 * The contenders of the `compare` benchmark and what the scenario needs to run and measure them,
 * whatever language they are written in:
 *
 * - `comparisonPlan`: which contender runs with which settings (each framework's defaults;
 *   a client limit with the same workers; no client-side limit), in the order they run. Pure.
 * - `USER_AGENTS`: how each contender's requests are told apart in the audit log.
 * - `spawnProcess`: a child process of any kind (Go binary, Kopf's Python, Node) with its output
 *   in a log file, SIGTERM-then-SIGKILL `stop()`, killed when the benchmark exits.
 * - `parseProcStatus` / `parseProcStat` (pure) and `readProcess`: resident memory now and at its
 *   peak (VmRSS, VmHWM) and CPU time (utime + stime) of a process, from /proc.
 * - `tallyRequests` (pure) and `countContenderRequests`: one contender's API requests between an
 *   audit-log offset and wall-clock times, by verb and resource.
 * @module
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpus } from 'node:os';
import { readAuditLog, WRITE_VERBS } from '@converge/envtest';
import type { AuditEvent } from '@converge/envtest';
import type { RequestCounts } from '../support/audit.ts';

import { CONTENDER_NAMES, SETTING_NAMES } from './names.ts';
import type { ContenderName, SettingName } from './names.ts';

export { CONTENDER_NAMES, SETTING_NAMES };
export type { ContenderName, SettingName };

export const MINIMAL_CLIENT_USER_AGENT = 'bench-minimal-client/0.1';

/** User-Agent of each contender's requests (a prefix, or a pattern for Kopf's two clients). */
export const USER_AGENTS: Record<ContenderName, string | RegExp> = {
  converge: 'converge-operator',
  'controller-runtime': 'bench-controller-runtime',
  'controller-runtime-shared': 'bench-controller-runtime',
  // Kopf's own aiohttp client (watches, its annotation and finalizer patches) and the seed's
  // kubernetes client (its reads and writes), whose User-Agent operator.py sets.
  kopf: /^(kopf\/|bench-kopf)/,
  'minimal-client': MINIMAL_CLIENT_USER_AGENT,
};

export const CONTENDER_TITLES: Record<ContenderName, string> = {
  converge: 'Converge',
  'controller-runtime': 'controller-runtime',
  'controller-runtime-shared': 'controller-runtime, one shared bucket',
  kopf: 'Kopf (seed)',
  'minimal-client': 'plain client (3 writes)',
};

export const SETTING_TITLES: Record<SettingName, string> = {
  defaults: "each framework's defaults",
  limited: 'client limit with the same workers',
  unlimited: 'no client-side limit',
};

export interface ContenderRun {
  setting: SettingName;
  contender: ContenderName;
  /** Which round of the plan (1-based; `--compare-rounds`); 0 is the warm-up run, which is not measured. */
  round: number;
  /** Concurrent reconciles / threads / requests in flight; undefined: the framework's default. */
  workers?: number;
  /** Client-side limit: undefined keeps the framework's default, 0 removes it. */
  qps?: number;
  burst?: number;
  /** One token bucket for every kind (controller-runtime only; its stock limiter has one per kind). */
  sharedLimiter?: boolean;
  /** What the settings amount to, for the report. */
  describe: string;
}

export interface PlanOptions {
  settings: readonly SettingName[];
  contenders: readonly ContenderName[];
  workers: number;
  /** The limit of the `limited` setting (a qps of 0 falls back to 50/s burst 100, the limit issue 17 compared). */
  qps: number;
  burst: number;
  /** CPUs of the machine (Kopf's default thread pool is min(32, CPUs + 4)). */
  cpus?: number;
  /** How many times each setting's contenders run (default 1); every other round in reverse order. */
  rounds?: number;
}

/**
 * The runs in order: by setting, then round, then contender (in reverse order in every second
 * round, so that no contender always runs first on a fresh control plane or right after another's
 * garbage collection); controller-runtime-shared only with a limit.
 */
export function comparisonPlan(o: PlanOptions): ContenderRun[] {
  const kopfThreads = Math.min(32, (o.cpus ?? cpus().length) + 4);
  const qps = o.qps > 0 ? o.qps : 50;
  const burst = o.qps > 0 ? o.burst : 100;
  const w = o.workers;
  const runs: ContenderRun[] = [];
  for (const setting of SETTING_NAMES.filter((s) => o.settings.includes(s))) {
    for (const contender of CONTENDER_NAMES.filter((c) => o.contenders.includes(c))) {
      const r = ((): Omit<ContenderRun, 'setting' | 'contender' | 'round'> | undefined => {
        switch (setting) {
          case 'defaults':
            switch (contender) {
              case 'converge':
                return { describe: '4 workers, no client-side limit (converge run defaults; ADR 0026)' };
              case 'controller-runtime':
                return { describe: '4 workers (the brief; the library default is 1), no client-side limit (ctrl.GetConfig sets QPS −1)' };
              case 'controller-runtime-shared':
                return undefined;
              case 'kopf':
                return { describe: `${kopfThreads} handler threads (min(32, CPUs + 4)), no client-side limiter` };
              case 'minimal-client':
                return { workers: w, qps: 0, describe: `${w} in flight, no client-side limit` };
            }
            break;
          case 'limited':
            switch (contender) {
              case 'converge':
                return { workers: w, qps, burst, describe: `${w} workers, ${qps}/s burst ${burst}, one bucket for all requests` };
              case 'controller-runtime':
                return { workers: w, qps, burst, describe: `${w} workers, ${qps}/s burst ${burst} per kind (client-go's bucket per REST client)` };
              case 'controller-runtime-shared':
                return { workers: w, qps, burst, sharedLimiter: true, describe: `${w} workers, ${qps}/s burst ${burst}, one bucket shared by all kinds` };
              case 'kopf':
                return { workers: w, describe: `${w} handler threads; Kopf has no client-side limiter` };
              case 'minimal-client':
                return { workers: w, qps, burst, describe: `${w} in flight, ${qps}/s burst ${burst}` };
            }
            break;
          case 'unlimited':
            if (contender === 'controller-runtime-shared') return undefined;
            return { workers: w, qps: 0, describe: `${w} ${contender === 'kopf' ? 'handler threads' : contender === 'minimal-client' ? 'in flight' : 'workers'}, no client-side limit` };
        }
        return undefined;
      })();
      if (r) runs.push({ setting, contender, round: 1, ...r });
    }
  }
  const rounds = Math.max(1, o.rounds ?? 1);
  return SETTING_NAMES.flatMap((setting) => {
    const once = runs.filter((r) => r.setting === setting);
    return Array.from({ length: rounds }, (_, i) => (i % 2 === 0 ? once : [...once].reverse()).map((r) => ({ ...r, round: i + 1 }))).flat();
  });
}

/** Namespace of one run: a DNS label of at most 63 characters. */
export function runNamespace(run: Pick<ContenderRun, 'setting' | 'contender'> & { round?: number }): string {
  const short: Record<ContenderName, string> = { converge: 'converge', 'controller-runtime': 'cr', 'controller-runtime-shared': 'cr-shared', kopf: 'kopf', 'minimal-client': 'minimal' };
  return `bench-cmp-${run.setting}-${short[run.contender]}${roundSuffix(run.round)}`;
}

/** How a run's round shows in its names: none for the first, `-rN` for later ones, `-warmup` for round 0 (not measured). */
export function roundSuffix(round = 1): string {
  return round === 0 ? '-warmup' : round > 1 ? `-r${round}` : '';
}

export interface ProcessStats {
  /** VmRSS: resident now. */
  rssBytes: number;
  /** VmHWM: the peak resident set since the process started. */
  peakRssBytes: number;
}

/** Reads VmRSS and VmHWM (kB) from the text of /proc/<pid>/status. */
export function parseProcStatus(text: string): ProcessStats {
  const kb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    if (!m) throw new Error(`/proc status has no ${field}`);
    return Number(m[1]) * 1024;
  };
  return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
}

/** CPU time (user + system, ms) from the text of /proc/<pid>/stat, with `ticksPerSecond` clock ticks. */
export function parseProcStat(text: string, ticksPerSecond = 100): number {
  // Fields after the command name, which is in parentheses and may itself hold spaces or ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).trim().split(/\s+/);
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('cannot read utime/stime from /proc stat');
  return ((utime + stime) * 1000) / ticksPerSecond;
}

export async function readProcess(pid: number): Promise<ProcessStats & { cpuMs: number }> {
  const [status, stat] = await Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')]);
  return { ...parseProcStatus(status), cpuMs: parseProcStat(stat) };
}

/**
 * Busy and total CPU time of the whole machine (ms, all CPUs) from the text of /proc/stat's
 * first line: busy is everything but idle and iowait.
 */
export function parseMachineCpu(text: string, ticksPerSecond = 100): { busyMs: number; totalMs: number; stealMs: number } {
  const line = text.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) throw new Error('/proc/stat has no cpu line');
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 8 || f.some((x) => !Number.isFinite(x))) throw new Error('cannot read /proc/stat cpu line');
  const total = f.reduce((a, b) => a + b, 0);
  const idle = f[3]! + f[4]!;
  // Steal (the 8th field) counts as busy: the CPU was not ours. It is also reported on its own,
  // since a round whose virtual CPUs were taken by the host is slower for no fault of its contender.
  return { busyMs: ((total - idle) * 1000) / ticksPerSecond, totalMs: (total * 1000) / ticksPerSecond, stealMs: (f[7]! * 1000) / ticksPerSecond };
}

/**
 * Waits until the machine is quiet: `quietWindows` consecutive windows of `windowMs` in which
 * fewer than `busyBelowCpus` CPUs were busy on average, or `maxMs` in all. A run that follows
 * another (a namespace of hundreds of objects just deleted, etcd compacting, the controller-manager
 * catching up) then starts from the same idle machine as the first. Returns how long it waited and
 * whether the machine got quiet.
 */
export async function waitForQuietMachine(
  opts: { busyBelowCpus: number; windowMs?: number; quietWindows?: number; maxMs?: number; cpuCount?: number },
  readStat: () => Promise<string> = () => readFile('/proc/stat', 'utf8'),
): Promise<{ waitedMs: number; quiet: boolean; lastBusyCpus: number }> {
  const windowMs = opts.windowMs ?? 1_000;
  const want = opts.quietWindows ?? 3;
  const maxMs = opts.maxMs ?? 60_000;
  const cpuCount = opts.cpuCount ?? cpus().length;
  const started = performance.now();
  let quietInARow = 0;
  let lastBusyCpus = Number.NaN;
  let before = parseMachineCpu(await readStat());
  while (performance.now() - started < maxMs) {
    await sleep(windowMs);
    const after = parseMachineCpu(await readStat());
    const total = after.totalMs - before.totalMs;
    lastBusyCpus = total > 0 ? ((after.busyMs - before.busyMs) / total) * cpuCount : 0;
    before = after;
    quietInARow = lastBusyCpus < opts.busyBelowCpus ? quietInARow + 1 : 0;
    if (quietInARow >= want) return { waitedMs: performance.now() - started, quiet: true, lastBusyCpus };
  }
  return { waitedMs: performance.now() - started, quiet: false, lastBusyCpus };
}

/** CPU time so far of some processes (by name) and of the whole machine. */
export interface CpuSnapshot {
  processes: Record<string, number>;
  machine: { busyMs: number; totalMs: number; stealMs?: number };
}

export async function cpuSnapshot(processes: { component: string; pid: number }[]): Promise<CpuSnapshot> {
  const out: Record<string, number> = {};
  await Promise.all(processes.map(async (p) => {
    try {
      out[p.component] = parseProcStat(await readFile(`/proc/${p.pid}/stat`, 'utf8'));
    } catch {
      // gone: not counted
    }
  }));
  return { processes: out, machine: parseMachineCpu(await readFile('/proc/stat', 'utf8')) };
}

/** CPU spent between two snapshots: per process (ms), and how many CPUs the machine kept busy on average. */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, cpuCount: number): { processes: Record<string, number>; machineBusyCpus: number; machineStealCpus?: number } {
  const processes: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.processes)) if (a.processes[k] !== undefined) processes[k] = v - a.processes[k]!;
  const total = b.machine.totalMs - a.machine.totalMs;
  const share = (from: number | undefined, to: number | undefined) => (total > 0 && from !== undefined && to !== undefined ? ((to - from) / total) * cpuCount : undefined);
  const steal = share(a.machine.stealMs, b.machine.stealMs);
  return { processes, machineBusyCpus: share(a.machine.busyMs, b.machine.busyMs) ?? 0, ...(steal !== undefined ? { machineStealCpus: steal } : {}) };
}

export interface ContenderRequests extends RequestCounts {
  /** Writes answered 409 (Conflict, AlreadyExists): a stale read costs a request. */
  conflicts: number;
}

/** Counts requests (one per request: watches when they start, the rest when they complete). */
export function tallyRequests(events: Iterable<AuditEvent>, untilMs = Number.POSITIVE_INFINITY): ContenderRequests {
  const counts: ContenderRequests = { total: 0, writes: 0, reads: 0, watches: 0, conflicts: 0, byVerb: {} };
  for (const e of events) {
    if (e.verb === 'watch' ? e.stage !== 'ResponseStarted' : e.stage !== 'ResponseComplete') continue;
    if (Date.parse(e.requestReceivedTimestamp) > untilMs) continue;
    counts.total += 1;
    if (WRITE_VERBS.includes(e.verb)) {
      counts.writes += 1;
      if (e.responseStatus?.code === 409) counts.conflicts += 1;
    } else if (e.verb === 'watch') counts.watches += 1;
    else if (e.verb === 'get' || e.verb === 'list') counts.reads += 1;
    const resource = e.objectRef?.resource ?? e.requestURI.split('?')[0];
    const key = `${e.verb} ${resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    counts.byVerb[key] = (counts.byVerb[key] ?? 0) + 1;
  }
  return counts;
}

/** One contender's requests from an audit-log offset, tallied up to each of `untilMs` (one read of the log). */
export async function countContenderRequests(auditLogPath: string, fromOffset: number, contender: ContenderName, untilMs: readonly number[]): Promise<ContenderRequests[]> {
  const events = await readAuditLog(auditLogPath, { fromOffset, stage: null, userAgent: USER_AGENTS[contender] });
  return untilMs.map((until) => tallyRequests(events, until));
}

export interface SpawnedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with the exit code (or signal name) once the process has exited and its log is flushed. */
  readonly exited: Promise<number | string>;
  /** Resolves with the first line the process prints to stdout. */
  readonly firstLine: Promise<string>;
  /** SIGTERM, wait up to graceMs, then SIGKILL. Idempotent. */
  stop(graceMs?: number): Promise<number | string>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export function spawnProcess(options: { name: string; command: string; args: string[]; env?: NodeJS.ProcessEnv; logPath: string }): SpawnedProcess {
  const child = spawn(options.command, options.args, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const log = createWriteStream(options.logPath);
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on('close', (code, signal) => {
      live.delete(child);
      log.end(() => resolve(spawnError ? `spawn error: ${spawnError.message}` : (code ?? signal ?? -1)));
    }),
  );
  const firstLine = new Promise<string>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const nl = buffered.indexOf('\n');
      if (nl >= 0) {
        child.stdout!.off('data', onData);
        resolve(buffered.slice(0, nl));
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => reject(new Error(`${options.name} exited (${code}) before printing a line; see ${options.logPath}`)));
  });
  firstLine.catch(() => undefined);
  let stopping: Promise<number | string> | undefined;
  return {
    name: options.name,
    pid: child.pid ?? -1,
    logPath: options.logPath,
    exited,
    firstLine,
    stop(graceMs = 15_000) {
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

/** Requests by `verb resource`: how many, and their mean time from send to answer (ms). */
export type RequestTimes = Record<string, { count: number; meanMs: number }>;

/**
 * Converge's own request timing (`rest_client_request_duration_seconds`, sum and count by verb and
 * resource) as mean milliseconds per `verb resource`; samples of other metrics are ignored.
 */
export function requestTimesFromSamples(samples: readonly { name: string; labels: Record<string, string>; value: number }[]): RequestTimes {
  const acc = new Map<string, { count: number; sumS: number }>();
  for (const x of samples) {
    const isSum = x.name === 'rest_client_request_duration_seconds_sum';
    if (!isSum && x.name !== 'rest_client_request_duration_seconds_count') continue;
    const key = `${x.labels.verb ?? '?'} ${x.labels.resource ?? '?'}`;
    const e = acc.get(key) ?? { count: 0, sumS: 0 };
    if (isSum) e.sumS += x.value;
    else e.count += x.value;
    acc.set(key, e);
  }
  return Object.fromEntries([...acc].filter(([, e]) => e.count > 0).map(([k, e]) => [k, { count: e.count, meanMs: (e.sumS * 1000) / e.count }]));
}

/** The plain client's own request timing (its done line's `requestMs`: count and total ms by `verb resource`). */
export function requestTimesFromTotals(totals: Record<string, { count: number; sumMs: number }> | undefined): RequestTimes | undefined {
  if (!totals) return undefined;
  return Object.fromEntries(Object.entries(totals).filter(([, t]) => t.count > 0).map(([k, t]) => [k, { count: t.count, meanMs: t.sumMs / t.count }]));
}
