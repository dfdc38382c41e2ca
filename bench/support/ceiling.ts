/**
 * The ceiling of the cold-start benchmark, run as a child process (like the operator):
 * a plain client that does the same API work as the Microservice operator for Microservices that
 * already exist — status `Accepted`, create the Deployment and the Service, status
 * `ResourcesApplied`, then status `Ready` once the Deployment is available and the Service has a
 * ready endpoint — with the same number of workers and the same client-side rate limit, and
 * nothing else: no reconcile loop, no ownership checks, no drift comparison, no periodic check,
 * no intermediate rollout statuses. It watches Deployments and EndpointSlices only to know when
 * to write `Ready`. The objects and statuses it writes are the operator's (renderDesiredState,
 * assessRollout), so the API server does the same work per object.
 *
 *   node bench/support/ceiling.ts --kubeconfig <path> --namespace <ns> --workers 4 --qps 50 --burst 100 [--replicas 2]
 *
 * Prints one JSON line `{ done: true, microservices, writes, cpuMs }` and exits 0 when every
 * Microservice has its Ready status written.
 * @module
 */
import { parseArgs } from 'node:util';
import {
  DeploymentKind,
  EndpointSliceKind,
  Informer,
  KubeClient,
  ServiceKind,
  isConflict,
  loadKubeConfig,
  setCondition,
  toRfc3339,
  keyOf,
} from '@converge/runtime';
import type { Condition, Deployment, EndpointSlice } from '@converge/runtime';
import { MicroserviceKind, assessRollout, defaultPlatformDefaults, renderDesiredState } from '../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice, MicroserviceStatus } from '../../packages/operators/src/operators/microservice/index.ts';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string' },
    workers: { type: 'string', default: '4' },
    qps: { type: 'string', default: '50' },
    burst: { type: 'string', default: '100' },
    replicas: { type: 'string' },
  },
});
if (!values.kubeconfig || !values.namespace) {
  process.stderr.write('usage: ceiling.ts --kubeconfig <path> --namespace <ns> [--workers n] [--qps n] [--burst n]\n');
  process.exit(2);
}
const namespace = values.namespace;
const defaults = values.replicas ? { ...defaultPlatformDefaults, replicas: Number(values.replicas) } : defaultPlatformDefaults;
const client = new KubeClient({ kubeConfig: loadKubeConfig(values.kubeconfig), userAgent: 'converge-bench-ceiling/0.1', qps: Number(values.qps), burst: Number(values.burst) });
let writes = 0;
client.observe({ onRequest: (r) => { if (!['get', 'list', 'watch'].includes(r.verb)) writes += 1; } });

const abort = new AbortController();
const deployments = new Informer<Deployment>({ client, kind: DeploymentKind, namespaces: [namespace] });
const slices = new Informer<EndpointSlice>({ client, kind: EndpointSliceKind, namespaces: [namespace] });
void deployments.start(abort.signal).catch(() => undefined);
void slices.start(abort.signal).catch(() => undefined);
await Promise.all([deployments.waitForSync(), slices.waitForSync()]);

const { items } = await client.listAll(MicroserviceKind, { namespace });
const latest = new Map<string, Microservice>();
const applied = new Set<string>();
const readyQueued = new Set<string>();
let readyWritten = 0;

type Task = { type: 'apply'; key: string } | { type: 'ready'; key: string };
const queue: Task[] = [];
const idle = new Set<() => void>();
const push = (t: Task) => {
  queue.push(t);
  for (const w of idle) w();
  idle.clear();
};

const now = () => toRfc3339(new Date());
const conditions = (ms: Microservice, entries: [string, Condition['status'], string, string][]) => {
  let list = (ms.status?.conditions ?? []) as Condition[];
  for (const [type, status, reason, message] of entries) list = setCondition(list, { type, status, reason, message, observedGeneration: ms.metadata.generation ?? 0 }, now());
  return list;
};

function readyEndpoints(name: string): number {
  let n = 0;
  for (const s of slices.store.list(namespace)) {
    if (s.metadata.labels?.['kubernetes.io/service-name'] !== name) continue;
    for (const e of s.endpoints ?? []) if (e.conditions?.ready !== false && e.addresses?.length) n += 1;
  }
  return n;
}

