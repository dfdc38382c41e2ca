/**
 * The v1 ↔ v1alpha1 conversion through the API server and the suite's conversion webhook, for
 * random Microservices: a v1alpha1 client that reads an object and writes it back unchanged
 * (an update, as `kubectl edit` or an old operator would) must leave the v1 object exactly as it
 * was: its env, its replicas, its annotations (ADR 0024's stash). Pure round trips are
 * property-tested in `api/conversion.test.ts`; this one adds what only the server does (the
 * webhook's JSON, pruning, metadata validation of the converted object, defaulting).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError } from '@converge/runtime';
import { MicroserviceKind, type Microservice } from '../../../packages/operators/src/operators/microservice/index.ts';
import { setup } from './support.ts';
import { writeBackAsRead } from '../../support/old-version-round-trip.ts';

const envValue = fc.oneof(
  { arbitrary: fc.string({ maxLength: 20 }), weight: 5 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.constantFrom('x'.repeat(32_768), '😀'.repeat(32_768), '"\\\n{}'), weight: 1 },
);
const envVar = fc.oneof(
  fc.record({ name: fc.constantFrom('A', 'LOG_LEVEL', '_x', 'z9', 'B'), value: envValue }),
  fc.record({ name: fc.constantFrom('S', 'TOKEN'), valueFrom: fc.record({ secretKeyRef: fc.record({ name: fc.constantFrom('db'), key: fc.constantFrom('password', 'a.b'), optional: fc.boolean() }, { requiredKeys: ['name', 'key'] }) }) }),
);
const spec = fc.record(
  {
    container: fc.record(
      // At most 12 variables: the v1alpha1 view carries them in one annotation, and all of an
      // object's annotations may hold 256 KiB (the last test shows what happens past that).
      { image: fc.constantFrom('nginx', 'ghcr.io/org/app:1.0.0'), port: fc.integer({ min: 1, max: 65535 }), env: fc.uniqueArray(envVar, { selector: (e) => e.name, maxLength: 12 }).filter((env) => Buffer.byteLength(JSON.stringify(env)) < 200_000) },
      { requiredKeys: ['image', 'port'] },
    ),
    replicas: fc.integer({ min: 0, max: 100 }),
  },
  { requiredKeys: ['container'] },
);
const annotations = fc.option(fc.dictionary(fc.constantFrom('team.example.io/owner', 'note'), fc.string({ maxLength: 30 }), { minKeys: 1, maxKeys: 2 }), { nil: undefined });

test('a v1alpha1 client that writes back what it read leaves the v1 object as it was', { timeout: 240_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const seen = { roundTrips: 0, refusedAtCreate: 0 };
  let n = 0;
  await fc.assert(
    fc.asyncProperty(spec, annotations, async (s, ann) => {
      const name = `conv-${n++}`;
      let created: Microservice;
      try {
        created = await client.create(MicroserviceKind, { apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name, namespace: ns, ...(ann ? { annotations: ann } : {}) }, spec: s } as Microservice);
      } catch (err) {
        if (err instanceof ApiError && err.code === 422) {
          seen.refusedAtCreate++;
          return;
        }
        throw err;
      }
      await writeBackAsRead(client, `/apis/platform.example.io/v1alpha1/namespaces/${ns}/microservices/${name}`);
      const after = await client.get(MicroserviceKind, { namespace: ns, name });
      assert.deepEqual(after.spec, created.spec, 'the v1 spec changed');
      assert.deepEqual(after.metadata.annotations, created.metadata.annotations, 'the annotations changed');
      seen.roundTrips++;
      await client.delete(MicroserviceKind, { namespace: ns, name });
    }),
    { numRuns: Number(process.env.CONVERGE_CONVERSION_RUNS ?? 40) },
  );
  t.diagnostic(`round trips ${seen.roundTrips}, refused at create ${seen.refusedAtCreate}`);
});

test('a v1 object whose variables do not fit in an annotation cannot be read as v1alpha1, and stays whole as v1', { timeout: 60_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const env = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I'].map((name) => ({ name, value: 'x'.repeat(32_768) }));
  const created = await client.create(MicroserviceKind, { apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'large', namespace: ns }, spec: { container: { image: 'nginx', port: 80, env } } } as Microservice);
  await assert.rejects(
    client.request('GET', `/apis/platform.example.io/v1alpha1/namespaces/${ns}/microservices/large`),
    (err: unknown) => err instanceof ApiError && /annotation.*Too long/.test(err.message),
    'the API server refuses the v1alpha1 view (the stash would exceed 256 KiB of annotations): an error, never a view without the variables',
  );
  // So does every v1alpha1 list that includes it (docs/reliability.md, "Honest limits").
  await assert.rejects(client.request('GET', `/apis/platform.example.io/v1alpha1/namespaces/${ns}/microservices`), /Too long/);
  assert.deepEqual((await client.get(MicroserviceKind, { namespace: ns, name: 'large' })).spec, created.spec);
});
