/**
 * `npm test`: unit tests, then integration tests on ONE shared local control plane.
 *
 *   npm test                      unit tests, then everything under test/ on the control plane
 *   npm test -- --unit            unit tests only (src/**, examples/**, bench/**)
 *   npm test -- --integration     integration tests only
 *   npm test -- queue cache       only test files whose path contains "queue" or "cache"
 *   npm test -- --test-name-pattern=x   other --flags are passed to `node --test`
 *
 * Integration files run two at a time (`--test-concurrency=2`; CONVERGE_TEST_CONCURRENCY sets
 * another), each in its own process, with a default per-test timeout of 120 s
 * (CONVERGE_TEST_TIMEOUT_MS; a test may set its own `timeout`). A file whose process is still
 * alive a minute after its last test fails, saying what keeps it alive
 * (test/support/exit-watchdog.ts; CONVERGE_TEST_EXIT_GRACE_MS), instead of holding up the run;
 * an integration file whose main thread stops running for 3 minutes is killed, with its stack
 * (test/support/blocked-watchdog.ts; CONVERGE_TEST_BLOCKED_LIMIT_MS); and a run in which no test
 * has finished for 20 minutes is ended, with the processes it waits for and their states
 * (scripts/stall-watch.ts; CONVERGE_TEST_STALL_MS).
 * Files named `*.serial.test.ts` run afterwards, one at a time: only they may stop the API server.
 * Test files find the cluster through these variables (see test/support/cluster.ts):
 *   CONVERGE_TEST_KUBECONFIG, CONVERGE_TEST_SERVER, CONVERGE_TEST_AUDIT_LOG, CONVERGE_TEST_ETCD,
 *   CONVERGE_TEST_CONTROL_URL, CONVERGE_TEST_STATE_DIR, CONVERGE_TEST_CONTROL_PLANE_BIN, CONVERGE_TEST_NODES.
 * The control plane is stopped in all cases; when integration tests fail, component logs are
 * copied to .converge/test-logs/. The output ends with node's summary lines (combined totals
 * when more than one phase ran), then every failed test again with its error (a CI that keeps
 * only the log's tail still shows why); the exit code is non-zero when any phase failed.
 * @module
 */
