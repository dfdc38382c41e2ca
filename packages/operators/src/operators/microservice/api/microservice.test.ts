import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MicroserviceCrd, MicroserviceKind, MicroserviceV1alpha1Kind, checkMicroserviceSpec, isValidMicroserviceName, IMAGE_REFERENCE_PATTERN } from './index.ts';

const version = MicroserviceCrd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;
const spec = root.properties!.spec!;
const container = spec.properties!.container!;
const status = root.properties!.status!;
const alpha = MicroserviceCrd.spec.versions[1]!;

test('two served versions: v1 the hub and storage version, v1alpha1 deprecated, converted by the webhook Service', () => {
  assert.deepEqual(MicroserviceCrd.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false]), [['v1', true, true, false], ['v1alpha1', true, false, true]]);
  assert.match(alpha.deprecationWarning ?? '', /use platform\.example\.io\/v1/);
  assert.equal(MicroserviceV1alpha1Kind.apiVersion, 'platform.example.io/v1alpha1');
  assert.deepEqual(MicroserviceCrd.spec.conversion, {
    strategy: 'Webhook',
    webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'converge-system', name: 'converge-webhook', path: '/convert', port: 443 } } },
  });
  assert.deepEqual(alpha.schema.openAPIV3Schema.properties!.spec!.required, ['image', 'port']);
  assert.deepEqual(alpha.schema.openAPIV3Schema.properties!.status, status, 'one status schema for both versions');
});

test('the kind and the CRD name the same resource', () => {
  assert.equal(MicroserviceKind.apiVersion, 'platform.example.io/v1');
  assert.equal(MicroserviceKind.plural, 'microservices');
  assert.equal(MicroserviceKind.namespaced, true);
  assert.equal(MicroserviceCrd.metadata.name, 'microservices.platform.example.io');
  assert.deepEqual(MicroserviceCrd.spec.names.shortNames, ['ms']);
  assert.equal(MicroserviceCrd.spec.scope, 'Namespaced');
  assert.deepEqual(version.subresources, { status: {} });
});

test('spec: container image and port are required and bounded, with readable CEL for the image format; env and replicas', () => {
  assert.deepEqual(spec.required, ['container']);
  assert.deepEqual(container.required, ['image', 'port']);
  assert.deepEqual([spec.properties!.replicas!.minimum, spec.properties!.replicas!.maximum], [0, 100]);
  const env = container.properties!.env!;
  assert.equal(env['x-kubernetes-list-type'], 'map');
  assert.match(env.items!['x-kubernetes-validations']?.[0]?.rule ?? '', /has\(self\.value\) != has\(self\.valueFrom\)/);
  assert.match(env.items!.properties!.name!['x-kubernetes-validations']?.[0]?.message ?? '', /the platform sets ASPNETCORE_URLS/);
  const image = container.properties!.image!;
  assert.equal(image.type, 'string');
  assert.equal(image.minLength, 1);
  assert.equal(image['x-kubernetes-validations']?.[0]?.rule, `self.matches('${IMAGE_REFERENCE_PATTERN}')`);
  assert.match(image['x-kubernetes-validations']?.[0]?.message ?? '', /valid image reference/);
  const port = container.properties!.port!;
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

test('printer columns: Image, Port, Phase, Ready, Age (plus wide-only detail), in both versions', () => {
  const columns = version.additionalPrinterColumns!;
  assert.deepEqual(
    columns.filter((c) => !c.priority).map((c) => c.name),
    ['Image', 'Port', 'Phase', 'Ready', 'Age'],
  );
  assert.equal(columns.find((c) => c.name === 'Image')?.jsonPath, '.spec.container.image');
  assert.equal(alpha.additionalPrinterColumns!.find((c) => c.name === 'Image')?.jsonPath, '.spec.image');
  assert.equal(columns.find((c) => c.name === 'Ready')?.jsonPath, '.status.conditions[?(@.type=="Ready")].status');
});

test('checkMicroserviceSpec names each problem', () => {
  assert.deepEqual(checkMicroserviceSpec({ container: { image: 'nginx:1.27', port: 8080 } }), []);
  assert.equal(checkMicroserviceSpec({ container: { image: 'nginx', port: 0 } }).length, 1);
  assert.match(checkMicroserviceSpec({ container: { image: 'nginx', port: 0 } })[0]!, /^spec\.container\.port: /);
  assert.match(checkMicroserviceSpec({ container: { image: 'UPPER', port: 1 } })[0]!, /^spec\.container\.image: must be a valid image reference/);
  assert.ok(checkMicroserviceSpec(undefined).length > 0);
  assert.ok(checkMicroserviceSpec({ container: { image: 'nginx', port: '80' } }).length > 0);
  assert.ok(checkMicroserviceSpec({ image: 'nginx', port: 80 }).length > 0, 'a v1alpha1 spec is not a v1 spec');
});

test('names must be DNS-1035 labels', () => {
  assert.ok(isValidMicroserviceName('todo-api'));
  for (const bad of ['1api', 'todo.api', 'Todo', 'a-', 'a'.repeat(64), '']) assert.equal(isValidMicroserviceName(bad), false, bad);
});

test('checkMicroserviceSpec counts lengths in characters, as the API server does (an emoji is one, not two UTF-16 units)', () => {
  const spec = (value: string) => ({ container: { image: 'nginx', port: 80, env: [{ name: 'A', value }] } });
  assert.deepEqual(checkMicroserviceSpec(spec('😀'.repeat(32_768))), [], '32,768 characters, 65,536 UTF-16 units: stored by the API server');
  assert.match(checkMicroserviceSpec(spec('😀'.repeat(32_769))).join(), /env\.0\.value: Expected string length less or equal to 32768/);
  assert.match(checkMicroserviceSpec(spec('a'.repeat(32_769))).join(), /env\.0\.value/);
});

test('spec: a Secret key the API server refuses (`.`, `..`, starting with `..`) is refused by a CEL rule that says why', () => {
  const key = container.properties!.env!.items!.properties!.valueFrom!.properties!.secretKeyRef!.properties!.key!;
  assert.equal(key.pattern, '^[-._a-zA-Z0-9]+$');
  assert.match(key['x-kubernetes-validations']?.[0]?.message ?? '', /must not be '\.' or '\.\.' or start with '\.\.'/);
});

test('checkMicroserviceSpec names a Secret key the API server refuses: `.`, `..` and anything starting with `..`', () => {
  const spec = (k: string) => ({ container: { image: 'nginx', port: 80, env: [{ name: 'A', value: 'x' }, { name: 'S', valueFrom: { secretKeyRef: { name: 'db', key: k } } }] } });
  for (const bad of ['.', '..', '..a']) {
    assert.deepEqual(checkMicroserviceSpec(spec(bad)).filter((p) => p.startsWith('spec.container.env[1].valueFrom.secretKeyRef.key: ')).length, 1, bad);
  }
  for (const fine of ['.a', 'a..b', 'a.', '-', '_', 'a'.repeat(253)]) assert.deepEqual(checkMicroserviceSpec(spec(fine)), [], fine);
});
