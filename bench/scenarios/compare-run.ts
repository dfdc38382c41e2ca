/**
 * One measured run of the compare scenario (issue 17): a fresh namespace with N Microservices,
 * one contender started on it (Converge, the controller-runtime port, the seed's Kopf operator or
 * the plain client), timed from its spawn to all ResourcesApplied, all Deployments available and
 * all Ready, then its memory, CPU, API requests (audit log) and the API server's own figures for
 * the window. After the run the namespace is deleted and waited for and etcd compacted and
 * defragmented, so the next run starts from the same empty cluster.
 *
 * A caller can rely on: `runOne` never throws for a failed run (the result says `ok: false` and
 * why), and it stops the contender and its observers whatever happened. The scenario that plans
 * the runs and reports them is `compare.ts`.
 * @module
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { kopfOperatorPath } from '../comparison/build.ts';
import {
  countContenderRequests,
  cpuBetween,
  cpuSnapshot,
  readProcess,
  requestTimesFromSamples,
  requestTimesFromTotals,
  roundSuffix,
  runNamespace,
  waitForQuietMachine,
  spawnProcess,
} from '../comparison/contenders.ts';
import type { ContenderRun } from '../comparison/contenders.ts';
import type { RunResult } from './compare-rounds.ts';
import { auditMark } from '../support/audit.ts';
import { createMicroservices, pool } from '../support/fixtures.ts';
import { trackDeployments, trackMicroservices } from '../support/observer.ts';
import { startOperator } from '../support/operator.ts';
import { scrapeApiServer, sumOf } from '../support/prometheus.ts';
import type { Sample } from '../support/prometheus.ts';
import { megabytes as mb, round, seconds } from '../support/stats.ts';
import { convergenceTimeoutMs } from './fleet.ts';
import type { BenchContext } from './types.ts';

/** Where the contenders' programs are, resolved once per scenario run. */
export interface ContenderPaths {
  crBinary?: string;
  kopf?: string;
}

const MINIMAL_CLIENT = fileURLToPath(new URL('../comparison/minimal-client.ts', import.meta.url));
/** Wait after convergence before memory is read (what stays resident, not the last burst). */
const SETTLE_MS = 3_000;
/** Before a run's clock starts, the machine has had 3 s in a row with fewer CPUs busy than this. */
export const QUIET_BELOW_CPUS = 0.5;
/** With --profile: the API server's CPU is sampled for this long from each contender's start. */
const APISERVER_PROFILE_SECONDS = 20;

interface Started {
  pid: number;
  exited: Promise<number | string>;
  logPath: string;
  /** Whether exiting with 0 is the contender's normal end (the plain client). */
  exitsWhenDone: boolean;
  stop(): Promise<unknown>;
  /** Converge's own metrics, read at convergence and kept beside the run's log. */
  metrics?: () => Promise<Sample[]>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startContender(ctx: BenchContext, run: ContenderRun, ns: string, paths: ContenderPaths): Promise<Started> {
  const { session } = ctx;
  const name = runName(run);
  const logPath = join(session.outDir, `${name}.log`);
  switch (run.contender) {
    case 'converge': {
      const config: Record<string, unknown> = {};
      if (run.workers !== undefined) config.microservice = { maxConcurrentReconciles: run.workers };
      if (run.qps !== undefined) config.client = { qps: run.qps, burst: run.burst ?? 100 };
      const op = await startOperator({ name, kubeconfigPath: session.kubeconfigPath, namespace: ns, operators: ['microservice'], config, outDir: session.outDir, ...(session.profileDir ? { profileDir: session.profileDir } : {}) });
      return { pid: op.pid, exited: op.exited, logPath: op.logPath, exitsWhenDone: false, stop: () => op.stop(15_000), metrics: () => op.metrics() };
    }
    case 'controller-runtime':
    case 'controller-runtime-shared': {
      const args = ['--kubeconfig', session.kubeconfigPath, '--namespace', ns, '--metrics-bind-address', '0'];
      if (run.workers !== undefined) args.push('--workers', String(run.workers));
      if (run.qps !== undefined) args.push('--qps', String(run.qps), '--burst', String(run.burst ?? 100));
      if (run.sharedLimiter) args.push('--shared-limiter');
      const p = spawnProcess({ name, command: paths.crBinary!, args, logPath });
      return { pid: p.pid, exited: p.exited, logPath, exitsWhenDone: false, stop: () => p.stop() };
    }
    case 'kopf': {
      const env: NodeJS.ProcessEnv = { KUBECONFIG: session.kubeconfigPath, PYTHONUNBUFFERED: '1' };
      if (run.workers !== undefined) env.BENCH_KOPF_WORKERS = String(run.workers);
      const p = spawnProcess({ name, command: paths.kopf!, args: ['run', '--standalone', '--namespace', ns, kopfOperatorPath], env, logPath });
      return { pid: p.pid, exited: p.exited, logPath, exitsWhenDone: false, stop: () => p.stop() };
    }
    case 'minimal-client': {
      const args = ['--kubeconfig', session.kubeconfigPath, '--namespace', ns, '--in-flight', String(run.workers ?? ctx.options.workers), '--qps', String(run.qps ?? 0), '--burst', String(run.burst ?? 100), ...(ctx.options.plainClientWatches ? ['--watch'] : [])];
      const p = spawnProcess({ name, command: process.execPath, args: [MINIMAL_CLIENT, ...args], logPath });
      return { pid: p.pid, exited: p.exited, logPath, exitsWhenDone: true, stop: () => p.stop() };
    }
  }
}

function runName(run: ContenderRun): string {
  return `compare-${run.setting}-${run.contender}${roundSuffix(run.round)}`;
}

/**
 * A CPU profile of the API server over the first APISERVER_PROFILE_SECONDS of a run (pprof format,
 * `go tool pprof -top <file>`), through kubectl as the admin user: where the control plane's extra
 * work for a contender goes. Never fails the run: a missing profile is logged.
 */
function sampleApiServer(ctx: BenchContext, path: string): Promise<void> {
  const { session } = ctx;
  const args = ['--kubeconfig', session.kubeconfigPath, 'get', '--raw', `/debug/pprof/profile?seconds=${APISERVER_PROFILE_SECONDS}`];
  return new Promise((resolve) => {
    execFile('kubectl', args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: (APISERVER_PROFILE_SECONDS + 30) * 1000 }, (err, stdout) => {
      if (err) session.log(`compare: no API server profile (${err.message.split('\n')[0]})`);
      else writeFileSync(path, stdout);
      resolve();
    });
  });
}