import { spawn } from 'node:child_process';
import { copyFileSync, globSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureControlPlaneBinary, serveControlEndpoint, startControlPlane } from '@converge/envtest';
import type { ComponentName } from '@converge/envtest';
import { KubeClient, loadKubeConfig } from '@converge/runtime';
import { startSuiteWebhook } from '../test/support/suite-webhook.ts';
import { formatFailures } from './failure-digest.ts';
import { watchForStall } from './stall-watch.ts';
import { readReport, TOTALS_KEYS, type FailureRecord, type RunTotals } from './test-reporter.ts';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const argv = process.argv.slice(2);
const unitOnly = argv.includes('--unit');
const integrationOnly = argv.includes('--integration');
const passThrough = argv.filter((a) => a.startsWith('-') && a !== '--unit' && a !== '--integration');
const filters = argv.filter((a) => !a.startsWith('-')).map((f) => f.replace(/^\.\//, ''));
const testTimeoutMs = Number(process.env.CONVERGE_TEST_TIMEOUT_MS ?? 120_000);
// No test finished for this long ends the run, with a report of what it waits for
// (scripts/stall-watch.ts). The longest file takes ≈ 5 min, and files are reported in order.
const stallMs = Number(process.env.CONVERGE_TEST_STALL_MS ?? Math.max(20 * 60_000, 2 * testTimeoutMs));
// Two. The integration files mostly wait (on the API server, timers, child processes): on the
// 2-core reference machine two at a time left the CPUs ~13 % idle, and three took the parallel
// phase from 1,512–1,556 s to 1,209–1,336 s; after three timing races were mended, four runs at
// three in a row were clean here. But CI's one run at three (stop 62) hung in a file that printed
// nothing for an hour, a hang no run at two has shown and whose cause is not known: two stays the
// default until it is (the watchdogs above now end such a hang with a report).
// CONVERGE_TEST_CONCURRENCY=3 runs three.
const integrationConcurrency = Number(process.env.CONVERGE_TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(integrationConcurrency) || integrationConcurrency < 1) {
  process.stderr.write(`npm test: CONVERGE_TEST_CONCURRENCY must be a whole number of at least 1, got ${JSON.stringify(process.env.CONVERGE_TEST_CONCURRENCY)}\n`);
  process.exit(2);
}

function find(patterns: string[]): string[] {
  const files = globSync(patterns, { cwd: root, exclude: (p) => p.includes('node_modules') })
    .map((f) => relative(root, resolve(root, f)))
    .sort();
  return filters.length === 0 ? files : files.filter((f) => filters.some((x) => f.includes(x)));
}


/**
 * Integration files only: a file whose main thread stops running fails within minutes, with its
 * stack (test/support/blocked-watchdog.ts). Its watcher thread costs ≈ 0.1 s of CPU per file, which
 * the unit phase's 176 short files would pay for little.
 */
const INTEGRATION_PRELOADS = ['./test/support/blocked-watchdog.ts'];

let currentChild: ReturnType<typeof spawn> | undefined;
let interrupted: NodeJS.Signals | undefined;

/** Every phase's failures, repeated at the end of the output (scripts/failure-digest.ts). */
const failures: FailureRecord[] = [];

/** Runs `node --test` on files; spec output to our stdout, totals and failures from our reporter's file. */
async function runNodeTest(files: string[], concurrency: number, env: NodeJS.ProcessEnv, preloads: string[] = []): Promise<{ code: number; totals: RunTotals | undefined }> {
  const reportDir = mkdtempSync(join(tmpdir(), 'converge-test-'));
  const reportFile = join(reportDir, 'report.jsonl');
  try {
    const args = [
      '--test',
      // CONVERGE_FC_SEED replays a property test's failure (test/support/fast-check-seed.ts).
      '--import=./test/support/fast-check-seed.ts',
      // A file whose process outlives its tests by a minute fails, saying what keeps it alive,
      // instead of holding up the run until CI's limit (test/support/exit-watchdog.ts).
      '--import=./test/support/exit-watchdog.ts',
      ...preloads.map((p) => `--import=${p}`),
      `--test-concurrency=${concurrency}`,
      `--test-timeout=${testTimeoutMs}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${join(root, 'scripts', 'test-reporter.ts')}`,
      `--test-reporter-destination=${reportFile}`,
      ...passThrough,
      ...files,
    ];
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env });
    currentChild = child;
    let stalled: string | undefined;
    const watch = watchForStall({
      runner: child,
      reportFile,
      stallMs,
      onStall: (report) => {
        stalled = report;
        process.stderr.write(`\n${report}\n`);
      },
    });
    const exit = await new Promise<number>((res) => child.once('exit', (c, s) => res(c ?? (s ? 128 : 1))));
    watch.stop();
    currentChild = undefined;
    const report = readReport(reportText(reportFile));
    failures.push(...report.failures.map((f) => ({ ...f, location: f.location?.startsWith(`${root}/`) ? relative(root, f.location) : f.location })));
    if (stalled) failures.push({ path: ['the run stalled'], location: undefined, failureType: 'stalled', error: stalled });
    return { code: stalled ? exit || 1 : exit, totals: report.totals };
  } finally {
    rmSync(reportDir, { recursive: true, force: true });
  }
}

/** The reporter's file; empty when the runner died before writing it. */
function reportText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function printSummary(summaries: (RunTotals | undefined)[]): void {
  const lines = TOTALS_KEYS.map((k) => {
    const total = summaries.reduce((acc, s) => acc + (s?.[k] ?? 0), 0);
    return `ℹ ${k} ${k === 'duration_ms' ? total.toFixed(3) : total}`;
  });
  process.stdout.write(`\nℹ all phases combined\n${lines.join('\n')}\n`);
}

