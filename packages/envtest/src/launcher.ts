/**
 * Starts and stops one local control plane: etcd → kube-apiserver → kube-controller-manager →
 * node/pod simulator, each a child process of the control-plane binary.
 *
 * Teardown is guaranteed in layers: `stop()` (graceful, idempotent); a synchronous SIGKILL of
 * every component plus removal of the temporary state directory on this process's 'exit' and,
 * when no one else handles them, on SIGINT/SIGTERM/SIGHUP; and PR_SET_PDEATHSIG in every
 * component, so even a SIGKILLed launcher leaves no processes behind. State directories left
 * by a launcher that was SIGKILLed are swept at the next start, and so is one that lost its owner
 * file (a certificate writer that outlived its launcher recreated it) once it is a minute old.
 * @module
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ensureControlPlaneBinary } from './binary.ts';
import { freePorts } from './free-ports.ts';

const execFileAsync = promisify(execFile);

export type ComponentName = 'etcd' | 'apiserver' | 'controller-manager' | 'simulator';

export interface StartControlPlaneOptions {
  /** Where certificates, etcd data and logs go. Default: a fresh temp dir, removed by stop(). A given dir is kept. */
  stateDir?: string;
  /** Write a JSON-lines audit log of every request (Metadata level) to `<stateDir>/audit.log`. */
  auditLog?: boolean;
  /** Number of simulated nodes (converge-node-0 … N-1). Default 1. */
  nodes?: number;
  /** Human-readable progress lines (build and start-up). */
  onProgress?: (message: string) => void;
  /** Use this binary instead of building/caching one. */
  binary?: string;
  /** Called when a component exits without having been asked to. */
  onUnexpectedExit?: (component: ComponentName, code: number | null, signal: NodeJS.Signals | null) => void;
  /** How long to wait for each component to become ready. Default 120 s. */
  readyTimeoutMs?: number;
  /**
   * Extra kube-apiserver flags, appended after the defaults (a later flag wins), e.g.
   * `['--profiling=true']` to serve `/debug/pprof` to the admin user. Default: none.
   */
  apiServerFlags?: readonly string[];
}

export interface ControlPlane {
  /** Admin kubeconfig (client certificate in system:masters, data embedded: copy it anywhere). */
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  readonly stateDir: string;
  /** Present when started with `auditLog: true`. */
  readonly auditLogPath?: string;
  /** http://127.0.0.1:<port> */
  readonly etcdUrl: string;
  /** CA certificate that signed the serving and client certificates (PEM file). */
  readonly caPath: string;
  /** File holding a static bearer token for the `admin` user (system:masters). */
  readonly adminTokenPath: string;
  /** The control-plane binary in use. */
  readonly binary: string;
  /** Names of the simulated nodes. */
  readonly nodeNames: readonly string[];
  /** Log file of a component (stdout and stderr). */
  logPath(component: ComponentName): string;
  /** Running components and their pids (e.g. to measure memory). */
  processes(): { component: ComponentName; pid: number }[];
  /** Stops everything and removes the temp state dir. Idempotent; later calls return the same promise. */
  stop(): Promise<void>;
  /**
   * Stops only kube-apiserver (outage tests); etcd, controllers and simulator keep running.
   * Default: SIGKILL, like a crash (connections reset). `graceful: true` sends SIGTERM and waits
   * up to `graceMs` (default 10 s; the API server drains requests, open watches can hold it) before SIGKILL.
   */
  stopApiServer(options?: { graceful?: boolean; graceMs?: number }): Promise<void>;
  /** Starts kube-apiserver again on the same port with the same certificates; resolves at /readyz. */
  startApiServer(): Promise<void>;
  /** Compacts etcd to its current revision (old resourceVersions then answer 410 Gone); returns it. */
  compactEtcd(): Promise<number>;
  /**
   * A cold backup of etcd: kube-apiserver and etcd are stopped, etcd's data copied, both started
   * again (the controllers see a short API server outage). For `restoreEtcd`.
   */
  backupEtcd(): Promise<void>;
  /**
   * Restores the last `backupEtcd`, as an operator restores a cluster from a backup: every
   * component stopped, etcd's data replaced (resourceVersions go back to the backup's), etcd and
   * kube-apiserver started, then the controller manager and the node simulator (restarted, as
   * the Kubernetes docs ask after a restore: their client-go informers would resume from the
   * versions they saw).
   */
  restoreEtcd(): Promise<void>;
}

