/**
 * What the Microservice operator keeps of an EndpointSlice: only what readiness needs.
 *
 * EndpointSlices are cached for every Service in the watched namespaces (cluster-wide in cluster
 * mode), so their size is other people's: hints, zones, node names, ports, topology, annotations.
 * Readiness counts the ready endpoints behind a Service (`reconciler.ts`, `#readyEndpoints`), so
 * each cached slice keeps its identity, the `kubernetes.io/service-name` label (the index), its
 * address type, and per endpoint the addresses, conditions and target reference.
 *
 * The cache marks these copies partial: the client refuses to write one back (nothing here
 * writes EndpointSlices; the mark keeps it so).
 * @module
 */
import type { EndpointSlice } from '@converge/runtime';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export function endpointSliceForReadiness(slice: EndpointSlice): EndpointSlice {
  const m = slice.metadata;
  const service = m.labels?.[SERVICE_NAME_LABEL];
  return {
    ...(slice.apiVersion ? { apiVersion: slice.apiVersion } : {}),
    ...(slice.kind ? { kind: slice.kind } : {}),
    metadata: {
      ...(m.name !== undefined ? { name: m.name } : {}),
      ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
      ...(m.uid !== undefined ? { uid: m.uid } : {}),
      ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
      ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
      ...(service !== undefined ? { labels: { [SERVICE_NAME_LABEL]: service } } : {}),
    },
    addressType: slice.addressType,
    endpoints: (slice.endpoints ?? []).map((e) => ({
      addresses: e.addresses,
      ...(e.conditions ? { conditions: e.conditions } : {}),
      ...(e.targetRef ? { targetRef: { kind: e.targetRef.kind, name: e.targetRef.name, namespace: e.targetRef.namespace, uid: e.targetRef.uid } } : {}),
    })),
  };
}
