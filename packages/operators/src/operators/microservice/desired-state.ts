/**
 * The Deployment and Service a Microservice should have: a pure function of the CR and the
 * platform defaults. It never calls the API server; the reconciler compares its output with what
 * it reads (`containsDesired`) and writes only the difference.
 *
 * What a caller can rely on:
 * - Deterministic: the same CR and defaults give deeply equal objects with the same key order.
 * - Complete for a write: apiVersion, kind, metadata.name/namespace, labels, the generation stamp
 *   annotation, and a controller ownerReference (with blockOwnerDeletion) to the CR, so each object
 *   can be sent as it is as a create or a Server-Side Apply body.
 * - Stable under API-server defaulting: only fields the operator means to own are set, quantities are
 *   canonical and no empty maps or lists are emitted, so after a write the object read back contains
 *   the desired state.
 * - The port moves together: containerPort, both probes, `ASPNETCORE_URLS` and the Service's port
 *   all come from `spec.container.port`. The Service's targetPort is the container port's name
 *   (`PORT_NAME`), not its number: each pod is reached on the port it itself declares, so while a
 *   port change rolls out (old pods on the old port), or when the Deployment's write is refused
 *   and the Service's is not, the Service never points at a port the pods do not listen on.
 * - Throws `InvalidSpecError` when the CR cannot be rendered (a spec or name the API server should
 *   have rejected); the reconciler reports it as `InvalidSpec` and does not retry.
 * @module
 */
import type { Deployment, Service, OwnerReference } from '@converge/runtime';
import type { EnvVar, Microservice } from './api/schema-free.ts';
// From the API's own modules, not its index: rendering needs neither the CRD nor v1alpha1, and
// `converge explain` loads only what it needs (issue 17, goal 5).
import { GENERATION_ANNOTATION, MANAGED_BY, MICROSERVICE_API_VERSION, MICROSERVICE_KIND, ManagedLabel } from './api/constants.ts';
import { checkMicroserviceSpec } from './api/spec-check.ts';
import { isValidMicroserviceName } from './api/name.ts';
import { defaultPlatformDefaults, type PlatformDefaults } from './platform-defaults.ts';

export { defaultPlatformDefaults, parsePlatformDefaults, loadPlatformDefaults, PlatformDefaultsError } from './platform-defaults.ts';
export type { PlatformDefaults, PlatformDefaultsConfig } from './platform-defaults.ts';

export interface DesiredState {
  readonly deployment: Deployment;
  readonly service: Service;
}

/** The Microservice cannot be turned into resources; `problems` says why, field by field. */
export class InvalidSpecError extends Error {
  override readonly name = 'InvalidSpecError';
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(problems.join('; '));
    this.problems = problems;
  }
}

/** Name of the container port and the Service port. */
export const PORT_NAME = 'http';

/** The labels that select a Microservice's pods (the Deployment selector and the Service selector). */
export function selectorLabels(name: string): Record<string, string> {
  return { [ManagedLabel.App]: name };
}

/** Labels on the Deployment, the Service and the pods: the selector, `app.kubernetes.io/*`, and the platform's extra labels. */
export function workloadLabels(name: string, defaults: PlatformDefaults = defaultPlatformDefaults): Record<string, string> {
  return {
    ...defaults.labels,
    [ManagedLabel.App]: name,
    [ManagedLabel.Name]: name,
    [ManagedLabel.Instance]: name,
    [ManagedLabel.ManagedBy]: MANAGED_BY,
  };
}

/** The controller ownerReference that makes a child belong to `ms` (and be garbage-collected with it). */
export function controllerReferenceTo(ms: Microservice): OwnerReference {
  const { name, uid } = ms.metadata;
  if (!name || !uid) throw new Error('controllerReferenceTo: the Microservice has no metadata.name or metadata.uid (was it read from the API server?)');
  return { apiVersion: MICROSERVICE_API_VERSION, kind: MICROSERVICE_KIND, name, uid, controller: true, blockOwnerDeletion: true };
}

/**
 * One of the team's variables as the API server stores it: an empty value is omitted (the server
 * drops it, and a rendering that kept it would differ from every read), a Secret key reference
 * keeps only the fields given.
 */
function renderEnvVar(e: EnvVar): { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } } } {
  if (e.valueFrom) {
    const { name, key, optional } = e.valueFrom.secretKeyRef;
    return { name: e.name, valueFrom: { secretKeyRef: { name, key, ...(optional !== undefined ? { optional } : {}) } } };
  }
  return e.value ? { name: e.name, value: e.value } : { name: e.name };
}

export function renderDesiredState(ms: Microservice, defaults: PlatformDefaults = defaultPlatformDefaults): DesiredState {
  const { name, namespace, uid, generation } = ms.metadata;
  if (!name || !namespace || !uid || generation === undefined) {
    throw new Error('renderDesiredState: the Microservice needs metadata.name, namespace, uid and generation (was it read from the API server?)');
  }
  const problems = checkMicroserviceSpec(ms.spec);
  if (!isValidMicroserviceName(name)) {
    problems.push(`metadata.name: ${JSON.stringify(name)} must be a DNS-1035 label (at most 63 lower-case letters, digits and '-', starting with a letter)`);
  }
  if (problems.length > 0) throw new InvalidSpecError(problems);

  const { image, port, env = [] } = ms.spec.container;
  const labels = workloadLabels(name, defaults);
  // The generation stamp goes on the Deployment only: readiness is judged from it, and stamping the
  // Service too would rewrite an unchanged Service on every spec change (an image bump, say).
  const metadata = (stamp: boolean) => ({
    name,
    namespace,
    labels: { ...labels },
    ...(stamp ? { annotations: { [GENERATION_ANNOTATION]: String(generation) } } : {}),
    ownerReferences: [controllerReferenceTo(ms)],
  });
  const probe = (path: string) => ({ httpGet: { path, port } });

  const resources: { requests?: Record<string, string>; limits?: Record<string, string> } = {};
  if (Object.keys(defaults.resources.requests).length > 0) resources.requests = { ...defaults.resources.requests };
  if (Object.keys(defaults.resources.limits).length > 0) resources.limits = { ...defaults.resources.limits };

  const deployment: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(true),
    spec: {
      replicas: ms.spec.replicas ?? defaults.replicas,
      progressDeadlineSeconds: defaults.progressDeadlineSeconds,
      selector: { matchLabels: selectorLabels(name) },
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          containers: [
            {
              name: defaults.containerName,
              image,
              ports: [{ name: PORT_NAME, containerPort: port, protocol: 'TCP' }],
              env: [
                { name: 'ASPNETCORE_URLS', value: `http://+:${port}` },
                { name: 'OTEL_SERVICE_NAME', value: name },
                { name: 'OTEL_SERVICE_VERSION', value: image },
                { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: defaults.otlpEndpoint },
                ...env.map(renderEnvVar),
              ],
              readinessProbe: probe(defaults.probes.readinessPath),
              livenessProbe: probe(defaults.probes.livenessPath),
              ...(Object.keys(resources).length > 0 ? { resources } : {}),
            },
          ],
        },
      },
    },
  };

  const service: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(false),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(name),
      ports: [{ name: PORT_NAME, protocol: 'TCP', port, targetPort: PORT_NAME }],
    },
  };

  return { deployment, service };
}
