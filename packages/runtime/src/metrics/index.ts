/**
 * Prometheus metrics of the runtime, with controller-runtime's names where they exist so
 * existing dashboards and alerts work, plus what controller-runtime lacks: watch health per
 * kind and the longest-unconverged object per controller.
 *
 * One `RuntimeMetrics` per manager, on its own registry (tests can run many managers in one
 * process). Recording is synchronous and cheap; gauges that describe current state (queue
 * depth, in-flight work, watch age, unconverged age) are computed at scrape time.
 *
 * Every documented series exists from the start, at zero, as controller-runtime does: per
 * controller (`controllerRegistered`) `reconcile_total` for each result, `reconcile_errors_total`,
 * `reconcile_time_seconds`, `max_concurrent_reconciles`, `active_workers`; per queue (`queue`)
 * every `workqueue_*` series, `retries_total` included; per watched kind the
 * `converge_watch_*` series, `restarts_total` for each reason. A dashboard or an alert on a
 * counter never sees "no data" before the first increment. Caveat: series labelled by what a
 * request returned (`rest_client_requests_total{code,method}`) appear with the first request —
 * the first list, at start.
 * @module
 */
import { loadOnFirstUse } from '../loading/index.ts';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * prom-client (with the OpenTelemetry API it pulls in, ≈ 80 modules) is loaded when the first
 * `RuntimeMetrics` is made, not when the runtime is imported: commands that never serve metrics
 * (`converge status`, `explain`) start without it (issue 17, goal 5).
 */
type PromClient = typeof import('prom-client');
let promClient: PromClient | undefined;
export function loadPromClient(): PromClient {
  return (promClient ??= loadOnFirstUse<PromClient>('prom-client'));
}
import type { ClientObserver } from '../client/index.ts';
import type { QueueMetrics } from '../queue/index.ts';
import type { WatchHealth } from '../cache/index.ts';
import type { EventRecorderStats } from '../events/index.ts';

export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';
export const RECONCILE_OUTCOMES: readonly ReconcileOutcome[] = ['success', 'error', 'requeue', 'requeue_after'];
/** Why a watch restarted (the watcher's `onRestart` reasons). */
export const WATCH_RESTART_REASONS = ['quiet', 'error', 'gone', 'too-large', 'rewound', 'closed'] as const;

/** What `RuntimeMetrics.queue` reads from a work queue at scrape time (a `WorkQueue` is one). */
export interface QueueProbe {
  len(): number;
  unfinishedWorkMs(): number;
  longestRunningMs(): number;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * One entry per (kind, namespace), the worst of the watches that share it: a kind watched twice
 * (in full and metadata-only, or the same Kind name in two API groups) is one series, unhealthy
 * when any of them is, as old as the oldest — one healthy watch never hides a failing one.
 */
function worstWatches(health: readonly WatchHealth[]): { kind: string; namespace: string; ok: boolean; ageMs: number }[] {
  const by = new Map<string, { kind: string; namespace: string; ok: boolean; ageMs: number }>();
  for (const h of health) {
    const id = `${h.kind}\0${h.namespace}`;
    const ok = h.synced && h.healthy;
    const seen = by.get(id);
    if (!seen) by.set(id, { kind: h.kind, namespace: h.namespace, ok, ageMs: h.lastProgressAgeMs });
    else {
      seen.ok &&= ok;
      seen.ageMs = Math.max(seen.ageMs, h.lastProgressAgeMs);
    }
  }
  return [...by.values()];
}

/** An event recorder's counts, as `RuntimeMetrics.eventRecorder` reads them (`gaveWay` may be absent). */
export type EventRecorderCounts = Omit<EventRecorderStats, 'gaveWay'> & { gaveWay?: number };

export class RuntimeMetrics {
  readonly registry: Registry;
  readonly #reconcileTotal: Counter<'controller' | 'result'>;
  readonly #reconcileErrors: Counter<'controller'>;
  readonly #reconcileTime: Histogram<'controller'>;
  readonly #maxConcurrent: Gauge<'controller'>;
  readonly #activeWorkers: Gauge<'controller'>;
  readonly #queueAdds: Counter<'name'>;
  readonly #queueLatency: Histogram<'name'>;
  readonly #workDuration: Histogram<'name'>;
  readonly #retries: Counter<'name'>;
  readonly #restClient: Counter<'code' | 'method'>;
  readonly #restLatency: Histogram<'verb' | 'resource'>;
  readonly #watchRestarts: Counter<'kind' | 'reason'>;
  readonly #watchRelists: Counter<'kind'>;
  readonly #leader: Gauge<'name'>;
  readonly #leaders = new Map<string, () => boolean>();
  readonly #queues = new Map<string, QueueProbe>();
  readonly #unconverged = new Map<string, () => number>();
  #cacheHealth: (() => WatchHealth[]) | undefined;
  readonly #eventRecorders: (() => EventRecorderCounts)[] = [];