/**
 * What the API server did between two scrapes of its metrics: the mean time of the requests on
 * a contender's path (the IPAddress create is the one every Service create makes, one at a time:
 * the cluster IP allocator holds a lock across it) and of the etcd calls of its creates, and the
 * watch events it sent, by resource.
 */
export function apiServerBetween(before: readonly Sample[], after: readonly Sample[]): NonNullable<RunResult['apiServer']> {
  const latency: Record<string, { count: number; meanMs: number }> = {};
  for (const [verb, resource] of [['POST', 'ipaddresses'], ['POST', 'services'], ['POST', 'deployments'], ['PATCH', 'microservices'], ['POST', 'pods'], ['PUT', 'pods'], ['PUT', 'deployments']] as const) {
    const labels = { verb, resource };
    const count = sumOf(after, 'apiserver_request_duration_seconds_count', labels) - sumOf(before, 'apiserver_request_duration_seconds_count', labels);
    const sum = sumOf(after, 'apiserver_request_duration_seconds_sum', labels) - sumOf(before, 'apiserver_request_duration_seconds_sum', labels);
    if (count > 0) latency[`${verb} ${resource}`] = { count, meanMs: Math.round((sum / count) * 10_000) / 10 };
  }
  // The etcd part of those creates, as the API server timed its storage calls: whether a slow
  // step waits on etcd or on the API server itself.
  for (const resource of ['ipaddresses', 'services', 'deployments'] as const) {
    const labels = { operation: 'create', resource };
    const count = sumOf(after, 'etcd_request_duration_seconds_count', labels) - sumOf(before, 'etcd_request_duration_seconds_count', labels);
    const sum = sumOf(after, 'etcd_request_duration_seconds_sum', labels) - sumOf(before, 'etcd_request_duration_seconds_sum', labels);
    if (count > 0) latency[`etcd create ${resource}`] = { count, meanMs: Math.round((sum / count) * 10_000) / 10 };
  }
  const watchEvents: Record<string, number> = {};
  for (const s of after.filter((x) => x.name === 'apiserver_watch_events_total')) {
    const resource = s.labels.resource ?? s.labels.kind ?? '?';
    const was = before.find((b) => b.name === s.name && JSON.stringify(b.labels) === JSON.stringify(s.labels))?.value ?? 0;
    if (s.value - was > 0) watchEvents[resource] = (watchEvents[resource] ?? 0) + s.value - was;
  }
  return { latency, watchEvents };
}

