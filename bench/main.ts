/**
 * `npm run bench`: how fast the operators converge, what they cost, and how that grows.
 *
 * Starts a local control plane of its own (audit log on), runs the selected scenarios in a fixed
 * order (cold start → idle cost → repair → churn on one fleet of Microservices, then memory and
 * providers with operators of their own), and writes `report.json`, `report.md` and `chart.svg`
 * into `bench/out/<timestamp>/` (the default run is also copied to `bench/reports/latest/`).
 * Operators run as `converge run` child processes; `--profile` adds a CPU profile of each.
 *
 * Contract: blocks until done; stops everything it started (control plane, operators, vendor
 * simulator) on success, failure and SIGINT/SIGTERM. A failing scenario is recorded in the
 * report and the others still run; the exit code is 1 when any failed, 2 on bad flags.
 * `npm run bench -- --help` lists the flags.
 * @module
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchUsageError, USAGE, parseBenchArgs } from './support/options.ts';
import type { BenchOptions } from './support/options.ts';
import { openSession } from './support/session.ts';
import { killAllChildren } from './support/child-process.ts';
import { convergeScript, useOperatorBuild } from './support/shipped-cli.ts';
import { useOperatorNodeFlags } from './support/operator.ts';
import type { Session } from './support/session.ts';
import { describeMachine } from './support/machine.ts';
import { FLEET_SCENARIOS, SCENARIOS, startFleet } from './scenarios/index.ts';
import type { Fleet } from './scenarios/index.ts';
import { CAVEAT, copyReport, hotFunctions, readProfile, writeReport } from './report/index.ts';
import type { ProfileSummary, Report, ScenarioReport } from './report/index.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

function timestamp(d: Date): string {
  return d.toISOString().replace(/[:]/g, '-').replace(/\..+$/, '');
}

export async function runBench(options: BenchOptions, argv: string[]): Promise<{ report: Report; outDir: string; ok: boolean }> {
  const started = new Date();
  const outDir = resolve(options.out ?? join(ROOT, 'bench', 'out', timestamp(started)));
  mkdirSync(outDir, { recursive: true });
  const t0 = performance.now();
  const log = (message: string) => {
    const line = `[bench +${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${message}`;
    process.stderr.write(`${line}\n`);
    appendFileSync(join(outDir, 'bench.log'), `${line}\n`);
  };
  log(`output: ${relative(process.cwd(), outDir) || outDir}; scenarios: ${options.scenarios.join(', ')}; ${options.microservices} Microservices`);
  let session: Session | undefined;
  // Stays installed until the end, so the control-plane launcher's own handler defers to it
  // (that handler re-raises the signal, and a process killed by a signal skips 'exit' hooks).
  let interrupted = false;
  const stopOnSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping`);
    killAllChildren();
    void (async () => {
      await session?.close().catch(() => undefined);
      process.exit(130);
    })();
  };
  process.on('SIGINT', stopOnSignal);
  process.on('SIGTERM', stopOnSignal);
  let fleet: Promise<Fleet> | undefined;
  try {
    useOperatorBuild(options.operatorBuild);
    useOperatorNodeFlags(options.operatorNodeFlags);
    await convergeScript(log);
    session = await openSession({ outDir, profile: options.profile, splitCpus: options.splitCpus, log });
    const s = session;
    const machine = await describeMachine(s.client, ROOT);
    log(`machine: ${machine.cpus} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, Kubernetes ${machine.kubernetes}, load ${machine.loadAverageAtStart.join(' ')}`);
    const ctx = { session: s, options, fleet: () => (fleet ??= startFleet(s, options)) };
    const results: ScenarioReport[] = [];
    const lastFleetScenario = [...FLEET_SCENARIOS].reverse().find((n) => options.scenarios.includes(n));
    for (const name of options.scenarios) {
      if (interrupted) break;
      const scenario = SCENARIOS[name];
      const st = performance.now();
      log(`▶ ${scenario.title}`);
      try {
        const result = await scenario.run(ctx);
        results.push({ name, title: scenario.title, description: scenario.description, status: 'ok', durationSeconds: (performance.now() - st) / 1000, ...result });
        log(`✔ ${scenario.title}: ${result.headline}`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        results.push({ name, title: scenario.title, description: scenario.description, status: 'failed', error: message, durationSeconds: (performance.now() - st) / 1000 });
        log(`✘ ${scenario.title}: ${err instanceof Error ? (err.stack ?? message) : message}`);
      }
      if (name === lastFleetScenario && fleet) {
        log('stopping the fleet operator');
        await fleet.then((f) => f.stop()).catch(() => undefined);
      }
    }
    if (fleet) await fleet.then((f) => f.stop()).catch(() => undefined);
    const profiles: ProfileSummary[] = [];
    if (s.profileDir && existsSync(s.profileDir)) {
      for (const f of readdirSync(s.profileDir).filter((n) => n.endsWith('.cpuprofile')).sort()) {
        try {
          const { totalMs, functions } = hotFunctions(readProfile(join(s.profileDir, f)), ROOT, 15);
          profiles.push({ file: `profiles/${f}`, totalMs, top: functions });
        } catch (err) {
          log(`cannot read profile ${f}: ${(err as Error).message}`);
        }
      }
    }
    const report: Report = {
      schemaVersion: 1,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      durationSeconds: (performance.now() - t0) / 1000,
      command: ['npm run bench', ...(argv.length ? ['--', ...argv] : [])].join(' '),
      options,
      machine,
      ...(s.cpuSplit ? { cpuSplit: s.cpuSplit } : {}),
      loadAverageAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
      caveat: CAVEAT,
      scenarios: results,
      ...(profiles.length ? { profiles } : {}),
    };
    writeReport(report, outDir);
    const ok = results.every((r) => r.status === 'ok');
    log(`report: ${relative(process.cwd(), join(outDir, 'report.md'))}`);
    if (options.latest && ok) {
      const dest = join(ROOT, 'bench', 'reports', 'latest');
      copyReport(outDir, dest);
      log(`copied to ${relative(process.cwd(), dest)}`);
    }
    return { report, outDir, ok };
  } finally {
    await fleet?.then((f) => f.stop()).catch(() => undefined);
    await session?.close();
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
  }
}

async function main(argv: string[]): Promise<number> {
  let options: BenchOptions | undefined;
  try {
    options = parseBenchArgs(argv);
  } catch (err) {
    if (err instanceof BenchUsageError) {
      process.stderr.write(`bench: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  if (!options) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { ok } = await runBench(options, argv);
  return ok ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
