/**
 * Names the Microservice operator and its tools agree on: API coordinates, phases, condition
 * types and reasons, annotations, labels and the field manager.
 *
 * Conditions follow the Kubernetes API conventions and kstatus:
 * - `Ready` (normal-true): True only when the Deployment has rolled out the pod template written for
 *   the CR's current generation (observedGeneration caught up, updated = available = desired
 *   replicas) and the Service has at least one ready endpoint — or, at 0 desired replicas, when no
 *   pod is left (`ScaledToZero`).
 * - `Progressing` (abnormal-true, like kstatus `Reconciling`): True while that rollout is under way.
 * - `Stalled` (abnormal-true): True when progress needs a person: `RolloutStalled`
 *   (ProgressDeadlineExceeded), `InvalidSpec`, `OwnershipConflict`, `ApplyRejected`.
 * @module
 */

export const MICROSERVICE_GROUP = 'platform.example.io';
/** The hub and storage version; `v1alpha1` is still served, deprecated (ADR 0024). */
export const MICROSERVICE_VERSION = 'v1';
export const MICROSERVICE_API_VERSION = `${MICROSERVICE_GROUP}/${MICROSERVICE_VERSION}`;
export const MICROSERVICE_KIND = 'Microservice';
export const MICROSERVICE_PLURAL = 'microservices';

/** `status.phase`: the seed's meaning. Whether the workload works is told by conditions. */
export const MicroservicePhase = {
  /** The input was received (log line `Accepted <ns>/<name>: image=<image> port=<port>`). */
  Accepted: 'Accepted',
  /** Deployment and Service are written for the current generation; configuration submitted, nothing more. */
  ResourcesApplied: 'ResourcesApplied',
  /** The operator cannot apply this spec (`InvalidSpec`, `OwnershipConflict`, `ApplyRejected`); not retried until the spec (or the conflicting object) changes, except an `ApplyRejected` the cluster may lift (every 10 minutes). */
  Failed: 'Failed',
} as const;
export type MicroservicePhase = (typeof MicroservicePhase)[keyof typeof MicroservicePhase];

export const MicroserviceConditionType = {
  Ready: 'Ready',
  Progressing: 'Progressing',
  /** kstatus's "the controller is working towards the spec" (abnormal-true; False once done or stalled). */
  Reconciling: 'Reconciling',
  Stalled: 'Stalled',
} as const;
export type MicroserviceConditionType = (typeof MicroserviceConditionType)[keyof typeof MicroserviceConditionType];

/** Condition reasons and Event reasons (CamelCase, stable: tools may match on them). */
export const MicroserviceReason = {
  /** Ready=True: the current generation's pods are available and the Service has ready endpoints. */
  Available: 'Available',
  /** Ready=True: 0 replicas are desired (platform default) and no pod is left; no endpoint is expected. */
  ScaledToZero: 'ScaledToZero',
  /** Ready=False, Progressing=True: the Deployment is rolling out the current generation. */
  RolloutInProgress: 'RolloutInProgress',
  /** Progressing=False: the rollout of the current generation finished. */
  RolloutComplete: 'RolloutComplete',
  /** Ready=False, Stalled=True: the Deployment reports ProgressDeadlineExceeded. */
  RolloutStalled: 'RolloutStalled',
  /** Ready=False: pods are available but the Service has no ready endpoint yet. */
  EndpointsNotReady: 'EndpointsNotReady',
  /** Phase Failed, Stalled=True: the spec cannot be turned into resources. */
  InvalidSpec: 'InvalidSpec',
  /** Phase Failed, Stalled=True: a same-named Deployment or Service belongs to someone else. */
  OwnershipConflict: 'OwnershipConflict',
  /**
   * Phase Failed, Stalled=True: the API server refused to write a child as invalid (422), e.g. an
   * immutable field of a handed-over Deployment; the message names the fields and what to do.
   * Not retried until the Microservice or the child changes.
   */
  ApplyRejected: 'ApplyRejected',
  /**
   * Ready=Unknown, phase Accepted: the API server refused or failed a child write in a way
   * retrying may outlive (a ResourceQuota exceeded, a missing permission, an admission webhook
   * failing); retried with backoff. The message names the object and the API server's words.
   */
  ApplyFailed: 'ApplyFailed',
  /** Stalled=False: nothing needs a person. */
  NotStalled: 'NotStalled',
  /** Events. */
  Accepted: 'Accepted',
  ResourcesApplied: 'ResourcesApplied',
  Created: 'Created',
  Updated: 'Updated',
  /** Event: an unowned object carrying the handover annotation was adopted. */
  Adopted: 'Adopted',
} as const;
export type MicroserviceReason = (typeof MicroserviceReason)[keyof typeof MicroserviceReason];

/**
 * Put on a pre-existing, unowned Deployment or Service, with the Microservice's name as value,
 * to let that Microservice adopt it. Without it, a same-named object is an `OwnershipConflict`.
 */
export const HANDOVER_ANNOTATION = 'platform.example.io/handover-to';

/**
 * The CR `metadata.generation` a Deployment or Service was written for (on the objects'
 * metadata, not the pod template, so stamping a new generation never restarts pods).
 */
export const GENERATION_ANNOTATION = 'platform.example.io/generation';

/** Server-Side Apply field manager for everything the Microservice operator writes. */
export const MICROSERVICE_FIELD_MANAGER = 'converge-microservice';

/** Value of `app.kubernetes.io/managed-by` on every object the operator writes. */
export const MANAGED_BY = 'converge';

/** Labels the operator sets on Deployments, Services and pods; configuration cannot override them. */
export const ManagedLabel = {
  App: 'app',
  Name: 'app.kubernetes.io/name',
  Instance: 'app.kubernetes.io/instance',
  ManagedBy: 'app.kubernetes.io/managed-by',
} as const;

/** Environment variables the platform sets on every Microservice's container; a spec cannot set them. */
export const PLATFORM_ENV_NAMES = ['ASPNETCORE_URLS', 'OTEL_SERVICE_NAME', 'OTEL_SERVICE_VERSION', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const;
