/**
 * The operator's own check of a Microservice spec against the API server's validation. The CRD's
 * schema and CEL rules decide what can be stored; `checkMicroserviceSpec` is the operator's copy
 * (the compiled TypeBox check plus the CEL rules written again), used to explain a spec that got
 * past validation. Where the two disagree, the operator calls `InvalidSpec` on an object the API
 * server accepted (the team sees its valid service fail), or lets through what validation would
 * refuse. So random specs near every boundary (image references, ports, replicas, variable names,
 * value or Secret reference, lengths counted in characters outside the BMP) are sent to the API
 * server in a dry-run create and the two answers compared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError } from '@converge/runtime';
import { MicroserviceKind, checkMicroserviceSpec, type Microservice } from '../../../packages/operators/src/operators/microservice/index.ts';
import { setup } from './support.ts';

/** Mostly valid, so that a spec with one thing near a boundary is common: `valid` four times in five. */
const mostly = <T>(valid: fc.Arbitrary<T>, edge: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: edge, weight: 1 });

const image = mostly(
  fc.constantFrom('nginx', 'ghcr.io/org/app:1.0.0', 'localhost:5000/a/b:1', `nginx@sha256:${'a'.repeat(64)}`, 'my-registry.io:443/x/y:v1-rc.1'),
  fc.oneof(
    fc.constantFrom(
      'Nginx', 'nginx:Latest', 'nginx:', 'nginx@sha256:abc', 'a//b', '-a', 'a-', 'a__b', 'a___b', 'a..b', 'a.b', ' nginx', 'nginx ', 'nginx\n',
      `r.io/${'a'.repeat(250)}:t`, `r.io/${'a'.repeat(500)}:t`, 'a:b:c', 'UPPER.io/x', `x:${'a'.repeat(128)}`, `x:${'a'.repeat(129)}`,
    ),
    fc.stringMatching(/^[a-zA-Z0-9./:@_-]{1,30}$/),
  ),
);
const envName = mostly(fc.constantFrom('A', 'LOG_LEVEL', '_x', 'z9'), fc.constantFrom('1A', 'a-b', 'OTEL_SERVICE_NAME', 'ASPNETCORE_URLS', 'X'.repeat(256), 'X'.repeat(257), ''));
// Lengths near the 32,768 limit, also counted in characters outside the BMP (two UTF-16 units each).
const envValue = mostly(fc.string({ maxLength: 10 }), fc.constantFrom('😀'.repeat(16_385), 'é'.repeat(32_768), 'a'.repeat(32_768), 'a'.repeat(32_769), '😀'.repeat(32_768), '😀'.repeat(32_769)));
const secretRef = fc.record(
  {
    name: mostly(fc.constantFrom('db', 'a.b'), fc.constantFrom('Db', '-x', 'x'.repeat(253), 'x'.repeat(254))),
    key: mostly(fc.constantFrom('password', 'a.b', 'K_1', '.a', 'a..b'), fc.constantFrom('a/b', '', '.', '..', '..a', 'k'.repeat(253), 'k'.repeat(254))),
    optional: fc.boolean(),
  },
  { requiredKeys: ['name', 'key'] },
);
const envVar = mostly<{ name: string; value?: string; valueFrom?: unknown }>(
  fc.oneof(fc.record({ name: envName, value: envValue }), fc.record({ name: envName, valueFrom: fc.record({ secretKeyRef: secretRef }) })),
  fc.record({ name: envName, value: envValue, valueFrom: fc.record({ secretKeyRef: secretRef }) }, { requiredKeys: ['name'] }),
);
const spec = fc.record(
  {
    container: fc.record(
      {
        image,
        port: mostly(fc.integer({ min: 1, max: 65535 }), fc.constantFrom(0, 65536, -1)),
        env: fc.uniqueArray(envVar, { selector: (e) => e.name, maxLength: 3 }).chain((es) => mostly(fc.constant(es), fc.constant([...es, ...es.slice(0, 1)]))),
      },
      { requiredKeys: ['image', 'port'] },
    ),
    replicas: mostly(fc.integer({ min: 0, max: 100 }), fc.constantFrom(-1, 101)),
  },
  { requiredKeys: ['container'] },
);

test('the operator\'s spec check accepts exactly what the API server accepts', { timeout: 240_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const seen = { accepted: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(spec, async (s) => {
      const ms = { apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'svc', namespace: ns }, spec: s } as unknown as Microservice;
      let serverSays: string | undefined;
      try {
        await client.create(MicroserviceKind, ms, { dryRun: true });
      } catch (err) {
        if (!(err instanceof ApiError) || (err.code !== 422 && err.code !== 400)) throw err;
        serverSays = err.message;
      }
      const ours = checkMicroserviceSpec(s);
      if (serverSays === undefined) seen.accepted++;
      else seen.refused++;
      const show = JSON.stringify(s, (_, v) => (typeof v === 'string' && v.length > 60 ? `${v.slice(0, 20)}…(${[...v].length} characters)` : v));
      if (serverSays === undefined) assert.deepEqual(ours, [], `the API server accepts ${show}, the operator finds: ${ours.join('; ')}`);
      else assert.notDeepEqual(ours, [], `the API server refuses ${show} (${serverSays.slice(0, 300)}), the operator finds nothing wrong`);
    }),
    { numRuns: Number(process.env.CONVERGE_SPEC_RUNS ?? 150) },
  );
  t.diagnostic(`specs accepted ${seen.accepted}, refused ${seen.refused}`);
  assert.ok(seen.accepted > 10 && seen.refused > 10, `accepted ${seen.accepted}, refused ${seen.refused}: the generator misses one side`);
});
