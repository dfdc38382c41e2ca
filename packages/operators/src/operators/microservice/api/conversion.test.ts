import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { ConversionRegistry } from '@converge/runtime';
import { V1_FIELDS_ANNOTATION, microserviceConversion, microserviceFromV1, microserviceToV1 } from './conversion.ts';
import { MicroserviceSpecSchema } from './v1.ts';
import { PLATFORM_ENV_NAMES } from './constants.ts';
import type { Microservice } from './v1.ts';
import { MicroserviceV1alpha1SpecSchema } from './v1alpha1.ts';
import { checkMicroserviceSpec } from './spec-check.ts';
import type { MicroserviceV1alpha1 } from './v1alpha1.ts';

const registry = new ConversionRegistry().register(microserviceConversion);
const V1 = 'platform.example.io/v1';
const V1ALPHA1 = 'platform.example.io/v1alpha1';
const RUNS = Number(process.env.CONVERGE_RELIABILITY_LONG === '1' ? 20_000 : 500);

const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
// The API server never sends empty maps (omitempty), so neither does the generator.
const annotations = fc.dictionary(fc.stringMatching(/^[a-z]{1,8}\.example\.com\/[a-z]{1,8}$/), fc.string({ maxLength: 40 }), { minKeys: 1, maxKeys: 3 });
const image = fc.tuple(fc.constantFrom('ghcr.io/org/', 'example.com:5000/a/', ''), label, fc.option(fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,10}$/), { nil: undefined }))
  .map(([registry, repo, tag]) => `${registry}${repo}${tag ? `:${tag}` : ''}`);
const envName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/).filter((n) => !(PLATFORM_ENV_NAMES as readonly string[]).includes(n));
const envVar = fc.oneof(
  fc.record({ name: envName, value: fc.string({ maxLength: 30 }) }),
  fc.record({ name: envName, valueFrom: fc.record({ secretKeyRef: fc.record({ name: label, key: fc.stringMatching(/^[-._a-zA-Z0-9]{1,10}$/), optional: fc.option(fc.boolean(), { nil: undefined }) }, { requiredKeys: ['name', 'key'] }) }) }),
);
const env = fc.uniqueArray(envVar, { selector: (e) => e.name, maxLength: 5 });
const status = fc.option(fc.record({
  phase: fc.constantFrom('Accepted', 'ResourcesApplied', 'Failed'),
  observedGeneration: fc.nat(100),
  conditions: fc.array(fc.record({ type: fc.constantFrom('Ready', 'Progressing', 'Stalled'), status: fc.constantFrom('True', 'False', 'Unknown'), reason: fc.constantFrom('Available', 'RolloutInProgress'), message: fc.string({ maxLength: 20 }), lastTransitionTime: fc.constant('2026-12-01T00:00:00Z'), observedGeneration: fc.nat(100) }), { maxLength: 3 }),
}, { requiredKeys: [] }), { nil: undefined });
const metadata = fc.record({
  name: label, namespace: label, uid: fc.uuid(), resourceVersion: fc.nat().map(String), generation: fc.nat(1000),
  labels: fc.option(fc.dictionary(label, label, { minKeys: 1, maxKeys: 3 }), { nil: undefined }),
  annotations: fc.option(annotations, { nil: undefined }),
}, { requiredKeys: ['name', 'namespace', 'uid'] });

const v1Object: fc.Arbitrary<Microservice> = fc.record({
  metadata,
  spec: fc.record({
    container: fc.record({ image, port: fc.integer({ min: 1, max: 65535 }), env }, { requiredKeys: ['image', 'port'] }),
    replicas: fc.integer({ min: 0, max: 100 }),
  }, { requiredKeys: ['container'] }),
  status,
}, { requiredKeys: ['metadata', 'spec'] }).map((o) => ({ apiVersion: V1, kind: 'Microservice', ...o }) as Microservice);

const v1alpha1Object: fc.Arbitrary<MicroserviceV1alpha1> = fc.record({
  metadata,
  spec: fc.record({ image, port: fc.integer({ min: 1, max: 65535 }) }),
  status,
}, { requiredKeys: ['metadata', 'spec'] }).map((o) => ({ apiVersion: V1ALPHA1, kind: 'Microservice', ...o }) as MicroserviceV1alpha1);

/** Drops keys whose value is undefined (what JSON on the wire does). */
const wire = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

test('property: any v1 object survives v1 → v1alpha1 → v1 unchanged, v1-only fields included, and both sides are schema-valid', () => {
  fc.assert(fc.property(v1Object, (obj) => {
    const down = registry.convert(wire(obj), V1ALPHA1) as MicroserviceV1alpha1;
    assert.equal(down.apiVersion, V1ALPHA1);
    assert.ok(Value.Check(MicroserviceV1alpha1SpecSchema, down.spec), 'the v1alpha1 spec is valid');
    const up = registry.convert(wire(down), V1);
    assert.deepEqual(wire(up), wire(obj));
    assert.ok(Value.Check(MicroserviceSpecSchema, (up as Microservice).spec));
  }), { numRuns: RUNS });
});

test('property: any v1alpha1 object survives v1alpha1 → v1 → v1alpha1 unchanged', () => {
  fc.assert(fc.property(v1alpha1Object, (obj) => {
    const up = registry.convert(wire(obj), V1);
    assert.deepEqual(wire(registry.convert(wire(up), V1ALPHA1)), wire(obj));
  }), { numRuns: RUNS });
});

