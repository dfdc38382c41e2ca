/**
 * Test support: the shared local control plane that `npm test` starts, seen from a test file.
 *
 * `testCluster()` describes the cluster from the environment the harness (scripts/test.ts)
 * exports; outside the harness, `CONVERGE_TEST_STANDALONE=1` makes it start a private control
 * plane for this process (stopped when the process exits). `withNamespace(t)` gives a test its
 * own namespace and deletes it afterwards. `cluster.request()` is a minimal JSON client built on
 * node:https and the kubeconfig; it does not depend on the Converge runtime, so control-plane
 * tests stay meaningful while the runtime changes.
 *
 * Outage helpers (`stopApiServer`, `startApiServer`) disturb every test sharing the cluster:
 * call them only from files named `*.serial.test.ts`, which the harness runs alone, last.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { TestContext } from 'node:test';
import { Credentials, KubeConfig } from '@converge/runtime';
import { callControlEndpoint } from '../../packages/envtest/src/control-endpoint.ts';
import { startControlPlane, type ControlPlane } from '@converge/envtest';

/** Environment variables the harness exports to test files. */
export const TEST_ENV = {
  kubeconfig: 'CONVERGE_TEST_KUBECONFIG',
  server: 'CONVERGE_TEST_SERVER',
  auditLog: 'CONVERGE_TEST_AUDIT_LOG',
  etcd: 'CONVERGE_TEST_ETCD',
  controlUrl: 'CONVERGE_TEST_CONTROL_URL',
  stateDir: 'CONVERGE_TEST_STATE_DIR',
  binary: 'CONVERGE_TEST_CONTROL_PLANE_BIN',
  nodes: 'CONVERGE_TEST_NODES',
  standalone: 'CONVERGE_TEST_STANDALONE',
} as const;

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

export interface RequestOptionsLite {
  /** Default application/json; use application/merge-patch+json, application/apply-patch+yaml, … for PATCH. */
  contentType?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface TestCluster {
  readonly kubeconfigPath: string;
  readonly server: string;
  /** JSON-lines audit log (Metadata level, every request); see packages/envtest/src/audit-log.ts. */
  readonly auditLogPath?: string;
  readonly etcdUrl?: string;
  /** Names of the simulated nodes. */
  readonly nodeNames: readonly string[];
  /** The admin kubeconfig, loaded. */
  readonly kubeConfig: KubeConfig;
  /** One JSON request as admin. Never throws on HTTP status; check `status`. */
  request<T = any>(method: string, path: string, body?: unknown, options?: RequestOptionsLite): Promise<ApiResponse<T>>;
  /** Outage: stop kube-apiserver (default like a crash; `graceful` sends SIGTERM). Serial tests only. */
  stopApiServer(options?: { graceful?: boolean }): Promise<void>;
  /** Start kube-apiserver again on the same address; resolves at /readyz. */
  startApiServer(): Promise<void>;
  /** Compact etcd to its current revision: older resourceVersions answer 410 Gone. Returns the revision. */
  compactEtcd(): Promise<number>;
  /** A cold backup of etcd (a short API server outage). Serial tests only. */
  backupEtcd(): Promise<void>;
  /** Restore the last backup: the whole cluster goes back to it, resourceVersions included. Serial tests only. */
  restoreEtcd(): Promise<void>;
}

let shared: Promise<TestCluster> | undefined;

/** The cluster for this test process (memoized). */
export function testCluster(): Promise<TestCluster> {
  shared ??= createTestCluster();
  return shared;
}

async function createTestCluster(): Promise<TestCluster> {
  const env = process.env;
  const kubeconfigPath = env[TEST_ENV.kubeconfig];
  if (kubeconfigPath) {
    const controlUrl = env[TEST_ENV.controlUrl];
    const control = async (route: '/apiserver/stop' | '/apiserver/start' | '/etcd/compact' | '/etcd/backup' | '/etcd/restore', query = '') => {
      if (!controlUrl) throw new Error(`${TEST_ENV.controlUrl} is not set: cannot operate the shared control plane`);
      return callControlEndpoint(controlUrl, `${route}${query}`);
    };
    return makeCluster({
      kubeconfigPath,
      auditLogPath: env[TEST_ENV.auditLog] || undefined,
      etcdUrl: env[TEST_ENV.etcd] || undefined,
      nodeNames: (env[TEST_ENV.nodes] ?? 'converge-node-0').split(',').filter(Boolean),
      stopApiServer: async (o) => void (await control('/apiserver/stop', o?.graceful ? '?graceful=1' : '')),
      startApiServer: async () => void (await control('/apiserver/start')),
      compactEtcd: async () => Number((await control('/etcd/compact')).revision),
      backupEtcd: async () => void (await control('/etcd/backup')),
      restoreEtcd: async () => void (await control('/etcd/restore')),
    });
  }
  if (env[TEST_ENV.standalone] === '1') {
    const cp: ControlPlane = await startControlPlane({
      auditLog: true,
      onProgress: (m) => process.stderr.write(`[control plane] ${m}\n`),
    });
    // The launcher kills the components and removes its state dir when this process exits.
    // The suite's conversion webhook too, as the harness would start it (suite-webhook.ts).
    const { KubeClient, loadKubeConfig } = await import('@converge/runtime');
    const { startSuiteWebhook } = await import('./suite-webhook.ts');
    const webhook = await startSuiteWebhook(new KubeClient({ kubeConfig: loadKubeConfig(cp.kubeconfigPath) }), cp.stateDir);
    Object.assign(process.env, webhook.env);
    return makeCluster({
      kubeconfigPath: cp.kubeconfigPath,
      auditLogPath: cp.auditLogPath,
      etcdUrl: cp.etcdUrl,
      nodeNames: cp.nodeNames,
      stopApiServer: (o) => cp.stopApiServer(o),
      startApiServer: () => cp.startApiServer(),
      compactEtcd: () => cp.compactEtcd(),
      backupEtcd: () => cp.backupEtcd(),
      restoreEtcd: () => cp.restoreEtcd(),
    });
  }
  throw new Error(
    `${TEST_ENV.kubeconfig} is not set: run tests with \`npm test\` (which starts the shared control plane), ` +
      `or set ${TEST_ENV.standalone}=1 to let this process start its own`,
  );
}

interface ClusterParts {
  kubeconfigPath: string;
  auditLogPath?: string;
  etcdUrl?: string;
  nodeNames: readonly string[];
  stopApiServer(options?: { graceful?: boolean }): Promise<void>;
  startApiServer(): Promise<void>;
  compactEtcd(): Promise<number>;
  backupEtcd(): Promise<void>;
  restoreEtcd(): Promise<void>;
}

async function makeCluster(parts: ClusterParts): Promise<TestCluster> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(parts.kubeconfigPath);
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error(`no current cluster in ${parts.kubeconfigPath}`);
  const credentials = new Credentials(kubeConfig);
  const { ca, cert, key } = await credentials.tls();
  const tls: RequestOptions = { ca, cert, key, headers: await credentials.headers() };
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });

  const request = <T>(method: string, path: string, body?: unknown, options: RequestOptionsLite = {}) =>
    new Promise<ApiResponse<T>>((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...(tls.headers as Record<string, string> | undefined),
        ...options.headers,
      };
      if (payload !== undefined) {
        headers['content-type'] = options.contentType ?? 'application/json';
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      const req = httpsRequest(new URL(path, server), { ...tls, method, headers, agent, timeout: options.timeoutMs ?? 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON (e.g. /readyz): keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T, headers: res.headers });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
      req.on('error', reject);
      req.end(payload);
    });

  return {
    kubeconfigPath: parts.kubeconfigPath,
    server,
    auditLogPath: parts.auditLogPath,
    etcdUrl: parts.etcdUrl,
    nodeNames: parts.nodeNames,
    kubeConfig,
    request,
    stopApiServer: parts.stopApiServer,
    startApiServer: parts.startApiServer,
    compactEtcd: parts.compactEtcd,
    backupEtcd: parts.backupEtcd,
    restoreEtcd: parts.restoreEtcd,
  };
}

