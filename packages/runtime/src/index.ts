/**
 * Converge runtime: the public entry. Operators import from here and nowhere else.
 *
 * The data path, as in controller-runtime and kube-rs:
 *
 *   API server ──list/watch──▶ cache (Watcher → StoreWriter → Store) ──changes──▶ predicates
 *        ▲                                                                          │ keys
 *        │                                                                          ▼
 *        └──── client (writes, read-your-own-writes) ◀── Reconciler.reconcile ◀── work queue
 *
 * Folders, one concept each: objects (the object model), client, kubeconfig (which cluster and
 * which credentials, as kubectl finds them, without @kubernetes/client-node), cache, queue,
 * clock, rate-limit, predicates, reconcile (the contract), controller (builder + workers),
 * manager (lifecycle), conditions, owners, finalizers, status, crd, metrics, external (limits
 * for calls to outside APIs), and the production pieces: leader-election, events, serving,
 * convergence, logging, tracing, webhook (HTTPS for the API server: CRD conversion, CA bundle
 * injection), faults (test-only fault points named by CONVERGE_FAULTS; off, they cost a lookup).
 * Internal, not exported: loading (loads prom-client, pino, YAML, TypeBox and the OTel API on first use,
 * so that importing the runtime stays cheap).
 * @module @converge/runtime
 */
export * from './objects/index.ts';
export * from './client/index.ts';
export * from './kubeconfig/index.ts';
export { Cache, Informer, CONTROLLER_UID_INDEX, NAMESPACE_INDEX, compareResourceVersions, dropManagedFields } from './cache/index.ts';
export type { Store, Change, ChangeType, IndexFunc, DeclareOptions, MetadataDeclareOptions, WatchHealth, WatchState, WatchRestartReason, CacheOptions, InformerOptions, ChangeHandler, DeletedObject } from './cache/index.ts';
export type { Clock, Timer } from './clock/index.ts';
export { systemClock, FakeClock } from './clock/index.ts';
export { TokenBucket } from './rate-limit/index.ts';
export type { TokenBucketOptions } from './rate-limit/index.ts';
export { WorkQueue, exponentialBackoff, bucketRateLimiter, maxOfRateLimiters, defaultControllerRateLimiter } from './queue/index.ts';
export type { RateLimiter, QueueMetrics, WorkQueueOptions, ExponentialBackoffOptions } from './queue/index.ts';
export * from './predicates/index.ts';
export * from './reconcile/index.ts';
export { Controller, ControllerBuilder, LeadershipLostError } from './controller/index.ts';
export type { ControllerOptions, ControllerDeps, ControllerHost, ForOptions } from './controller/index.ts';
// The builder's watch options; `WatchOptions` at the root is the client's (`KubeClient.watch`).
export type { WatchOptions as BuilderWatchOptions } from './controller/index.ts';
export * from './manager/index.ts';
export type { AddedCheck } from './manager/checks.ts';
export * from './conditions/index.ts';
export * from './owners/index.ts';
export * from './finalizers/index.ts';
export * from './status/index.ts';
export { RuntimeMetrics } from './metrics/index.ts';
export type { ReconcileOutcome, QueueProbe, EventRecorderCounts } from './metrics/index.ts';
export * from './crd/index.ts';
export * from './external/index.ts';
export { LeaderElector } from './leader-election/index.ts';
export type { LeaderElectorOptions, LeaseClient } from './leader-election/index.ts';
export { createEventRecorder } from './events/index.ts';
export type { EventRecorder, EventRecorderOptions, EventSink, EventSubject, EventRecorderStats, ObjectReference } from './events/index.ts';
export { createProbeServer, createMetricsServer, DebugQueryError, parseBindAddress, requestTargetUrl, ListenError, kubernetesAuthorizer } from './serving/index.ts';
export type { ProbeServer, MetricsServer, MetricsServerOptions, HealthCheck, MetricsAuthorizer, AuthorizationRequest, AuthorizationVerdict, KubernetesAuthorizerOptions, ReviewClient, ProbeServerOptions, CheckOutcome, CheckReport, DebugProvider, BindAddress, EventLoopMonitorOptions } from './serving/index.ts';
export { ConvergenceTracker, defaultConvergencePredicate } from './convergence/index.ts';
export type { ConvergencePredicate, UnconvergedEntry, ConvergenceTrackerOptions, Unconverged } from './convergence/index.ts';
export { createLogger, redact, scrubCredentials, REDACTED } from './logging/index.ts';
export type { LoggerOptions, LogLevel, Logger } from './logging/index.ts';
export * from './webhook/index.ts';
export { faultPointsFromEnv, parseFaultSpec } from './faults/index.ts';
export type { FaultPoint } from './faults/index.ts';
