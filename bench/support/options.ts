/**
 * Command-line flags of `npm run bench` and the size presets they start from.
 * Pure (parseBenchArgs throws BenchUsageError on bad input); unit-tested in options.test.ts.
 * @module
 */
import { parseArgs } from 'node:util';
import { CONTENDER_NAMES, SETTING_NAMES } from '../comparison/names.ts';
import type { ContenderName, SettingName } from '../comparison/names.ts';

export const SCENARIO_NAMES = ['cold-start', 'idle-cost', 'repair', 'churn', 'memory', 'providers', 'provider-signals', 'dashboard', 'cli-start'] as const;
/**
 * Run only when named in --scenarios: `compare` runs four operators 13 times (≈ 40 min at 500);
 * `service-creates` measures the control plane itself (the ClusterIP allocator behind goal 1).
 */
export const OPT_IN_SCENARIO_NAMES = ['compare', 'service-creates'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number] | (typeof OPT_IN_SCENARIO_NAMES)[number];
const ALL_SCENARIO_NAMES: readonly ScenarioName[] = [...SCENARIO_NAMES, ...OPT_IN_SCENARIO_NAMES];

export interface BenchOptions {
  /** The preset's name or the number given to --size. */
  size: string;
  scenarios: ScenarioName[];
  /** Microservices in the fleet (cold start, idle cost, repair, churn). */
  microservices: number;
  /** Spec changes per second, tried in this order until one is not kept up with. */
  churnRates: number[];
  churnStepSeconds: number;
  /** How many owned Services are deleted, one at a time. */
  repairs: number;
  idleSeconds: number;
  /** Cached-object counts at which the memory scenario measures the operator. */
  memoryObjects: number[];
  providers: number;
  /** DigitalHumanProviders of the provider-signals scenario, and how long it injects vendor changes. */
  signalProviders: number;
  signalSeconds: number;
  /** Objects per cluster for the dashboard scenario (two clusters), the status changes per second and for how long. */
  dashboardObjects: number;
  dashboardChangeRate: number;
  dashboardChangeSeconds: number;
  /** The simulated vendor's rate limit, and the operator's own limit towards it. */
  vendorRateLimit: { requestsPerSecond: number; burst: number };
  providerClientLimit: { requestsPerSecond: number; burst: number; maxConcurrency: number };
  providerHealthSeconds: number;
  /** Operator settings shared by the operator and the ceiling (same concurrency, same client limit). */
  workers: number;
  qps: number;
  burst: number;
  resyncSeconds: number;
  profile: boolean;
  /** The compare scenario's settings rows and contenders (bench/comparison/contenders.ts). */
  compareSettings: SettingName[];
  compareContenders: ContenderName[];
  /** How many times the compare scenario runs each setting's contenders (alternating their order). */
  compareRounds: number;
  /** The plain client also lists and reads Converge's four watches in its namespace (what watching costs the machine, apart from an operator's work). */
  plainClientWatches: boolean;
  /** The control plane on half of the CPUs, the benchmark and its contenders on the other half (cpu-split.ts). */
  splitCpus: boolean;
  /** How the operator runs: `shipped` (packed and installed, as in the image) or `source` (the TypeScript sources). */
  operatorBuild: 'shipped' | 'source';
  /** Node.js flags the operator is started with instead of the image's (OPERATOR_NODE_FLAGS); undefined: the image's. */
  operatorNodeFlags?: string[];
  /** Output directory (default bench/out/<timestamp>). */
  out?: string;
  /** Copy the report to bench/reports/latest (default: only for the default run). */
  latest: boolean;
  /** Whether every size-related flag kept its default (the run is "the default run"). */
  isDefaultRun: boolean;
}

type Preset = Pick<BenchOptions, 'microservices' | 'churnRates' | 'churnStepSeconds' | 'repairs' | 'idleSeconds' | 'memoryObjects' | 'providers' | 'signalProviders' | 'signalSeconds' | 'dashboardObjects'>;

