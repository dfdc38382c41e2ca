/**
 * Compare (issue 17): Converge side by side with a controller-runtime implementation of the same
 * reconcile (bench/comparison/controller-runtime), the seed's Kopf operator
 * (bench/comparison/kopf) and a plain client doing only the minimal writes
 * (bench/comparison/minimal-client.ts), on the same control plane.
 *
 * The plan (bench/comparison/contenders.ts: each framework's defaults; a client limit with the
 * same workers; no client-side limit), optionally in alternating rounds after an unmeasured
 * warm-up run, and its report: the figures, the rounds table with Converge ÷ plain client and the
 * interval of its median, the step model's fit, and per setting the contenders' times, writes,
 * memory and CPU. Each run is `runOne` in compare-run.ts: a fresh namespace with the same N
 * Microservices, timed from the spawn of the contender's process, on a quiet machine and an etcd
 * compacted after the run before.
 * @module
 */
import { cpus } from 'node:os';
import { ensureControllerRuntimeBinary, ensureKopfEnvironment } from '../comparison/build.ts';
import { CONTENDER_TITLES, SETTING_TITLES, comparisonPlan } from '../comparison/contenders.ts';
import type { ContenderName, SettingName } from '../comparison/contenders.ts';
import { medianRuns, ratioVerdict, roundRatios, roundsTable, stepPoints } from './compare-rounds.ts';
import { fitStepModel, stepModelNote } from './step-model.ts';
import type { RunResult } from './compare-rounds.ts';
import { QUIET_BELOW_CPUS, runOne } from './compare-run.ts';
import type { ContenderPaths } from './compare-run.ts';
import { megabytes as mb, median, medianInterval, round, seconds } from '../support/stats.ts';
import { curve } from './cold-start.ts';
import type { Cell, ChartSeries, Scenario, Table } from './types.ts';

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
    const paths: ContenderPaths = {};
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
