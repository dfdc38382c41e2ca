/**
 * One cluster seen by the dashboard: a read-only client and one informer cache with the
 * declared watches it needs — Microservices, DigitalHumanProviders, Deployments, Services and
 * EndpointSlices (ownership and rollout, as `converge explain` shows them) and Events
 * (events.k8s.io/v1, for the detail view). No Secrets: the dashboard cannot read them at all.
 *
 * What a caller can rely on:
 * - list+watch only (never a write, never a poll of the API server); the watches recover by
 *   themselves (the runtime's watcher: resume, relist on 410, backoff for ever);
 * - the cluster's state (connecting / reachable / unreachable) is judged from the watches'
 *   health every `healthIntervalMs` (default 200 ms; in-process, costs no request) and whenever
 *   `view()` is called (before every API answer), and pushed to the model on change, so the rows
 *   never disagree with the state the API reports and one unreachable cluster never stops the
 *   others;
 * - `start(signal)` settles when the signal aborts and every watch has stopped;
 * - how long a reconnected watch has stayed open is measured on the clock's monotonic time, so a
 *   step of the wall clock neither hides an outage nor prolongs one.
 * @module
 */
import {
  Cache,
  DeploymentKind,
  EndpointSliceKind,
  EventKind,
  KubeClient,
  ServiceKind,
} from '@converge/runtime';
import { systemClock } from '@converge/runtime';
import type { Clock, Informer, KubeObject, Logger } from '@converge/runtime';
import type { KubeConfig } from '@converge/runtime';
import { MicroserviceKind } from '../operators/microservice/api/index.ts';
import { DigitalHumanProviderKind } from '../operators/provider/api/index.ts';
import { judgeCluster } from './cluster-state.ts';
import type { WatchMemory } from './cluster-state.ts';
import type { DashboardModel } from './model.ts';
import type { ClusterView, ItemKind } from './shared/types.ts';

/** A cluster to show: its name on the page and how to reach it. */
export interface ClusterSpec {
  name: string;
  kubeConfig: KubeConfig;
}

export interface ClusterSourceOptions {
  healthIntervalMs?: number;
  log?: Logger;
  /** Client-side limit towards this API server (lists and watch restarts only). Default 20/s, burst 40. */
  qps?: number;
  burst?: number;
  /** Default `systemClock`. */
  clock?: Clock;
  /**
   * How long a request (a list page, a watch's first answer) may wait for the API server: an
   * API server that accepts connections and never answers is unreachable after about two of
   * them (`cluster-state.ts`). Default 10 s.
   */
  requestTimeoutMs?: number;
}

/** How often a cluster's `lastSync` alone is pushed to the page. */
const LAST_SYNC_PUBLISH_MS = 5_000;

/** Events regarding these UIDs, indexed in the Event informer. */
export const REGARDING_UID_INDEX = 'regarding-uid';
/** EndpointSlices by `<namespace>/<service-name>`. */
export const SERVICE_SLICES_INDEX = 'service-slices';

export class ClusterSource {
  readonly name: string;
  readonly server: string;
  readonly client: KubeClient;
  readonly cache: Cache;
  readonly #model: DashboardModel;
  readonly #healthIntervalMs: number;
  readonly #clock: Clock;
  readonly #memory = new Map<string, WatchMemory>();
  #syncedAt: string | null = null;

  constructor(spec: ClusterSpec, model: DashboardModel, options: ClusterSourceOptions = {}) {
    this.name = spec.name;
    this.#model = model;
    this.#healthIntervalMs = options.healthIntervalMs ?? 200;
    this.#clock = options.clock ?? systemClock;
    this.client = new KubeClient({ kubeConfig: spec.kubeConfig, userAgent: 'converge-dashboard/0.1', qps: options.qps ?? 20, burst: options.burst ?? 40, timeoutMs: options.requestTimeoutMs ?? 10_000 });
    this.server = this.client.server;
    this.cache = new Cache({ client: this.client, ...(options.log ? { log: options.log.child({ cluster: spec.name }) } : {}) });
    this.#feed(this.cache.informer(MicroserviceKind), 'Microservice');
    this.#feed(this.cache.informer(DigitalHumanProviderKind), 'DigitalHumanProvider');
    this.cache.informer(DeploymentKind);
    this.cache.informer(ServiceKind);
    this.cache.informer(EndpointSliceKind, {
      indexes: { [SERVICE_SLICES_INDEX]: (s) => { const svc = s.metadata.labels?.['kubernetes.io/service-name']; return svc ? [`${s.metadata.namespace ?? ''}/${svc}`] : []; } },
    });
    this.cache.informer(EventKind, { indexes: { [REGARDING_UID_INDEX]: (e) => (e.regarding?.uid ? [e.regarding.uid] : []) } });
    this.#publish();
  }

  #feed<T extends KubeObject>(informer: Informer<T>, kind: ItemKind): void {
    informer.addHandler((change) => {
      if (change.type === 'delete') this.#model.remove(this.name, kind, change.object);
      else this.#model.upsert(this.name, kind, change.object);
    });
  }

  /**
   * The cluster's state now. It is pushed to the model before it is returned, so every answer
   * built after this call (provider rows' `usable`, a snapshot) agrees with it; the HTTP server
   * calls it for every cluster before each API answer.
   */
  view(): ClusterView {
    const v = this.#judge();
    this.#publish(v);
    return v;
  }

  #judge(): ClusterView {
    const health = this.cache.health();
    const judged = judgeCluster(health, this.#memory, this.#clock.monotonic());
    if (judged.state === 'reachable' && this.#syncedAt === null) this.#syncedAt = new Date(this.#clock.now()).toISOString();
    const last = health.reduce((max, h) => Math.max(max, h.synced ? h.lastProgressAt : 0), 0);
    return {
      name: this.name,
      server: this.server,
      state: judged.state,
      reachable: judged.state === 'reachable',
      syncedAt: this.#syncedAt,
      lastSync: last > 0 ? new Date(last).toISOString() : null,
      error: judged.error,
      warnings: judged.warnings,
      unreadableKinds: judged.unreadable,
    };
  }

  #publish(v: ClusterView = this.#judge()): void {
    // lastSync moves with every event: publish a change of state at once, a newer lastSync alone
    // at most every LAST_SYNC_PUBLISH_MS (the page shows it as "last event Ns ago").
    const before = this.#model.cluster(this.name);
    const sameState = before && before.state === v.state && before.error === v.error && before.syncedAt === v.syncedAt && before.warnings.join('\n') === v.warnings.join('\n');
    const lastSyncAge = before?.lastSync && v.lastSync ? Date.parse(v.lastSync) - Date.parse(before.lastSync) : v.lastSync === before?.lastSync ? 0 : Infinity;
    if (sameState && lastSyncAge < LAST_SYNC_PUBLISH_MS) return;
    this.#model.setCluster(v);
  }

  async start(signal: AbortSignal): Promise<void> {
    const timer = setInterval(() => this.#publish(), this.#healthIntervalMs);
    try {
      await this.cache.start(signal);
    } finally {
      clearInterval(timer);
      await this.client.close().catch(() => undefined);
    }
  }
}