test('property: a v1alpha1 object that carries v1-only fields (made by a downgrade, then edited as v1alpha1) keeps them', () => {
  fc.assert(fc.property(v1Object, image, fc.integer({ min: 1, max: 65535 }), (obj, newImage, newPort) => {
    const down = microserviceFromV1(wire(obj));
    const edited = { ...down, spec: { image: newImage, port: newPort } };
    const up = microserviceToV1(wire(edited));
    assert.deepEqual(wire(up.spec), wire({ ...obj.spec, container: { ...obj.spec.container, image: newImage, port: newPort } }));
    assert.equal(up.metadata.annotations?.[V1_FIELDS_ANNOTATION], undefined, 'the stash never shows in v1');
  }), { numRuns: RUNS });
});

test('property: conversion never throws, whatever the review holds; bad input gets a Failure with a message', () => {
  fc.assert(fc.property(fc.anything(), fc.constantFrom(V1, V1ALPHA1, 'platform.example.io/v2', 'other.io/v1'), fc.array(fc.oneof(v1Object, v1alpha1Object, fc.anything() as fc.Arbitrary<never>), { maxLength: 4 }), (junk, desired, objects) => {
    const answers = [registry.review(junk), registry.review({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u-1', desiredAPIVersion: desired, objects } })];
    for (const a of answers) {
      assert.equal(a.kind, 'ConversionReview');
      assert.ok(a.response);
      if (a.response.result.status === 'Failure') assert.ok(a.response.result.message && a.response.result.message.length > 0);
    }
    assert.equal(answers[1]!.response!.uid, 'u-1');
  }), { numRuns: RUNS });
});

test('a review converts objects in order, echoes the uid, keeps identity; one bad object fails the whole review', () => {
  const a: Microservice = { apiVersion: V1, kind: 'Microservice', metadata: { name: 'a', namespace: 'n', uid: 'uid-a', resourceVersion: '7' }, spec: { container: { image: 'x:1', port: 80, env: [{ name: 'A', value: '1' }] }, replicas: 3 } };
  const b: MicroserviceV1alpha1 = { apiVersion: V1ALPHA1, kind: 'Microservice', metadata: { name: 'b', namespace: 'n', uid: 'uid-b' }, spec: { image: 'y:2', port: 81 } };
  const ok = registry.review({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'r1', desiredAPIVersion: V1ALPHA1, objects: [a, b] } });
  assert.equal(ok.response?.uid, 'r1');
  assert.equal(ok.response?.result.status, 'Success');
  assert.deepEqual(ok.response?.convertedObjects.map((o) => [o.metadata.name, o.metadata.uid, o.apiVersion]), [['a', 'uid-a', V1ALPHA1], ['b', 'uid-b', V1ALPHA1]]);
  assert.deepEqual((ok.response?.convertedObjects[0] as MicroserviceV1alpha1).spec, { image: 'x:1', port: 80 });
  assert.equal(ok.response?.convertedObjects[0]!.metadata.annotations?.[V1_FIELDS_ANNOTATION], '{"env":[{"name":"A","value":"1"}],"replicas":3}');
  assert.strictEqual(ok.response?.convertedObjects[1], b, 'already in the desired version: untouched');

  const bad = registry.review({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'r2', desiredAPIVersion: 'platform.example.io/v9', objects: [a] } });
  assert.equal(bad.response?.result.status, 'Failure');
  assert.match(bad.response!.result.message!, /Microservice n\/a: version v9 of Microservice is unknown to this operator \(knows v1, v1alpha1\)/);
  assert.deepEqual(bad.response?.convertedObjects, []);
});

test('property: whatever a v1alpha1 client puts in the v1-fields annotation, the v1 spec check answers (problems when the spec is invalid) and never throws', () => {
  const item = fc.oneof(
    fc.jsonValue(),
    fc.record({ name: fc.oneof(fc.constant(null), fc.string(), fc.integer()), value: fc.oneof(fc.constant(null), fc.string()), valueFrom: fc.oneof(fc.constant(null), fc.constant({ secretKeyRef: null }), fc.record({ secretKeyRef: fc.record({ name: fc.string(), key: fc.oneof(fc.string(), fc.constant(null)) }) })) }, { requiredKeys: [] }),
  );
  fc.assert(fc.property(fc.array(item, { maxLength: 4 }), fc.option(fc.jsonValue(), { nil: undefined }), (env, replicas) => {
    const stash = JSON.stringify({ env, ...(replicas !== undefined ? { replicas } : {}) });
    const v1 = microserviceToV1({ apiVersion: 'platform.example.io/v1alpha1', kind: 'Microservice', metadata: { name: 'a', namespace: 'n', annotations: { [V1_FIELDS_ANNOTATION]: stash } }, spec: { image: 'nginx', port: 80 } } as MicroserviceV1alpha1);
    let problems: string[] = [];
    assert.doesNotThrow(() => { problems = checkMicroserviceSpec(v1.spec); }, stash);
    if (!Value.Check(MicroserviceSpecSchema, v1.spec)) assert.ok(problems.length > 0, `an invalid spec has problems: ${stash}`);
  }), { numRuns: 500 });
});