const STATE_DIR_PREFIX = 'converge-cp-';
const OWNER_FILE = 'owner.pid';
/**
 * A launcher writes its owner file right after making the folder (the same synchronous step), so
 * a folder without one that is older than this was abandoned: the owner file went with a removal
 * that something still writing (the certificate step of a launcher that died) raced.
 */
const OWNERLESS_STALE_MS = 60_000;
const live = new Set<LocalControlPlane>();
let hooksInstalled = false;

function installProcessHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const cp of live) cp.killNow();
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = (): void => {
      // Someone else handles this signal (a CLI, the test runner): they decide when to exit,
      // and the 'exit' hook still cleans up then.
      if (process.listeners(sig).some((l) => l !== handler)) return;
      for (const cp of live) cp.killNow();
      process.removeListener(sig, handler);
      process.kill(process.pid, sig);
    };
    process.on(sig, handler);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The environment of every process the launcher starts. CONVERGE_PARENT_PID: the process dies with
 * this one, and exits at once if this one is gone before it asked the kernel for its parent-death
 * signal (main.go, dieWithParent).
 */
function childEnv(): NodeJS.ProcessEnv {
  return { ...process.env, CONVERGE_PARENT_PID: String(process.pid) };
}

/**
 * Removes temp state dirs whose owning launcher is gone (it was SIGKILLed), and those without an
 * owner file that are older than a minute. Exported for its unit test, not from the package.
 */
export function sweepStaleStateDirs(base: string = tmpdir(), nowMs: number = Date.now()): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(base).filter((n) => n.startsWith(STATE_DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = join(base, name);
    try {
      const owner = Number.parseInt(readFileSync(join(dir, OWNER_FILE), 'utf8'), 10);
      if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') continue;
      // No owner file: being made this instant, or abandoned long ago.
      try {
        if (nowMs - statSync(dir).mtimeMs > OWNERLESS_STALE_MS) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // gone meanwhile, or not ours to remove
      }
    }
  }
}

interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