/**
 * Deletes namespace `name` (if it exists) and resolves once the API server no longer has it, so
 * the next test can create it again: objects applied into a namespace that is still Terminating
 * are refused, or deleted under a waiting `kubectl rollout status`.
 */
export async function namespaceGone(name: string, timeoutMs = 180_000): Promise<void> {
  const cluster = await testCluster();
  await cluster.request('DELETE', `/api/v1/namespaces/${name}`);
  try {
    await waitFor(`namespace ${name} gone`, async () =>
      (await cluster.request('GET', `/api/v1/namespaces/${name}`)).status === 404,
    { timeoutMs, intervalMs: 250 });
  } catch (err) {
    // The namespace controller says in the namespace's conditions what holds the deletion up
    // (content it could not list or delete, finalizers, discovery): put that in the failure.
    const ns = (await cluster.request('GET', `/api/v1/namespaces/${name}`)).body as { status?: { conditions?: { type: string; status: string; message?: string }[] } };
    const held = (ns.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => `${c.type}: ${c.message ?? ''}`);
    throw new Error(`${(err as Error).message}${held.length ? `; the namespace controller says: ${held.join('; ')}` : ''}`, { cause: err });
  }
}

/**
 * Creates a namespace named `<prefix>-<random>` for this test and deletes it when the test ends
 * (deletion is not awaited to completion: the namespace controller finishes it in the background).
 * Resolves once the namespace's `default` ServiceAccount exists, so pods can be created at once
 * (admission rejects pods whose service account does not exist yet).
 */
export async function withNamespace(t: TestContext, prefix = 't'): Promise<string> {
  const cluster = await testCluster();
  const slug = prefix.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 't';
  const name = `${slug}-${randomBytes(4).toString('hex')}`;
  const res = await cluster.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'converge.test/namespace': 'true' } },
  });
  if (res.status !== 201) throw new Error(`creating namespace ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  t.after(async () => {
    const del = await cluster.request('DELETE', `/api/v1/namespaces/${name}`);
    if (del.status !== 200 && del.status !== 202 && del.status !== 404) {
      throw new Error(`deleting namespace ${name}: ${del.status} ${JSON.stringify(del.body)}`);
    }
  });
  await waitFor(`ServiceAccount ${name}/default`, async () =>
    (await cluster.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200,
  { timeoutMs: 30_000, intervalMs: 50 });
  return name;
}

/** Polls `check` until it returns a truthy value (which is returned) or `timeoutMs` passes. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${options.timeoutMs ?? 60_000}ms waiting for ${what}; last: ${detail}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 200));
  }
}
