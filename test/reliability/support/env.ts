/**
 * The stage of one reliability test: its own namespace on the shared control plane, both CRDs,
 * a vendor simulator (real HTTPS) with a canary token in a Secret, an operator configuration
 * file, and the operators — either in this process (`startInProcess`, for tests that only watch)
 * or as `converge run` child processes (`startReplica`, for tests that SIGKILL them).
 *
 * Everything started here is stopped when the test ends: replicas are SIGKILLed, the in-process
 * operator is stopped gracefully, the simulator is closed, the namespace is deleted.
 * @module
 */
import type { TestContext } from 'node:test';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { SecretKind, createLogger, loadKubeConfig } from '@converge/runtime';
import type { KubeClient, Manager } from '@converge/runtime';
import type { KubeConfig } from '@converge/runtime';
import { runOperatorProcess } from '../../../packages/operators/src/operators/operator-process.ts';
import { parseOperatorConfig } from '../../../packages/operators/src/operators/operator-config.ts';
import { startVendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import type { VendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import { FAULTS_ON, eventually, kubeconfigPath, testClient, testFaultProxy, testNamespace } from '../../support/operator-harness.ts';
import type { FaultMix, FaultProxy } from '../../support/fault-proxy.ts';
import { ensureCrds } from '../../support/crds.ts';
import { startReplica as spawnReplica } from '../../support/operator-process.ts';
import type { OperatorReplica } from '../../support/operator-process.ts';

export const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

export interface OperatorSettings {
  /** Periodic check of Microservices (s). Default 10. */
  resyncSeconds?: number;
  /** Health interval = periodic check of providers (s). Default 10. */
  healthIntervalSeconds?: number;
  /** Microservice Deployment replicas. Default 1 (keeps the simulated pod count low). */
  replicas?: number;
  /** Progress-only Microservice status changes at most this often (s). Default: the operator's (15). */
  statusProgressIntervalSeconds?: number;
  /** Extra `provider.vendor` settings. */
  vendor?: Record<string, unknown>;
  shutdownGraceSeconds?: number;
  /**
   * Route every operator (replicas and in-process) through a fault proxy with this mix (see
   * test/support/fault-proxy.ts); default: direct. Off with CONVERGE_TEST_FAULTS=0.
   */
  faults?: Partial<FaultMix>;
}

export interface ReliabilityEnv {
  /** Admin client of the test (user agent `converge-test`). */
  client: KubeClient;
  ns: string;
  sim: VendorSimulator;
  /** The vendor token, stored in Secret `creds`; doubles as a canary that must never leak. */
  token: string;
  /** The operator configuration file every replica gets (`--config`). */
  configPath: string;
  /** Every replica started so far, in order. */
  replicas: OperatorReplica[];
  /** The fault proxy the operators go through, when `faults` was given. */
  proxy: FaultProxy | undefined;
  /** Starts `converge run` for this namespace (both operators unless `operators` says otherwise). */
  startReplica(name: string, options?: { faults?: string; args?: string[]; env?: NodeJS.ProcessEnv; operators?: string; kubeconfig?: string }): OperatorReplica;
  /** Runs the operator process in this test process; its JSON log lines land in `logs`. */
  startInProcess(options?: { kubeConfig?: KubeConfig; operators?: ('microservice' | 'provider')[]; healthProbeBindAddress?: string }): Promise<InProcessOperator>;
}

export interface InProcessOperator {
  manager: Manager;
  logs: string[];
  stop(): Promise<void>;
}

export async function reliabilityEnv(t: TestContext, prefix: string, settings: OperatorSettings = {}): Promise<ReliabilityEnv> {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, prefix);
  await eventually(async () => {
    try {
      return (await client.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)) !== undefined;
    } catch {
      return false;
    }
  }, { what: `ServiceAccount ${ns}/default`, timeoutMs: 120_000 });
  const token = `canary-${randomBytes(16).toString('hex')}`;
  const sim = await startVendorSimulator({ token });
  t.after(() => sim.stop());
  await client.create(SecretKind, { metadata: { name: 'creds', namespace: ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token } });

  const dir = mkdtempSync(join(tmpdir(), `converge-rel-${prefix}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const raw = {
    microservice: {
      resyncPeriodSeconds: settings.resyncSeconds ?? 10,
      defaults: { replicas: settings.replicas ?? 1 },
      ...(settings.statusProgressIntervalSeconds === undefined ? {} : { statusProgressIntervalSeconds: settings.statusProgressIntervalSeconds }),
    },
    provider: {
      healthIntervalSeconds: settings.healthIntervalSeconds ?? 10,
      vendor: { caFile: sim.caPath, timeoutSeconds: 2, requestsPerSecond: 100, burst: 100, maxConcurrency: 8, ...settings.vendor },
    },
    shutdownGraceSeconds: settings.shutdownGraceSeconds ?? 5,
  };
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, JSON.stringify(raw, null, 2)); // JSON is YAML
  const config = parseOperatorConfig(raw, configPath);

  const proxy = settings.faults && FAULTS_ON ? await testFaultProxy(t, settings.faults) : undefined;
  const replicas: OperatorReplica[] = [];
  t.after(async () => {
    for (const r of replicas) r.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
  });

  return {
    client,
    ns,
    sim,
    token,
    configPath,
    replicas,
    proxy,
    startReplica(name, options = {}) {
      const args = [
        '--namespace', ns,
        '--operators', options.operators ?? 'microservice,provider',
        '--config', configPath,
        '--metrics-bind-address', '0',
        '--health-probe-bind-address', '0',
        ...(options.args ?? []),
      ];
      const env: NodeJS.ProcessEnv = { ...options.env };
      if (options.faults) env.CONVERGE_FAULTS = options.faults;
      const kubeconfig = options.kubeconfig ?? proxy?.kubeconfigPath;
      const replica = spawnReplica(name, kubeconfig ? ['--kubeconfig', kubeconfig, ...args] : args, env);
      replicas.push(replica);
      return replica;
    },
    async startInProcess(options = {}) {
      const logs: string[] = [];
      const abort = new AbortController();
      const destination = new Writable({ write(chunk, _enc, cb) { logs.push(String(chunk)); cb(); } });
      let manager: Manager | undefined;
      const running = runOperatorProcess(
        {
          kubeConfig: options.kubeConfig ?? loadKubeConfig(proxy?.kubeconfigPath ?? kubeconfigPath()),
          namespaces: [ns],
          operators: options.operators ?? ['microservice', 'provider'],
          log: createLogger({ level: 'debug', destination }),
          config,
          ...(options.healthProbeBindAddress ? { healthProbeBindAddress: options.healthProbeBindAddress } : {}),
          onManager: (m) => { manager = m; },
        },
        abort.signal,
      );
      let failure: unknown;
      running.catch((err: unknown) => { failure = err; });
      let stopped = false;
      const stop = async () => {
        if (stopped) return;
        stopped = true;
        abort.abort();
        await running.catch(() => {});
      };
      t.after(stop);
      t.after(() => {
        // A failed test (or CONVERGE_KEEP_OPERATOR_LOGS=1) keeps the operator's debug log next to the control plane's component logs.
        // `passed` is there at run time (Node 24) but not yet in @types/node.
        if ((t as TestContext & { passed?: boolean }).passed && !process.env.CONVERGE_KEEP_OPERATOR_LOGS) return;
        const dir = join(process.cwd(), '.converge', 'test-logs');
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, `operator-${ns}.log`), logs.join(''));
      });
      await eventually(() => {
        if (failure) throw failure;
        return manager?.cache.synced;
      }, { what: 'in-process operator caches synced', timeoutMs: 60_000 });
      return { manager: manager!, logs, stop };
    },
  };
}

/** Lines of a replica that mention the fault point it died at. */
export function diedAt(replica: OperatorReplica): string | undefined {
  const line = replica.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('fault point '));
  return line ? String(line.msg).replace(/^fault point (\S+): .*$/, '$1') : undefined;
}

export { within } from '../../support/within.ts';

export const random = {
  /** A deterministic generator (mulberry32) so a failing storm can be replayed with its seed. */
  seeded(seed: number) {
    let a = seed >>> 0;
    const next = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let x = a;
      x = Math.imul(x ^ (x >>> 15), x | 1);
      x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
    return {
      next,
      int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
      pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    };
  },
};
export type Rng = ReturnType<typeof random.seeded>;
