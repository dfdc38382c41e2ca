/**
 * The facts `converge explain` gathers: pods are a sample that helps, not a requirement. A
 * reader not allowed to list pods (the dashboard's read-only role grants none) still explains
 * the Microservice, and says what it could not read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, DeploymentKind } from '@converge/runtime';
import type { Deployment, KubeObject, ResourceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../operators/microservice/api/kind.ts';
import { defaultPlatformDefaults } from '../../operators/microservice/index.ts';
import { explainMicroservice } from '../views/explain-microservice.ts';
import { gatherMicroserviceFacts } from './explain-facts.ts';
import type { ObjectReader } from './explain-facts.ts';

test('pods the reader may not list (403) leave them out, and the explanation says so', async () => {
  const ms = { apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'todo', namespace: 'ns', uid: 'ms-uid', generation: 1 }, spec: { container: { image: 'example.com/todo:1', port: 8080 } } } as KubeObject;
  const deployment = {
    metadata: { name: 'todo', namespace: 'ns', uid: 'd-uid', generation: 1, ownerReferences: [{ apiVersion: 'platform.example.io/v1', kind: 'Microservice', name: 'todo', uid: 'ms-uid', controller: true }] },
    spec: { replicas: 2, selector: { matchLabels: { app: 'todo' } }, template: {} },
    status: { observedGeneration: 1, replicas: 2, updatedReplicas: 0, availableReplicas: 0 },
  } as unknown as Deployment;
  const objects = new Map<ResourceKind, KubeObject>([[MicroserviceKind as ResourceKind, ms], [DeploymentKind as ResourceKind, deployment]]);
  const reader: ObjectReader = {
    get: async <T extends KubeObject>(kind: ResourceKind<T>) => objects.get(kind as ResourceKind) as T | undefined,
    listLabelled: async () => [],
    eventsRegarding: async () => [],
    secretPresence: async () => ({ secretExists: false, keyPresent: null }),
    podsMatching: async () => {
      throw new ApiError({ reason: 'Forbidden', code: 403, message: 'pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "ns"' });
    },
  };
  const facts = await gatherMicroserviceFacts(reader, 'ns', 'todo', { defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' });
  assert.ok(facts, 'gathered');
  assert.equal(facts.pods, undefined);
  assert.match(facts.podsUnreadable ?? '', /cannot list resource "pods"/);
  const explained = explainMicroservice(facts);
  assert.ok(explained.findings.some((f) => /pods not read: .*cannot list resource "pods"/.test(f.message)), JSON.stringify(explained.findings));
});

test('any other failure listing pods still fails the explanation (the caller reports it)', async () => {
  const reader: ObjectReader = {
    get: async <T extends KubeObject>(kind: ResourceKind<T>) => (kind === (MicroserviceKind as ResourceKind) ? ({ metadata: { name: 'a', namespace: 'ns', uid: 'u' } } as T) : ({ metadata: { name: 'a', namespace: 'ns', uid: 'd' }, spec: { selector: { matchLabels: { app: 'a' } } } } as unknown as T)),
    listLabelled: async () => [],
    eventsRegarding: async () => [],
    secretPresence: async () => ({ secretExists: false, keyPresent: null }),
    podsMatching: async () => {
      throw new ApiError({ reason: 'ServerError', code: 500, message: 'etcd is down' });
    },
  };
  await assert.rejects(gatherMicroserviceFacts(reader, 'ns', 'a', { defaults: defaultPlatformDefaults, defaultsSource: 'x' }), /etcd is down/);
});
