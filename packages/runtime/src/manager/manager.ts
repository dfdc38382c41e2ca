/**
 * The manager runs everything an operator process needs, in the right order, and stops it in
 * the reverse order.
 *
 * Start: always-on runnables (metrics and probe servers) → the shared cache (every declared
 * kind), until synced → leader election, if enabled (standbys keep their caches synced so
 * they can start at once) → controllers and other leader-only runnables.
 *
 * Stop (the start signal aborts, e.g. on SIGTERM): controllers stop taking keys and in-flight
 * reconciles get `shutdownGraceMs` to finish, then their signals abort → the work-stopped hooks
 * run (`onWorkStopped`: the last writes of a leader, such as Events held back) → the lease is
 * released → watches stop → servers close. `start` settles then.
 *
 * What `start` promises (controller-runtime's semantics, made strict):
 * - **Leadership lost** — at any time, a graceful shutdown included — aborts every in-flight
 *   reconcile at once and no worker takes another key; `start` rejects with
 *   `LeadershipLostError`. The elector does not campaign again; the process should exit and be
 *   restarted.
 * - **A runnable fails** (rejects without being asked to stop: a server that cannot bind its
 *   port, a controller, leader election, the cache): the manager logs it, stops everything as
 *   on a graceful stop, and `start` rejects with `RunnableFailedError` (the message names the
 *   runnable and the cause). Nothing keeps running half-broken.
 * - **Bounded drain**: once told to stop, the leader-only work has `shutdownGraceMs +
 *   abortTimeoutMs` (after a loss: `abortTimeoutMs`) to return. A reconcile that ignores its
 *   abort signal is not waited for beyond that: the manager logs what is still running, stops
 *   renewing the Lease *without* releasing it (`Elector.abandon`: standbys take over only when
 *   it expires, by when this process has exited), stops the caches and servers, and `start`
 *   rejects with `DrainTimeoutError`. The caller must then exit the process (the stuck
 *   reconcile may still hold the event loop): `converge run` exits 1.
 * - Why these choices (and not controller-runtime's release on stop): ADR 0015.
 * - Rejections are in this order of precedence: `DrainTimeoutError`, `LeadershipLostError`,
 *   `RunnableFailedError`; a plain abort resolves.
 * - Readiness (`/readyz`): `caches-synced` and `watches-healthy` (see `readiness.ts`: a watch
 *   that has never listed, or keeps failing, is not healthy).
 * @module
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeConfig } from '../kubeconfig/index.ts';
import { KubeClient } from '../client/index.ts';
import type { KubeClientOptions } from '../client/index.ts';
import { Cache } from '../cache/index.ts';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';
import { RuntimeMetrics } from '../metrics/index.ts';
import { Controller, ControllerBuilder, LeadershipLostError } from '../controller/index.ts';
import type { ControllerHost, ControllerOptions } from '../controller/index.ts';
import type { ConvergenceTracker } from '../convergence/index.ts';
import { DebugQueryError, createMetricsServer, createProbeServer } from '../serving/index.ts';
import type { EndpointServer, ProbeServer } from '../serving/index.ts';
import { apiCallObserver } from '../tracing/index.ts';
import { createLogger } from '../logging/index.ts';
import { describeWatch, type ReadyCheck } from './readiness.ts';
import { ManagerChecks, type AddedCheck } from './checks.ts';
import { drain } from './drain.ts';
import { metricsServing } from './metrics-serving.ts';
import { CacheSyncTimeoutError, RunnableFailedError, type DrainTimeoutError } from './lifecycle-errors.ts';

/**
 * Anything the manager runs. `start` settles only once the runnable has stopped; rejecting
 * before its signal aborted is a failure that stops the whole manager.
 */
export interface Runnable {
  /** For logs and errors (e.g. `metrics`, `controller microservice`). */
  readonly name?: string;
  start(signal: AbortSignal): Promise<void>;
}

/** What the manager needs of a leader elector (see `../leader-election`). */
export interface Elector {
  run(signal: AbortSignal): Promise<void>;
  whenLeader(signal: AbortSignal): Promise<void>;
  /** Aborts the moment leadership is lost. Valid once leading. */
  leadership(): AbortSignal;
  isLeader(): boolean;
  /** Stop renewing at once without releasing the Lease (the work could not be stopped). */
  abandon(): void;
  /** The Lease's name: the `name` label of `leader_election_master_status` (default `leader`). */
  readonly leaseName?: string;
}

