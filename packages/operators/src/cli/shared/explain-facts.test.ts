/**
 * The facts `converge explain` gathers: pods are a sample that helps, not a requirement. A
 * reader not allowed to list pods (the dashboard's read-only role grants none) still explains
 * the Microservice, and says what it could not read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, DeploymentKind } from '@converge/runtime';
import type { Deployment, KubeClient, KubeObject, ResourceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../operators/microservice/api/kind.ts';
import { defaultPlatformDefaults } from '../../operators/microservice/index.ts';
import { explainMicroservice } from '../views/explain-microservice.ts';
import { explainProvider } from '../views/explain-provider.ts';
import { clientReader, gatherMicroserviceFacts, gatherProviderFacts } from './explain-facts.ts';
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

/** A client answering 403 for `refused` plurals and from `objects` otherwise (the two calls `clientReader` makes). */
function clientRefusing(refused: readonly string[], objects: readonly KubeObject[]): KubeClient {
  const forbidden = (plural: string) => new ApiError({ reason: 'Forbidden', code: 403, message: `${plural} is forbidden: User "app-team" cannot list resource "${plural}" in the namespace "ns"` });
  return {
    get: async (kind: ResourceKind, { name }: { name: string }) => {
      if (refused.includes(kind.plural)) throw forbidden(kind.plural);
      const found = objects.find((o) => o.kind === kind.kind && o.metadata.name === name);
      if (!found) throw new ApiError({ reason: 'NotFound', code: 404, message: 'not found' });
      return found;
    },
    listAll: async (kind: ResourceKind) => {
      if (refused.includes(kind.plural)) throw forbidden(kind.plural);
      return { items: [] };
    },
    list: async () => ({ items: [] }),
  } as unknown as KubeClient;
}

test('converge explain by someone who may read the Microservice but not its Deployment, EndpointSlices or Events: explained, saying what was not read', async () => {
  const ms = { apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'todo', namespace: 'ns', uid: 'ms-uid', generation: 1 }, spec: { container: { image: 'example.com/todo:1', port: 8080 } } } as KubeObject;
  const reader = clientReader(clientRefusing(['deployments', 'endpointslices', 'events'], [ms]));
  const facts = await gatherMicroserviceFacts(reader, 'ns', 'todo', { defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' });
  assert.ok(facts, 'gathered');
  const messages = explainMicroservice(facts).findings.map((f) => f.message);
  assert.ok(!messages.some((m) => /^Deployment todo does not exist/.test(m)), `a Deployment it may not read is not said to be missing:\n${messages.join('\n')}`);
  assert.ok(messages.some((m) => /^Deployment todo: not known here: .*cannot list resource "deployments"/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => /Events not read: .*cannot list resource "events"/.test(m)), messages.join('\n'));
});

test('converge explain of a provider whose Events the reader may not list: explained, saying so', async () => {
  const provider = { apiVersion: 'dhp.example.com/v1alpha1', kind: 'DigitalHumanProvider', metadata: { name: 'tokyo', namespace: 'ns', uid: 'p-uid', generation: 1 }, spec: { region: 'ap-northeast-1' } } as KubeObject;
  const facts = await gatherProviderFacts(clientReader(clientRefusing(['events', 'secrets'], [provider])), 'ns', 'tokyo');
  assert.ok(facts, 'gathered');
  assert.ok(explainProvider(facts).findings.some((f) => /Events not read: .*cannot list resource "events"/.test(f.message)));
});

test('the object itself refused (403) still fails the explanation: there is nothing to explain', async () => {
  await assert.rejects(gatherMicroserviceFacts(clientReader(clientRefusing(['microservices'], [])), 'ns', 'todo', { defaults: defaultPlatformDefaults, defaultsSource: 'x' }), /forbidden/);
});

test('EndpointSlices the reader may not list: not "no ready endpoint" (unknown is not none)', async () => {
  const ms = { apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'todo', namespace: 'ns', uid: 'ms-uid', generation: 1 }, spec: { container: { image: 'example.com/todo:1', port: 8080 } } } as KubeObject;
  const deployment = {
    kind: 'Deployment',
    metadata: { name: 'todo', namespace: 'ns', uid: 'd-uid', generation: 1, ownerReferences: [{ apiVersion: 'platform.example.io/v1', kind: 'Microservice', name: 'todo', uid: 'ms-uid', controller: true }] },
    spec: { replicas: 1, selector: { matchLabels: { app: 'todo' } }, template: {} },
    status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
  } as unknown as KubeObject;
  const facts = await gatherMicroserviceFacts(clientReader(clientRefusing(['endpointslices'], [ms, deployment])), 'ns', 'todo', { defaults: defaultPlatformDefaults, defaultsSource: 'x' });
  const messages = explainMicroservice(facts!).findings.map((f) => f.message);
  assert.ok(!messages.some((m) => /no ready endpoint/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => /^endpoints not known here: .*cannot list resource "endpointslices"/.test(m)), messages.join('\n'));
});
