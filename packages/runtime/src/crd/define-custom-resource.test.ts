import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { defineCustomResource } from './define-custom-resource.ts';
import { ConditionsSchema, celRule } from './common-schemas.ts';

const WidgetSchema = Type.Object(
  {
    spec: Type.Object({ size: Type.Integer({ minimum: 1 }) }),
    status: Type.Optional(Type.Object({ conditions: Type.Optional(ConditionsSchema()) })),
  },
  { 'x-kubernetes-validations': [celRule('self.metadata.name.size() <= 63', 'name too long')] },
);

function widget() {
  return defineCustomResource({
    group: 'widgets.example.com',
    kind: 'Widget',
    plural: 'widgets',
    shortNames: ['wd'],
    categories: ['converge'],
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        schema: WidgetSchema,
        subresources: { status: true },
        printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
      },
    ],
  });
}

test('defineCustomResource yields a kind descriptor and a complete CRD', () => {
  const { kind, kinds, crd } = widget();
  assert.equal(kind.apiVersion, 'widgets.example.com/v1alpha1');
  assert.equal(kind.plural, 'widgets');
  assert.equal(kind.namespaced, true);
  assert.equal(kinds.v1alpha1, kind);
  assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
  assert.equal(crd.metadata.name, 'widgets.widgets.example.com');
  assert.deepEqual(crd.spec.names, {
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    shortNames: ['wd'],
    categories: ['converge'],
  });
  const [version] = crd.spec.versions;
  assert.ok(version);
  assert.deepEqual(version.subresources, { status: {} });
  assert.deepEqual(version.additionalPrinterColumns, [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }]);
  const root = version.schema.openAPIV3Schema;
  assert.deepEqual(Object.keys(root.properties ?? {}), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  assert.deepEqual(root.properties?.metadata, { type: 'object' });
  assert.deepEqual(root.required, ['spec']);
  assert.deepEqual(root['x-kubernetes-validations'], [{ rule: 'self.metadata.name.size() <= 63', message: 'name too long' }]);
});

test('the CRD is deterministic and JSON-clean', () => {
  const a = widget().crd;
  const b = widget().crd;
  assert.deepEqual(a, b);
  assert.deepEqual(JSON.parse(JSON.stringify(a)), a);
});

test('the object type follows the schema', () => {
  const { kind } = widget();
  type W = NonNullable<(typeof kind)['__object']>;
  const w: W = { metadata: { name: 'a' }, spec: { size: 2 } };
  // @ts-expect-error size must be a number
  const bad: W = { metadata: {}, spec: { size: 'x' } };
  assert.ok(w && bad);
});

test('invalid definitions fail at definition time', () => {
  const base = {
    group: 'widgets.example.com',
    kind: 'Widget',
    plural: 'widgets',
    scope: 'Namespaced' as const,
  };
  const v = { name: 'v1', served: true, storage: true, schema: WidgetSchema };
  assert.throws(() => defineCustomResource({ ...base, group: 'nodot', versions: [v] }), /group/);
  assert.throws(() => defineCustomResource({ ...base, kind: 'widget', versions: [v] }), /CamelCase/);
  assert.throws(() => defineCustomResource({ ...base, plural: 'Widgets', versions: [v] }), /lower-case/);
  assert.throws(() => defineCustomResource({ ...base, versions: [v, { ...v, name: 'v2' }] }), /exactly one version must be the storage/);
  assert.throws(() => defineCustomResource({ ...base, versions: [v, v] }), /listed twice/);
  assert.throws(() => defineCustomResource({ ...base, versions: [{ ...v, name: 'version1' }] }), /must look like/);
  assert.throws(
    () => defineCustomResource({ ...base, versions: [{ ...v, schema: Type.Object({ metadata: Type.Object({}) }) }] }),
    /must not declare metadata/,
  );
  assert.throws(
    () => defineCustomResource({ ...base, versions: [{ ...v, printerColumns: [{ name: 'X', type: 'string', jsonPath: 'spec.x' }] }] }),
    /jsonPath/,
  );
  for (const bad of ['spec.x', '.spec.items[0]', '.metadata.name', '.spec..x']) {
    assert.throws(() => defineCustomResource({ ...base, versions: [{ ...v, selectableFields: [bad] }] }), /selectable field .* must be a simple path/, bad);
  }
  const Selectable = Type.Object({ spec: Type.Object({ size: Type.Integer(), region: Type.String(), limits: Type.Object({ a: Type.Integer() }), tags: Type.Array(Type.String()) }), status: Type.Optional(Type.Object({ ready: Type.Optional(Type.Boolean()) })) });
  const selectable = defineCustomResource({ ...base, versions: [{ ...v, schema: Selectable, selectableFields: ['.spec.size', '.status.ready'] }] });
  assert.deepEqual(selectable.crd.spec.versions[0]!.selectableFields, [{ jsonPath: '.spec.size' }, { jsonPath: '.status.ready' }]);
  // What kube-apiserver refuses: a path the schema does not have, a field that is not a string, boolean or integer, a path twice, more than 8.
  const refused: [string[], RegExp][] = [
    [['.spec.regoin'], /\.spec\.regoin: the schema has no such field/],
    [['.spec.limits'], /\.spec\.limits: .*string, boolean or integer/],
    [['.spec.tags'], /\.spec\.tags: .*string, boolean or integer/],
    [['.spec.size', '.spec.size'], /\.spec\.size is listed twice/],
    [['.spec.size', '.spec.region', '.status.ready', '.spec.limits.a', '.spec.size2', '.a', '.b', '.c', '.d'], /at most 8 selectable fields/],
  ];
  for (const [fields, why] of refused) {
    assert.throws(() => defineCustomResource({ ...base, versions: [{ ...v, schema: Selectable, selectableFields: fields }] }), why, fields.join(' '));
  }
  assert.throws(
    () => defineCustomResource({ ...base, versions: [{ ...v, schema: Type.Object({ spec: Type.Object({ a: Type.Union([Type.String(), Type.Boolean()]) }) }) }] }),
    /widgets\.widgets\.example\.com v1: \.spec\.a: unions/,
  );
});

test('metadataName restricts metadata.name, and only with string restrictions', () => {
  const base = { group: 'widgets.example.com', kind: 'Widget', plural: 'widgets', scope: 'Namespaced' as const };
  const v = { name: 'v1', served: true, storage: true, schema: WidgetSchema };
  const { crd } = defineCustomResource({
    ...base,
    versions: [{ ...v, metadataName: Type.String({ maxLength: 63, 'x-kubernetes-validations': [celRule("self.startsWith('w')", 'starts with w')] }) }],
  });
  assert.deepEqual(crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.metadata, {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 63, 'x-kubernetes-validations': [{ rule: "self.startsWith('w')", message: 'starts with w' }] } },
  });
  assert.throws(() => defineCustomResource({ ...base, versions: [{ ...v, metadataName: Type.String({ default: 'x' }) }] }), /metadata\.name may not carry default/);
});