export type { ReadyCheck } from './readiness.ts';

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
  /**
   * How long reconciles whose signal was aborted (after the grace period, or at once on a loss
   * of leadership) may take to return before the manager gives up on them and `start` rejects
   * with `DrainTimeoutError` (default 10 000 ms).
   */
  abortTimeoutMs?: number;
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
  /**
   * Who may read the metrics server (`/metrics`, `/debug/…`; the probe server is never behind it).
   * - `'none'` (the default): anyone who reaches the address.
   * - `'kubernetes'`: controller-runtime's `filters.WithAuthenticationAndAuthorization`. A request
   *   needs `Authorization: Bearer <token>`; the manager's client has the API server review it
   *   (TokenReview) and check that its user may `get` the path (SubjectAccessReview, a
   *   non-resource URL). 401 without a token the API server authenticates, 403 when the user is
   *   not allowed, 503 when the API server cannot say (never allowed on an error). Outcomes are
   *   cached for a minute (refusals 30 s), keyed by a hash of the token. The operator's account
   *   needs `create` on `tokenreviews.authentication.k8s.io` and
   *   `subjectaccessreviews.authorization.k8s.io`; a scraper needs `get` on the
   *   `nonResourceURLs` it reads. See `kubernetesAuthorizer`.
   */
  metricsAuth?: 'none' | 'kubernetes';
  /**
   * Serve the metrics over HTTPS (TLS 1.2 or later), controller-runtime's `SecureServing`
   * (default `false`: plain HTTP, so that an existing scraper keeps working). The certificate is
   * `tls.crt`/`tls.key` of `metricsCertDir` (re-read when they change, e.g. cert-manager's
   * renewals), or else one made in memory at start for `localhost`, `127.0.0.1`, `::1` and the
   * host's name, signed by a CA of this process alone: a scraper then skips verification
   * (Prometheus: `scheme: https` and `tls_config.insecure_skip_verify`). The port is bound once
   * the first certificate is there. The probe server stays plain HTTP.
   */
  metricsSecureServing?: boolean;
  /**
   * With `metricsSecureServing`: the folder holding the serving certificate (`tls.crt`, `tls.key`:
   * a mounted `kubernetes.io/tls` Secret, cert-manager's layout). Without `metricsSecureServing`
   * the manager refuses it (RangeError).
   */
  metricsCertDir?: string;
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
  readonly #abortTimeoutMs: number;
  /** Leader-only runnables (controllers aside) still running, for the drain report. */
  readonly #running = new Map<number, string>();
  #runSeq = 0;
  readonly #cacheSyncTimeoutMs: number;
  readonly #checks: ManagerChecks;
  readonly #workStoppedHooks: ((leading: boolean) => Promise<void>)[] = [];
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
    this.metrics.watchHealthFrom(() => this.cache.health());
    this.#checks = new ManagerChecks(() => this.cache.health());
    this.#elector = options.elector;
    const elector = options.elector;
    if (elector) this.metrics.leaderFrom(elector.leaseName ?? 'leader', () => elector.isLeader());
    this.#cacheSyncTimeoutMs = options.cacheSyncTimeoutMs ?? 120_000;
    this.controllerDefaults = { shutdownGraceMs: options.shutdownGraceMs ?? 30_000, ...options.controllerDefaults };
    this.#abortTimeoutMs = options.abortTimeoutMs ?? 10_000;
    const metricsProtection = metricsServing(options); // checks metricsAuth, metricsSecureServing, metricsCertDir
    if (options.metricsBindAddress && options.metricsBindAddress !== '0') {
      const server = createMetricsServer({
        address: options.metricsBindAddress,
        registry: this.metrics.registry,
        debug: { unconverged: (params) => this.unconverged(debugLimit(params.get('limit'))) },
        ...metricsProtection({ client: this.client, clock: this.clock, log: this.log.child({ server: 'metrics' }) }),
      });
      this.#servers.push(server);
      this.add({ name: 'metrics server', start: (s) => server.start(s) }, { needLeaderElection: false });
    }
    if (options.healthProbeBindAddress && options.healthProbeBindAddress !== '0') {
      const server: ProbeServer = createProbeServer({ address: options.healthProbeBindAddress, checks: this.#checks.builtInProbeChecks() });
      this.#checks.serveOn(server);
      this.#servers.push(server);
      this.add({ name: 'probe server', start: (s) => server.start(s) }, { needLeaderElection: false });
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

  /**
   * Keys waiting for a worker in this manager's controllers (ready, not delayed, not being
   * reconciled). Work that should yield to reconciles asks this, e.g. the event recorder's
   * `giveWayTo: () => manager.queuedReconciles() > 0`.
   */
  queuedReconciles(): number {
    let n = 0;
    for (const c of this.#controllers) n += c.queue.len();
    return n;
  }

  /** Starts building a controller named `name` (unique per manager; it labels metrics and logs). */
  controller(name: string): ControllerBuilder {
    if (this.#controllers.some((c) => c.name === name)) throw new Error(`controller ${name} already exists`);
    return new ControllerBuilder(this, name);
  }

  /** Called by the controller builder. */
  addController(controller: Controller): void {
    this.checkNewController(controller.name);
    this.#controllers.push(controller);
  }

  /** Throws when a controller of this name could not be added (see `ControllerHost`). */
  checkNewController(name: string): void {
    if (this.#started) throw new Error('cannot add a controller after start');
    // Checked again here: two builders of one name may both have been started before either completed.
    if (this.#controllers.some((c) => c.name === name)) throw new Error(`controller ${name} already exists`);
  }

  /**
   * Adds a runnable. By default it runs only while this process leads; runnables that serve
   * every replica (metrics, probes) pass `{ needLeaderElection: false }`.
   */
  add(runnable: Runnable, options: { needLeaderElection?: boolean } = {}): void {
    if (this.#started) throw new Error('cannot add a runnable after start');
    (options.needLeaderElection === false ? this.#alwaysRunnables : this.#leaderRunnables).push(runnable);
  }

  /**
   * Adds a hook run once the leader-only work has stopped and before the Lease is released (or
   * abandoned): `leading` says whether this process still leads, so whether it may still write
   * (false after a loss, after a drain that timed out, and on a standby). For the last writes of
   * work that ran while leading, e.g. the Events it recorded and held back; nothing a non-leader
   * writes is safe once another replica leads. Hooks run in the order added, each awaited, and
   * must bound their own time (the drain bound does not cover them); one that throws is logged.
   */
  onWorkStopped(hook: (leading: boolean) => Promise<void>): void {
    if (this.#started) throw new Error('cannot add a work-stopped hook after start');
    this.#workStoppedHooks.push(hook);
  }

  /**
   * Adds a readiness check (shown by `/readyz` and `readyChecks()`), e.g. a webhook server that
   * must listen before the replica takes traffic. `check` must be cheap and synchronous; one that
   * throws fails itself (the built-in checks are not affected). Names: lower-case alphanumerics
   * and '-', refused here whether or not a probe server runs.
   */
  addReadyCheck(name: string, check: AddedCheck): void {
    this.#checks.addReady(name, check);
  }

  /**
   * Adds a liveness check (`/healthz`, besides the built-in `eventloop`): failing it gets the
   * process restarted by the kubelet, so it should fail only for what a restart cures. Names as
   * for `addReadyCheck`. Without a probe server it is kept for nothing but its name.
   */
  addHealthCheck(name: string, check: AddedCheck): void {
    this.#checks.addHealth(name, check);
  }

  /** Readiness: caches synced, every watch healthy (one that never listed is not), and the added checks. */
  readyChecks(): ReadyCheck[] {
    return this.#checks.readyChecks();
  }

  get isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader() : true;
  }

  /**
   * Runs until `outer` aborts (then stops gracefully and resolves). Rejects with
   * `LeadershipLostError`, `RunnableFailedError` or `DrainTimeoutError`: see the contract above.
   */
  async start(outer: AbortSignal): Promise<void> {
    if (this.#started) throw new Error('manager already started');
    this.#started = true;
    // "Stop" is the caller's signal or a failed runnable; every wait below honours both.
    const failure = new AbortController();
    const signal = AbortSignal.any([outer, failure.signal]);
    const infraStop = new AbortController();
    const cacheStop = new AbortController();
    const electorStop = new AbortController();
    const workStop = new AbortController();
    const abortNow = new AbortController();
    const always = this.#alwaysRunnables.map((r) => this.#run(r, infraStop.signal, failure));
    const cacheDone = this.#run({ name: 'cache', start: (s) => this.cache.start(s) }, cacheStop.signal, failure);
    let electorDone: Promise<void> = Promise.resolve();
    let lost = false;
    let stopping = false;
    let stuck: DrainTimeoutError | undefined;
    try {
      this.log.info({ identity: this.identity }, 'waiting for caches to sync');
      await this.#waitForCacheSync(signal);
      this.log.info('caches synced');
      if (this.#elector) {
        const elector = this.#elector;
        electorDone = this.#run({ name: 'leader election', start: (s) => elector.run(s) }, electorStop.signal, failure);
        this.log.info({ identity: this.identity }, 'waiting for leadership');
        await elector.whenLeader(signal);
        this.log.info({ identity: this.identity }, 'leading; starting controllers');
        const leadership = elector.leadership();
        const onLost = () => {
          if (stopping) return; // the lease released (or abandoned) after the work stopped is no loss
          lost = true;
          this.log.error({ identity: this.identity, shuttingDown: workStop.signal.aborted }, 'leadership lost; stopping all reconciles now');
          const reason = new LeadershipLostError('leadership lost');
          abortNow.abort(reason);
          workStop.abort(reason);
        };
        if (leadership.aborted) onLost();
        else leadership.addEventListener('abort', onLost, { once: true });
      }
      const onStop = () => workStop.abort(signal.reason);
      if (signal.aborted) onStop();
      else signal.addEventListener('abort', onStop, { once: true });
      const work = Promise.all([
        ...this.#controllers.map((c) => this.#run({ name: `controller ${c.name}`, start: (s) => c.start(s, abortNow.signal) }, workStop.signal, failure)),
        ...this.#leaderRunnables.map((r) => this.#run(r, AbortSignal.any([workStop.signal, abortNow.signal]), failure, true)),
      ]);
      // Run until told to stop, even with nothing leader-only to run (caches and servers only).
      await new Promise<void>((resolve) => {
        if (workStop.signal.aborted) resolve();
        else workStop.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      stuck = await drain(work, {
        clock: this.clock,
        log: this.log,
        graceMs: Math.max(this.controllerDefaults.shutdownGraceMs ?? 30_000, ...this.#controllers.map((c) => c.shutdownGraceMs)),
        abortTimeoutMs: this.#abortTimeoutMs,
        abortNow: abortNow.signal,
        cause: lost ? abortNow.signal.reason : undefined,
        stillRunning: () => [...this.#controllers.flatMap((c) => c.inFlightKeys().map((key) => `${c.name}/${key}`)), ...this.#running.values()],
      });
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      stopping = true;
      workStop.abort();
      const leading = !lost && !stuck && this.isLeader;
      for (const hook of this.#workStoppedHooks) {
        await Promise.resolve().then(() => hook(leading)).catch((err: unknown) => this.log.error({ err }, 'a work-stopped hook failed'));
      }
      // Work that cannot be stopped must not be handed over: keep the Lease until it expires.
      if (stuck) this.#elector?.abandon();
      electorStop.abort();
      await electorDone;
      cacheStop.abort();
      await cacheDone;
      infraStop.abort();
      await Promise.all(always);
      this.log.info('manager stopped');
    }
    if (stuck) throw stuck;
    if (lost) throw new LeadershipLostError('leadership lost');
    if (failure.signal.aborted) throw failure.signal.reason;
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
      const waiting = this.cache.health().filter((h) => !h.synced).map((h) => `${describeWatch(h)}${h.lastError ? ` (${h.lastError})` : ''}`);
      const error = new CacheSyncTimeoutError(`caches did not sync within ${this.#cacheSyncTimeoutMs / 1000} s: waiting for ${waiting.join('; ') || 'nothing'}`);
      this.log.error({ waiting }, error.message);
      throw error;
    } finally {
      timer.cancel();
    }
  }

  /** Runs one runnable; a rejection before `signal` aborted aborts `failure` (the whole manager stops). */
  async #run(r: Runnable, signal: AbortSignal, failure: AbortController, leaderOnly = false): Promise<void> {
    const name = r.name ?? 'runnable';
    const id = this.#runSeq++;
    if (leaderOnly) this.#running.set(id, name);
    try {
      await r.start(signal);
    } catch (err) {
      if (signal.aborted) {
        this.log.debug({ err, runnable: name }, 'runnable failed while stopping');
        return;
      }
      this.log.error({ err, runnable: name }, `${name} failed; stopping the manager`);
      if (!failure.signal.aborted) failure.abort(new RunnableFailedError(name, err));
    } finally {
      this.#running.delete(id);
    }
  }
}

/** `/debug/unconverged?limit=`: a whole number from 1 to 1000; 20 when absent. */
function debugLimit(value: string | null): number {
  if (value === null) return 20;
  const n = /^[0-9]{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (n >= 1 && n <= 1000) return n;
  throw new DebugQueryError(`limit must be a whole number from 1 to 1000, not ${JSON.stringify(value.slice(0, 40))}`);
}