function checkReady(key: string): void {
  if (!applied.has(key) || readyQueued.has(key)) return;
  const ms = latest.get(key)!;
  const d = deployments.store.get(key);
  if (!d) return;
  if (assessRollout(d, ms.metadata.generation ?? 0, readyEndpoints(ms.metadata.name!)).state !== 'Available') return;
  readyQueued.add(key);
  push({ type: 'ready', key });
}
deployments.addHandler((c) => checkReady(`${c.object.metadata.namespace}/${c.object.metadata.name}`));
slices.addHandler((c) => {
  const svc = c.object.metadata.labels?.['kubernetes.io/service-name'];
  if (svc) checkReady(`${namespace}/${svc}`);
});

async function writeStatus(key: string, status: MicroserviceStatus): Promise<void> {
  for (;;) {
    const ms = latest.get(key)!;
    try {
      const body = { metadata: { uid: ms.metadata.uid, resourceVersion: ms.metadata.resourceVersion }, status };
      latest.set(key, await client.patch(MicroserviceKind, keyOf(ms), { type: 'merge', body }, { subresource: 'status' }));
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
      latest.set(key, await client.get(MicroserviceKind, keyOf(ms)));
    }
  }
}

async function apply(key: string): Promise<void> {
  let ms = latest.get(key)!;
  const generation = ms.metadata.generation ?? 0;
  await writeStatus(key, {
    phase: 'Accepted',
    observedGeneration: generation,
    conditions: conditions(ms, [
      ['Ready', 'False', 'RolloutInProgress', 'spec accepted; applying resources'],
      ['Progressing', 'True', 'RolloutInProgress', 'spec accepted; applying resources'],
      ['Stalled', 'False', 'NotStalled', ''],
    ]),
  } as MicroserviceStatus);
  ms = latest.get(key)!;
  const desired = renderDesiredState(ms, defaults);
  await client.create(DeploymentKind, desired.deployment, { fieldManager: 'converge-microservice' });
  await client.create(ServiceKind, desired.service, { fieldManager: 'converge-microservice' });
  await writeStatus(key, {
    phase: 'ResourcesApplied',
    observedGeneration: generation,
    conditions: conditions(ms, [
      ['Ready', 'False', 'RolloutInProgress', 'waiting for the Deployment controller to observe the new spec'],
      ['Progressing', 'True', 'RolloutInProgress', 'waiting for the Deployment controller to observe the new spec'],
      ['Stalled', 'False', 'NotStalled', ''],
    ]),
    managedResources: { deployment: ms.metadata.name!, service: ms.metadata.name! },
    rollout: { replicas: defaults.replicas, updatedReplicas: 0, availableReplicas: 0, readyEndpoints: 0 },
  } as MicroserviceStatus);
  applied.add(key);
  checkReady(key);
}

async function ready(key: string): Promise<void> {
  const ms = latest.get(key)!;
  const d = deployments.store.get(key)!;
  const rollout = assessRollout(d, ms.metadata.generation ?? 0, readyEndpoints(ms.metadata.name!));
  await writeStatus(key, {
    phase: 'ResourcesApplied',
    observedGeneration: ms.metadata.generation ?? 0,
    conditions: conditions(ms, [
      ['Ready', 'True', 'Available', rollout.message],
      ['Progressing', 'False', 'RolloutComplete', rollout.message],
      ['Stalled', 'False', 'NotStalled', ''],
    ]),
    managedResources: { deployment: ms.metadata.name!, service: ms.metadata.name! },
    rollout: rollout.summary,
  } as MicroserviceStatus);
  readyWritten += 1;
}

for (const ms of items) {
  const key = `${namespace}/${ms.metadata.name}`;
  latest.set(key, ms);
  push({ type: 'apply', key });
}

const total = items.length;
async function worker(): Promise<void> {
  while (readyWritten < total) {
    const task = queue.shift();
    if (!task) {
      await new Promise<void>((r) => {
        idle.add(r);
        setTimeout(() => {
          idle.delete(r);
          r();
        }, 250);
      });
      continue;
    }
    if (task.type === 'apply') await apply(task.key);
    else await ready(task.key);
  }
}
await Promise.all(Array.from({ length: Number(values.workers) }, worker));
abort.abort();
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ done: true, microservices: total, writes, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
await client.close();
process.exit(0);
