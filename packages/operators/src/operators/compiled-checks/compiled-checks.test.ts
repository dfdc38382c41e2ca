/**
 * The compiled checks against their source: the committed file is what the generator writes
 * now, each schema literal is the schema TypeBox built, and — searched with fast-check over values
 * mutated from valid ones at every path (wrong types, bounds ± 1, patterns broken, unknown keys) —
 * each compiled check answers exactly as `Value.Check` on the source schema.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { CHECK_NAMES, explainFailure, passes, schemaOf } from './index.ts';
import type { CheckName } from './index.ts';
import { COMPILED_CHECKS_FILE, SOURCE_SCHEMAS, renderCompiledChecks } from './render.ts';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));

test('the committed compiled checks are what the generator writes (run `npm run generate:checks` when this fails)', () => {
  assert.equal(readFileSync(`${root}${COMPILED_CHECKS_FILE}`, 'utf8'), renderCompiledChecks(), `${COMPILED_CHECKS_FILE} is stale: run npm run generate:checks`);
  assert.deepEqual([...CHECK_NAMES].sort(), Object.keys(SOURCE_SCHEMAS).sort());
});

test('each generated schema literal is the schema TypeBox built, symbol keys included', () => {
  for (const name of CHECK_NAMES) assert.deepStrictEqual(schemaOf(name), SOURCE_SCHEMAS[name].schema, name);
});

const VALID: Record<CheckName, unknown[]> = {
  microserviceSpec: [
    { container: { image: 'ghcr.io/org/app:1.0.0', port: 8080 } },
    { container: { image: 'nginx', port: 1, env: [{ name: 'A_1', value: 'x' }, { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds.v1', key: 'tok-en_1', optional: true } } }] }, replicas: 0 },
  ],
  operatorConfigFile: [
    {},
    { microservice: { resyncPeriodSeconds: 10, maxConcurrentReconciles: 4, statusProgressIntervalSeconds: 0, defaults: { anything: 1 } }, provider: { x: 1 }, client: { qps: 0, burst: 100 }, shutdownGraceSeconds: 30, cacheSyncTimeoutSeconds: 120 },
  ],
  platformDefaults: [
    {},
    { replicas: 2, progressDeadlineSeconds: 600, otlpEndpoint: 'http://otel:4317', containerName: 'app', resources: { requests: { cpu: '25m' }, limits: { memory: '1Gi' } }, probes: { readinessPath: '/ready', livenessPath: '/' }, labels: { team: 'a' } },
  ],
  providerConfig: [
    {},
    { healthIntervalSeconds: 10, maxConcurrentReconciles: 4, maxRetryDelaySeconds: 30, recoveryProbeSeconds: 0, observeIntervalSeconds: 3, usageRefreshSeconds: 30, recommendation: { quotaPercent: 80, sustainedThrottlingSeconds: 300 }, vendor: { requestsPerSecond: 5, burst: 10, maxConcurrency: 4, timeoutSeconds: 10, caFile: '/ca.pem' } },
  ],
  lateCreateEntry: [
    { uid: '6f1c2f4e-0000-4000-8000-000000000001', namespace: 'team-a', name: 'presenter', endpoint: 'https://vendor.example.com', secret: { name: 'creds', key: 'token' }, requestedAt: '2026-12-01T10:00:00.000Z', until: '2026-12-01T10:15:00.000Z' },
    { uid: 'u', namespace: 'n', name: 'p', endpoint: 'e', secret: { name: 's', key: 'k', later: 1 }, requestedAt: 'r', until: 'u', writtenBy: 'a later version' },
  ],
};

/** Every path into `value` (objects and arrays), the root included. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

function setAt(value: unknown, path: (string | number)[], replacement: unknown, remove: boolean): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (remove) delete node[last];
  else node[last] = replacement;
  return copy;
}

const edgeValue = (current: unknown): fc.Arbitrary<unknown> => fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1, 0.5, 2 ** 31, Number.NaN, Infinity, '', 'x', ' ', 'UPPER', '/path', 'no spaces?', 'a b', 'http://x', [], {}, [1], { extra: 1 }),
  typeof current === 'number' ? fc.constantFrom(current - 1, current + 1, current + 0.5, -current, current * 1000) : fc.constant(current),
  typeof current === 'string' ? fc.constantFrom(`${current}x`, current.slice(1), current.toUpperCase(), `${current} `, 'x'.repeat(600), 'y'.repeat(70_000)) : fc.constant(current),
  fc.jsonValue({ maxDepth: 2 }),
);

test('each compiled check answers as Value.Check on its source schema (mutations of valid values at every path)', () => {
  for (const name of CHECK_NAMES) {
    const schema = SOURCE_SCHEMAS[name].schema;
    for (const valid of VALID[name]) assert.ok(passes(name, valid) && Value.Check(schema, valid), `${name}: ${JSON.stringify(valid)} is valid`);
    const mutated = fc.constantFrom(...VALID[name]).chain((base) => {
      const all = paths(base);
      return fc.array(fc.tuple(fc.constantFrom(...all), fc.boolean(), fc.string({ maxLength: 12 })), { minLength: 1, maxLength: 3 }).chain((edits) =>
        fc.tuple(...edits.map(([path]) => edgeValue(path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], base)))).map((values) =>
          edits.reduce<unknown>((v, [path, remove, newKey], i) => {
            if (remove && newKey && v && typeof v === 'object' && !Array.isArray(v)) return { ...(v as object), [newKey]: values[i] };
            try {
              return setAt(v, path, values[i], remove && path.length > 0);
            } catch {
              return v;
            }
          }, base)));
    });
    fc.assert(fc.property(mutated, (value) => {
      const expected = Value.Check(schema, value);
      assert.equal(passes(name, value), expected, `${name}: ${JSON.stringify(value)?.slice(0, 300)}`);
      if (!expected) assert.ok(explainFailure(name, value).length > 0, 'a failure is explained');
    }), { numRuns: 1_500 });
  }
});