/** Removes finalizers left on the Microservices (Kopf's), so that deleting the namespace does not wait for an operator. */
async function releaseFinalizers(ctx: BenchContext, ns: string): Promise<number> {
  const { client } = ctx.session;
  const { items } = await client.listAll(MicroserviceKind, { namespace: ns });
  const held = items.filter((ms) => (ms.metadata.finalizers ?? []).length > 0);
  await pool(held, 16, async (ms) => {
    await client.patch(MicroserviceKind, { namespace: ns, name: ms.metadata.name! }, { type: 'merge', body: { metadata: { finalizers: null } } });
  });
  return held.length;
}

export async function runOne(ctx: BenchContext, run: ContenderRun, paths: ContenderPaths, last: boolean): Promise<RunResult> {
  const { session, options } = ctx;
  const n = options.microservices;
  const ns = runNamespace(run);
  const what = `compare: ${run.setting}: ${run.contender}${ctx.options.compareRounds > 1 ? ` (round ${run.round})` : ''}`;
  await session.createNamespace(ns);
  await createMicroservices(session.client, ns, n);
  const ms = await trackMicroservices(session.client, ns);
  const deployments = await trackDeployments(session.client, ns);
  const wantsReady = run.contender !== 'minimal-client';
  const progress = setInterval(
    () => session.log(`${what}: ${ms.appliedCount()}/${n} ResourcesApplied, ${deployments.availableCount()}/${n} Deployments available${wantsReady ? `, ${ms.readyCount()}/${n} Ready` : ''}`),
    10_000,
  );
  const result: RunResult = { run, ok: false };
  let started: Started | undefined;
  try {
    // The previous run's namespace deletion, and this run's creates, may leave work behind (etcd,
    // the controller-manager's garbage collector): no run's clock starts before it is done.
    const quiet = await waitForQuietMachine({ busyBelowCpus: QUIET_BELOW_CPUS });
    result.quietWait = { ms: quiet.waitedMs, quiet: quiet.quiet };
    if (!quiet.quiet) session.log(`${what}: the machine did not get quiet in ${seconds(quiet.waitedMs)} s (${round(quiet.lastBusyCpus, 2)} CPUs busy); starting anyway`);
    const mark = await auditMark(session.auditLogPath);
    session.log(`${what}: starting (${run.describe}) after ${seconds(quiet.waitedMs)} s for a quiet machine`);
    const metricsAtStart = await scrapeApiServer(ctx.session.kubeconfigPath);
    const cpuAtStart = await cpuSnapshot([...session.controlPlane.processes(), { component: 'bench', pid: process.pid }]);
    const t0 = performance.now();
    const apiServerProfile = session.profileDir ? sampleApiServer(ctx, join(session.profileDir, `${runName(run)}.apiserver.pprof`)) : undefined;
    started = await startContender(ctx, run, ns, paths);
    const s = started;
    const timeout = convergenceTimeoutMs(n);
    // CPU up to all ResourcesApplied, the contender's included (a new process: it starts from 0).
    let appliedAt = Number.POSITIVE_INFINITY;
    const cpuProcesses = () => [...session.controlPlane.processes(), { component: 'contender', pid: s.pid }, { component: 'bench', pid: process.pid }];
    const applied = ms.until(() => ms.appliedCount() >= n, timeout, `${what}: ${n} ResourcesApplied`).then(async (at) => {
      appliedAt = Date.now();
      const atApplied = await cpuSnapshot(cpuProcesses());
      result.appliedWindow = cpuBetween({ ...cpuAtStart, processes: { ...cpuAtStart.processes, contender: 0 } }, atApplied, cpus().length);
      const metricsAtApplied = await scrapeApiServer(ctx.session.kubeconfigPath);
      if (metricsAtStart && metricsAtApplied) result.apiServer = apiServerBetween(metricsAtStart, metricsAtApplied);
      return at;
    });
    const available = deployments.until(() => deployments.availableCount() >= n, timeout, `${what}: ${n} Deployments available`);
    const ready = wantsReady ? ms.until(() => ms.readyCount() >= n, timeout, `${what}: ${n} Ready`) : Promise.resolve(Number.NaN);
    const [a, d, r] = await Promise.race([
      Promise.all([applied, available, ready]),
      s.exited.then(async (code) => {
        if (code === 0 && s.exitsWhenDone) return new Promise<never>(() => {}); // done writing; the observers decide
        throw new Error(`${run.contender} exited with ${code} before converging; see ${s.logPath}`);
      }),
    ]);
    const convergedAt = Date.now();
    // The operator's counters at convergence (reconciles by result and time, queue, requests by verb
    // and time, Events), to tell a slow round from a fast one.
    if (s.metrics) {
      const samples = await s.metrics().catch(() => []);
      result.requestTimes = requestTimesFromSamples(samples);
      writeFileSync(s.logPath.replace(/\.log$/, '.metrics.json'), JSON.stringify(samples.filter((x) => /^(converge|controller_runtime|workqueue|rest_client)_/.test(x.name) && !x.name.endsWith('_bucket'))));
    }
    result.window = cpuBetween(cpuAtStart, await cpuSnapshot(session.controlPlane.processes()), cpus().length);
    const times = [...ms.times.values()];
    Object.assign(result, {
      appliedMs: a - t0,
      deploymentsAvailableMs: d - t0,
      ...(wantsReady ? { readyMs: r - t0 } : {}),
      appliedTimes: times.map((t) => (t.appliedAt ?? Number.NaN) - t0).sort((x, y) => x - y),
      readyTimes: wantsReady ? times.map((t) => (t.readyAt ?? Number.NaN) - t0).sort((x, y) => x - y) : [],
    });
    if (s.exitsWhenDone) {
      const code = await Promise.race([s.exited, sleep(30_000).then(() => 'timeout')]);
      if (code !== 0) throw new Error(`${run.contender} did not exit cleanly (${String(code)}); see ${s.logPath}`);
      const done = JSON.parse(readFileSync(s.logPath, 'utf8').split('\n').filter((l) => l.startsWith('{"done"')).at(-1) ?? '{}') as { cpuMs?: number; maxRssBytes?: number; requestMs?: Record<string, { count: number; sumMs: number }> };
      const times = requestTimesFromTotals(done.requestMs);
      if (times) result.requestTimes = times;
      if (done.maxRssBytes !== undefined) result.peakRssBytes = done.maxRssBytes;
      if (done.cpuMs !== undefined) result.cpuMs = done.cpuMs;
    } else {
      await sleep(SETTLE_MS);
      const p = await readProcess(s.pid);
      Object.assign(result, p);
    }
    // Requests received up to convergence (a contender's periodic work after it is not counted).
    const [requests, requestsToApplied] = await countContenderRequests(session.auditLogPath, mark, run.contender, [convergedAt, appliedAt]);
    result.requests = requests!;
    result.requestsToApplied = requestsToApplied!;
    await apiServerProfile;
    result.ok = true;
    session.log(
      `${what}: all ResourcesApplied in ${seconds(result.appliedMs!)} s (the first at ${seconds(result.appliedTimes![0]!)} s, half at ${seconds(result.appliedTimes![Math.floor(n / 2)]!)} s)${wantsReady ? `, all Ready in ${seconds(result.readyMs!)} s` : ''}; ${round(result.requests.writes / n)} writes per Microservice; RSS ${mb(result.rssBytes) ?? '—'} MB (peak ${mb(result.peakRssBytes) ?? '—'} MB)`,
    );
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    session.log(`${what}: FAILED: ${result.error}`);
  } finally {
    clearInterval(progress);
    await started?.stop();
    await Promise.all([ms.stop(), deployments.stop()]);
  }
  // The next run starts from an empty cluster; the last one leaves its objects to the session's teardown.
  if (!last || !result.ok) {
    const released = await releaseFinalizers(ctx, ns);
    if (released) session.log(`${what}: removed the finalizers of ${released} Microservices (the operator is stopped)`);
    result.namespaceDeletionMs = await session.deleteNamespace(ns, { wait: true });
    result.etcd = await compactAndDefragment(ctx);
  }
  return result;
}