  constructor(options: { registry?: Registry; defaultMetrics?: boolean } = {}) {
    const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = loadPromClient();
    const registry = (this.registry = options.registry ?? new Registry());
    if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
    const registers = [registry];
    this.#reconcileTotal = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'], registers });
    this.#reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'], registers });
    this.#reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'], buckets: DURATION_BUCKETS, registers });
    this.#maxConcurrent = new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', labelNames: ['controller'], registers });
    this.#activeWorkers = new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller', labelNames: ['controller'], registers });
    const queues = this.#queues;
    new Gauge({
      name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers,
      collect() { this.reset(); for (const [name, q] of queues) this.set({ name }, q.len()); },
    });
    this.#queueAdds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
    this.#queueLatency = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested', labelNames: ['name'], buckets: DURATION_BUCKETS, registers });
    this.#workDuration = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes', labelNames: ['name'], buckets: DURATION_BUCKETS, registers });
    this.#retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers });
    new Gauge({
      name: 'workqueue_unfinished_work_seconds', help: 'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration', labelNames: ['name'], registers,
      collect() { this.reset(); for (const [name, q] of queues) this.set({ name }, q.unfinishedWorkMs() / 1000); },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds', help: 'How many seconds has the longest running processor for workqueue been running', labelNames: ['name'], registers,
      collect() { this.reset(); for (const [name, q] of queues) this.set({ name }, q.longestRunningMs() / 1000); },
    });
    const leaders = this.#leaders;
    this.#leader = new Gauge({
      name: 'leader_election_master_status', help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master', labelNames: ['name'], registers,
      collect() { for (const [name, isLeader] of leaders) this.set({ name }, isLeader() ? 1 : 0); },
    });
    this.#restClient = new Counter({ name: 'rest_client_requests_total', help: 'Number of HTTP requests, partitioned by status code and method', labelNames: ['code', 'method'], registers });
    this.#restLatency = new Histogram({ name: 'rest_client_request_duration_seconds', help: 'Request latency in seconds, by verb and resource', labelNames: ['verb', 'resource'], buckets: DURATION_BUCKETS, registers });
    const self = this;
    this.#watchRestarts = new Counter({
      name: 'converge_watch_restarts_total', help: 'Watch restarts per kind and reason (quiet, error, gone, too-large, rewound, closed)', labelNames: ['kind', 'reason'], registers,
      collect() { for (const kind of self.#watchedKinds()) for (const reason of WATCH_RESTART_REASONS) this.inc({ kind, reason }, 0); },
    });
    this.#watchRelists = new Counter({
      name: 'converge_watch_relists_total', help: 'Full relists per kind (first list included)', labelNames: ['kind'], registers,
      collect() { for (const kind of self.#watchedKinds()) this.inc({ kind }, 0); },
    });
    new Gauge({
      name: 'converge_watch_last_event_age_seconds', help: 'Seconds since the last list, event or bookmark of a watch', labelNames: ['kind', 'namespace'], registers,
      collect() {
        this.reset();
        for (const h of worstWatches(self.#cacheHealth?.() ?? [])) this.set({ kind: h.kind, namespace: h.namespace }, h.ageMs / 1000);
      },
    });
    new Gauge({
      name: 'converge_watch_healthy', help: '1 when a watch is synced and not failing', labelNames: ['kind', 'namespace'], registers,
      collect() {
        this.reset();
        for (const h of worstWatches(self.#cacheHealth?.() ?? [])) this.set({ kind: h.kind, namespace: h.namespace }, h.ok ? 1 : 0);
      },
    });
    const unconverged = this.#unconverged;
    new Gauge({
      name: 'converge_longest_unconverged_seconds', help: 'Age of the oldest object a controller has not converged (observedGeneration behind generation, or not Ready)', labelNames: ['controller'], registers,
      collect() { this.reset(); for (const [controller, f] of unconverged) this.set({ controller }, f()); },
    });
  }

  /**
   * Queue hooks for one controller's work queue; its depth and in-flight gauges are read from
   * `probe` at scrape time. Every `workqueue_*` series of `name` exists from now on, at zero.
   */
  queue(name: string, probe: () => QueueProbe | undefined): QueueMetrics {
    const self = this;
    this.#queues.set(name, {
      len: () => probe()?.len() ?? 0,
      unfinishedWorkMs: () => probe()?.unfinishedWorkMs() ?? 0,
      longestRunningMs: () => probe()?.longestRunningMs() ?? 0,
    });
    this.#queueAdds.inc({ name }, 0);
    this.#retries.inc({ name }, 0);
    this.#queueLatency.zero({ name });
    this.#workDuration.zero({ name });
    return {
      adds: () => self.#queueAdds.inc({ name }),
      queueLatency: (ms: number) => self.#queueLatency.observe({ name }, ms / 1000),
      workDuration: (ms: number) => self.#workDuration.observe({ name }, ms / 1000),
      retries: () => self.#retries.inc({ name }),
    };
  }

  /** A controller exists: its series exist from now on, at zero (`max_concurrent_reconciles` at `maxConcurrent`). */
  controllerRegistered(controller: string, maxConcurrent: number): void {
    for (const result of RECONCILE_OUTCOMES) this.#reconcileTotal.inc({ controller, result }, 0);
    this.#reconcileErrors.inc({ controller }, 0);
    this.#reconcileTime.zero({ controller });
    this.#maxConcurrent.set({ controller }, maxConcurrent);
    this.#activeWorkers.set({ controller }, 0);
  }

  reconciled(controller: string, outcome: ReconcileOutcome, durationMs: number): void {
    this.#reconcileTotal.inc({ controller, result: outcome });
    if (outcome === 'error') this.#reconcileErrors.inc({ controller });
    this.#reconcileTime.observe({ controller }, durationMs / 1000);
  }

  setMaxConcurrentReconciles(controller: string, n: number): void {
    this.#maxConcurrent.set({ controller }, n);
    this.#activeWorkers.set({ controller }, 0);
  }

  activeWorkers(controller: string, delta: number): void {
    this.#activeWorkers.inc({ controller }, delta);
  }

  /**
   * An event recorder's counts as `converge_events_total{outcome}` (created, series_update,
   * deduplicated, dropped, failed), and `converge_events_gave_way_total` (writes that waited for
   * queued reconciles), read from `stats` at scrape time. Several recorders (two operators on one
   * manager) are counted together.
   */
  eventRecorder(stats: () => EventRecorderCounts): void {
    this.#eventRecorders.push(stats);
    if (this.#eventRecorders.length > 1) return; // registered once; every recorder is summed at scrape time
    const recorders = this.#eventRecorders;
    const total = (): EventRecorderCounts => {
      const sum = { created: 0, seriesUpdates: 0, deduplicated: 0, dropped: 0, failed: 0, gaveWay: 0 };
      for (const read of recorders) {
        const r = read();
        sum.created += r.created;
        sum.seriesUpdates += r.seriesUpdates;
        sum.deduplicated += r.deduplicated;
        sum.dropped += r.dropped;
        sum.failed += r.failed;
        sum.gaveWay += r.gaveWay ?? 0;
      }
      return sum;
    };
    const { Counter } = loadPromClient();
    new Counter({
      name: 'converge_events_total', help: 'Kubernetes Events recorded, by outcome (dropped: over the recorder\'s own budget or queue)', labelNames: ['outcome'], registers: [this.registry],
      collect() {
        const s = total();
        this.reset();
        this.inc({ outcome: 'created' }, s.created);
        this.inc({ outcome: 'series_update' }, s.seriesUpdates);
        this.inc({ outcome: 'deduplicated' }, s.deduplicated);
        this.inc({ outcome: 'dropped' }, s.dropped);
        this.inc({ outcome: 'failed' }, s.failed);
      },
    });
    new Counter({
      name: 'converge_events_gave_way_total', help: 'Event writes that waited for queued reconciles before they were sent (a Warning at most 30 s, a Normal event at most 5 min by default)', registers: [this.registry],
      collect() {
        this.reset();
        this.inc(total().gaveWay ?? 0);
      },
    });
  }

  setLeader(name: string, leading: boolean): void {
    this.#leader.set({ name }, leading ? 1 : 0);
  }

  /**
   * `leader_election_master_status{name}` read from `isLeader` at each scrape (the Manager does
   * this for its elector, under the Lease's name): 0 on a standby from the start, 1 while leading.
   */
  leaderFrom(name: string, isLeader: () => boolean): void {
    this.#leaders.set(name, isLeader);
  }

  watchRestarted(kind: string, reason: string): void {
    this.#watchRestarts.inc({ kind, reason });
  }

  watchRelisted(kind: string): void {
    this.#watchRelists.inc({ kind });
  }

  /** The kinds the cache watches (one entry per kind, however many namespaces). */
  #watchedKinds(): Set<string> {
    return new Set((this.#cacheHealth?.() ?? []).map((h) => h.kind));
  }

  /** Watch-health gauges read from this source at scrape time (ages from its monotonic `lastProgressAgeMs`). */
  watchHealthFrom(source: () => WatchHealth[]): void {
    this.#cacheHealth = source;
  }

  /** The longest-unconverged gauge of one controller reads this function (seconds) at scrape time. */
  unconvergedFrom(controller: string, ageSeconds: () => number): void {
    this.#unconverged.set(controller, ageSeconds);
  }

  /** A client observer that counts requests (`rest_client_requests_total{code,method}`). */
  clientObserver(): ClientObserver {
    return {
      onRequest: (info) => {
        this.#restClient.inc({ code: info.code === 0 ? '<error>' : String(info.code), method: info.method });
        if (info.verb !== 'watch') this.#restLatency.observe({ verb: info.verb, resource: info.resource }, info.durationMs / 1000);
      },
    };
  }
}
