/**
 * Shared setup of the DigitalHumanProvider tests: the real vendor simulator (HTTPS, our own
 * server) and the operator process in-process, its JSON log lines captured for canary checks.
 */
import type { TestContext } from 'node:test';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { SecretKind, createLogger, loadKubeConfig } from '@converge/runtime';
import type { KubeClient, Manager } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../../packages/operators/src/operators/provider/index.ts';
import { runOperatorProcess } from '../../../packages/operators/src/operators/operator-process.ts';
import { defaultOperatorConfig } from '../../../packages/operators/src/operators/operator-config.ts';
import { startVendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import type { VendorSimulator, VendorSimulatorOptions } from '../../../packages/operators/src/vendor-sim/index.ts';
import { FAULTS_ON, eventually, kubeconfigPath, testClient, testNamespace } from '../../support/operator-harness.ts';
import { DEFAULT_FAULTS, startFaultProxy } from '../../support/fault-proxy.ts';
import type { FaultMix, FaultProxy } from '../../support/fault-proxy.ts';
import { ensureCrds } from '../../support/crds.ts';

export interface ProviderEnv {
  client: KubeClient;
  ns: string;
  sim: VendorSimulator;
  token: string;
  logs: string[];
  /** The fault proxy between the operator and the API server (undefined with CONVERGE_TEST_FAULTS=0 or `faults: false`). */
  proxy: FaultProxy | undefined;
  manager(): Manager;
  stopOperator(): Promise<void>;
  /** Starts the operator again (after `stopOperator`), with the same settings: a restart. */
  startOperator(): Promise<void>;
}

export interface SetupOptions {
  healthIntervalSeconds?: number;
  vendor?: Record<string, unknown>;
  /** More of the operator's `provider` configuration (e.g. `observeIntervalSeconds`). */
  provider?: Record<string, unknown>;
  /** More simulator options (e.g. `usageWindowSeconds`, `accounts`). */
  sim?: Partial<Omit<VendorSimulatorOptions, 'token'>>;
  startOperator?: boolean;
  faults?: Partial<FaultMix> | false;
}

export async function setupProviders(t: TestContext, options: SetupOptions = {}): Promise<ProviderEnv> {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'dhp');
  const token = `canary-${randomBytes(12).toString('hex')}`;
  const sim = await startVendorSimulator({ ...options.sim, token });
  t.after(() => sim.stop());
  await client.create(SecretKind, { metadata: { name: 'creds', namespace: ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token } });
  const logs: string[] = [];
  let manager: Manager | undefined;
  let stop = async () => {};
  let proxy: FaultProxy | undefined;
  const start = async () => {
    const abort = new AbortController();
    const destination = new Writable({ write(chunk, _enc, cb) { logs.push(String(chunk)); cb(); } });
    manager = undefined;
    const running = runOperatorProcess(
      {
        kubeConfig: loadKubeConfig(proxy?.kubeconfigPath ?? kubeconfigPath()),
        namespaces: [ns],
        operators: ['provider'],
        log: createLogger({ level: 'debug', destination }),
        config: {
          ...defaultOperatorConfig,
          provider: { healthIntervalSeconds: options.healthIntervalSeconds ?? 1, ...options.provider, vendor: { caFile: sim.caPath, timeoutSeconds: 2, ...options.vendor } },
        },
        onManager: (m) => { manager = m; },
      },
      abort.signal,
    );
    let stopped = false;
    stop = async () => { if (stopped) return; stopped = true; abort.abort(); await running; };
    await eventually(() => manager?.cache.synced, { what: 'operator caches synced' });
  };
  if (options.startOperator !== false) {
    proxy = options.faults !== false && FAULTS_ON ? await startFaultProxy({ kubeconfigPath: kubeconfigPath(), faults: options.faults || DEFAULT_FAULTS }) : undefined;
    t.after(async () => { await stop(); await proxy?.close(); });
    await start();
  }
  return { client, ns, sim, token, logs, proxy, manager: () => manager!, stopOperator: () => stop(), startOperator: start };
}

export function provider(ns: string, name: string, endpoint: string, extra: Partial<DigitalHumanProvider['spec']> = {}): DigitalHumanProvider {
  return { metadata: { name, namespace: ns }, spec: { endpoint, region: 'ap-northeast-1', displayName: `Presenter ${name}`, credentials: { secretRef: { name: 'creds' } }, ...extra } };
}

export function ready(dhp: DigitalHumanProvider) {
  return dhp.status?.conditions?.find((c) => c.type === 'Ready');
}

export async function waitFor(client: KubeClient, ns: string, name: string, check: (d: DigitalHumanProvider) => boolean, what: string, timeoutMs = 30_000): Promise<DigitalHumanProvider> {
  return eventually(async () => {
    const d = await client.get(DigitalHumanProviderKind, { namespace: ns, name });
    return check(d) ? d : undefined;
  }, { timeoutMs, what });
}

export const isReady = (d: DigitalHumanProvider) => ready(d)?.status === 'True' && ready(d)?.observedGeneration === d.metadata.generation && d.status?.observedGeneration === d.metadata.generation;

/** Instances whose idempotency key is the CR's UID. */
export function instancesOf(sim: VendorSimulator, dhp: DigitalHumanProvider) {
  return sim.instances().filter((i) => i.idempotencyKey === dhp.metadata.uid);
}