function httpsGet(url: string, tls: TlsMaterial, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = httpsRequest(url, { ...tls, method: 'GET', timeout: timeoutMs, agent: false }, (resp) => {
      let body = '';
      resp.setEncoding('utf8');
      resp.on('data', (c: string) => (body += c));
      resp.on('end', () => res({ status: resp.statusCode ?? 0, body }));
      resp.on('error', rej);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs}ms`)));
    req.on('error', rej);
    req.end();
  });
}

function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class LocalControlPlane implements ControlPlane {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly stateDir: string;
  readonly auditLogPath?: string;
  readonly etcdUrl: string;
  readonly caPath: string;
  readonly adminTokenPath: string;
  readonly binary: string;
  readonly nodeNames: readonly string[];

  readonly #ownsStateDir: boolean;
  readonly #pkiDir: string;
  readonly #ports: { etcd: number; peer: number; apiserver: number };
  readonly #options: StartControlPlaneOptions;
  readonly #children = new Map<ComponentName, ChildProcess>();
  readonly #expectedExit = new Set<ChildProcess>();
  /** One-shot subcommands running now (the certificate step): killed with the components. */
  readonly #oneShots = new Set<ChildProcess>();
  #stopping?: Promise<void>;
  #tls?: TlsMaterial;

  constructor(binary: string, stateDir: string, ownsStateDir: boolean, ports: number[], options: StartControlPlaneOptions) {
    const [etcd, peer, apiserver] = ports as [number, number, number];
    this.binary = binary;
    this.stateDir = stateDir;
    this.#ownsStateDir = ownsStateDir;
    this.#ports = { etcd, peer, apiserver };
    this.#options = options;
    this.#pkiDir = join(stateDir, 'pki');
    this.kubeconfigPath = join(this.#pkiDir, 'admin.kubeconfig');
    this.caPath = join(this.#pkiDir, 'ca.crt');
    this.adminTokenPath = join(this.#pkiDir, 'admin.token');
    this.server = `https://127.0.0.1:${apiserver}`;
    this.etcdUrl = `http://127.0.0.1:${etcd}`;
    if (options.auditLog) this.auditLogPath = join(stateDir, 'audit.log');
    this.nodeNames = Array.from({ length: options.nodes ?? 1 }, (_, i) => `converge-node-${i}`);
  }

  logPath(component: ComponentName): string {
    return join(this.stateDir, 'logs', `${component}.log`);
  }

  processes(): { component: ComponentName; pid: number }[] {
    return [...this.#children]
      .filter(([, c]) => c.pid !== undefined && c.exitCode === null && c.signalCode === null)
      .map(([component, c]) => ({ component, pid: c.pid as number }));
  }

  get #timeout(): number {
    return this.#options.readyTimeoutMs ?? 120_000;
  }

  async start(): Promise<void> {
    const progress = this.#options.onProgress ?? (() => {});
    mkdirSync(join(this.stateDir, 'logs'), { recursive: true });
    const t0 = Date.now();
    progress('writing certificates');
    await this.#runOnce(['certs', '--dir', this.#pkiDir, '--server', this.server]);
    this.#tls = {
      ca: readFileSync(this.caPath),
      cert: readFileSync(join(this.#pkiDir, 'admin.crt')),
      key: readFileSync(join(this.#pkiDir, 'admin.key')),
    };

    progress('starting etcd');
    await this.#startEtcd();

    progress('starting kube-apiserver');
    await this.startApiServer();

    progress('starting kube-controller-manager and the node simulator');
    await this.#startControllers();
    progress(`control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  }

  /**
   * A subcommand that runs to its end, tracked so that a stop or this process's exit kills it
   * before removing the state folder: the certificate writer does not die with its parent, and
   * one left running wrote the folder again after its removal, with a CA key and an admin token
   * in it and no owner file.
   */
  #runOnce(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = execFile(this.binary, args, { env: childEnv() }, (err) => {
        this.#oneShots.delete(child);
        if (err) reject(err);
        else resolve();
      });
      this.#oneShots.add(child);
    });
  }

  async #startEtcd(): Promise<void> {
    this.#spawn('etcd', ['--data-dir', this.#etcdDataDir,
      '--client-port', String(this.#ports.etcd), '--peer-port', String(this.#ports.peer)]);
    await this.#waitFor('etcd', async () => {
      const r = await fetch(`${this.etcdUrl}/health`, { signal: AbortSignal.timeout(2000) });
      return r.ok && (await r.text()).includes('"health":"true"');
    });
  }

  /** kube-controller-manager and the node simulator; resolves once nodes are Ready and the controllers work. */
  async #startControllers(): Promise<void> {
    this.#spawn('controller-manager', ['--dir', this.#pkiDir]);
    this.#spawn('simulator', ['--kubeconfig', join(this.#pkiDir, 'simulator.kubeconfig'),
      '--nodes', String(this.nodeNames.length)]);
    await this.#waitFor('simulator', async () => {
      for (const node of this.nodeNames) {
        const r = await this.#get(`/api/v1/nodes/${node}`);
        if (r.status !== 200) return false;
        const ready = JSON.parse(r.body).status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
        if (ready?.status !== 'True') return false;
      }
      return true;
    });
    // The controller manager is working once it has created the default ServiceAccount.
    await this.#waitFor('controller-manager', async () =>
      (await this.#get('/api/v1/namespaces/default/serviceaccounts/default')).status === 200);
  }

  #get(path: string) {
    return httpsGet(`${this.server}${path}`, this.#tls as TlsMaterial, 5000);
  }

  #spawn(component: ComponentName, args: string[]): void {
    const fd = openSync(this.logPath(component), 'a');
    let child: ChildProcess;
    try {
      // detached: own process group, so a terminal's Ctrl-C reaches only the launcher, which
      // then stops the components in order.
      child = spawn(this.binary, [component, ...args], { stdio: ['ignore', fd, fd], detached: true, env: childEnv() });
    } finally {
      closeSync(fd);
    }
    child.unref();
    this.#children.set(component, child);
    child.once('exit', (code, signal) => {
      if (this.#expectedExit.has(child)) return;
      this.#options.onUnexpectedExit?.(component, code, signal);
    });
  }

  async #waitFor(component: ComponentName, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + this.#timeout;
    let lastError = '';
    for (;;) {
      const child = this.#children.get(component);
      if (child && (child.exitCode !== null || child.signalCode !== null)) {
        throw new Error(`${component} exited (code ${child.exitCode}, signal ${child.signalCode}); ` +
          `last lines of ${this.logPath(component)}:\n${tail(this.logPath(component))}`);
      }
      try {
        if (await check()) return;
      } catch (err) {
        lastError = (err as Error).message;
      }
      if (Date.now() > deadline) {
        throw new Error(`${component} not ready after ${this.#timeout}ms ${lastError ? `(${lastError})` : ''}; ` +
          `last lines of ${this.logPath(component)}:\n${tail(this.logPath(component))}`);
      }
      await sleep(100);
    }
  }

  async startApiServer(): Promise<void> {
    const current = this.#children.get('apiserver');
    if (current && current.exitCode === null && current.signalCode === null) {
      throw new Error('kube-apiserver is already running');
    }
    const args = ['--dir', this.#pkiDir, '--etcd', this.etcdUrl, '--port', String(this.#ports.apiserver)];
    if (this.auditLogPath) args.push('--audit-log', this.auditLogPath);
    if (this.#options.apiServerFlags?.length) args.push('--', ...this.#options.apiServerFlags);
    this.#spawn('apiserver', args);
    await this.#waitFor('apiserver', async () => (await this.#get('/readyz')).status === 200);
  }

  stopApiServer(options: { graceful?: boolean; graceMs?: number } = {}): Promise<void> {
    return this.#stopComponent('apiserver', options.graceful ? (options.graceMs ?? 10_000) : 0);
  }

  async backupEtcd(): Promise<void> {
    await this.#withEtcdStopped(() => copyDir(this.#etcdDataDir, this.#etcdBackupDir));
  }

  async restoreEtcd(): Promise<void> {
    if (!existsSync(this.#etcdBackupDir)) throw new Error('no etcd backup to restore: call backupEtcd() first');
    await Promise.all([this.#stopComponent('simulator', 2000), this.#stopComponent('controller-manager', 2000)]);
    await this.#withEtcdStopped(() => copyDir(this.#etcdBackupDir, this.#etcdDataDir));
    await this.#startControllers();
  }

  /** kube-apiserver and etcd stopped while `change` runs on etcd's files, then started again. */
  async #withEtcdStopped(change: () => void): Promise<void> {
    await this.stopApiServer({ graceful: true, graceMs: 5_000 });
    await this.#stopComponent('etcd', 5_000);
    change();
    await this.#startEtcd();
    await this.startApiServer();
  }

  get #etcdDataDir(): string {
    return join(this.stateDir, 'etcd');
  }

  get #etcdBackupDir(): string {
    return join(this.stateDir, 'etcd-backup');
  }

  async compactEtcd(): Promise<number> {
    const { stdout } = await execFileAsync(this.binary, ['compact', '--etcd', this.etcdUrl]);
    return Number.parseInt(stdout.trim(), 10);
  }

  async #stopComponent(component: ComponentName, graceMs = 5000): Promise<void> {
    const child = this.#children.get(component);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.#expectedExit.add(child);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.ref(); // keep this process alive until the exit is observed
    child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      try {
        await Promise.all([this.#stopComponent('simulator', 2000), this.#stopComponent('controller-manager', 2000)]);
        // Clients are gone, so the API server's graceful shutdown is quick.
        await this.#stopComponent('apiserver', 3000);
        await this.#stopComponent('etcd', 3000);
      } finally {
        this.killNow();
        live.delete(this);
      }
    })();
    return this.#stopping;
  }

  /** Synchronous last resort: SIGKILL every component, remove the temp state dir. */
  killNow(): void {
    for (const child of [...this.#oneShots, ...this.#children.values()]) {
      this.#expectedExit.add(child);
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    if (this.#ownsStateDir) rmSync(this.stateDir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/**
 * Builds the binary if needed, starts a control plane on free loopback ports and resolves once
 * /readyz answers, the simulated nodes are Ready and the controller manager is working.
 * On failure everything started so far is stopped and the error carries the component's log tail.
 */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const binary = options.binary ?? (await ensureControlPlaneBinary({ onProgress: options.onProgress }));
  installProcessHooks();
  sweepStaleStateDirs();
  const owns = options.stateDir === undefined;
  const stateDir = owns ? mkdtempSync(join(tmpdir(), STATE_DIR_PREFIX)) : resolve(options.stateDir as string);
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(join(stateDir, OWNER_FILE), String(process.pid));
  const cp = new LocalControlPlane(binary, stateDir, owns, await freePorts(3), options);
  live.add(cp);
  try {
    await cp.start();
  } catch (err) {
    await cp.stop();
    throw err;
  }
  return cp;
}

/** Replaces `to` with a copy of `from`. */
function copyDir(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}
