/**
 * Watches what the benchmark measures, from the benchmark process, through the runtime's own
 * list+watch machinery (`Informer`) on a dedicated client (User-Agent `converge-bench`, no
 * client-side rate limit), and timestamps changes as they arrive.
 *
 * - `Observed<T>`: one kind in one namespace; `until(check)` resolves when `check()` holds,
 *   re-checked on every change and every second.
 * - `trackMicroservices`: per Microservice and generation, when it was first seen
 *   `ResourcesApplied` and when first seen `Ready=True` (both for that generation).
 * - `trackDeployments`: when each Deployment was first seen fully available for its generation.
 * Times are `performance.now()` milliseconds in this process.
 * @module
 */
import { DeploymentKind, Informer } from '@converge/runtime';
import type { Change, Deployment, KubeClient, KubeObject, ResourceKind, Store } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../packages/operators/src/operators/microservice/index.ts';

export interface Observed<T extends KubeObject> {
  readonly store: Store<T>;
  onChange(handler: (change: Change<T>, at: number) => void): () => void;
  /** Resolves when check() is true; rejects after timeoutMs with `what` in the message. */
  until(check: () => boolean, timeoutMs: number, what: string): Promise<number>;
  stop(): Promise<void>;
}

const liveObservers = new Set<AbortController>();

/** Stops every observer still running (their watches would keep a client from closing). */
export function stopAllObservers(): void {
  for (const a of liveObservers) a.abort();
  liveObservers.clear();
}

export async function observe<T extends KubeObject>(client: KubeClient, kind: ResourceKind<T>, namespace: string): Promise<Observed<T>> {
  const abort = new AbortController();
  liveObservers.add(abort);
  const informer = new Informer<T>({ client, kind, namespaces: [namespace] });
  const handlers = new Set<(change: Change<T>, at: number) => void>();
  const waiters = new Set<() => void>();
  informer.addHandler((change) => {
    const at = performance.now();
    for (const h of handlers) h(change, at);
    for (const w of waiters) w();
  });
  const running = informer.start(abort.signal).catch(() => undefined);
  await informer.waitForSync();
  return {
    store: informer.store,
    onChange(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    until(check, timeoutMs, what) {
      if (check()) return Promise.resolve(performance.now());
      return new Promise((resolve, reject) => {
        const done = (err?: Error) => {
          waiters.delete(test);
          clearInterval(poll);
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(performance.now());
        };
        const test = () => {
          if (check()) done();
        };
        waiters.add(test);
        const poll = setInterval(test, 1_000);
        const timer = setTimeout(() => done(new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`)), timeoutMs);
      });
    },
    async stop() {
      abort.abort();
      liveObservers.delete(abort);
      await running;
    },
  };
}

export const readyCondition = (ms: Microservice) => ms.status?.conditions?.find((c) => c.type === 'Ready');

/** ResourcesApplied for the object's current generation. */
export function isApplied(ms: Microservice): boolean {
  return ms.status?.phase === 'ResourcesApplied' && ms.status.observedGeneration === ms.metadata.generation;
}

/** Ready=True for the object's current generation. */
export function isReady(ms: Microservice): boolean {
  const ready = readyCondition(ms);
  return ready?.status === 'True' && ready.observedGeneration === ms.metadata.generation && ms.status?.observedGeneration === ms.metadata.generation;
}

export interface MicroserviceTimes {
  generation: number;
  appliedAt?: number;
  readyAt?: number;
}

export interface MicroserviceTracker extends Observed<Microservice> {
  /** First times per key, for the latest generation seen. */
  readonly times: Map<string, MicroserviceTimes>;
  appliedCount(): number;
  readyCount(): number;
  /** When `key` was first seen Ready for `generation` (or a later one). */
  readyAt(key: string, generation: number): number | undefined;
}

export async function trackMicroservices(client: KubeClient, namespace: string): Promise<MicroserviceTracker> {
  const observed = await observe(client, MicroserviceKind, namespace);
  const times = new Map<string, MicroserviceTimes>();
  const readyHistory = new Map<string, Map<number, number>>();
  let applied = 0;
  let ready = 0;
  const note = (ms: Microservice, at: number) => {
    const key = `${ms.metadata.namespace}/${ms.metadata.name}`;
    const generation = ms.metadata.generation ?? 0;
    let t = times.get(key);
    if (!t || t.generation !== generation) {
      if (t?.appliedAt !== undefined) applied -= 1;
      if (t?.readyAt !== undefined) ready -= 1;
      t = { generation };
      times.set(key, t);
    }
    if (t.appliedAt === undefined && isApplied(ms)) {
      t.appliedAt = at;
      applied += 1;
    }
    if (t.readyAt === undefined && isReady(ms)) {
      t.readyAt = at;
      ready += 1;
      let h = readyHistory.get(key);
      if (!h) readyHistory.set(key, (h = new Map()));
      h.set(generation, at);
    }
  };
  const now = performance.now();
  for (const ms of observed.store.list()) note(ms, now);
  observed.onChange((change, at) => {
    if (change.type === 'delete') {
      const key = `${change.object.metadata.namespace}/${change.object.metadata.name}`;
      const t = times.get(key);
      if (t?.appliedAt !== undefined) applied -= 1;
      if (t?.readyAt !== undefined) ready -= 1;
      times.delete(key);
      return;
    }
    note(change.object, at);
  });
  return {
    ...observed,
    times,
    appliedCount: () => applied,
    readyCount: () => ready,
    readyAt(key, generation) {
      const h = readyHistory.get(key);
      if (!h) return undefined;
      let best: number | undefined;
      for (const [g, at] of h) if (g >= generation && (best === undefined || at < best)) best = at;
      return best;
    },
  };
}

/** Fully rolled out: the controller saw this generation and every replica is updated and available. */
export function isDeploymentAvailable(d: Deployment): boolean {
  const want = d.spec?.replicas ?? 1;
  const s = d.status ?? {};
  return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) && s.updatedReplicas === want && s.availableReplicas === want && (s.replicas ?? 0) === want;
}

export interface DeploymentTracker extends Observed<Deployment> {
  /** Keys whose Deployment is available now. */
  availableCount(): number;
  /** When each Deployment was last seen becoming available. */
  readonly availableAt: Map<string, number>;
}

export async function trackDeployments(client: KubeClient, namespace: string): Promise<DeploymentTracker> {
  const observed = await observe(client, DeploymentKind, namespace);
  const available = new Set<string>();
  const availableAt = new Map<string, number>();
  const note = (d: Deployment, at: number, deleted: boolean) => {
    const key = `${d.metadata.namespace}/${d.metadata.name}`;
    if (!deleted && isDeploymentAvailable(d)) {
      if (!available.has(key)) availableAt.set(key, at);
      available.add(key);
    } else {
      available.delete(key);
    }
  };
  const now = performance.now();
  for (const d of observed.store.list()) note(d, now, false);
  observed.onChange((c, at) => note(c.object, at, c.type === 'delete'));
  return { ...observed, availableCount: () => available.size, availableAt };
}
