/**
 * The DigitalHumanProvider operator: each `DigitalHumanProvider` (`dhp.example.com/v1alpha1`)
 * owns one instance in a vendor's HTTP API — created idempotently, its health reflected in a
 * `Ready` condition, cleaned up through the `dhp.example.com/provider-cleanup` finalizer.
 *
 * `registerProviderOperator(manager, options)` declares its watches (the CRs, and Secrets by
 * metadata only: the token of the one a CR names is read on demand, `credentials.ts`) and its
 * controller; the periodic check doubles as the health check
 * (`healthIntervalSeconds`, default 10 s, jittered).
 *
 * Files: `reconciler.ts` (one CR, one pass), `abandonment.ts` (the manual way out when a vendor
 * is gone for good), `vendor-api.ts` (the vendor in the reconciler's
 * terms, one limiter per endpoint), `vendor/` (the HTTP client and its error taxonomy),
 * `vendor-recovery.ts` (wakes CRs waiting on an endpoint when it answers again),
 * `vendor-metrics.ts`, `provider-config.ts`, `api/` (schema, CRD, constants).
 * @module
 */
import { SecretKind, generationChanged, or, annotationsChanged, maxOfRateLimiters, exponentialBackoff, bucketRateLimiter } from '@converge/runtime';
import type { Controller, FaultPoint, Manager } from '@converge/runtime';
import { DigitalHumanProviderKind } from './api/index.ts';
import type { DigitalHumanProvider } from './api/index.ts';
import { ProviderReconciler } from './reconciler.ts';
import type { EventSink } from '@converge/runtime';
import { createVendorApis } from './vendor-api.ts';
import { VendorRecovery } from './vendor-recovery.ts';
import { registerVendorMetrics } from './vendor-metrics.ts';
import { parseProviderConfig } from './provider-config.ts';
import { CredentialsReader } from './credentials.ts';

export * from './api/index.ts';
export { ProviderReconciler } from './reconciler.ts';
export { parseProviderConfig, providerConfigProblems, defaultProviderConfig } from './provider-config.ts';
export type { ProviderConfig } from './provider-config.ts';

const SECRET_REF_INDEX = 'credentials-secret';

export interface ProviderOperatorOptions {
  events: EventSink;
  /** The `provider` section of the operator configuration (validated here). */
  config?: unknown;
  faultPoint?: FaultPoint;
}

export function registerProviderOperator(manager: Manager, options: ProviderOperatorOptions): Controller {
  const config = parseProviderConfig(options.config ?? {});
  const providers = manager.cache.informer(DigitalHumanProviderKind, {
    installHint: 'install the CRDs with `converge crds --apply`',
    indexes: { [SECRET_REF_INDEX]: (p: DigitalHumanProvider) => [`${p.metadata.namespace ?? ''}/${p.spec.credentials.secretRef.name}`] },
  }).store;
  // Metadata only: memory must not grow with Secrets this operator never reads (Helm releases, …).
  const secrets = manager.cache.informer(SecretKind, { metadataOnly: true }).store;
  const recovery = new VendorRecovery({ clock: manager.clock, probeIntervalMs: config.recoveryProbeMs, log: manager.log.child({ component: 'vendor-recovery' }) });
  const metrics = registerVendorMetrics(manager.metrics.registry, recovery);
  const reconciler = new ProviderReconciler({
    client: manager.client,
    providers,
    credentials: new CredentialsReader({ client: manager.client, secrets }),
    vendors: createVendorApis(config, manager.clock, (endpoint, event) => {
      metrics.call(event);
      recovery.observe(endpoint, event);
    }),
    events: options.events,
    recovery,
    clock: manager.clock,
    // A create we sent is in flight for up to one call timeout; the vendor may finish it later still.
    createSettleMs: 2 * config.vendor.timeoutMs,
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
  return controller;
}