async function main(): Promise<number> {
  const forward = (sig: NodeJS.Signals) => {
    interrupted = sig;
    currentChild?.kill(sig);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);

  const summaries: (RunTotals | undefined)[] = [];
  let failed = false;

  const unitFiles = integrationOnly ? [] : find(['packages/*/src/**/*.test.ts', 'examples/**/*.test.ts', 'bench/**/*.test.ts']);
  if (unitFiles.length > 0) {
    process.stdout.write(`▶ unit tests (${unitFiles.length} files)\n`);
    const { code, totals } = await runNodeTest(unitFiles, Number(process.env.CONVERGE_UNIT_CONCURRENCY ?? 2), {
      ...process.env,
      CONVERGE_TEST_UNIT: '1',
    });
    summaries.push(totals);
    failed ||= code !== 0;
  }
  if (interrupted) return 130;

  const allIntegration = unitOnly ? [] : find(['test/**/*.test.ts']);
  const serialFiles = allIntegration.filter((f) => f.endsWith('.serial.test.ts'));
  const parallelFiles = allIntegration.filter((f) => !f.endsWith('.serial.test.ts'));
  if (allIntegration.length > 0) {
    const progress = (m: string) => process.stderr.write(`[control plane] ${m}\n`);
    const binary = await ensureControlPlaneBinary({ onProgress: progress });
    const nodes = Number(process.env.CONVERGE_TEST_NODE_COUNT ?? 2);
    let componentDied: string | undefined;
    const cp = await startControlPlane({
      binary,
      auditLog: true,
      nodes,
      onProgress: progress,
      onUnexpectedExit: (c: ComponentName, code, signal) => {
        componentDied = `${c} exited unexpectedly (code ${code}, signal ${signal})`;
        process.stderr.write(`[control plane] ${componentDied}\n`);
      },
    });
    const control = await serveControlEndpoint(cp);
    // The cluster's conversion webhook, as a cluster always has its operators' one running
    // (test/support/suite-webhook.ts); the CRDs are installed pointing at it.
    const suiteClient = new KubeClient({ kubeConfig: loadKubeConfig(cp.kubeconfigPath), userAgent: 'converge-test-harness' });
    const webhook = await startSuiteWebhook(suiteClient, cp.stateDir);
    let integrationFailed = false;
    try {
      const env: NodeJS.ProcessEnv = {
        ...webhook.env,
        ...process.env,
        CONVERGE_TEST_KUBECONFIG: cp.kubeconfigPath,
        CONVERGE_TEST_SERVER: cp.server,
        CONVERGE_TEST_AUDIT_LOG: cp.auditLogPath,
        CONVERGE_TEST_ETCD: cp.etcdUrl,
        CONVERGE_TEST_CONTROL_URL: control.url,
        CONVERGE_TEST_STATE_DIR: cp.stateDir,
        CONVERGE_TEST_CONTROL_PLANE_BIN: cp.binary,
        CONVERGE_TEST_NODES: cp.nodeNames.join(','),
      };
      delete env.CONVERGE_TEST_STANDALONE;
      if (parallelFiles.length > 0 && !interrupted) {
        process.stdout.write(`▶ integration tests (${parallelFiles.length} files, control plane ${cp.server})\n`);
        const { code, totals } = await runNodeTest(parallelFiles, integrationConcurrency, env, INTEGRATION_PRELOADS);
        summaries.push(totals);
        integrationFailed ||= code !== 0;
      }
      if (serialFiles.length > 0 && !interrupted) {
        process.stdout.write(`▶ serial integration tests (${serialFiles.length} files, one at a time)\n`);
        const { code, totals } = await runNodeTest(serialFiles, 1, env, INTEGRATION_PRELOADS);
        summaries.push(totals);
        integrationFailed ||= code !== 0;
      }
      if (componentDied) integrationFailed = true;
    } finally {
      await webhook.stop();
      await suiteClient.close();
      await control.close();
      if (integrationFailed) {
        const dest = join(root, '.converge', 'test-logs');
        mkdirSync(dest, { recursive: true });
        for (const c of ['etcd', 'apiserver', 'controller-manager', 'simulator'] as const) {
          try {
            copyFileSync(cp.logPath(c), join(dest, `${c}.log`));
          } catch {
            // component never started
          }
        }
        process.stderr.write(`[control plane] component logs copied to ${relative(process.cwd(), dest) || dest}\n`);
      }
      await cp.stop();
    }
    failed ||= integrationFailed;
  }

  if (summaries.length === 0) {
    process.stderr.write(`no test files matched ${filters.length ? filters.join(', ') : '(any)'}\n`);
    return 1;
  }
  if (summaries.length > 1) printSummary(summaries);
  // Last, so that a CI keeping only the log's tail still shows why a test failed.
  const digest = formatFailures(failures);
  if (digest) process.stdout.write(`\n${digest}`);
  if (interrupted) return 130;
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`npm test: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
