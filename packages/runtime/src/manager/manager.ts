/**
 * The manager runs everything an operator process needs, in the right order, and stops it in
 * the reverse order.
 *
 * Start: always-on runnables (metrics and probe servers) → the shared cache (every declared
 * kind), until synced → leader election, if enabled (standbys keep their caches synced so
 * they can start at once) → controllers and other leader-only runnables.
 *
 * Stop (the start signal aborts, e.g. on SIGTERM): controllers stop taking keys and in-flight
 * reconciles get `shutdownGraceMs` to finish → the lease is released → watches stop →
 * servers close. `start` settles then.
 *
 * Leadership lost: controllers are aborted at once (no grace) and `start` rejects with
 * `LeadershipLostError`; the process should exit and be restarted, as controller-runtime does.
 * @module
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../client/index.ts';
import type { KubeClientOptions } from '../client/index.ts';
import { Cache } from '../cache/index.ts';
import type { WatchHealth } from '../cache/index.ts';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';
import { RuntimeMetrics } from '../metrics/index.ts';
import { Controller, ControllerBuilder, LeadershipLostError } from '../controller/index.ts';
import type { ControllerHost, ControllerOptions } from '../controller/index.ts';
import type { ConvergenceTracker } from '../convergence/index.ts';
import { createMetricsServer, createProbeServer } from '../serving/index.ts';
import type { EndpointServer } from '../serving/index.ts';
import { apiCallObserver } from '../tracing/index.ts';
import { createLogger } from '../logging/index.ts';

/** Anything the manager runs. `start` settles only once the runnable has stopped. */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
}

/** What the manager needs of a leader elector (see `../leader-election`). */
export interface Elector {
  run(signal: AbortSignal): Promise<void>;
  whenLeader(signal: AbortSignal): Promise<void>;
  /** Aborts the moment leadership is lost. Valid once leading. */
  leadership(): AbortSignal;
  isLeader(): boolean;
}

export interface ReadyCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface ManagerOptions {
  /** A client to use; otherwise one is made from `kubeConfig`. */
  client?: KubeClient;
  kubeConfig?: KubeConfig;
  clientOptions?: Omit<KubeClientOptions, 'kubeConfig'>;
  /** Restrict every namespaced watch to these namespaces (namespace mode); all when absent. */
  namespaces?: string[];
  log?: Logger;
  clock?: Clock;
  metrics?: RuntimeMetrics;
  /** A leader elector; without one every replica reconciles. */
  elector?: Elector;
  /** How long in-flight reconciles may finish after shutdown begins (default 30 000 ms). */
  shutdownGraceMs?: number;
  /** Watches that deliver nothing for this long are restarted (default 180 000 ms). */
  watchQuietTimeoutMs?: number;
  /**
   * `start` fails (a `CacheSyncTimeoutError` naming the kinds and why) when the caches have not
   * synced within this time (default 120 000 ms, controller-runtime's CacheSyncTimeout; 0 waits for ever).
   */
  cacheSyncTimeoutMs?: number;
  /** Defaults for every controller built by this manager. */
  controllerDefaults?: ControllerOptions;
  /** Identity of this process (leases, Events). Default `hostname_random`. */
  identity?: string;
  /** Serve `/metrics` and `/debug/…` here (`host:port`, `:port`); `0` or absent disables. */
  metricsBindAddress?: string;
  /** Serve `/healthz` and `/readyz` here; `0` or absent disables. */
  healthProbeBindAddress?: string;
}

export class Manager implements ControllerHost {
  readonly client: KubeClient;
  readonly cache: Cache;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: RuntimeMetrics;
  readonly identity: string;
  readonly controllerDefaults: ControllerOptions;
  readonly #controllers: Controller[] = [];
  readonly #leaderRunnables: Runnable[] = [];
  readonly #alwaysRunnables: Runnable[] = [];
  readonly #elector: Elector | undefined;
  readonly #trackers = new Map<string, ConvergenceTracker>();
  readonly #servers: EndpointServer[] = [];
  readonly #cacheSyncTimeoutMs: number;
  #started = false;

