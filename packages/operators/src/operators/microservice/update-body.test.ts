import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, Service } from '@converge/runtime';
import { deploymentUpdate, serviceUpdate } from './update-body.ts';
import { containsDesired } from './contains.ts';

const ours = { apiVersion: 'platform.example.io/v1', kind: 'Microservice', name: 'a', uid: 'u', controller: true, blockOwnerDeletion: true };

test('a Deployment update replaces the spec, merges metadata and template annotations, keeps resourceVersion', () => {
  const current: Deployment = {
    metadata: { name: 'a', resourceVersion: '7', labels: { extra: 'x', app: 'old' }, ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' }] },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'a' } },
      template: { metadata: { labels: { app: 'a' }, annotations: { 'kubectl.kubernetes.io/restartedAt': 'now' } }, spec: { containers: [{ name: 'app', image: 'hacked', env: [{ name: 'EXTRA', value: '1' }] }, { name: 'sidecar', image: 's' }] } },
    },
    status: { replicas: 5 },
  };
  const desired: Deployment = {
    metadata: { name: 'a', labels: { app: 'a' }, annotations: { g: '2' }, ownerReferences: [ours] },
    spec: { replicas: 2, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'app', image: 'good' }] } } },
  };
  const out = deploymentUpdate(current, desired);
  assert.equal(out.metadata.resourceVersion, '7');
  assert.deepEqual(out.metadata.labels, { extra: 'x', app: 'a' });
  assert.deepEqual(out.metadata.annotations, { g: '2' });
  assert.deepEqual(out.metadata.ownerReferences?.map((r) => r.uid), ['x', 'u']);
  assert.equal(out.spec?.replicas, 2);
  assert.deepEqual(out.spec?.template.spec?.containers, [{ name: 'app', image: 'good' }]);
  assert.deepEqual(out.spec?.template.metadata?.annotations, { 'kubectl.kubernetes.io/restartedAt': 'now' });
  assert.equal(current.spec?.replicas, 5, 'input not mutated');
});

test('a Service update keeps allocated fields and replaces selector and ports', () => {
  const current: Service = {
    metadata: { name: 'a', resourceVersion: '3', annotations: { 'platform.example.io/handover-to': 'a' } },
    spec: { clusterIP: '10.0.0.12', clusterIPs: ['10.0.0.12'], ipFamilies: ['IPv4'], type: 'ClusterIP', selector: { legacy: 'yes' }, ports: [{ port: 1234, targetPort: 1234 }] },
  };
  const desired: Service = { metadata: { name: 'a', ownerReferences: [ours] }, spec: { type: 'ClusterIP', selector: { app: 'a' }, ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }] } };
  const out = serviceUpdate(current, desired);
  assert.equal(out.spec?.clusterIP, '10.0.0.12');
  assert.deepEqual(out.spec?.ipFamilies, ['IPv4']);
  assert.deepEqual(out.spec?.selector, { app: 'a' });
  assert.deepEqual(out.spec?.ports?.map((p) => p.port), [8080]);
  assert.deepEqual(out.metadata.ownerReferences, [ours]);
  assert.equal(out.metadata.annotations?.['platform.example.io/handover-to'], 'a');
});

test('a Service someone turned into a LoadBalancer goes back to ClusterIP without the fields the API server refuses there', () => {
  const current: Service = {
    metadata: { name: 'a', resourceVersion: '7' },
    spec: {
      type: 'LoadBalancer', clusterIP: '10.0.0.12', externalTrafficPolicy: 'Local', healthCheckNodePort: 31000, loadBalancerSourceRanges: ['10.0.0.0/8'],
      allocateLoadBalancerNodePorts: true, loadBalancerClass: 'x.io/lb', sessionAffinity: 'ClientIP', selector: { app: 'a' }, ports: [{ port: 8080, nodePort: 30080 }],
    },
  };
  const desired: Service = { metadata: { name: 'a', ownerReferences: [ours] }, spec: { type: 'ClusterIP', selector: { app: 'a' }, ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }] } };
  const out = serviceUpdate(current, desired);
  assert.deepEqual(
    Object.keys(out.spec ?? {}).sort(),
    ['clusterIP', 'ports', 'selector', 'sessionAffinity', 'type'],
    'LoadBalancer and NodePort settings go; the allocated IP and a ClusterIP-valid setting stay',
  );
  assert.equal(out.spec?.type, 'ClusterIP');
  assert.equal(current.spec?.externalTrafficPolicy, 'Local', 'input not mutated');
});

test('a child written for the owner\'s older version (v1alpha1 ownerReference) is not rewritten after the upgrade to v1', () => {
  const desired: Service = { metadata: { name: 'a', ownerReferences: [ours] }, spec: { type: 'ClusterIP', selector: { app: 'a' }, ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }] } };
  const current: Service = { ...structuredClone(desired), metadata: { name: 'a', resourceVersion: '3', ownerReferences: [{ ...ours, apiVersion: 'platform.example.io/v1alpha1' }] } };
  const out = serviceUpdate(current, desired);
  assert.deepEqual(out.metadata.ownerReferences, current.metadata.ownerReferences, 'the live reference is kept as it is');
  assert.ok(containsDesired(current, out), 'nothing to write');
  const foreign: Service = { ...current, metadata: { ...current.metadata, ownerReferences: [{ ...ours, uid: 'someone-else', apiVersion: 'platform.example.io/v1alpha1' }] } };
  assert.deepEqual(serviceUpdate(foreign, desired).metadata.ownerReferences?.find((r) => r.controller)?.apiVersion, 'platform.example.io/v1', 'only a reference to the same owner is kept');
});
