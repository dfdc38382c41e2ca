/**
 * Compare (issue 17): Converge side by side with a controller-runtime implementation of the same
 * reconcile (bench/comparison/controller-runtime), the seed's Kopf operator
 * (bench/comparison/kopf) and a plain client doing only the minimal writes
 * (bench/comparison/minimal-client.ts), on the same control plane.
 *
 * Each run of the plan (bench/comparison/contenders.ts: each framework's defaults; a client limit
 * with the same workers; no client-side limit) gets a fresh namespace with the same N
 * Microservices, created before its contender starts. Timed from the spawn of the contender's
 * process: all ResourcesApplied, all Deployments available, all Ready (not for the plain client,
 * which writes no Ready). Then, after a short settle: the process's resident memory now and at
 * its peak and its CPU time (/proc), and its API requests up to convergence by verb and resource
 * (audit log, by User-Agent), the CPU the control plane spent meanwhile, and Converge's own
 * counters (`<run>.metrics.json`). The contender is stopped, its namespace deleted and waited for,
 * and etcd compacted and defragmented before the next run, whose clock starts once the machine is
 * quiet: every run starts from the same empty cluster on an idle machine.
 * @module
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { ensureControllerRuntimeBinary, ensureKopfEnvironment, kopfOperatorPath } from '../comparison/build.ts';
import {
  CONTENDER_TITLES,
  SETTING_TITLES,
  comparisonPlan,
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
import type { ContenderName, ContenderRun, SettingName } from '../comparison/contenders.ts';
import { medianRuns, ratioVerdict, roundRatios, roundsTable, stepPoints } from './compare-rounds.ts';
import { fitStepModel, stepModelNote } from './step-model.ts';
import type { RunResult } from './compare-rounds.ts';
import { auditMark } from '../support/audit.ts';
import { createMicroservices, pool } from '../support/fixtures.ts';
import { trackDeployments, trackMicroservices } from '../support/observer.ts';
import { startOperator } from '../support/operator.ts';
import { scrapeApiServer, sumOf } from '../support/prometheus.ts';
import type { Sample } from '../support/prometheus.ts';
import { median, medianInterval, round, seconds } from '../support/stats.ts';
import { curve } from './cold-start.ts';
import { convergenceTimeoutMs } from './fleet.ts';
import type { BenchContext, Cell, ChartSeries, Scenario, Table } from './types.ts';

const MINIMAL_CLIENT = fileURLToPath(new URL('../comparison/minimal-client.ts', import.meta.url));
/** Wait after convergence before memory is read (what stays resident, not the last burst). */
const SETTLE_MS = 3_000;
/** Before a run's clock starts, the machine has had 3 s in a row with fewer CPUs busy than this. */
const QUIET_BELOW_CPUS = 0.5;
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
const mb = (bytes: number | undefined) => (bytes === undefined ? null : round(bytes / 1e6, 0));