  constructor(options: ManagerOptions) {
    this.log = options.log ?? createLogger({ level: 'info', name: 'converge' });
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new RuntimeMetrics();
    this.identity = options.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    if (options.client) this.client = options.client;
    else if (options.kubeConfig) this.client = new KubeClient({ kubeConfig: options.kubeConfig, ...options.clientOptions });
    else throw new Error('Manager needs a client or a kubeConfig');
    this.client.observe(this.metrics.clientObserver());
    this.client.observe(apiCallObserver());
    this.cache = new Cache({
      client: this.client,
      ...(options.namespaces?.length ? { namespaces: options.namespaces } : {}),
      ...(options.watchQuietTimeoutMs ? { quietTimeoutMs: options.watchQuietTimeoutMs } : {}),
      clock: this.clock,
      log: this.log,
      onRestart: (kind, reason) => this.metrics.watchRestarted(kind, reason),
      onRelist: (kind) => this.metrics.watchRelisted(kind),
    });
    this.metrics.watchHealthFrom(() => this.cache.health(), () => this.clock.now());
    this.#elector = options.elector;
    this.#cacheSyncTimeoutMs = options.cacheSyncTimeoutMs ?? 120_000;
    this.controllerDefaults = { shutdownGraceMs: options.shutdownGraceMs ?? 30_000, ...options.controllerDefaults };
    if (options.metricsBindAddress && options.metricsBindAddress !== '0') {
      const server = createMetricsServer({
        address: options.metricsBindAddress,
        registry: this.metrics.registry,
        debug: { unconverged: (params) => this.unconverged(Number(params.get('limit') ?? 20)) },
      });
      this.#servers.push(server);
      this.add(server, { needLeaderElection: false });
    }
    if (options.healthProbeBindAddress && options.healthProbeBindAddress !== '0') {
      const checks = Object.fromEntries(
        ['caches-synced', 'watches-healthy'].map((name) => [name, () => {
          const check = this.readyChecks().find((c) => c.name === name)!;
          return { ok: check.ok, ...(check.detail ? { message: check.detail } : {}) };
        }]),
      );
      const server = createProbeServer({ address: options.healthProbeBindAddress, checks });
      this.#servers.push(server);
      this.add(server, { needLeaderElection: false });
    }
  }

