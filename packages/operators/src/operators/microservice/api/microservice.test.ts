import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MicroserviceCrd, MicroserviceKind, checkMicroserviceSpec, isValidMicroserviceName, IMAGE_REFERENCE_PATTERN } from './index.ts';

const version = MicroserviceCrd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;

test('the kind and the CRD name the same resource', () => {
  assert.equal(MicroserviceKind.apiVersion, 'platform.example.io/v1alpha1');
  assert.equal(MicroserviceKind.plural, 'microservices');
  assert.equal(MicroserviceKind.namespaced, true);
  assert.equal(MicroserviceCrd.metadata.name, 'microservices.platform.example.io');
  assert.deepEqual(MicroserviceCrd.spec.names.shortNames, ['ms']);
  assert.equal(MicroserviceCrd.spec.scope, 'Namespaced');
  assert.deepEqual(version.subresources, { status: {} });
});

test('spec: image and port are required and bounded, with readable CEL for the image format', () => {
  assert.deepEqual(spec.required, ['image', 'port']);
  const image = spec.properties!.image!;
  assert.equal(image.type, 'string');
  assert.equal(image.minLength, 1);
  assert.equal(image['x-kubernetes-validations']?.[0]?.rule, `self.matches('${IMAGE_REFERENCE_PATTERN}')`);
  assert.match(image['x-kubernetes-validations']?.[0]?.message ?? '', /valid image reference/);
  const port = spec.properties!.port!;
  assert.deepEqual([port.type, port.minimum, port.maximum], ['integer', 1, 65535]);
  const name = root.properties!.metadata!.properties!.name!;
  assert.equal(name.maxLength, 63);
  assert.match(name['x-kubernetes-validations']?.[0]?.rule ?? '', /^self\.matches\(/);
});

test('status: phase enum, conditions as a list map, managed resources and rollout', () => {
  assert.deepEqual(status.properties!.phase!.enum, ['Accepted', 'ResourcesApplied', 'Failed']);
  assert.equal(status.properties!.conditions!['x-kubernetes-list-type'], 'map');
  assert.deepEqual(Object.keys(status.properties!.managedResources!.properties!), ['deployment', 'service']);
  assert.deepEqual(Object.keys(status.properties!.rollout!.properties!), ['replicas', 'updatedReplicas', 'availableReplicas', 'readyEndpoints']);
  assert.equal(status.properties!.observedGeneration!.type, 'integer');
});

test('printer columns: Image, Port, Phase, Ready, Age (plus wide-only detail)', () => {
  const columns = version.additionalPrinterColumns!;
  assert.deepEqual(
    columns.filter((c) => !c.priority).map((c) => c.name),
    ['Image', 'Port', 'Phase', 'Ready', 'Age'],
  );
  assert.equal(columns.find((c) => c.name === 'Ready')?.jsonPath, '.status.conditions[?(@.type=="Ready")].status');
});

test('checkMicroserviceSpec names each problem', () => {
  assert.deepEqual(checkMicroserviceSpec({ image: 'nginx:1.27', port: 8080 }), []);
  assert.equal(checkMicroserviceSpec({ image: 'nginx', port: 0 }).length, 1);
  assert.match(checkMicroserviceSpec({ image: 'nginx', port: 0 })[0]!, /^spec\.port: /);
  assert.match(checkMicroserviceSpec({ image: 'UPPER', port: 1 })[0]!, /^spec\.image: must be a valid image reference/);
  assert.ok(checkMicroserviceSpec(undefined).length > 0);
  assert.ok(checkMicroserviceSpec({ image: 'nginx', port: '80' }).length > 0);
});

test('names must be DNS-1035 labels', () => {
  assert.ok(isValidMicroserviceName('todo-api'));
  for (const bad of ['1api', 'todo.api', 'Todo', 'a-', 'a'.repeat(64), '']) assert.equal(isValidMicroserviceName(bad), false, bad);
});
