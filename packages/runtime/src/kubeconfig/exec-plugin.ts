/**
 * Exec credential plugins (`users[].user.exec`): runs the command client-go would run, with
 * `KUBERNETES_EXEC_INFO`, reads its `ExecCredential` (`client.authentication.k8s.io/v1` or
 * `v1beta1`) and keeps it until its `expirationTimestamp` (or, without one, until the API server
 * answers 401 and the caller invalidates it).
 *
 * Guarantees: one run at a time (concurrent callers share it); the plugin gets no terminal
 * (stdin is closed, `interactive: false`); its stdout is never logged; its stderr is quoted in
 * the error when it fails, for a person to see why, with credentials taken out first
 * (`scrubCredentials`: `refresh_token=…`, `Bearer …`, JWTs, long base64 runs) and then cut to its
 * last 1 KiB. A run is bounded by `timeoutMs` (default 60 s).
 *
 * Caveats: the error travels (the client's `no credentials: …`, a watcher's `lastError`, the
 * dashboard), and the scrubbing is a heuristic: a plugin that prints a credential in a shape it
 * does not know (`the password is hunter2`) still leaks it.
 * @module
 */
import { readFileSync } from 'node:fs';
import { scrubCredentials } from '../logging/index.ts';
import type { ExecConfig, KubeConfigCluster } from './kubeconfig.ts';
import { KubeConfigError } from './kubeconfig.ts';
import { holdsControlCharacter } from './header-value.ts';

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;

/** What a plugin gave: a bearer token, or a client certificate and key (PEM), and until when. */
export interface ExecCredentialResult {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Wall-clock ms after which it is run again; `Infinity` when the plugin gave no expiry. */
  expiresAtMs: number;
}

export interface ExecPluginOptions {
  /** Wall clock in ms (default `Date.now`). */
  now?: () => number;
  timeoutMs?: number;
  /** The environment the plugin inherits (default `process.env`), before `exec.env`. */
  env?: Record<string, string | undefined>;
}

export class ExecCredentialPlugin {
  readonly #exec: ExecConfig;
  readonly #cluster: KubeConfigCluster | undefined;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #env: Record<string, string | undefined>;
  #cached: ExecCredentialResult | undefined;
  #running: Promise<ExecCredentialResult> | undefined;
  /** Times the plugin was run (for tests and metrics). */
  runs = 0;

  constructor(exec: ExecConfig, cluster: KubeConfigCluster | undefined, options: ExecPluginOptions = {}) {
    if (!(EXEC_API_VERSIONS as readonly string[]).includes(exec.apiVersion)) {
      throw new KubeConfigError(
        `exec credential plugin "${exec.command}": apiVersion "${exec.apiVersion}" is not supported (use ${EXEC_API_VERSIONS.join(' or ')})`,
      );
    }
    if (exec.interactiveMode === 'Always') {
      throw new KubeConfigError(`exec credential plugin "${exec.command}" has interactiveMode Always: it needs a terminal, which an operator does not have`);
    }
    this.#exec = exec;
    this.#cluster = cluster;
    this.#now = options.now ?? Date.now;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#env = options.env ?? process.env;
  }

