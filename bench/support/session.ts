/**
 * One benchmark session: its own local control plane (audit log on), an admin client for the
 * benchmark's own requests (User-Agent `converge-bench`, no client-side rate limit), the CRDs,
 * namespaces, and the output directory. `close()` stops everything the session started.
 * @module
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureControlPlaneBinary, startControlPlane } from '@converge/envtest';
import type { ControlPlane } from '@converge/envtest';
import { CustomResourceDefinitionKind, KubeClient, NamespaceKind, ServiceAccountKind, isNotFound, loadKubeConfig } from '@converge/runtime';
import type { CustomResourceDefinition } from '@converge/runtime';
import { MicroserviceCrd } from '../../packages/operators/src/operators/microservice/index.ts';
import { stopAllObservers } from './observer.ts';
import { splitCpus } from './cpu-split.ts';
import type { CpuSplit } from './cpu-split.ts';
import { DigitalHumanProviderCrd } from '../../packages/operators/src/operators/provider/index.ts';

export const BENCH_USER_AGENT = 'converge-bench/0.1';

export interface Session {
  readonly controlPlane: ControlPlane;
  readonly kubeconfigPath: string;
  readonly auditLogPath: string;
  /** The benchmark's own client: observing, creating fixtures, making changes. */
  readonly client: KubeClient;
  readonly outDir: string;
  /** Where CPU profiles go (only with --profile). */
  readonly profileDir?: string;
  /** With --split-cpus: the CPUs of the control plane and of the benchmark (cpu-split.ts). */
  readonly cpuSplit?: CpuSplit;
  log(message: string): void;
  /** Creates a namespace and waits for its default ServiceAccount (pods need it). */
  createNamespace(name: string): Promise<string>;
  /** Deletes a namespace; with `wait`, resolves once it is gone. Returns the time it took (ms). */
  deleteNamespace(name: string, options?: { wait?: boolean; timeoutMs?: number }): Promise<number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function openSession(options: { outDir: string; profile: boolean; splitCpus?: boolean; nodes?: number; log: (m: string) => void }): Promise<Session> {
  const { log } = options;
  const binary = await ensureControlPlaneBinary({ onProgress: (m) => log(`[control plane] ${m}`) });
  const started = performance.now();
  const cp = await startControlPlane({
    binary,
    auditLog: true,
    nodes: options.nodes ?? 2,
    // With --profile, the API server serves /debug/pprof too (the compare scenario samples it per run).
    ...(options.profile ? { apiServerFlags: ['--profiling=true'] } : {}),
    onProgress: (m) => log(`[control plane] ${m}`) });
  log(`control plane ready in ${((performance.now() - started) / 1000).toFixed(1)} s at ${cp.server}`);
  let cpuSplit: CpuSplit | undefined;
  try {
    if (options.splitCpus) cpuSplit = await splitCpus(cp.processes().map((p) => p.pid), log);
  } catch (err) {
    await cp.stop();
    throw err;
  }
  const client = new KubeClient({ kubeConfig: loadKubeConfig(cp.kubeconfigPath), userAgent: BENCH_USER_AGENT, qps: 0 });
  for (const crd of [MicroserviceCrd, DigitalHumanProviderCrd] as CustomResourceDefinition[]) {
    await client.apply(CustomResourceDefinitionKind, crd, { fieldManager: 'converge-bench', force: true });
  }
  for (const crd of [MicroserviceCrd, DigitalHumanProviderCrd] as CustomResourceDefinition[]) {
    for (let i = 0; ; i++) {
      const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name: crd.metadata.name! });
      const conditions = (live.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (i > 300) throw new Error(`CRD ${crd.metadata.name} not established`);
      await sleep(100);
    }
  }
  const profileDir = options.profile ? join(options.outDir, 'profiles') : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  let closed: Promise<void> | undefined;
  return {
    controlPlane: cp,
    kubeconfigPath: cp.kubeconfigPath,
    auditLogPath: cp.auditLogPath!,
    client,
    outDir: options.outDir,
    ...(profileDir ? { profileDir } : {}),
    ...(cpuSplit ? { cpuSplit } : {}),
    log,
    async createNamespace(name) {
      await client.create(NamespaceKind, { metadata: { name, labels: { 'converge.dev/bench': 'true' } } });
      for (let i = 0; ; i++) {
        try {
          await client.get(ServiceAccountKind, { namespace: name, name: 'default' });
          return name;
        } catch (err) {
          if (!isNotFound(err) || i > 300) throw err;
          await sleep(100);
        }
      }
    },
    async deleteNamespace(name, opts = {}) {
      const t0 = performance.now();
      try {
        await client.delete(NamespaceKind, { namespace: '', name });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        return 0;
      }
      if (!opts.wait) return 0;
      const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
      for (;;) {
        try {
          await client.get(NamespaceKind, { namespace: '', name });
        } catch (err) {
          if (isNotFound(err)) return performance.now() - t0;
          throw err;
        }
        if (Date.now() > deadline) throw new Error(`namespace ${name} still exists after ${opts.timeoutMs ?? 600_000} ms`);
        await sleep(500);
      }
    },
    close() {
      closed ??= (async () => {
        stopAllObservers();
        // An open watch would keep close() waiting: give it a moment, then move on.
        await Promise.race([client.close().catch(() => undefined), new Promise((r) => setTimeout(r, 3_000))]);
        await cp.stop();
      })();
      return closed;
    },
  };
}
