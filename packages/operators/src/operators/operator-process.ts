/**
 * One operator process: the runtime manager with both operators registered, production
 * defaults (JSON logs with secrets redacted, metrics, probes, Events, optional leader
 * election), running until its signal aborts. `converge run` and `converge dev` start this;
 * tests start it too, in-process or as `converge run` in a child process.
 *
 * Contract: `runOperatorProcess` resolves after a graceful stop (lease released, in-flight
 * reconciles finished within the grace period, its connections to the API server and the vendors
 * closed: nothing of it runs or logs afterwards) and rejects with `LeadershipLostError` when
 * leadership is lost, `RunnableFailedError` when a part cannot start (a busy metrics or probe
 * port), and `DrainTimeoutError` when reconciles could not be stopped (the Lease is then kept
 * until it expires) — the caller should exit non-zero so the process is restarted, at once in
 * the last case (see `Manager.start`).
 * @module
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@converge/runtime';
import {
  KubeClient,
  LeaderElector,
  Manager,
  RuntimeMetrics,
  createEventRecorder,
  createLogger,
  faultPointsFromEnv,
} from '@converge/runtime';
import type { Logger } from '@converge/runtime';
import { registerMicroserviceOperator } from './microservice/register.ts';
import type { OperatorConfig } from './operator-config.ts';
import { defaultOperatorConfig } from './operator-config.ts';
import { addConversionWebhook } from './conversion-webhook.ts';
import type { WebhookSettings } from './conversion-webhook.ts';

export interface OperatorProcessOptions {
  kubeConfig: KubeConfig;
  /** Watch only these namespaces (namespace mode); all when empty. */
  namespaces?: string[];
  leaderElection?: { namespace: string; name?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number } | false;
  metricsBindAddress?: string;
  /** Who may read the metrics server: anyone (`none`, the default) or what the API server allows (`kubernetes`; `ManagerOptions.metricsAuth`). */
  metricsAuth?: 'none' | 'kubernetes';
  /** Serve the metrics over HTTPS (`ManagerOptions.metricsSecureServing`): with `metricsCertDir`'s tls.crt/tls.key, else a self-signed certificate made in memory. */
  metricsSecureServing?: boolean;
  /** With `metricsSecureServing`: the folder of the serving certificate (`ManagerOptions.metricsCertDir`). */
  metricsCertDir?: string;
  healthProbeBindAddress?: string;
  config?: OperatorConfig;
  /** Which operators to run (default both). */
  operators?: ('microservice' | 'provider')[];
  log?: Logger;
  logLevel?: string;
  /** The conversion webhook (`conversion-webhook.ts`); none when absent. `converge run` serves it by default. */
  webhook?: WebhookSettings;
  /** Called once the manager is built (tests reach its metrics and client). */
  onManager?: (manager: Manager) => void;
}

export async function runOperatorProcess(options: OperatorProcessOptions, signal: AbortSignal): Promise<void> {
  const config = options.config ?? defaultOperatorConfig;
  const log = options.log ?? createLogger({ level: options.logLevel ?? 'info', name: 'converge' });
  const identity = `${process.env.POD_NAME ?? hostname()}_${randomBytes(3).toString('hex')}`;
  const client = new KubeClient({ kubeConfig: options.kubeConfig, userAgent: 'converge-operator/0.1', qps: config.client.qps, burst: config.client.burst });
  const metrics = new RuntimeMetrics({ defaultMetrics: true });
  const le = options.leaderElection;
  const elector = le
    ? new LeaderElector({
        client,
        namespace: le.namespace,
        name: le.name ?? 'converge-operators',
        identity,
        ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
        ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
        ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
        log,
      })
    : undefined;
  const manager = new Manager({
    client,
    log,
    identity,
    metrics,
    ...(options.namespaces?.length ? { namespaces: options.namespaces } : {}),
    ...(elector ? { elector } : {}),
    ...(options.metricsBindAddress ? { metricsBindAddress: options.metricsBindAddress } : {}),
    ...(options.metricsAuth ? { metricsAuth: options.metricsAuth } : {}),
    ...(options.metricsSecureServing ? { metricsSecureServing: true } : {}),
    ...(options.metricsCertDir !== undefined ? { metricsCertDir: options.metricsCertDir } : {}),
    ...(options.healthProbeBindAddress ? { healthProbeBindAddress: options.healthProbeBindAddress } : {}),
    shutdownGraceMs: config.shutdownGraceMs,
    cacheSyncTimeoutMs: config.cacheSyncTimeoutMs,
  });
  const events = createEventRecorder({
    client,
    reportingController: 'converge.dev/operators',
    reportingInstance: identity.slice(0, 128),
    log,
    // Events are the lowest-priority writes: while reconciles wait in a queue, they wait too (ADR 0038).
    giveWayTo: () => manager.queuedReconciles() > 0,
  });
  metrics.eventRecorder(() => events.stats());
  // The Events held back or pending go out before the Lease is released, and only while this
  // process still leads: a replica that lost the Lease, or handed it over, writes nothing more.
  manager.onWorkStopped((leading) => events.close(leading ? 2_000 : 0));
  const faultPoint = faultPointsFromEnv();
  /** What holds connections of its own, closed once the manager has stopped. */
  const closers: { close(): Promise<void> }[] = [];
  const operators = options.operators ?? ['microservice', 'provider'];
  if (operators.includes('microservice')) {
    registerMicroserviceOperator(manager, {
      events,
      defaults: config.microservice.defaults,
      resyncPeriodMs: config.microservice.resyncPeriodMs,
      maxConcurrentReconciles: config.microservice.maxConcurrentReconciles,
      statusProgressIntervalMs: config.microservice.statusProgressIntervalMs,
      maxRetryDelayMs: config.microservice.maxRetryDelayMs,
      faultPoint,
    });
  }
  if (operators.includes('provider')) {
    // Loaded only when it runs: a Microservice-only process never loads the vendor client.
    const { registerProviderOperator } = await import('./provider/register.ts');
    // Its own state (the late-create ledger) lives where the Lease does, else in the Pod's namespace.
    const home = le ? le.namespace : process.env.POD_NAMESPACE || options.namespaces?.[0] || 'default';
    closers.push(registerProviderOperator(manager, { events, config: config.provider, namespace: home, faultPoint }));
  }
  if (options.webhook) addConversionWebhook(manager, options.webhook, log);
  options.onManager?.(manager);
  log.info({ identity, namespaces: options.namespaces ?? 'all', operators, leaderElection: Boolean(elector) }, 'starting operators');
  try {
    await manager.start(signal);
  } finally {
    await events.close(0); // closed already by the work-stopped hook, unless start failed before it ran
    await Promise.all(closers.map((c) => c.close()));
    await client.close();
  }
}
