import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { ConversionRegistry } from '@converge/runtime';
import { LIMIT_BOUNDS, V1_FIELDS_ANNOTATION, providerConversion } from './conversion.ts';
import { ProviderLimitsSchema, ProviderSpecSchema } from './v1.ts';
import type { DigitalHumanProvider } from './v1.ts';
import { ProviderV1alpha1SpecSchema } from './v1alpha1.ts';
import type { DigitalHumanProviderV1alpha1 } from './v1alpha1.ts';

const registry = new ConversionRegistry().register(providerConversion);
const V1 = 'dhp.example.com/v1';
const V1ALPHA1 = 'dhp.example.com/v1alpha1';
const RUNS = Number(process.env.CONVERGE_RELIABILITY_LONG === '1' ? 20_000 : 500);

const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const metadata = fc.record({
  name: label, namespace: label, uid: fc.uuid(), generation: fc.nat(1000),
  annotations: fc.option(fc.dictionary(fc.stringMatching(/^[a-z]{1,8}\.example\.com\/[a-z]{1,8}$/), fc.string({ maxLength: 20 }), { minKeys: 1, maxKeys: 2 }), { nil: undefined }),
  finalizers: fc.option(fc.constant(['dhp.example.com/provider-cleanup']), { nil: undefined }),
}, { requiredKeys: ['name', 'namespace', 'uid'] });
const common = {
  endpoint: fc.constantFrom('https://vendor.example', 'https://127.0.0.1:8443', 'https://api.vendor.example/v2'),
  region: fc.constantFrom('ap-northeast-1', 'eu-west-1'),
  displayName: fc.string({ maxLength: 30 }),
};
const secretRef = fc.record({ name: label, key: fc.stringMatching(/^[-._a-zA-Z0-9]{1,10}$/) });
const status = fc.option(fc.record({ observedGeneration: fc.nat(100), providerID: fc.stringMatching(/^inst-[0-9a-f]{8}$/) }, { requiredKeys: [] }), { nil: undefined });
const limits = fc.record({
  maxConcurrency: fc.integer({ min: 1, max: 10000 }),
  requestsPerMinute: fc.integer({ min: 1, max: 1000000 }),
  dailyQuota: fc.integer({ min: 1, max: 1000000000 }),
}, { requiredKeys: [] });

const v1Object = fc.record({
  metadata,
  spec: fc.record({ ...common, credentials: fc.record({ secretRef }), limits }, { requiredKeys: ['endpoint', 'region', 'credentials'] }),
  status,
}, { requiredKeys: ['metadata', 'spec'] }).map((o) => ({ apiVersion: V1, kind: 'DigitalHumanProvider', ...o }) as DigitalHumanProvider);
const v1alpha1Object = fc.record({
  metadata,
  spec: fc.record({ ...common, credentialsSecretRef: secretRef }, { requiredKeys: ['endpoint', 'region', 'credentialsSecretRef'] }),
  status,
}, { requiredKeys: ['metadata', 'spec'] }).map((o) => ({ apiVersion: V1ALPHA1, kind: 'DigitalHumanProvider', ...o }) as DigitalHumanProviderV1alpha1);

const wire = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

test('property: any v1 provider survives v1 → v1alpha1 → v1 unchanged (limits included); both sides schema-valid', () => {
  fc.assert(fc.property(v1Object, (obj) => {
    const down = registry.convert(wire(obj), V1ALPHA1) as DigitalHumanProviderV1alpha1;
    assert.ok(Value.Check(ProviderV1alpha1SpecSchema, down.spec));
    const up = registry.convert(wire(down), V1) as DigitalHumanProvider;
    assert.ok(Value.Check(ProviderSpecSchema, up.spec));
    assert.deepEqual(wire(up), wire(obj));
    assert.equal(up.metadata.annotations?.[V1_FIELDS_ANNOTATION], undefined);
  }), { numRuns: RUNS });
});

test('property: any v1alpha1 provider survives v1alpha1 → v1 → v1alpha1 unchanged', () => {
  fc.assert(fc.property(v1alpha1Object, (obj) => {
    assert.deepEqual(wire(registry.convert(wire(registry.convert(wire(obj), V1)), V1ALPHA1)), wire(obj));
  }), { numRuns: RUNS });
});

test('credentials move between credentialsSecretRef and credentials.secretRef; limits ride in the annotation', () => {
  const v1: DigitalHumanProvider = {
    apiVersion: V1, kind: 'DigitalHumanProvider', metadata: { name: 'p', namespace: 'n', uid: 'u' },
    spec: { endpoint: 'https://v.example', region: 'r', credentials: { secretRef: { name: 's', key: 'token' } }, limits: { dailyQuota: 1000 } },
  };
  const down = registry.convert(v1, V1ALPHA1) as DigitalHumanProviderV1alpha1;
  assert.deepEqual(down.spec, { endpoint: 'https://v.example', region: 'r', credentialsSecretRef: { name: 's', key: 'token' } });
  assert.equal(down.metadata.annotations?.[V1_FIELDS_ANNOTATION], '{"limits":{"dailyQuota":1000}}');
});

test('limits written by hand into the annotation of a v1alpha1 write reach v1 only as v1 admits them (the API server checks a v1alpha1 write against v1alpha1\'s schema, which has no limits)', () => {
  const v1alpha1 = (stash: string): DigitalHumanProviderV1alpha1 => ({
    apiVersion: V1ALPHA1, kind: 'DigitalHumanProvider', metadata: { name: 'p', namespace: 'n', uid: 'u', annotations: { [V1_FIELDS_ANNOTATION]: stash } },
    spec: { endpoint: 'https://v.example', region: 'r', credentialsSecretRef: { name: 's' } },
  });
  const up = (stash: string) => (registry.convert(v1alpha1(stash), V1) as DigitalHumanProvider).spec.limits;
  assert.deepEqual(up('{"limits":{"dailyQuota":1000,"maxConcurrency":4}}'), { dailyQuota: 1000, maxConcurrency: 4 });
  assert.deepEqual(up('{"limits":{"dailyQuota":-5,"maxConcurrency":4}}'), { maxConcurrency: 4 }, 'below v1\'s minimum: left as the vendor has it');
  assert.deepEqual(up('{"limits":{"dailyQuota":1.5,"requestsPerMinute":"600","maxConcurrency":20000,"extra":1}}'), {}, 'nothing v1 admits: no limit set');
  assert.ok(Value.Check(ProviderSpecSchema, (registry.convert(v1alpha1('{"limits":{"dailyQuota":-5}}'), V1) as DigitalHumanProvider).spec));
});

test('the bounds the conversion admits limits by are v1\'s schema\'s', () => {
  for (const [field, bounds] of Object.entries(LIMIT_BOUNDS)) {
    const schema = ProviderLimitsSchema.properties[field as keyof typeof LIMIT_BOUNDS];
    assert.deepEqual(bounds, { min: schema.minimum, max: schema.maximum }, field);
  }
  assert.deepEqual(Object.keys(LIMIT_BOUNDS).sort(), Object.keys(ProviderLimitsSchema.properties).sort());
});
