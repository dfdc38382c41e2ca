/**
 * What the operator renders against what the API server keeps. For any platform defaults the
 * configuration loader accepts and any Microservice spec the operator accepts, the Deployment and
 * the Service it renders must be (1) accepted by the API server, or every Microservice would fail
 * to apply with the platform's own settings, and (2) still contained in what the API server
 * stores, after its defaulting and normalisation, or every resync would write them again
 * (principle 4): also where the operator owns a map outright (`owned-fields.ts`), what the API
 * server adds there (probe timeouts, `httpGet.scheme`, `terminationMessagePath` …) must be what
 * those rules expect it to add. Both are checked with dry-run creates on the control plane, for random defaults
 * (replicas, deadlines, resources, probe paths, labels, container name, OTLP endpoint) and random
 * specs (images, ports, replicas, plain and Secret-backed variables with any text).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ApiError, DeploymentKind, ServiceKind } from '@converge/runtime';
import {
  InvalidSpecError,
  PlatformDefaultsError,
  describeDifferences,
  parsePlatformDefaults,
  renderDesiredState,
  type Microservice,
} from '../../../packages/operators/src/operators/microservice/index.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

const quantity = fc.constantFrom('25m', '100m', '0.5', '1', '1.125', '2', '64Mi', '128Mi', '1Gi', '1.5Gi', '500M', '100Mi', '3Mi', '1k');
const resourceList = fc.dictionary(fc.constantFrom('cpu', 'memory', 'ephemeral-storage'), quantity, { maxKeys: 3 });
const path = fc.constantFrom('/', '/healthz', '/ready', '/health/live', '/%7Eme', '/a?b=c', '/é', '/api/v1/status#x');
// Near the rules of label keys and values (prefix a DNS subdomain, name and value ≤ 63 of
// [A-Za-z0-9-_.], alphanumeric at both ends): whatever the loader accepts must be accepted by the
// API server too, or every Deployment would be refused.
const labelKey = fc.oneof(
  fc.constantFrom('team', 'example.io/tier', 'cost-center', 'a.b.c/d_e', `${'a'.repeat(63)}`, `${'a'.repeat(64)}`, `${'a.'.repeat(126)}a/x`, 'A.io/x', '-a', 'a-', 'a/b/c', '/a', 'a/'),
  fc.stringMatching(/^([a-zA-Z0-9.-]{1,12}\/)?[a-zA-Z0-9._-]{1,12}$/),
);
const labelValue = fc.oneof(
  fc.constantFrom('', 'x', 'payments', 'A-1_b.2', 'a'.repeat(63), 'a'.repeat(64), '-a', 'a.', '_'),
  fc.stringMatching(/^[a-zA-Z0-9._-]{0,12}$/),
);
const defaultsSection = fc.record(
  {
    replicas: fc.integer({ min: 0, max: 5 }),
    progressDeadlineSeconds: fc.integer({ min: 1, max: 86_400 }),
    otlpEndpoint: fc.constantFrom('http://otel:4317', 'https://collector.example.io:4318/v1/traces', 'http://[::1]:4317'),
    containerName: fc.constantFrom('app', 'main', 'a', 'web-1'),
    resources: fc.record({ requests: resourceList, limits: resourceList }, { requiredKeys: [] }),
    probes: fc.record({ readinessPath: path, livenessPath: path }, { requiredKeys: [] }),
    labels: fc.dictionary(labelKey, labelValue, { maxKeys: 3 }),
  },
  { requiredKeys: [] },
);

const envName = fc.constantFrom('A', 'LOG_LEVEL', '_x', 'FEATURE_FLAGS', 'z9');
const envValue = fc.oneof(fc.constant(''), fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 8 }), fc.constantFrom(' lead', 'trail ', 'a\nb', '$(HOME)', '"q"'));
// Secret keys near the API server's rule for them (`IsConfigMapKey`): '.', '..' and '..a' pass the
// CRD's character pattern but a Pod refuses them, so the operator must refuse them first (it once
// wrote the Service, then had the Deployment refused: ApplyRejected); '.a' and 'a..b' are fine.
const secretKey = fc.constantFrom('password', 'a.b', 'K_1', '.a', 'a..b', '.', '..', '..a');
const envVar = fc.oneof(
  fc.record({ name: envName, value: envValue }),
  fc.record({ name: envName, valueFrom: fc.record({ secretKeyRef: fc.record({ name: fc.constantFrom('db', 'api-keys'), key: secretKey, optional: fc.boolean() }, { requiredKeys: ['name', 'key'] }) }) }),
);
const spec = fc.record(
  {
    container: fc.record(
      {
        image: fc.constantFrom('nginx', 'ghcr.io/org/app:1.0.0', 'localhost:5000/a/b:latest', `registry.example.io/team/svc@sha256:${'a'.repeat(64)}`),
        port: fc.oneof(fc.constantFrom(1, 80, 8080, 65535), fc.integer({ min: 1, max: 65535 })),
        env: fc.uniqueArray(envVar, { selector: (e) => e.name, maxLength: 4 }),
      },
      { requiredKeys: ['image', 'port'] },
    ),
    replicas: fc.integer({ min: 0, max: 3 }),
  },
  { requiredKeys: ['container'] },
);

test('for any accepted defaults and spec, the API server accepts the rendered objects and keeps them as rendered', { timeout: 240_000 }, async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'desired');
  const seen = { compared: 0, refusedDefaults: 0, refusedSpecs: 0 };
  await fc.assert(
    fc.asyncProperty(defaultsSection, spec, fc.integer({ min: 1, max: 9 }), async (section, msSpec, generation) => {
      let defaults;
      try {
        defaults = parsePlatformDefaults(section);
      } catch (err) {
        if (!(err instanceof PlatformDefaultsError)) throw err;
        seen.refusedDefaults++;
        return;
      }
      const ms: Microservice = { apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'svc', namespace: ns, uid: randomUUID(), generation }, spec: msSpec } as Microservice;
      let desired;
      try {
        desired = renderDesiredState(ms, defaults);
      } catch (err) {
        if (!(err instanceof InvalidSpecError)) throw err;
        seen.refusedSpecs++;
        return;
      }
      for (const [kind, object] of [[DeploymentKind, desired.deployment], [ServiceKind, desired.service]] as const) {
        let stored;
        try {
          stored = await client.create(kind as typeof DeploymentKind, structuredClone(object) as never, { dryRun: true });
        } catch (err) {
          const why = err instanceof ApiError ? err.message : String(err);
          assert.fail(`the API server refuses the ${kind.kind} rendered from accepted defaults ${JSON.stringify(section)} and spec ${JSON.stringify(msSpec)}: ${why}`);
        }
        const differences = describeDifferences(stored, object);
        assert.deepEqual(differences, [], `the stored ${kind.kind} no longer contains what was rendered (defaults ${JSON.stringify(section)}, spec ${JSON.stringify(msSpec)}): every resync would write it again`);
      }
      seen.compared++;
    }),
    { numRuns: Number(process.env.CONVERGE_DESIRED_RUNS ?? 100) },
  );
  t.diagnostic(`rendered and compared ${seen.compared}; defaults refused ${seen.refusedDefaults}, specs refused ${seen.refusedSpecs}`);
  assert.ok(seen.compared > 15, `only ${seen.compared} compared`);
});
