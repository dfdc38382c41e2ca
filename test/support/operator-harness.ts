/**
 * Test support for running runtime managers and operators in the test process against the
 * shared local control plane: a client for the cluster, a namespace per test, a manager that is
 * stopped when the test ends, and polling helpers.
 *
 * Tests wait for conditions by polling the API server with a deadline; they never assert on
 * how long something took (benchmarks measure speed).
 *
 * The operator under test reaches the API server through a fault proxy (fault-proxy.ts) with the
 * default mix — every watch event cut (inside multi-byte characters where there are some), half
 * of the watches closed early (cleanly or abruptly), 0–10 ms of latency — unless a test passes its
 * own client or `faults: false`. `CONVERGE_TEST_FAULTS=0` turns the proxy off for a whole run (to
 * tell a fault from a bug when debugging). The test's own client (`testClient`) is always direct.
 * @module
 */
import type { TestContext } from 'node:test';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { KubeClient, Manager, NamespaceKind, loadKubeConfig, isNotFound } from '@converge/runtime';
import type { ManagerOptions } from '@converge/runtime';
import { DEFAULT_FAULTS, startFaultProxy } from './fault-proxy.ts';
import type { FaultMix, FaultProxy } from './fault-proxy.ts';

export function kubeconfigPath(): string {
  const path = process.env.CONVERGE_TEST_KUBECONFIG;
  if (!path) throw new Error('CONVERGE_TEST_KUBECONFIG is not set: run the suite with `npm test`, which starts the local control plane');
  return path;
}

export function testClient(options: { userAgent?: string; kubeconfig?: string } = {}): KubeClient {
  return new KubeClient({ kubeConfig: loadKubeConfig(options.kubeconfig ?? kubeconfigPath()), userAgent: options.userAgent ?? 'converge-test', qps: 0 });
}

export function testLogger(): Logger {
  return pino({ level: process.env.CONVERGE_TEST_LOG_LEVEL ?? 'silent' });
}

/** Creates a namespace for this test and deletes it when the test ends. */
export async function testNamespace(t: TestContext, client: KubeClient, prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await client.create(NamespaceKind, { metadata: { name, labels: { 'converge.test/namespace': 'true' } } });
  t.after(async () => {
    try {
      await client.delete(NamespaceKind, { namespace: '', name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  });
  return name;
}

/** Whether operators under test go through the fault proxy (`CONVERGE_TEST_FAULTS=0`: no). */
export const FAULTS_ON = process.env.CONVERGE_TEST_FAULTS !== '0';

/**
 * A fault proxy for this test (default mix unless `faults` says otherwise), closed when the test
 * ends. Its `kubeconfigPath` points at it with the admin credentials of the shared cluster.
 */
export async function testFaultProxy(t: TestContext, faults: Partial<FaultMix> = DEFAULT_FAULTS): Promise<FaultProxy> {
  const proxy = await startFaultProxy({ kubeconfigPath: kubeconfigPath(), faults });
  t.after(() => proxy.close());
  return proxy;
}

/**
 * Starts a manager built by `configure`; stops it (and waits) when the test ends. Its client goes
 * through a fault proxy (see the module comment) unless `client` is given or `faults` is false.
 */
export async function startManager(
  t: TestContext,
  options: Partial<ManagerOptions> & { configure?: (m: Manager) => void; userAgent?: string; faults?: Partial<FaultMix> | false },
): Promise<{ manager: Manager; stop: () => Promise<void>; proxy: FaultProxy | undefined }> {
  const proxy = !options.client && options.faults !== false && FAULTS_ON
    ? await startFaultProxy({ kubeconfigPath: kubeconfigPath(), faults: options.faults || DEFAULT_FAULTS })
    : undefined;
  const client = options.client ?? testClient({ userAgent: options.userAgent ?? 'converge-operator-test', ...(proxy ? { kubeconfig: proxy.kubeconfigPath } : {}) });
  const manager = new Manager({ log: testLogger(), shutdownGraceMs: 5_000, ...options, client });
  options.configure?.(manager);
  const abort = new AbortController();
  const running = manager.start(abort.signal);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    abort.abort();
    await running;
    await client.close();
    await proxy?.close(); // after the manager: its watches end with it, not with the proxy
  };
  t.after(stop);
  await manager.cache.waitForSync();
  return { manager, stop, proxy };
}

/** Polls `check` until it returns a truthy value (returned) or the deadline passes (throws with the last state). */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
