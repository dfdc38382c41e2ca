/**
 * The rounds of the compare scenario (`--compare-rounds n`): which run of each contender stands
 * for it (the median one), Converge ÷ the plain client in each round, and the table of every
 * round with its order. Pure: no I/O.
 * @module
 */
import { CONTENDER_TITLES, SETTING_TITLES } from '../comparison/contenders.ts';
import type { ContenderRequests, ContenderRun, RequestTimes, SettingName } from '../comparison/contenders.ts';
import { median, medianInterval, round, seconds } from '../support/stats.ts';
import type { StepPoint } from './step-model.ts';
import type { Cell, Table } from './types.ts';

/** One contender's run: its times, requests, memory and the control plane's CPU meanwhile. */
export interface RunResult {
  run: ContenderRun;
  ok: boolean;
  error?: string;
  appliedMs?: number;
  deploymentsAvailableMs?: number;
  readyMs?: number;
  appliedTimes?: number[];
  readyTimes?: number[];
  requests?: ContenderRequests;
  /** The same, up to all ResourcesApplied (the goal's window): what the contender wrote on the way there. */
  requestsToApplied?: ContenderRequests;
  rssBytes?: number;
  peakRssBytes?: number;
  cpuMs?: number;
  namespaceDeletionMs?: number;
  /** How long the run waited for a quiet machine before its clock started, and whether it got quiet. */
  quietWait?: { ms: number; quiet: boolean };
  /** etcd's file before the compaction and defragmentation that followed the run (MB), and the compacted revision. */
  etcd?: { beforeMb: number; revision: number };
  /** Requests by `verb resource` as the contender's own client timed them, up to convergence (Converge and the plain client). */
  requestTimes?: RequestTimes;
  /** From the contender's start to convergence: CPU of each control-plane component (ms) and CPUs the machine kept busy. */
  window?: { processes: Record<string, number>; machineBusyCpus: number; machineStealCpus?: number };
  /**
   * From the contender's start to all ResourcesApplied: CPU (ms) of each control-plane component,
   * of the contender's process (`contender`) and of the benchmark's own process (`bench`, whose
   * observers watch the same objects for every contender), and CPUs the machine kept busy.
   */
  appliedWindow?: { processes: Record<string, number>; machineBusyCpus: number; machineStealCpus?: number };
  /** The API server's own figures up to all ResourcesApplied: mean request times on the contender's path and watch events sent. */
  apiServer?: { latency: Record<string, { count: number; meanMs: number }>; watchEvents: Record<string, number> };
}

/** A setting's runs for the step model (step-model.ts): those that converged and have the API server's IPAddress create time. */
export function stepPoints(all: readonly RunResult[], setting: SettingName): StepPoint[] {
  return all
    .filter((r) => r.run.setting === setting && r.ok && r.appliedMs !== undefined && r.apiServer?.latency['POST ipaddresses'])
    .map((r) => ({ contender: r.run.contender, appliedSeconds: r.appliedMs! / 1000, ipAddressCreateMs: r.apiServer!.latency['POST ipaddresses']!.meanMs }));
}

/**
 * One run per setting and contender: the one with the median all-ResourcesApplied time (the lower
 * of the two middle ones for an even count), or a failed run when any failed. With one round,
 * the runs themselves.
 */
export function medianRuns(all: RunResult[]): RunResult[] {
  const groups = new Map<string, RunResult[]>();
  for (const r of all) {
    const k = `${r.run.setting}/${r.run.contender}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()].map((rs) => {
    const failed = rs.find((r) => !r.ok);
    if (failed) return failed;
    const sorted = [...rs].sort((a, b) => a.appliedMs! - b.appliedMs!);
    return sorted[Math.floor((sorted.length - 1) / 2)]!;
  });
}

/** Converge's all-ResourcesApplied time ÷ the plain client's, in each round where both succeeded. */
export function roundRatios(all: RunResult[], setting: SettingName): number[] {
  const ratios: number[] = [];
  for (const r of all.filter((x) => x.run.setting === setting && x.run.contender === 'converge' && x.ok)) {
    const plain = all.find((x) => x.run.setting === setting && x.run.contender === 'minimal-client' && x.run.round === r.run.round && x.ok);
    if (plain) ratios.push(r.appliedMs! / plain.appliedMs!);
  }
  return ratios;
}

/** Every round of one setting: the order the contenders ran in and their all-ResourcesApplied times. */
export function roundsTable(all: RunResult[], setting: SettingName, n: number): Table {
  const runs = all.filter((r) => r.run.setting === setting);
  const contenders = [...new Set(runs.map((r) => r.run.contender))];
  const roundNumbers = [...new Set(runs.map((r) => r.run.round))];
  const withRatio = contenders.includes('converge') && contenders.includes('minimal-client');
  const cell = (r: RunResult | undefined): Cell => (!r ? null : r.ok ? seconds(r.appliedMs!) : 'failed');
  const ratios = roundRatios(all, setting);
  return {
    title: `${SETTING_TITLES[setting]}: all ResourcesApplied for ${n} Microservices in every round (s)`,
    columns: ['round', 'order', ...contenders.map((c) => CONTENDER_TITLES[c]), ...(withRatio ? ['Converge ÷ plain client'] : [])],
    rows: [
      ...roundNumbers.map((k) => {
        const inRound = runs.filter((r) => r.run.round === k);
        const converge = inRound.find((r) => r.run.contender === 'converge');
        const plain = inRound.find((r) => r.run.contender === 'minimal-client');
        return [
          String(k),
          inRound.map((r) => CONTENDER_TITLES[r.run.contender]).join(' → '),
          ...contenders.map((c) => cell(inRound.find((r) => r.run.contender === c))),
          ...(withRatio ? [converge?.ok && plain?.ok ? round(converge.appliedMs! / plain.appliedMs!, 2) : null] : []),
        ];
      }),
      [
        'median',
        '',
        ...contenders.map((c) => {
          const ok = runs.filter((r) => r.run.contender === c && r.ok);
          return ok.length ? seconds(median(ok.map((r) => r.appliedMs!))) : null;
        }),
        ...(withRatio ? [ratios.length ? round(median(ratios), 2) : null] : []),
      ],
    ],
  };
}

/** Issue 17, goal 1: with no client-side limit, Converge within 1.1 × the plain client. */
export const GOAL_CONVERGE_OVER_PLAIN_CLIENT = 1.1;

/**
 * What a set of rounds says about a goal on the median of Converge ÷ the plain client: the
 * median, the order-statistics interval that holds the median of such rounds (95 % or the
 * widest the rounds allow) and whether the whole interval is on one side of the goal. A caller
 * that already holds `medianInterval(ratios)` passes it in.
 */
export function ratioVerdict(ratios: readonly number[], interval = medianInterval(ratios), goal = GOAL_CONVERGE_OVER_PLAIN_CLIENT): string | undefined {
  if (!interval) return undefined;
  const { low, high, coverage } = interval;
  const verdict = high <= goal ? `met: the whole interval is at or under ${goal}` : low > goal ? `not met: the whole interval is over ${goal}` : `not settled by these rounds: the interval spans ${goal}`;
  return `Converge ÷ plain client over ${ratios.length} rounds: median ${round(median([...ratios]), 2)}; the median of such rounds lies between ${round(low, 2)} and ${round(high, 2)} with ${round(coverage * 100, 1)} % confidence (order statistics, no assumption about the distribution). Goal ≤ ${goal} × (issue 17): ${verdict}.`;
}