  /** The cached credential while it has not expired, else a fresh one. */
  async get(): Promise<ExecCredentialResult> {
    const cached = this.#cached;
    if (cached && this.#now() < cached.expiresAtMs) return cached;
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** The credential kept now, expired or not; `undefined` before the first run or after `invalidate`. */
  get cached(): ExecCredentialResult | undefined {
    return this.#cached;
  }

  /** Forgets the cached credential (the API server refused it): the next `get` runs the plugin. */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #run(): Promise<ExecCredentialResult> {
    this.runs++;
    const exec = this.#exec;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.#env)) if (v !== undefined) env[k] = v;
    for (const e of exec.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify({
      apiVersion: exec.apiVersion,
      kind: 'ExecCredential',
      spec: { interactive: false, ...(exec.provideClusterInfo && this.#cluster ? { cluster: clusterInfo(this.#cluster) } : {}) },
    });
    // Loaded here, on the first run: most kubeconfigs have no exec plugin, and a one-shot command
    // then saves node:child_process's start-up (issue 17, goal 5).
    const { execFile } = await import('node:child_process');
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = execFile(exec.command, exec.args ?? [], { env, timeout: this.#timeoutMs, maxBuffer: 4 << 20, encoding: 'utf8' }, (err, out, errText) => {
        if (!err) return resolve(out);
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
        // Scrubbed before the cut, so that a cut between a key and its value cannot expose the value.
        const stderr = tail(scrubCredentials(String(errText ?? '')));
        if (e.code === 'ENOENT') {
          return reject(new KubeConfigError(`exec credential plugin "${exec.command}" was not found${exec.installHint ? `: ${exec.installHint.trim()}` : ''}`));
        }
        if (e.killed) return reject(new KubeConfigError(`exec credential plugin "${exec.command}" did not finish within ${this.#timeoutMs} ms${stderr ? `: ${stderr}` : ''}`));
        reject(new KubeConfigError(`exec credential plugin "${exec.command}" failed (exit ${String(e.code)})${stderr ? `: ${stderr}` : ''}`));
      });
      child.stdin?.end();
    });
    const result = parseExecCredential(stdout, exec.apiVersion, exec.command);
    this.#cached = result;
    return result;
  }
}

/** RFC 3339, as client-go reads `expirationTimestamp` (a `metav1.Time`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Reads a plugin's output. Errors never quote it (it holds credentials): only a kind or an
 * apiVersion of the shape those have is named; any other value, and any JSON at all, is a
 * `KubeConfigError`.
 */
export function parseExecCredential(stdout: string, apiVersion: string, command = 'plugin'): ExecCredentialResult {
  const where = `exec credential plugin "${command}"`;
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw new KubeConfigError(`${where} did not print an ExecCredential as JSON on stdout`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new KubeConfigError(`${where} did not print an ExecCredential object on stdout`);
  const d = doc as { apiVersion?: unknown; kind?: unknown; status?: unknown };
  if (d.kind !== 'ExecCredential') throw new KubeConfigError(`${where} printed ${shown(d.kind, /^[A-Z][A-Za-z0-9]{0,62}$/, 'kind')}, not ExecCredential`);
  if (d.apiVersion !== apiVersion) throw new KubeConfigError(`${where} is configured for ${apiVersion} but printed ${shown(d.apiVersion, /^[a-z0-9.]{1,253}\/v[0-9a-z]{1,20}$/, 'apiVersion')}`);
  const s = (typeof d.status === 'object' && d.status !== null ? d.status : {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const token = str(s.token);
  const cert = str(s.clientCertificateData);
  const key = str(s.clientKeyData);
  if (!token && !cert) throw new KubeConfigError(`${where} printed neither status.token nor status.clientCertificateData`);
  if (Boolean(cert) !== Boolean(key)) throw new KubeConfigError(`${where} printed a client certificate without its key (or a key without its certificate)`);
  if (token && holdsControlCharacter(token)) throw new KubeConfigError(`${where} printed a status.token that no HTTP header can carry (a line break or another control character)`);
  let expiresAtMs = Infinity;
  if (s.expirationTimestamp !== undefined && s.expirationTimestamp !== null) {
    const at = s.expirationTimestamp;
    expiresAtMs = typeof at === 'string' && RFC3339.test(at) ? Date.parse(at) : Number.NaN;
    if (Number.isNaN(expiresAtMs)) throw new KubeConfigError(`${where} printed a status.expirationTimestamp that is not an RFC 3339 time`);
  }
  return { ...(token ? { token } : {}), ...(cert ? { clientCertificateData: cert, clientKeyData: key! } : {}), expiresAtMs };
}

/** `kind "X"` when the value has the shape `shape` describes; otherwise only what it is not. */
function shown(value: unknown, shape: RegExp, field: string): string {
  if (typeof value === 'string' && shape.test(value)) return `${field} "${value}"`;
  return value === undefined ? `no ${field}` : `a ${field} that is not one`;
}

/** `spec.cluster` of `KUBERNETES_EXEC_INFO` when `provideClusterInfo` is set. */
function clusterInfo(c: KubeConfigCluster): Record<string, unknown> {
  let ca = c.caData;
  if (!ca && c.caFile) {
    try {
      ca = readFileSync(c.caFile).toString('base64');
    } catch {
      ca = undefined;
    }
  }
  return {
    server: c.server,
    ...(c.tlsServerName ? { 'tls-server-name': c.tlsServerName } : {}),
    ...(c.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
    ...(ca ? { 'certificate-authority-data': ca } : {}),
    ...(c.proxyUrl ? { 'proxy-url': c.proxyUrl } : {}),
  };
}

function tail(s: string): string {
  const t = s.trim();
  return t.length > 1024 ? `…${t.slice(-1024)}` : t;
}
