/**
 * The body of an in-place update (PUT) that makes a live Deployment or Service match the desired
 * one: what the operator owns is replaced, what the API server or others own is kept.
 *
 * - Deployment: `spec` becomes the desired spec (so hand edits, extra containers, env vars or
 *   ports disappear), except the pod template's annotations, which merge (`kubectl rollout
 *   restart` keeps working).
 * - Service: `type`, `selector` and `ports` become the desired ones; everything the API server
 *   allocated (`clusterIP`, `clusterIPs`, `ipFamilies`, …) is kept, and so are others' settings
 *   a ClusterIP Service may have (`sessionAffinity`, …); those of other types go.
 * - Metadata: labels and annotations merge (desired wins); the controller ownerReference is set
 *   (keeping the apiVersion a live reference to the same owner already has), other
 *   ownerReferences are kept. `resourceVersion` stays, so the PUT is a compare-and-swap.
 * Pure; inputs are not mutated. See ADR 0003 for why this is a PUT rather than Server-Side Apply.
 * @module
 */
import type { Deployment, KubeObject, OwnerReference, Service } from '@converge/runtime';

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

function mergeMetadata(current: KubeObject['metadata'], desired: KubeObject['metadata']): KubeObject['metadata'] {
  // Our reference as the child already carries it: one written for an older served version of
  // the owner (`platform.example.io/v1alpha1`) names the same owner (garbage collection and
  // ownership go by group, kind and UID), so an upgrade rewrites no child (ADR 0024).
  const ours = (desired.ownerReferences ?? []).map((o) => {
    const live = current.ownerReferences?.find((r) => r.uid === o.uid && r.kind === o.kind && groupOf(r.apiVersion) === groupOf(o.apiVersion));
    return live ? { ...o, apiVersion: live.apiVersion } : o;
  });
  const others = (current.ownerReferences ?? []).filter((r: OwnerReference) => !r.controller && !ours.some((o) => o.uid === r.uid));
  return {
    ...current,
    labels: { ...current.labels, ...desired.labels },
    annotations: { ...current.annotations, ...desired.annotations },
    ownerReferences: [...others, ...ours],
  };
}

export function deploymentUpdate(current: Deployment, desired: Deployment): Deployment {
  const spec = desired.spec!;
  const templateAnnotations = { ...current.spec?.template.metadata?.annotations, ...spec.template.metadata?.annotations };
  return {
    ...current,
    metadata: mergeMetadata(current.metadata, desired.metadata),
    spec: {
      ...spec,
      template: {
        ...spec.template,
        metadata: { ...spec.template.metadata, ...(Object.keys(templateAnnotations).length ? { annotations: templateAnnotations } : {}) },
      },
    },
  };
}

/**
 * Fields the API server allows only on a Service of another type: a Service someone turned into a
 * NodePort, LoadBalancer or ExternalName one carries them, and a repair back to ClusterIP that
 * kept them would be refused ("may only be used when `type` is 'LoadBalancer'"), forever.
 */
const NOT_FOR_CLUSTER_IP = ['externalTrafficPolicy', 'healthCheckNodePort', 'loadBalancerIP', 'loadBalancerSourceRanges', 'loadBalancerClass', 'allocateLoadBalancerNodePorts', 'externalName'] as const;

export function serviceUpdate(current: Service, desired: Service): Service {
  const spec = desired.spec!;
  const kept: Record<string, unknown> = { ...current.spec };
  if ((spec.type ?? 'ClusterIP') === 'ClusterIP') for (const field of NOT_FOR_CLUSTER_IP) delete kept[field];
  return {
    ...current,
    metadata: mergeMetadata(current.metadata, desired.metadata),
    spec: {
      ...(kept as Service['spec']),
      ...(spec.type ? { type: spec.type } : {}),
      selector: spec.selector ?? {},
      ports: spec.ports ?? [],
    },
  };
}