  /** Addresses the metrics and probe servers listen on (resolves once they do), for tests and logs. */
  async serverAddresses(): Promise<string[]> {
    const bound = await Promise.all(this.#servers.map((s) => s.listening()));
    return bound.flatMap((a) => (a ? [`${a.address}:${a.port}`] : []));
  }

  /** Called by the controller builder: publishes a controller's convergence tracker. */
  trackConvergence(controller: string, tracker: ConvergenceTracker): void {
    this.#trackers.set(controller, tracker);
    this.metrics.unconvergedFrom(controller, () => tracker.oldestAgeSeconds());
  }

  /** The longest-unconverged objects per controller (the `/debug/unconverged` endpoint). */
  unconverged(limit = 20): Record<string, unknown> {
    return Object.fromEntries([...this.#trackers].map(([name, t]) => [name, { oldestAgeSeconds: t.oldestAgeSeconds(), top: t.top(limit) }]));
  }

  /** Starts building a controller named `name` (unique per manager; it labels metrics and logs). */
  controller(name: string): ControllerBuilder {
    if (this.#controllers.some((c) => c.name === name)) throw new Error(`controller ${name} already exists`);
    return new ControllerBuilder(this, name);
  }

  /** Called by the controller builder. */
  addController(controller: Controller): void {
    if (this.#started) throw new Error('cannot add a controller after start');
    this.#controllers.push(controller);
  }

  /**
   * Adds a runnable. By default it runs only while this process leads; runnables that serve
   * every replica (metrics, probes) pass `{ needLeaderElection: false }`.
   */
  add(runnable: Runnable, options: { needLeaderElection?: boolean } = {}): void {
    if (this.#started) throw new Error('cannot add a runnable after start');
    (options.needLeaderElection === false ? this.#alwaysRunnables : this.#leaderRunnables).push(runnable);
  }

  /** Readiness: caches synced and every watch healthy. */
  readyChecks(): ReadyCheck[] {
    const health: WatchHealth[] = this.cache.health();
    const unsynced = health.filter((h) => !h.synced);
    const unhealthy = health.filter((h) => h.synced && !h.healthy);
    return [
      { name: 'caches-synced', ok: unsynced.length === 0, ...(unsynced.length ? { detail: `waiting for ${unsynced.map(describe).join(', ')}` } : {}) },
      { name: 'watches-healthy', ok: unhealthy.length === 0, ...(unhealthy.length ? { detail: unhealthy.map((h) => `${describe(h)}: ${h.lastError ?? 'failing'}`).join('; ') } : {}) },
    ];
  }

  get isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader() : true;
  }

  /** Runs until `signal` aborts (then stops gracefully and resolves) or leadership is lost (rejects). */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error('manager already started');
    this.#started = true;
    const infraStop = new AbortController();
    const cacheStop = new AbortController();
    const electorStop = new AbortController();
    const workStop = new AbortController();
    const always = this.#alwaysRunnables.map((r) => this.#run(r, infraStop.signal));
    const cacheDone = this.cache.start(cacheStop.signal);
    let electorDone: Promise<void> = Promise.resolve();
    let lost = false;
    let stopping = false;
    try {
      this.log.info({ identity: this.identity }, 'waiting for caches to sync');
      await this.#waitForCacheSync(signal);
      this.log.info('caches synced');
      if (this.#elector) {
        const elector = this.#elector;
        electorDone = this.#run({ start: (s) => elector.run(s) }, electorStop.signal);
        this.log.info({ identity: this.identity }, 'waiting for leadership');
        await elector.whenLeader(signal);
        this.log.info({ identity: this.identity }, 'leading; starting controllers');
        const leadership = elector.leadership();
        const onLost = () => {
          if (stopping || signal.aborted) return; // releasing the lease on shutdown is not a loss
          lost = true;
          this.log.error('leadership lost; stopping all reconciles now');
          workStop.abort(new LeadershipLostError('leadership lost'));
        };
        if (leadership.aborted) onLost();
        else leadership.addEventListener('abort', onLost, { once: true });
      }
      const onStop = () => workStop.abort(signal.reason);
      if (signal.aborted) onStop();
      else signal.addEventListener('abort', onStop, { once: true });
      await Promise.all([
        ...this.#controllers.map((c) => this.#run(c, workStop.signal)),
        ...this.#leaderRunnables.map((r) => this.#run(r, workStop.signal)),
        // Run until told to stop, even with nothing leader-only to run (caches and servers only).
        new Promise<void>((resolve) => workStop.signal.addEventListener('abort', () => resolve(), { once: true })),
      ]);
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      stopping = true;
      workStop.abort();
      electorStop.abort();
      await electorDone;
      cacheStop.abort();
      await cacheDone;
      infraStop.abort();
      await Promise.all(always);
      this.log.info('manager stopped');
    }
    if (lost) throw new LeadershipLostError('leadership lost');
  }

  /** Waits for every cache to sync, at most `cacheSyncTimeoutMs`; then fails naming what did not. */
  async #waitForCacheSync(signal: AbortSignal): Promise<void> {
    if (this.#cacheSyncTimeoutMs <= 0) return this.cache.waitForSync(signal);
    const expired = new AbortController();
    const timer = this.clock.setTimer(this.#cacheSyncTimeoutMs, () => expired.abort());
    try {
      await this.cache.waitForSync(AbortSignal.any([signal, expired.signal]));
    } catch (err) {
      if (signal.aborted || !expired.signal.aborted) throw err;
      const waiting = this.cache.health().filter((h) => !h.synced).map((h) => `${describe(h)}${h.lastError ? ` (${h.lastError})` : ''}`);
      const error = new CacheSyncTimeoutError(`caches did not sync within ${this.#cacheSyncTimeoutMs / 1000} s: waiting for ${waiting.join('; ') || 'nothing'}`);
      this.log.error({ waiting }, error.message);
      throw error;
    } finally {
      timer.cancel();
    }
  }

  async #run(r: Runnable, signal: AbortSignal): Promise<void> {
    try {
      await r.start(signal);
    } catch (err) {
      if (!signal.aborted) this.log.error({ err }, 'runnable failed');
    }
  }
}

/** The caches did not sync in time (`cacheSyncTimeoutMs`): the process should exit non-zero. */
export class CacheSyncTimeoutError extends Error {
  override readonly name = 'CacheSyncTimeoutError';
}

function describe(h: WatchHealth): string {
  return h.namespace ? `${h.kind} in ${h.namespace}` : h.kind;
}
