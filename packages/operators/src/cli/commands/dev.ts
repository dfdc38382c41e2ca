/**
 * `converge dev` (`npm start`): the whole system on this machine, in one command. Builds the
 * local control plane if needed, starts it (etcd, kube-apiserver, kube-controller-manager, node
 * simulator), installs the CRDs, starts the vendor simulator and both operators (in this
 * process), applies the samples (todo-api; the `studio` DigitalHumanProvider and its Secret,
 * pointed at the simulator), then shows a live table refreshed every second until Ctrl-C.
 *
 * Contracts:
 * - Progress goes to stderr, one line per step, with the time since start; the table (or, with
 *   `--no-ui` or when stdout is not a terminal, one line per state change) goes to stdout.
 * - Ctrl-C / SIGTERM tears everything down in order: operators (graceful), vendor simulator,
 *   control plane. A second Ctrl-C kills at once (the launcher still reaps every component).
 * - `--exit-when-ready` exits 0 once both samples are Ready for their current generation, and 1
 *   when `--timeout` passes first (also while the control plane is still being built); a
 *   component that dies exits 1 (its logs are copied next to the kubeconfig, under `logs/`).
 *   A `--timeout` longer than a timer can wait (2^31-1 ms, ≈ 24.8 days) is a usage error.
 * - Operator logs (JSON) go to a file, never to the screen; the vendor token is never printed.
 * - While it runs, `vendor-sim.json` beside the kubeconfig (mode 0600) tells
 *   `converge vendor-sim fault` where the simulator is and its admin token; the screen shows
 *   the CA path and the fault commands. Removed at teardown.
 * @module
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import { KubeClient, createLogger, installCustomResourceDefinitions, loadKubeConfig } from '@converge/runtime';
import type { CustomResourceDefinitionV1, Manager } from '@converge/runtime';
import { ensureControlPlaneBinary, freePorts, startControlPlane } from '@converge/envtest';
import type { ComponentName, ControlPlane } from '@converge/envtest';
import { startVendorSimulator } from '../../vendor-sim/index.ts';
import type { VendorSimulator } from '../../vendor-sim/index.ts';
import { MicroserviceCrd } from '../../operators/microservice/api/index.ts';
import { DigitalHumanProviderCrd } from '../../operators/provider/api/index.ts';
import { runOperatorProcess } from '../../operators/operator-process.ts';
import { localConversionWebhook } from '../../operators/conversion-webhook.ts';
import { readStatus } from '../shared/status-reader.ts';
import { colorEnabled, createStyle, humanDuration, renderStatusText, statusLines } from '../views/index.ts';
import type { StatusDocument } from '../views/index.ts';
import {
  applySamples,
  commandsToTry,
  describeSamples,
  devOperatorConfig,
  loadSamples,
  prepareSamples,
  removeVendorSimHandle,
  renderDevScreen,
  sampleKeys,
  samplesReady,
  writeVendorSimHandle,
} from '../dev/index.ts';
import type { DevInfo } from '../dev/index.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { LOG_LEVEL_CHOICES, logLevelError } from '../shared/log-level.ts';
import { assetDir } from '../shared/package-assets.ts';
import { DEFAULT_LISTEN, ListenError, parseListen, startDashboard } from '../../dashboard/index.ts';
import type { RunningDashboard } from '../../dashboard/index.ts';

const DEV_DIR = join(process.cwd(), '.converge', 'dev');
const SAMPLES_DIR = join(assetDir('deploy'), 'samples');

const HELP = `Usage: converge dev [flags]      (npm start)

Run everything locally: build the Kubernetes control plane if needed, start it, install the CRDs,
start the vendor simulator and both operators, apply the samples (the todo-api Microservice; the
studio DigitalHumanProvider and its Secret), and show a live table until Ctrl-C, which stops it all.
Needs Node.js 24 and Go (for the first build, which takes minutes on a cold Go build cache).

Flags:
  --no-ui                  no live table: progress, then one line per state change (also when stdout
                           is not a terminal); keeps running until Ctrl-C
  --no-samples             do not apply the samples
  --namespace <ns>         namespace for the samples (default "default"; created if missing)
  --kubeconfig-out <path>  where to write the admin kubeconfig (default .converge/dev/kubeconfig)
  --log-file <path>        where the operators' JSON logs go (default .converge/dev/operators.log)
  --log-level <level>      operator log level: ${LOG_LEVEL_CHOICES} (default info)
  --dashboard <host:port>  where the web dashboard listens (default ${DEFAULT_LISTEN}; a free port when that
                           one is taken; "off" = no dashboard). Loopback addresses only
  --exit-when-ready        exit 0 once both samples are Ready (for tests and CI)
  --timeout <seconds>      with --exit-when-ready: exit 1 if they are not Ready by then (default 600,
                           at most 2147483 (24 days), counted from start, build included)
  -h, --help               show this help
`;

/** The longest a timer can wait: setTimeout fires at once (with a warning) past it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs('dev', HELP, argv, {
    'no-ui': { type: 'boolean', default: false },
    'no-samples': { type: 'boolean', default: false },
    namespace: { type: 'string', default: 'default' },
    'kubeconfig-out': { type: 'string' },
    'log-file': { type: 'string' },
    'log-level': { type: 'string', default: 'info' },
    dashboard: { type: 'string', default: DEFAULT_LISTEN },
    'exit-when-ready': { type: 'boolean', default: false },
    timeout: { type: 'string', default: '600' },
  });
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  const timeoutSeconds = Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0 || timeoutSeconds * 1000 > MAX_TIMER_MS) {
    process.stderr.write(`converge dev: --timeout must be a positive number of seconds, at most ${Math.floor(MAX_TIMER_MS / 1000)} (24 days), got "${values.timeout}"\n`);
    return 2;
  }
  if (values['exit-when-ready'] && values['no-samples']) {
    process.stderr.write('converge dev: --exit-when-ready waits for the samples; it cannot be used with --no-samples\n');
    return 2;
  }
  const badLevel = logLevelError('dev', values['log-level']);
  if (badLevel) {
    process.stderr.write(badLevel);
    return 2;
  }
  // Checked before a control plane is started for them (a minute, on a cold build cache).
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(values.namespace)) {
    process.stderr.write(`converge dev: --namespace must be a DNS label (lowercase letters, digits and '-', at most 63), got ${JSON.stringify(values.namespace)}\n`);
    return 2;
  }
  if (values.dashboard !== 'off') {
    let loopback: boolean;
    try {
      loopback = parseListen(values.dashboard).loopback;
    } catch (err) {
      if (!(err instanceof ListenError)) throw err;
      process.stderr.write(`converge dev: --dashboard must be host:port or "off" (e.g. ${DEFAULT_LISTEN}), got ${JSON.stringify(values.dashboard)}\n`);
      return 2;
    }
    if (!loopback) {
      process.stderr.write(`converge dev: --dashboard must be a loopback address (the local dashboard has no token), got ${JSON.stringify(values.dashboard)}\n`);
      return 2;
    }
  }
  return new DevSession({
    ui: !values['no-ui'] && process.stdout.isTTY === true,
    samples: !values['no-samples'],
    namespace: values.namespace,
    kubeconfigPath: resolve(values['kubeconfig-out'] ?? join(DEV_DIR, 'kubeconfig')),
    logFile: resolve(values['log-file'] ?? join(DEV_DIR, 'operators.log')),
    logLevel: values['log-level'],
    dashboard: values.dashboard === 'off' ? undefined : values.dashboard,
    exitWhenReady: values['exit-when-ready'],
    timeoutMs: timeoutSeconds * 1000,
  }).run();
}

interface DevOptions {
  ui: boolean;
  samples: boolean;
  namespace: string;
  kubeconfigPath: string;
  logFile: string;
  logLevel: string;
  /** Where the dashboard listens; undefined: no dashboard. */
  dashboard: string | undefined;
  exitWhenReady: boolean;
  timeoutMs: number;
}

