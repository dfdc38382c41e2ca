/**
 * `registerMicroserviceOperator(manager, options)`: the Microservice operator's watches and
 * controller on a runtime `Manager`; nothing runs until the manager starts. The operator
 * process imports this module, not `index.ts`, so that it loads no schema (issue 17).
 * @module
 */
import {
  DeploymentKind,
  ServiceKind,
  EndpointSliceKind,
  generationChanged,
  or,
  annotationsChanged,
  labelsChanged,
  maxOfRateLimiters,
  exponentialBackoff,
  bucketRateLimiter,
} from '@converge/runtime';
import type { Manager, Controller } from '@converge/runtime';
import { MicroserviceKind } from './api/schema-free.ts';
import { MicroserviceReconciler, SERVICE_NAME_INDEX, endpointSliceServiceIndex } from './reconciler.ts';
import type { EventSink } from '@converge/runtime';
import { defaultPlatformDefaults } from './platform-defaults.ts';
import { endpointSliceForReadiness } from './endpoint-readiness.ts';
import type { PlatformDefaults } from './platform-defaults.ts';

export interface MicroserviceOperatorOptions {
  defaults?: PlatformDefaults;
  events: EventSink;
  /** The periodic check (default 10 s, ±10 % jitter). */
  resyncPeriodMs?: number;
  maxConcurrentReconciles?: number;
  /** Least time between two progress-only status writes of one Microservice (default 15 s). */
  statusProgressIntervalMs?: number;
  /** How often a refused write the cluster may lift (an admission policy's 422) is sent again (default 10 min). */
  refusalRetryMs?: number;
  /**
   * Longest wait before a failed reconcile is retried (default 60 s; the backoff starts at 5 ms,
   * doubles, and is jittered below this). A write refused for a while (a ResourceQuota, a missing
   * permission) and then allowed changes nothing the controller watches: only the retry finds out.
   */
  maxRetryDelayMs?: number;
  /** Test-only hook at named points (see `MicroserviceReconcilerDeps.faultPoint`). */
  faultPoint?: (name: string) => void | Promise<void>;
}

export function registerMicroserviceOperator(manager: Manager, options: MicroserviceOperatorOptions): Controller {
  const microservices = manager.cache.informer(MicroserviceKind, { installHint: 'install the CRDs with `converge crds --apply`' }).store;
  const deployments = manager.cache.informer(DeploymentKind).store;
  const services = manager.cache.informer(ServiceKind).store;
  // Only what readiness needs: EndpointSlices of every Service in scope are cached (see endpoint-readiness.ts).
  const endpointSlices = manager.cache.informer(EndpointSliceKind, { indexes: { [SERVICE_NAME_INDEX]: endpointSliceServiceIndex }, transform: endpointSliceForReadiness }).store;
  const reconciler = new MicroserviceReconciler({
    client: manager.client,
    microservices,
    deployments,
    services,
    endpointSlices,
    defaults: options.defaults ?? defaultPlatformDefaults,
    events: options.events,
    clock: manager.clock,
    ...(options.statusProgressIntervalMs !== undefined ? { statusProgressIntervalMs: options.statusProgressIntervalMs } : {}),
    ...(options.refusalRetryMs !== undefined ? { refusalRetryMs: options.refusalRetryMs } : {}),
    ...(options.faultPoint ? { faultPoint: options.faultPoint } : {}),
  });
  // Children are mapped by name, not only by ownerReference: a same-named object that is not
  // ours (an ownership conflict, a handover annotation being added) also concerns the CR.
  const sameName = (obj: { metadata: { namespace?: string; name?: string } }) => {
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
    return microservices.get(key) ? [key] : [];
  };
  const sliceToService = (slice: Parameters<typeof endpointSliceServiceIndex>[0]) =>
    endpointSliceServiceIndex(slice).filter((key) => microservices.get(key) !== undefined);
  return manager
    .controller('microservice')
    .for(MicroserviceKind, { predicates: [or(generationChanged, annotationsChanged, labelsChanged)] })
    .watches(DeploymentKind, sameName)
    .watches(ServiceKind, sameName)
    .watches(EndpointSliceKind, sliceToService)
    .withOptions({
      resyncPeriodMs: options.resyncPeriodMs ?? 10_000,
      maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
      // Capped: without it the runtime's default waits up to 1,000 s. Jittered: Microservices
      // refused together (one quota, one RBAC gap) retry apart, each within the cap.
      rateLimiter: maxOfRateLimiters(exponentialBackoff({ maxMs: options.maxRetryDelayMs ?? 60_000, jitter: 0.5 }), bucketRateLimiter({}, manager.clock)),
    })
    .complete(reconciler);
}