async function startContender(ctx: BenchContext, run: ContenderRun, ns: string, paths: { crBinary?: string; kopf?: string }): Promise<Started> {
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

async function runOne(ctx: BenchContext, run: ContenderRun, paths: { crBinary?: string; kopf?: string }, last: boolean): Promise<RunResult> {
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


function byContenderTable(title: string, results: RunResult[], rows: [string, (r: RunResult) => Cell][]): Table {
  return {
    title,
    columns: ['', ...results.map((r) => CONTENDER_TITLES[r.run.contender])],
    rows: rows.map(([label, f]) => [label, ...results.map((r) => (r.ok || label === 'settings' ? f(r) : label === 'all ResourcesApplied (s)' ? `failed: ${r.error}` : null))]),
  };
}

export const compare: Scenario = {
  name: 'compare',
  title: 'Compare with controller-runtime, Kopf and a plain client',
  description:
    'Converge, a controller-runtime v0.25 implementation of the same reconcile, the seed’s Kopf operator and a plain client doing only the minimal writes (create Deployment, create Service, one status write), one after another on the same control plane, each on a fresh namespace holding the same N Microservices created before it starts, under three settings: each framework’s defaults, a client limit with the same workers, and no client-side limit. Times run from the spawn of the contender’s process (start-up and cache sync included). Requests are counted in the audit log by User-Agent up to convergence; memory is the process’s resident set (VmRSS) 3 s after convergence and its peak (VmHWM), from /proc; from the start to convergence, the CPU time of each control-plane component and how many of the machine’s CPUs were busy on average (/proc), which shows whether a run was bound by the machine. Each namespace is deleted and waited for before the next run.',
  async run(ctx) {
    const { session, options } = ctx;
    const n = options.microservices;
    const rounds = options.compareRounds;
    const plan = comparisonPlan({ settings: options.compareSettings, contenders: options.compareContenders, workers: options.workers, qps: options.qps, burst: options.burst, rounds }).map((r) =>
      options.plainClientWatches && r.contender === 'minimal-client' ? { ...r, describe: `${r.describe}, reading Converge's 4 watches` } : r,
    );
    if (plan.length === 0) throw new Error('compare: nothing to run for the settings and contenders given');
    const paths: { crBinary?: string; kopf?: string } = {};
    const notes: string[] = [];
    if (options.plainClientWatches) {
      notes.push("`--plain-client-watches`: the plain client also listed and watched what Converge watches in its namespace (Microservices, Deployments, Services, EndpointSlices), decoding and dropping every event from before its first write to its last: its writes are still the minimal 3, and what it adds to the machine is what watching costs, without an operator's cache or reconciles.");
    }
    if (session.cpuSplit) {
      notes.push(`\`--split-cpus\`: the control plane (API server, etcd, controller-manager, simulator) ran on CPU ${session.cpuSplit.controlPlane.join(',')}, each contender, the bench and its observers on CPU ${session.cpuSplit.bench.join(',')}: a contender's own process took no CPU from the control plane, as on a cluster where an operator runs on a node of its own, and only what it asked of the API server (requests, watches) reached the control plane's CPU. "CPUs busy" is of the whole machine.`);
    }
    if (plan.some((r) => r.contender.startsWith('controller-runtime'))) {
      paths.crBinary = await ensureControllerRuntimeBinary({ onProgress: (m) => session.log(`compare: ${m}`) });
      notes.push(`controller-runtime v0.25.2 (k8s.io/* v0.37.0), binary ${paths.crBinary}.`);
    }
    if (plan.some((r) => r.contender === 'kopf')) {
      const kopf = await ensureKopfEnvironment({ onProgress: (m) => session.log(`compare: ${m}`) });
      paths.kopf = kopf.kopf;
      notes.push(`Kopf ${kopf.versions.kopf}, kubernetes (Python client) ${kopf.versions.kubernetes}, Python ${kopf.versions.python}.`);
    }
    session.log(`compare: ${plan.length} runs of ${n} Microservices: ${plan.map((r) => `${r.setting}/${r.contender}${rounds > 1 ? `/${r.round}` : ''}`).join(', ')}`);
    // A warm-up run first, not measured: the first run on a new control plane is slower (the API
    // server's caches, its heap and etcd's file grow to the size of a run, Go and Node compile what
    // it uses), and with rounds in alternating order that cost fell on whichever contender came first.
    if (rounds > 1) {
      const warm = await runOne(ctx, { setting: 'unlimited', contender: 'minimal-client', round: 0, workers: options.workers, qps: 0, describe: 'warm-up' }, paths, false);
      session.log(`compare: warm-up run (the plain client, not measured): ${warm.ok ? `all ResourcesApplied in ${seconds(warm.appliedMs!)} s` : `failed: ${warm.error}`}`);
    }
    const all: RunResult[] = [];
    for (const [i, run] of plan.entries()) all.push(await runOne(ctx, run, paths, i === plan.length - 1));
    // With several rounds, every table but the rounds table shows each contender's median run.
    const results = medianRuns(all);

    const figures: Record<string, number | string | boolean | null> = { microservices: n, runs: plan.length, rounds, failedRuns: all.filter((r) => !r.ok).length };
    for (const r of results) {
      const k = `${r.run.setting}.${r.run.contender}`;
      figures[`${k}.ok`] = r.ok;
      if (!r.ok) continue;
      figures[`${k}.appliedSeconds`] = seconds(r.appliedMs!);
      figures[`${k}.deploymentsAvailableSeconds`] = seconds(r.deploymentsAvailableMs!);
      figures[`${k}.readySeconds`] = r.readyMs === undefined ? null : seconds(r.readyMs);
      figures[`${k}.writesPerMicroservice`] = round(r.requests!.writes / n);
      figures[`${k}.reads`] = r.requests!.reads;
      figures[`${k}.rssMB`] = mb(r.rssBytes);
      figures[`${k}.peakRssMB`] = mb(r.peakRssBytes);
      figures[`${k}.cpuSeconds`] = r.cpuMs === undefined ? null : seconds(r.cpuMs);
      figures[`${k}.apiserverCpuMsPerMicroservice`] = r.window?.processes.apiserver === undefined ? null : round(r.window.processes.apiserver / n, 1);
      figures[`${k}.machineBusyCpus`] = r.window ? round(r.window.machineBusyCpus, 2) : null;
    }

    const settings = [...new Set(results.map((r) => r.run.setting))];
    if (rounds > 1) {
      for (const s of settings) {
        for (const c of [...new Set(all.map((r) => r.run.contender))]) {
          const times = all.filter((r) => r.run.setting === s && r.run.contender === c).map((r) => (r.ok ? seconds(r.appliedMs!) : 'failed'));
          figures[`${s}.${c}.appliedSecondsByRound`] = times.join(', ');
          // Per round, where the machine's CPU went up to all ResourcesApplied (a noisy round shows here).
          figures[`${s}.${c}.appliedCpuByRound`] = all
            .filter((r) => r.run.setting === s && r.run.contender === c && r.ok)
            .map((r) => `${appliedCpu(r) ?? '—'} (busy ${r.appliedWindow ? round(r.appliedWindow.machineBusyCpus, 2) : '—'}, of it stolen by the host ${r.appliedWindow?.machineStealCpus === undefined ? '—' : round(r.appliedWindow.machineStealCpus, 2)})`)
            .join(' | ');
          figures[`${s}.${c}.apiServerByRound`] = all
            .filter((r) => r.run.setting === s && r.run.contender === c && r.ok && r.apiServer)
            .map((r) => `${Object.entries(r.apiServer!.latency).map(([k, v]) => `${k} ${v.meanMs} ms ×${v.count}`).join(', ')}; watch events ${Object.entries(r.apiServer!.watchEvents).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${v}`).join(', ')}`)
            .join(' | ');
          // Per round, what the runs did: a slow round with more writes or a relist shows here.
          const runs = all.filter((r) => r.run.setting === s && r.run.contender === c && r.ok && r.requests);
          figures[`${s}.${c}.requestsByRound`] = runs
            .map((r) => Object.entries(r.requests!.byVerb).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${v}`).join('; '))
            .join(' | ');
        }
        const ratios = roundRatios(all, s);
        if (ratios.length > 0) {
          figures[`${s}.convergeOverPlainClientByRound`] = ratios.map((x) => round(x, 2)).join(', ');
          figures[`${s}.convergeOverPlainClientMedian`] = round(median(ratios), 2);
          const interval = medianInterval(ratios)!;
          figures[`${s}.convergeOverPlainClientMedianInterval`] = `${round(interval.low, 2)}–${round(interval.high, 2)} (${round(interval.coverage * 100, 1)} %)`;
          if (s === 'unlimited' && ratios.length > 1) notes.push(ratioVerdict(ratios, interval)!);
        }
        // Only without a client-side limit: with one, the limit sets the pace, not the allocator.
        const model = s === 'unlimited' ? fitStepModel(stepPoints(all, s)) : undefined;
        if (model) {
          figures[`${s}.stepModel`] = `${round(model.interceptSeconds, 2)} s + ${round(model.secondsPerMs, 3)} s/ms, r ${round(model.r, 3)}; ${Object.entries(model.byContender).map(([c, v]) => `${c} ${round(v.medianResidualSeconds, 2)} s`).join(', ')}`;
          notes.push(`${SETTING_TITLES[s]}: ${stepModelNote(model, n, (c) => CONTENDER_TITLES[c as ContenderName] ?? c)}`);
        }
      }
    }
    const contenders = [...new Set(results.map((r) => r.run.contender))];
    const find = (s: SettingName, c: ContenderName) => results.find((r) => r.run.setting === s && r.run.contender === c);
    const summaryCell = (r: RunResult | undefined): Cell => {
      if (!r) return null;
      if (!r.ok) return 'failed';
      return r.readyMs === undefined ? `${seconds(r.appliedMs!)} s` : `${seconds(r.appliedMs!)} s (Ready ${seconds(r.readyMs)} s)`;
    };
    const tables: Table[] = [
      {
        title: `All ResourcesApplied (all Ready) for ${n} Microservices, seconds from the contender's start`,
        columns: ['setting', ...contenders.map((c) => CONTENDER_TITLES[c])],
        rows: settings.map((s) => [SETTING_TITLES[s], ...contenders.map((c) => summaryCell(find(s, c)))]),
      },
      {
        title: 'API writes per Microservice (reads in all) up to convergence',
        columns: ['setting', ...contenders.map((c) => CONTENDER_TITLES[c])],
        rows: settings.map((s) => [SETTING_TITLES[s], ...contenders.map((c) => {
          const r = find(s, c);
          return r?.ok ? `${round(r.requests!.writes / n)} (${r.requests!.reads})` : r ? 'failed' : null;
        })]),
      },
      ...settings.map((s) => {
        const rs = results.filter((r) => r.run.setting === s);
        return byContenderTable(`${SETTING_TITLES[s]}: ${n} Microservices`, rs, [
          ['settings', (r) => r.run.describe],
          ['all ResourcesApplied (s)', (r) => seconds(r.appliedMs!)],
          ['all Deployments available (s)', (r) => seconds(r.deploymentsAvailableMs!)],
          ['all Ready (s)', (r) => (r.readyMs === undefined ? null : seconds(r.readyMs))],
          ['API writes per Microservice', (r) => round(r.requests!.writes / n)],
          ['API writes per Microservice up to all ResourcesApplied (by verb)', (r) => (r.requestsToApplied ? `${round(r.requestsToApplied.writes / n)} (${Object.entries(r.requestsToApplied.byVerb).filter(([k]) => !/^(get|list|watch) /.test(k)).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${round(v / n, 2)}`).join(', ')})` : null)],
          ['API reads (get/list) in all', (r) => r.requests!.reads],
          ['of the writes: 409 Conflict / AlreadyExists', (r) => r.requests!.conflicts],
          ['watches opened', (r) => r.requests!.watches],
          ['RSS 3 s after convergence (MB)', (r) => mb(r.rssBytes)],
          ['peak RSS (MB)', (r) => mb(r.peakRssBytes)],
          ['CPU time of the process (s)', (r) => (r.cpuMs === undefined ? null : seconds(r.cpuMs))],
          ['control plane CPU up to convergence (s): API server / etcd / controller-manager / simulator', (r) => controlPlaneCpu(r.window)],
          ['API server CPU per Microservice (ms)', (r) => (r.window?.processes.apiserver === undefined ? null : round(r.window.processes.apiserver / n, 1))],
          [`CPUs of the machine busy on average up to convergence (of ${cpus().length})`, (r) => (r.window ? round(r.window.machineBusyCpus, 2) : null)],
          ['CPU up to all ResourcesApplied (s): API server / etcd / controller-manager / simulator / contender / bench observers', (r) => appliedCpu(r)],
          ['machine CPU per Microservice up to all ResourcesApplied (ms; CPUs busy × time ÷ N)', (r) => (r.appliedWindow ? round((r.appliedWindow.machineBusyCpus * r.appliedMs!) / n, 1) : null)],
        ]);
      }),
      ...settings.map((s) => {
        const rs = results.filter((r) => r.run.setting === s && r.ok);
        const keys = [...new Set(rs.flatMap((r) => Object.keys(r.requests!.byVerb)))].sort((x, y) => {
          const total = (k: string) => rs.reduce((sum, r) => sum + (r.requests!.byVerb[k] ?? 0), 0);
          return total(y) - total(x) || (x < y ? -1 : 1);
        });
        return {
          title: `${SETTING_TITLES[s]}: API requests per Microservice up to convergence, by verb and resource`,
          columns: ['request', ...rs.map((r) => CONTENDER_TITLES[r.run.contender])],
          rows: keys.map((k) => [k, ...rs.map((r) => (r.requests!.byVerb[k] === undefined ? null : round(r.requests!.byVerb[k]! / n, 3)))]),
        };
      }),
      ...settings.flatMap((s) => {
        const rs = results.filter((r) => r.run.setting === s && r.ok && r.requestTimes);
        if (rs.length === 0) return [];
        const keys = [...new Set(rs.flatMap((r) => Object.keys(r.requestTimes!)))].filter((k) => !k.startsWith('watch ')).sort();
        return [{
          title: `${SETTING_TITLES[s]}: mean time per request (ms) as the contender's own client timed it, from send to answer (count in brackets)`,
          columns: ['request', ...rs.map((r) => CONTENDER_TITLES[r.run.contender])],
          rows: keys.map((k) => [k, ...rs.map((r) => { const t = r.requestTimes![k]; return t ? `${round(t.meanMs, 1)} (${t.count})` : null; })]),
        }];
      }),
    ];

    const series: ChartSeries[] = [];
    const chartSetting = settings[0]!;
    for (const r of results.filter((x) => x.ok && x.run.setting === chartSetting)) {
      series.push(curve(`${CONTENDER_TITLES[r.run.contender]} ResourcesApplied`, r.appliedTimes!));
      if (r.readyMs !== undefined) series.push(curve(`${CONTENDER_TITLES[r.run.contender]} Ready`, r.readyTimes!));
    }
    notes.push(
      'controller-runtime is this repository’s port of the Microservice reconcile (same Deployment, Service and status content; no Events, no live owner check before re-creating a child, no 10 s periodic check); Kopf is the seed’s operator, whose health report (Ready) is added in the seed’s style and runs on its 10 s timer, so its Ready times include up to two timer periods.',
      'The plain client writes no Ready status: its "all Ready" is empty, and its memory is its own peak (it exits when done).',
      ...(rounds > 1 ? [`${rounds} rounds: each setting's contenders ran ${rounds} times, every second round in reverse order; the tables other than the rounds table show each contender's median run by all ResourcesApplied (for an even number of rounds, the faster of the two middle runs; the rounds table's medians are the usual ones, the mean of the two middle values).`] : []),
      `Before each run's clock started, the bench waited for 3 s in a row with fewer than ${QUIET_BELOW_CPUS} of the machine's ${cpus().length} CPUs busy (at most 60 s): ${all.filter((r) => r.quietWait).map((r) => `${seconds(r.quietWait!.ms)}${r.quietWait!.quiet ? '' : ' (not quiet)'}`).join(', ')} s.`,
      `After each run but the last, etcd was compacted and defragmented (its file before, MB: ${all.filter((r) => r.etcd).map((r) => round(r.etcd!.beforeMb, 0)).join(', ')}).`,
      `Deleting a run's namespace (${n} Deployments, ReplicaSets, Services, ${2 * n} pods) took ${all.filter((r) => r.namespaceDeletionMs !== undefined).map((r) => seconds(r.namespaceDeletionMs!)).join(', ')} s; each finished before the next run started.`,
    );
    if (rounds > 1) tables.splice(1, 0, ...settings.map((s) => roundsTable(all, s, n)));
    const failed = all.filter((r) => !r.ok);
    if (failed.length > 0) {
      throw new Error(`compare: ${failed.length} of ${all.length} runs failed: ${failed.map((r) => `${r.run.setting}/${r.run.contender}: ${r.error}`).join('; ')}`);
    }
    const headlineRuns = results.filter((r) => r.run.setting === chartSetting);
    const headlineRatios = roundRatios(all, chartSetting);
    return {
      headline: `${n} Microservices, ${SETTING_TITLES[chartSetting]}: all ResourcesApplied in ${headlineRuns.map((r) => `${CONTENDER_TITLES[r.run.contender]} ${seconds(r.appliedMs!)} s`).join(', ')}${rounds > 1 ? ` (medians of ${rounds} rounds${headlineRatios.length ? `; Converge ÷ plain client ${headlineRatios.map((x) => round(x, 2)).join(', ')}, median ${round(median(headlineRatios), 2)}` : ''})` : ''}`,
      figures,
      tables,
      charts: series.length ? [{ title: `Compare (${SETTING_TITLES[chartSetting]}): objects converged over time (N = ${n})`, xLabel: 'seconds since start', yLabel: 'Microservices', series }] : [],
      notes,
    };
  },
};

/** CPU per process up to all ResourcesApplied; a plain client that exited first is counted by its own report. */
function appliedCpu(r: RunResult): Cell {
  if (!r.appliedWindow) return null;
  const p = { ...r.appliedWindow.processes };
  if (p.contender === undefined && r.cpuMs !== undefined) p.contender = r.cpuMs;
  return ['apiserver', 'etcd', 'controller-manager', 'simulator', 'contender', 'bench'].map((c) => (p[c] === undefined ? '—' : String(seconds(p[c]!)))).join(' / ');
}

function controlPlaneCpu(window: RunResult['window']): Cell {
  if (!window) return null;
  const p = window.processes;
  return ['apiserver', 'etcd', 'controller-manager', 'simulator'].map((c) => (p[c] === undefined ? '—' : String(seconds(p[c]!)))).join(' / ');
}