class DevSession {
  readonly #o: DevOptions;
  /** Monotonic: the elapsed times shown never jump with the wall clock. */
  readonly #started = performance.now();
  readonly #stop = new AbortController();
  readonly #err = createStyle(colorEnabled(process.stderr));
  readonly #out = createStyle(colorEnabled(process.stdout));
  #exitCode = 0;
  #failed = false;
  #signals = 0;
  #altScreen = false;

  #cp: ControlPlane | undefined;
  #sim: VendorSimulator | undefined;
  #client: KubeClient | undefined;
  #operators: { abort: AbortController; done: Promise<void> } | undefined;
  #logStream: WriteStream | undefined;
  #dashboard: RunningDashboard | undefined;
  #lastDoc: StatusDocument | undefined;

  constructor(options: DevOptions) {
    this.#o = options;
  }

  #say(message: string, color?: 'green' | 'red' | 'yellow'): void {
    const t = ((performance.now() - this.#started) / 1000).toFixed(1).padStart(5);
    process.stderr.write(`${this.#err.paint(`[${t}s]`, 'dim')} ${this.#err.paint(message, color)}\n`);
  }

  /** Asks the session to end; the first reason wins. */
  #requestStop(reason: string, code: number): void {
    if (this.#stop.signal.aborted) return;
    this.#exitCode = code;
    if (code !== 0) this.#failed = true;
    this.#leaveAltScreen();
    this.#say(reason, code === 0 ? undefined : 'red');
    this.#stop.abort();
  }

  #onSignal = (signal: NodeJS.Signals): void => {
    this.#signals += 1;
    if (this.#signals > 1) {
      this.#leaveAltScreen();
      process.stderr.write(`${signal} again: killing everything now\n`);
      process.exit(130); // the control-plane launcher's exit hook kills every component
    }
    this.#requestStop(`${signal}: stopping (Ctrl-C again to kill at once)`, 0);
  };

