/**
 * `registerProviderOperator(manager, options)`: the provider operator's watches and controller
 * on a runtime `Manager` (see `index.ts` for what it does). The operator process imports this
 * module, not `index.ts`, so that it loads no schema (ADR 0035).
 * @module
 */
import { SecretKind, generationChanged, or, annotationsChanged, maxOfRateLimiters, exponentialBackoff, bucketRateLimiter } from '@converge/runtime';
import type { Controller, FaultPoint, Manager } from '@converge/runtime';
import { DigitalHumanProviderKind } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import { ProviderReconciler } from './reconciler.ts';
import type { EventSink } from '@converge/runtime';
import { createVendorApis } from './vendor-api.ts';
import { VendorRecovery } from './vendor-recovery.ts';
import { registerVendorMetrics } from './vendor-metrics.ts';
import { parseProviderConfig } from './provider-config.ts';
import { CredentialsReader } from './credentials.ts';
import { AccountWatches } from './account-watches.ts';
import { LateCreateSweep } from './late-creates.ts';

const SECRET_REF_INDEX = 'credentials-secret';
const PROVIDER_ID_INDEX = 'provider-id';

export interface ProviderOperatorOptions {
  events: EventSink;
  /** The `provider` section of the operator configuration (validated here). */
  config?: unknown;
  /** The operator's own namespace: the late-create sweep keeps its ConfigMap there (`late-creates.ts`). */
  namespace: string;
  faultPoint?: FaultPoint;
}

/** What registering gives the caller: the controller, and what to close once the manager has stopped. */
export interface ProviderOperator {
  controller: Controller;
  /**
   * Closes the vendor connections (keep-alive sockets of every account's client). Call after the
   * manager's `start` settled: calls still in flight are waited for, not cut.
   */
  close(): Promise<void>;
}

export function registerProviderOperator(manager: Manager, options: ProviderOperatorOptions): ProviderOperator {
  const config = parseProviderConfig(options.config ?? {});
  const providers = manager.cache.informer(DigitalHumanProviderKind, {
    installHint: 'install the CRDs with `converge crds --apply`',
    indexes: {
      [SECRET_REF_INDEX]: (p: DigitalHumanProvider) => [`${p.metadata.namespace ?? ''}/${p.spec.credentials.secretRef.name}`],
      // The account watches wake providers by the vendor instance that changed.
      [PROVIDER_ID_INDEX]: (p: DigitalHumanProvider) => (p.status?.providerID ? [p.status.providerID] : []),
    },
  }).store;
  // Metadata only: memory must not grow with Secrets this operator never reads (Helm releases, …).
  const secrets = manager.cache.informer(SecretKind, { metadataOnly: true }).store;
  const recovery = new VendorRecovery({ clock: manager.clock, probeIntervalMs: config.recoveryProbeMs, log: manager.log.child({ component: 'vendor-recovery' }) });
  const metrics = registerVendorMetrics(manager.metrics.registry, recovery);
  const vendors = createVendorApis(config, manager.clock, (endpoint, event) => {
    metrics.call(event);
    recovery.observe(endpoint, event);
  });
  let enqueue: (key: string) => void = () => {};
  const watches = new AccountWatches({
    vendors,
    clock: manager.clock,
    intervalMs: config.observeIntervalMs,
    usageRefreshMs: config.usageRefreshMs,
    keysForInstance: (id) => providers.byIndex(PROVIDER_ID_INDEX, id).map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
    enqueue: (key) => enqueue(key),
    log: manager.log.child({ component: 'vendor-account-watches' }),
  });
  // A create we sent is in flight for up to one call timeout; the vendor may finish it later still.
  const createSettleMs = 2 * config.vendor.timeoutMs;
  const credentials = new CredentialsReader({
    client: manager.client,
    secrets,
    referenced: (namespace, name) => providers.countByIndex(SECRET_REF_INDEX, `${namespace}/${name}`) > 0,
  });
  const lateCreates = new LateCreateSweep({
    client: manager.client,
    namespace: options.namespace,
    vendors,
    credentials,
    providers,
    events: options.events,
    clock: manager.clock,
    log: manager.log.child({ component: 'late-create-sweep' }),
    settleMs: createSettleMs,
    windowMs: config.lateCreateWindowMs,
    onDeleted: () => metrics.lateCreateDeleted(),
  });
  metrics.lateCreateKeysFrom(() => lateCreates.trackedKeys);
  const reconciler = new ProviderReconciler({
    client: manager.client,
    providers,
    credentials,
    lateCreates,
    vendors,
    watches,
    observeIntervalMs: config.observeIntervalMs,
    vendorTimeoutMs: config.vendor.timeoutMs,
    usageRefreshMs: config.usageRefreshMs,
    rejectedRetryMs: config.rejectedRetryMs,
    recommendation: config.recommendation,
    allowedEndpoints: config.vendor.allowedEndpoints,
    events: options.events,
    recovery,
    clock: manager.clock,
    createSettleMs,
    ...(options.faultPoint ? { faultPoint: options.faultPoint } : {}),
  });
  const controller = manager
    .controller('digitalhumanprovider')
    .for(DigitalHumanProviderKind, { predicates: [or(generationChanged, annotationsChanged)] })
    // A Secret's change concerns every provider that names it (CredentialsMissing → retry at once).
    .watches(SecretKind, (secret) =>
      providers.byIndex(SECRET_REF_INDEX, `${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''}`).map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
    { metadataOnly: true })
    .withOptions({
      resyncPeriodMs: config.healthIntervalMs,
      maxConcurrentReconciles: config.maxConcurrentReconciles,
      // Jittered: providers that failed together during a vendor outage retry apart afterwards
      // (no thundering herd, no lockstep with a vendor's periodic failures), each within the cap.
      rateLimiter: maxOfRateLimiters(exponentialBackoff({ maxMs: config.maxRetryDelayMs, jitter: 0.5 }), bucketRateLimiter({}, manager.clock)),
    })
    .complete(reconciler);
  // Nothing in the cluster changes when a vendor recovers: this wakes the CRs that wait on it.
  recovery.onWake((key) => controller.enqueue(key));
  manager.add(recovery);
  // What changes at the vendor reaches no watch in the cluster: the account watches bring it here.
  enqueue = (key) => controller.enqueue(key);
  manager.add(watches);
  manager.add(lateCreates);
  return { controller, close: () => vendors.close() };
}