/**
 * Compacts etcd's history and defragments its file after a run, so every run starts from a store
 * as small as the first run's rather than on the history of all the runs before it (each run of
 * 500 leaves ≈ 65 MB). Returns the file's size before (MB) and the compacted revision, or
 * undefined when etcd did not answer (the next run then starts on a larger store; the log says so).
 */
async function compactAndDefragment(ctx: BenchContext): Promise<{ beforeMb: number; revision: number } | undefined> {
  const cp = ctx.session.controlPlane;
  try {
    const status = await fetch(`${cp.etcdUrl}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(10_000) });
    if (!status.ok) throw new Error(`etcd status: ${status.status}`);
    const beforeMb = Number(((await status.json()) as { dbSize?: string }).dbSize ?? Number.NaN) / 1e6;
    const revision = await cp.compactEtcd();
    const d = await fetch(`${cp.etcdUrl}/v3/maintenance/defragment`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(120_000) });
    if (!d.ok) throw new Error(`etcd defragment: ${d.status} ${await d.text()}`);
    ctx.session.log(`compare: etcd (${round(beforeMb, 0)} MB) compacted at revision ${revision} and defragmented`);
    return { beforeMb, revision };
  } catch (err) {
    ctx.session.log(`compare: cannot compact and defragment etcd (${err instanceof Error ? err.message : String(err)}); the next run starts on a larger store`);
    return undefined;
  }
}