  #leaveAltScreen = (): void => {
    if (!this.#altScreen) return;
    this.#altScreen = false;
    process.stdout.write('\u001b[?25h\u001b[?1049l');
  };

  async run(): Promise<number> {
    process.on('SIGINT', this.#onSignal);
    process.on('SIGTERM', this.#onSignal);
    process.on('exit', this.#leaveAltScreen);
    const timer = this.#o.exitWhenReady
      ? setTimeout(() => this.#requestStop(`timed out after ${humanDuration(this.#o.timeoutMs)} waiting for the samples to become Ready`, 1), this.#o.timeoutMs)
      : undefined;
    try {
      await this.#start();
      if (!this.#stop.signal.aborted) await this.#live();
    } catch (err) {
      if (!this.#stop.signal.aborted) this.#requestStop(`converge dev: ${(err as Error).message}`, 1);
      else if (!this.#failed) this.#say(`(while stopping) ${(err as Error).message}`, 'yellow');
    } finally {
      clearTimeout(timer);
      await this.#teardown();
      process.off('SIGINT', this.#onSignal);
      process.off('SIGTERM', this.#onSignal);
      process.off('exit', this.#leaveAltScreen);
    }
    return this.#exitCode;
  }

  async #start(): Promise<void> {
    const o = this.#o;
    this.#say('converge dev: everything runs on this machine; Ctrl-C stops it all');

    this.#say('control plane: looking for a binary built from control-plane/ (a first build takes minutes on a cold Go cache)');
    const building = ensureControlPlaneBinary({ onProgress: (m) => this.#say(`  ${m}`) });
    const binary = await Promise.race([building, new Promise<undefined>((r) => this.#stop.signal.addEventListener('abort', () => r(undefined), { once: true }))]);
    if (!binary) {
      // `go build` cannot be interrupted cleanly from here; nothing else has started yet. Stopped
      // by --timeout (a failure, exit 1), not by Ctrl-C (130).
      process.exit(this.#failed ? this.#exitCode : 130);
    }
    this.#say(`control plane binary: ${binary}`);

    this.#say('control plane: starting etcd, kube-apiserver, kube-controller-manager and the node simulator');
    this.#cp = await startControlPlane({
      binary,
      onProgress: (m) => this.#say(`  ${m}`),
      onUnexpectedExit: (component: ComponentName, code, signal) =>
        this.#requestStop(`the control plane's ${component} exited unexpectedly (code ${code}, signal ${signal})`, 1),
    });
    await mkdir(dirname(o.kubeconfigPath), { recursive: true });
    await writeFile(o.kubeconfigPath, await readFile(this.#cp.kubeconfigPath), { mode: 0o600 });
    this.#say(`control plane ready at ${this.#cp.server}; kubeconfig: ${o.kubeconfigPath}`, 'green');
    if (this.#stop.signal.aborted) return;

    const kubeConfig = loadKubeConfig(o.kubeconfigPath);
    this.#client = new KubeClient({ kubeConfig, userAgent: 'converge-dev/0.1', timeoutMs: 15_000 });
    // The conversion webhook (v1alpha1 ↔ v1) is served by the operators below on 127.0.0.1; the
    // CRDs are installed pointing at it, with its CA (kept in .converge/dev/webhook).
    const [webhookPort] = await freePorts(1);
    const webhook = await localConversionWebhook(join(DEV_DIR, 'webhook'), webhookPort!);
    await installCrds(this.#client, webhook.crds, this.#stop.signal);
    this.#say(`CRDs installed: ${[MicroserviceCrd, DigitalHumanProviderCrd].map((c) => c.metadata.name).join(', ')}`, 'green');
    if (this.#stop.signal.aborted) return;

    const token = `dev-${randomBytes(16).toString('hex')}`;
    this.#sim = await startVendorSimulator({ token, host: '127.0.0.1' });
    await writeVendorSimHandle(this.#simHandlePath, { baseUrl: this.#sim.baseUrl, caPath: this.#sim.caPath, adminToken: this.#sim.adminToken, pid: process.pid });
    this.#say(`vendor simulator at ${this.#sim.baseUrl} (CA ${this.#sim.caPath}; faults: npx converge vendor-sim fault --help)`, 'green');
    if (this.#stop.signal.aborted) return;

    await mkdir(dirname(o.logFile), { recursive: true });
    this.#logStream = createWriteStream(o.logFile, { flags: 'a' });
    // A log file that cannot be written (a full disk, a line after the teardown closed it) is
    // said once; it never ends the session (an unhandled stream error would, with exit 1).
    let logFailed = false;
    this.#logStream.on('error', (err) => {
      if (!logFailed) this.#say(`operator log file: ${err.message}; later lines are lost`, 'yellow');
      logFailed = true;
    });
    const log = createLogger({ level: o.logLevel, name: 'converge', destination: this.#logStream });
    const config = devOperatorConfig(this.#sim.caPath);
    // The manager is built after an await (the provider operator is imported when it runs), so it
    // is waited for, not looked at right after the call.
    let built!: (m: Manager) => void;
    const managerBuilt = new Promise<Manager>((resolve) => (built = resolve));
    const abort = new AbortController();
    const done = runOperatorProcess(
      { kubeConfig, config, metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0', log, webhook: webhook.settings, onManager: (m) => built(m) },
      abort.signal,
    );
    this.#operators = { abort, done };
    done.then(
      () => {
        if (!abort.signal.aborted) this.#requestStop('the operators stopped unexpectedly; see the log file', 1);
      },
      (err: unknown) => this.#requestStop(`the operators failed: ${(err as Error).message}`, 1),
    );
    // Undefined when the operators stopped or failed before building the manager: the handlers
    // above report why.
    const manager = await Promise.race([managerBuilt, done.then(() => undefined, () => undefined)]);
    if (!manager) return;
    await manager.cache.waitForSync(this.#stop.signal).catch(() => {});
    if (this.#stop.signal.aborted) return;
    const [metrics] = await manager.serverAddresses();
    this.#metricsUrl = metrics ? `http://${metrics}` : undefined;
    this.#say(`operators running (microservice, provider); logs: ${displayPath(o.logFile)}${this.#metricsUrl ? `; metrics: ${this.#metricsUrl}/metrics` : ''}`, 'green');

    if (o.dashboard) await this.#startDashboard(o.dashboard, kubeConfig, log);
    if (this.#stop.signal.aborted) return;

    if (o.samples) {
      const samples = prepareSamples(await loadSamples(SAMPLES_DIR), o.namespace, { endpoint: this.#sim.baseUrl, token });
      await applySamples(this.#client, o.namespace, samples);
      this.#sampleKeys = sampleKeys(samples, o.namespace);
      this.#say(`samples applied in namespace ${o.namespace}: ${describeSamples(samples)}`, 'green');
    }
  }

  #metricsUrl: string | undefined;
  get #simHandlePath(): string {
    return join(dirname(this.#o.kubeconfigPath), 'vendor-sim.json');
  }
  #sampleKeys: string[] = [];

  /** The web dashboard on this control plane; a taken port falls back to a free one (same host). */
  async #startDashboard(listen: string, kubeConfig: ReturnType<typeof loadKubeConfig>, log: ReturnType<typeof createLogger>): Promise<void> {
    const clusters = [{ name: 'local', kubeConfig }];
    try {
      try {
        this.#dashboard = await startDashboard({ clusters, listen, log });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        const host = listen.replace(/:\d+$/, '');
        this.#say(`dashboard: ${listen} is taken; using a free port on ${host}`, 'yellow');
        this.#dashboard = await startDashboard({ clusters, listen: `${host}:0`, log });
      }
      this.#say(`dashboard at ${this.#dashboard.url}`, 'green');
    } catch (err) {
      this.#say(`dashboard not started: ${(err as Error).message}`, 'yellow');
    }
  }

  #info(): DevInfo {
    return {
      kubeconfigPath: this.#o.kubeconfigPath,
      server: this.#cp?.server ?? '',
      vendorUrl: this.#sim?.baseUrl ?? '',
      ...(this.#sim ? { vendorCaPath: this.#sim.caPath, vendorSimHandle: displayPath(this.#simHandlePath), vendorSimHandleIsDefault: this.#simHandlePath === join(DEV_DIR, 'vendor-sim.json') } : {}),
      logFile: displayPath(this.#o.logFile),
      ...(this.#metricsUrl ? { metricsUrl: this.#metricsUrl } : {}),
      ...(this.#dashboard ? { dashboardUrl: this.#dashboard.url } : {}),
      namespace: this.#o.namespace,
      samples: this.#o.samples,
    };
  }

  /** Refreshes every second until stopped: the screen, or a line per state change. */
  async #live(): Promise<void> {
    const o = this.#o;
    const client = this.#client!;
    const info = this.#info();
    const changes: string[] = [];
    let previous = new Map<string, string>();
    let readyAfterMs: number | undefined;
    if (!o.ui) {
      if (info.dashboardUrl) process.stdout.write(`dashboard: ${info.dashboardUrl}\n`);
      process.stdout.write(`kubeconfig: ${info.kubeconfigPath}\nTry, in another terminal:\n${commandsToTry(info).map((l) => `  ${l}`).join('\n')}\n`);
    }
    while (!this.#stop.signal.aborted) {
      let error: string | undefined;
      try {
        const doc = await readStatus(client, null, this.#stop.signal);
        this.#lastDoc = doc;
        const lines = statusLines(doc);
        const time = new Date().toTimeString().slice(0, 8);
        const changed: string[] = [];
        for (const [key, line] of lines) if (previous.get(key) !== line) changed.push(`${time} ${line}`);
        for (const key of previous.keys()) if (!lines.has(key)) changed.push(`${time} ${key}: deleted`);
        previous = lines;
        changes.push(...changed);
        changes.splice(0, Math.max(0, changes.length - 6));
        if (!o.ui) for (const c of changed) process.stdout.write(`${c}\n`);
        if (readyAfterMs === undefined && this.#sampleKeys.length > 0 && samplesReady(doc, this.#sampleKeys)) {
          readyAfterMs = performance.now() - this.#started;
          if (!o.ui) process.stdout.write(`${this.#out.paint(`✓ the samples are Ready (${humanDuration(readyAfterMs)} after start)`, 'green')}\n`);
          if (o.exitWhenReady) {
            this.#requestStop(`the samples are Ready after ${(readyAfterMs / 1000).toFixed(1)}s; exiting (--exit-when-ready)`, 0);
            break;
          }
        }
      } catch (err) {
        if (this.#stop.signal.aborted) break;
        error = (err as Error).message;
        if (!o.ui) this.#say(`cannot read the cluster: ${error}`, 'yellow');
      }
      if (o.ui && this.#lastDoc && !this.#stop.signal.aborted) {
        if (!this.#altScreen) {
          this.#altScreen = true;
          process.stdout.write('\u001b[?1049h\u001b[?25l');
        }
        const screen = renderDevScreen({ doc: this.#lastDoc, info, changes, now: new Date(), style: this.#out, readyAfterMs, error, width: process.stdout.columns });
        process.stdout.write(`\u001b[H${screen.split('\n').join('\u001b[K\n')}\u001b[K\u001b[J`);
      }
      await sleep(1000, this.#stop.signal);
    }
  }

  async #teardown(): Promise<void> {
    this.#leaveAltScreen();
    if (this.#lastDoc && (this.#o.ui || this.#failed)) {
      process.stdout.write(`${renderStatusText(this.#lastDoc, { now: new Date(), style: this.#out, showNamespace: true })}\n`);
    }
    if (this.#dashboard) {
      this.#say('stopping the dashboard');
      await this.#dashboard.close().catch(() => {});
    }
    if (this.#operators) {
      this.#say('stopping the operators');
      this.#operators.abort.abort();
      await this.#operators.done.catch(() => {});
    }
    // Ended (and flushed) before its tail may be printed below.
    const logStream = this.#logStream;
    if (logStream) await new Promise<void>((resolve) => logStream.end(resolve));
    if (this.#failed && this.#o.logFile) await this.#printLogTail();
    if (this.#sim) {
      this.#say('stopping the vendor simulator');
      await removeVendorSimHandle(this.#simHandlePath).catch(() => {});
      await this.#sim.stop().catch(() => {});
    }
    await this.#client?.close().catch(() => {});
    if (this.#cp) {
      if (this.#failed) await this.#keepComponentLogs(this.#cp);
      this.#say('stopping the control plane');
      await this.#cp.stop();
    }
    this.#say(this.#failed ? 'stopped' : 'stopped cleanly', this.#failed ? 'red' : 'green');
  }

  async #printLogTail(): Promise<void> {
    try {
      const lines = (await readFile(this.#o.logFile, 'utf8')).trimEnd().split('\n').slice(-15);
      process.stderr.write(`last operator log lines (${displayPath(this.#o.logFile)}):\n${lines.join('\n')}\n`);
    } catch {
      // no log yet
    }
  }

  async #keepComponentLogs(cp: ControlPlane): Promise<void> {
    const dest = join(dirname(this.#o.kubeconfigPath), 'logs');
    await mkdir(dest, { recursive: true }).catch(() => {});
    for (const c of ['etcd', 'apiserver', 'controller-manager', 'simulator'] as const) {
      await copyFile(cp.logPath(c), join(dest, `${c}.log`)).catch(() => {});
    }
    this.#say(`control-plane component logs copied to ${displayPath(dest)}`);
  }
}

/** Applies the project's CRDs (Server-Side Apply) and waits until the API server serves them. */
async function installCrds(client: KubeClient, crds: CustomResourceDefinitionV1[], signal: AbortSignal): Promise<void> {
  await installCustomResourceDefinitions(client, crds, { fieldManager: 'converge-dev', signal });
}

/** A path relative to the working directory when it is inside it (shorter on screen), else absolute. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
