import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice } from '@converge/runtime';
import { endpointSliceForReadiness } from './endpoint-readiness.ts';
import { endpointSliceServiceIndex } from './reconciler.ts';

test('an EndpointSlice keeps what readiness and its index need, nothing else', () => {
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'web-abc', namespace: 'ns', uid: 'u', resourceVersion: '7', generation: 3,
      labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', team: 'x' },
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-01-01T00:00:00Z' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 's', controller: true }],
      managedFields: [{}],
    },
    addressType: 'IPv4',
    endpoints: [
      { addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1', zone: 'z', hints: { forZones: [{ name: 'z' }] }, targetRef: { kind: 'Pod', name: 'p', namespace: 'ns', uid: 'pu', resourceVersion: '9' } },
    ],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  } as unknown as EndpointSlice;
  const kept = endpointSliceForReadiness(slice);
  assert.deepEqual(kept, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc', namespace: 'ns', uid: 'u', resourceVersion: '7', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, targetRef: { kind: 'Pod', name: 'p', namespace: 'ns', uid: 'pu' } }],
  });
  assert.deepEqual(endpointSliceServiceIndex(kept), ['ns/web'], 'the index still finds it');
  assert.ok(JSON.stringify(kept).length < JSON.stringify(slice).length / 2);
});