export const PRESETS: Record<string, Preset> = {
  tiny: { microservices: 10, churnRates: [1, 2], churnStepSeconds: 5, repairs: 3, idleSeconds: 15, memoryObjects: [40], providers: 5, signalProviders: 10, signalSeconds: 30, dashboardObjects: 30 },
  small: { microservices: 100, churnRates: [1, 2, 5, 10], churnStepSeconds: 10, repairs: 10, idleSeconds: 30, memoryObjects: [400], providers: 20, signalProviders: 30, signalSeconds: 60, dashboardObjects: 200 },
  // 500, not 1,000: on the 2-core reference machine a 1,000 cold start alone takes ~5–6 min
  // (ceiling, its cleanup, operator; 4,000 simulated pods in all) and the whole run ~11 min.
  // `--size 1000` runs the 1,000 figures (ADR 0009).
  default: { microservices: 500, churnRates: [1, 2, 4, 8, 16], churnStepSeconds: 15, repairs: 30, idleSeconds: 60, memoryObjects: [1000, 2000], providers: 50, signalProviders: 100, signalSeconds: 120, dashboardObjects: 1000 },
};

export const DEFAULT_SIZE = 'default';

export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

export const USAGE = `Usage: npm run bench -- [flags]

Runs the benchmarks on a local control plane of their own and writes
bench/out/<timestamp>/{report.json,report.md,chart.svg}.

Flags:
  --scenarios <list>        comma-separated, from: ${ALL_SCENARIO_NAMES.join(', ')} (default: all but ${OPT_IN_SCENARIO_NAMES.join(', ')})
  --size <preset|N>         tiny | small | default, or a number of Microservices (e.g. 1000, 5000, 10000)
  --microservices <n>       Microservices in the fleet (cold start, idle cost, repair, churn)
  --churn-rates <list>      spec changes per second to try, ascending (e.g. 2,5,10,20)
  --churn-step-seconds <s>  how long each churn rate is sustained
  --repairs <n>             owned Services deleted one at a time
  --idle-seconds <s>        idle window after convergence
  --memory-objects <list>   cached-object counts to measure memory at (e.g. 1000,5000,10000)
  --providers <n>           DigitalHumanProviders against the vendor simulator
  --signal-providers <n>    providers of the provider-signals scenario (vendor changes → condition visible)
  --signal-seconds <s>      how long provider-signals injects health flips, suspensions and quota exhaustions
  --dashboard-objects <n>   objects per cluster in the dashboard scenario (two clusters)
  --dashboard-rate <n>      status changes per second in the dashboard scenario (default 10)
  --vendor-rps <n>          the simulated vendor's rate limit (default 5/s, burst 5)
  --workers <n>             concurrent reconciles, also used by the ceiling (default 4)
  --qps <n> --burst <n>     client-side rate limit towards the API server, operator and ceiling (default 50/100; --qps 0: none)
  --resync-seconds <s>      the operator's periodic check (default 10)
  --compare-settings <list> the compare scenario's rows, from: ${SETTING_NAMES.join(', ')} (default: all)
  --compare-contenders <list> from: ${CONTENDER_NAMES.join(', ')} (default: all)
  --compare-rounds <n>      run each setting's contenders n times, every second round in reverse order; tables show the median (default 1)
  --plain-client-watches    the compare scenario's plain client also lists and watches what Converge watches
                            (Microservices, Deployments, Services, EndpointSlices in its namespace), reading and
                            discarding every event: the watches' share of the gap, apart from the operator's work
  --split-cpus              the control plane on half of the CPUs, the benchmark and the operators it starts on the
                            other half (as on a cluster, where an operator never takes the API server's CPU); needs taskset
  --profile                 write CPU profiles of the operator processes (.cpuprofile, open in Chrome DevTools)
                            and, in compare, of the API server over each run's first 20 s (.apiserver.pprof)
  --operator-build <b>      shipped (default: the packed tarballs, compiled JavaScript, as the image) | source
  --operator-node-flags=<f> Node.js flags for the operator instead of the image's (e.g. "--max-semi-space-size=2"
                            to measure V8's optimizing compilers; "" for none); the report names them
  --out <dir>               output directory (default bench/out/<timestamp>)
  --latest / --no-latest    copy the report to bench/reports/latest (default: only for a default run)
  -h, --help                this help

Presets (--size):
${Object.entries(PRESETS).map(([name, p]) => `  ${name.padEnd(8)} ${p.microservices} Microservices, churn ${p.churnRates.join('/')} per s × ${p.churnStepSeconds} s, ${p.repairs} repairs, idle ${p.idleSeconds} s, memory at ${p.memoryObjects.join('/')} objects, ${p.providers} providers, ${p.signalProviders} signal providers × ${p.signalSeconds} s, dashboard 2 × ${p.dashboardObjects} objects`).join('\n')}
`;

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new BenchUsageError(`--${flag} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

function positive(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new BenchUsageError(`--${flag} must be a positive number, got ${JSON.stringify(v)}`);
  return n;
}

function list(flag: string, v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  const items = v.split(',').map((s) => s.trim()).filter(Boolean).map((s) => positive(flag, s)!);
  if (items.length === 0) throw new BenchUsageError(`--${flag} needs at least one number`);
  return items;
}

/** A comma-separated subset of `known`, in `known`'s order (all of it when the flag is absent). */
function names<T extends string>(flag: string, v: string | undefined, known: readonly T[]): T[] {
  if (v === undefined) return [...known];
  const asked = v.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = asked.filter((s) => !(known as readonly string[]).includes(s));
  if (unknown.length) throw new BenchUsageError(`--${flag}: unknown ${unknown.join(', ')}; choose from ${known.join(', ')}`);
  if (asked.length === 0) throw new BenchUsageError(`--${flag} needs at least one name`);
  return known.filter((k) => asked.includes(k));
}

function operatorBuild(v: string | undefined): 'shipped' | 'source' {
  if (v === undefined || v === 'shipped' || v === 'source') return v ?? 'shipped';
  throw new BenchUsageError(`--operator-build must be shipped or source, got ${JSON.stringify(v)}`);
}

/** Parses argv; returns undefined for --help. */
export function parseBenchArgs(argv: string[]): BenchOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        scenarios: { type: 'string' },
        size: { type: 'string' },
        microservices: { type: 'string' },
        'churn-rates': { type: 'string' },
        'churn-step-seconds': { type: 'string' },
        repairs: { type: 'string' },
        'idle-seconds': { type: 'string' },
        'memory-objects': { type: 'string' },
        providers: { type: 'string' },
        'signal-providers': { type: 'string' },
        'signal-seconds': { type: 'string' },
        'dashboard-objects': { type: 'string' },
        'dashboard-rate': { type: 'string' },
        'vendor-rps': { type: 'string' },
        workers: { type: 'string' },
        qps: { type: 'string' },
        burst: { type: 'string' },
        'resync-seconds': { type: 'string' },
        'compare-settings': { type: 'string' },
        'compare-contenders': { type: 'string' },
        'compare-rounds': { type: 'string' },
        'plain-client-watches': { type: 'boolean' },
        'split-cpus': { type: 'boolean' },
        profile: { type: 'boolean', default: false },
        out: { type: 'string' },
        'operator-build': { type: 'string' },
        'operator-node-flags': { type: 'string' },
        latest: { type: 'boolean' },
        'no-latest': { type: 'boolean' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new BenchUsageError((err as Error).message);
  }
  if (values.help) return undefined;

  const sizeArg = values.size ?? DEFAULT_SIZE;
  let preset: Preset;
  if (PRESETS[sizeArg]) {
    preset = PRESETS[sizeArg];
  } else {
    const n = positiveInt('size', sizeArg)!;
    // A number scales the fleet; the other dimensions keep the default preset, except memory,
    // which measures at the matching number of cached objects (four per Microservice).
    preset = { ...PRESETS[DEFAULT_SIZE]!, microservices: n, memoryObjects: [...new Set([1000, Math.min(n * 4, 10_000)])].sort((a, b) => a - b) };
  }

  let scenarios: ScenarioName[] = [...SCENARIO_NAMES];
  if (values.scenarios !== undefined) {
    const asked = values.scenarios.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = asked.filter((s) => !(ALL_SCENARIO_NAMES as readonly string[]).includes(s));
    if (unknown.length) throw new BenchUsageError(`unknown scenario(s) ${unknown.join(', ')}; choose from ${ALL_SCENARIO_NAMES.join(', ')}`);
    if (asked.length === 0) throw new BenchUsageError('--scenarios needs at least one scenario');
    // Always run in the canonical order (the fleet scenarios share state in that order).
    scenarios = ALL_SCENARIO_NAMES.filter((s) => asked.includes(s));
  }

  const churnRates = list('churn-rates', values['churn-rates']) ?? preset.churnRates;
  const vendorRps = positive('vendor-rps', values['vendor-rps']) ?? 5;
  const sizeFlags = ['size', 'scenarios', 'microservices', 'churn-rates', 'churn-step-seconds', 'repairs', 'idle-seconds', 'memory-objects', 'providers', 'signal-providers', 'signal-seconds', 'dashboard-objects', 'dashboard-rate', 'vendor-rps', 'workers', 'qps', 'burst', 'resync-seconds', 'compare-settings', 'compare-contenders', 'compare-rounds', 'plain-client-watches', 'split-cpus', 'operator-build'] as const;
  const isDefaultRun = !values.profile && sizeFlags.every((f) => values[f] === undefined || (f === 'size' && values.size === DEFAULT_SIZE));
  if (values.latest && values['no-latest']) throw new BenchUsageError('--latest and --no-latest exclude each other');
  return {
    size: sizeArg,
    scenarios,
    microservices: positiveInt('microservices', values.microservices) ?? preset.microservices,
    churnRates: [...churnRates].sort((a, b) => a - b),
    churnStepSeconds: positive('churn-step-seconds', values['churn-step-seconds']) ?? preset.churnStepSeconds,
    repairs: positiveInt('repairs', values.repairs) ?? preset.repairs,
    idleSeconds: positive('idle-seconds', values['idle-seconds']) ?? preset.idleSeconds,
    memoryObjects: (list('memory-objects', values['memory-objects']) ?? preset.memoryObjects).map(Math.round).sort((a, b) => a - b),
    providers: positiveInt('providers', values.providers) ?? preset.providers,
    signalProviders: positiveInt('signal-providers', values['signal-providers']) ?? preset.signalProviders,
    signalSeconds: positive('signal-seconds', values['signal-seconds']) ?? preset.signalSeconds,
    dashboardObjects: positiveInt('dashboard-objects', values['dashboard-objects']) ?? preset.dashboardObjects,
    dashboardChangeRate: positive('dashboard-rate', values['dashboard-rate']) ?? 10,
    dashboardChangeSeconds: sizeArg === 'tiny' ? 5 : 20,
    vendorRateLimit: { requestsPerSecond: vendorRps, burst: Math.max(1, Math.round(vendorRps)) },
    // Just under the vendor's limit, as an operator should be configured.
    providerClientLimit: { requestsPerSecond: Math.max(0.5, vendorRps * 0.8), burst: Math.max(1, Math.floor(vendorRps * 0.8)), maxConcurrency: 4 },
    providerHealthSeconds: 30,
    workers: positiveInt('workers', values.workers) ?? 4,
    qps: values.qps === '0' ? 0 : (positive('qps', values.qps) ?? 50),
    burst: positiveInt('burst', values.burst) ?? 100,
    resyncSeconds: positive('resync-seconds', values['resync-seconds']) ?? 10,
    profile: values.profile,
    compareSettings: names('compare-settings', values['compare-settings'], SETTING_NAMES),
    compareContenders: names('compare-contenders', values['compare-contenders'], CONTENDER_NAMES),
    compareRounds: positiveInt('compare-rounds', values['compare-rounds']) ?? 1,
    plainClientWatches: values['plain-client-watches'] ?? false,
    splitCpus: values['split-cpus'] ?? false,
    operatorBuild: operatorBuild(values['operator-build']),
    ...(values['operator-node-flags'] !== undefined ? { operatorNodeFlags: values['operator-node-flags'].split(/\s+/).filter(Boolean) } : {}),
    ...(values.out ? { out: values.out } : {}),
    latest: values.latest ?? (values['no-latest'] ? false : isDefaultRun),
    isDefaultRun,
  };
}
