/**
 * Drift repair against the API server. Another writer changes the operator's Deployment or Service
 * in a random way the API server accepts (another image, replicas, an extra container or port, a
 * strategy, a Service type with its traffic policies, affinity, selectors, labels); the repair the
 * operator would send (`deploymentUpdate` / `serviceUpdate` over what it reads back) must then be
 * accepted (a refused repair leaves the drift in place for good, `ApplyRejected`), restore
 * everything the operator renders (one write converges: the next check finds nothing to do) and
 * keep what others own (their labels and annotations). The repair is a dry-run update; the drift is
 * real. Drifts that only add a key inside what the operator owns outright (a Service selector key,
 * a probe's host or timeout, a hostPort, a command, a resource limit: `owned-fields.ts`) must also
 * be seen: the no-op check says write and `describeDifferences` (what `converge explain` shows)
 * names them, and the repair removes them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError, DeploymentKind, ServiceKind, type Deployment, type Service } from '@converge/runtime';
import {
  MicroserviceKind,
  containsDesired,
  describeDifferences,
  parsePlatformDefaults,
  renderDesiredState,
  type Microservice,
} from '../../../packages/operators/src/operators/microservice/index.ts';
import { deploymentUpdate, serviceUpdate } from '../../../packages/operators/src/operators/microservice/update-body.ts';
import { ownedFieldsOfKind } from '../../../packages/operators/src/operators/microservice/owned-fields.ts';
import { microservice, setup } from './support.ts';

type Drift<T> = (o: T) => void;

/** `write(read())`, read again and retried on a conflict (409). */
async function onFreshRead<T, R>(read: () => Promise<T>, write: (current: T) => Promise<R>): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write(await read());
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409) || attempt >= 5) throw err;
    }
  }
}

/**
 * Drifts that only add a key inside what the operator owns outright: each one must be seen. A drift
 * drawn before it may have removed what it adds to (the readiness probe): then it adds nothing, and
 * the removal is the difference seen.
 */
const deploymentAdditions: Drift<Deployment>[] = [
  (d) => {
    const httpGet = d.spec!.template.spec!.containers[0]!.readinessProbe?.httpGet;
    if (httpGet) httpGet.host = 'elsewhere.example.com';
  },
  (d) => {
    const probe = d.spec!.template.spec!.containers[0]!.livenessProbe;
    if (probe) Object.assign(probe, { timeoutSeconds: 30, failureThreshold: 100, initialDelaySeconds: 60 });
  },
  (d) => void (d.spec!.template.spec!.containers[0]!.ports![0]!.hostPort = 8080),
  (d) => void Object.assign(d.spec!.template.spec!.containers[0]!, { command: ['sleep'], args: ['infinity'] }),
  (d) => void (d.spec!.template.spec!.containers[0]!.env!.push({ name: 'EXTRA', value: 'x' })),
];
const serviceAdditions: Drift<Service>[] = [
  (s) => void (s.spec!.selector = { ...s.spec!.selector, tier: 'x' }),
  (s) => void (s.spec!.ports![0]!.appProtocol = 'h2c'),
];

const deploymentDrift: fc.Arbitrary<Drift<Deployment>> = fc.oneof(
  fc.constantFrom<Drift<Deployment>>(...deploymentAdditions),
  fc.constantFrom<Drift<Deployment>>(
    (d) => void (d.spec!.template.spec!.containers[0]!.image = 'example.com/other:2'),
    (d) => void (d.spec!.replicas = 3),
    (d) => void d.spec!.template.spec!.containers.push({ name: 'sidecar', image: 'example.com/sidecar:1' }),
    (d) => void (d.spec!.template.spec!.containers[0]!.env = [{ name: 'X', value: '1' }]),
    (d) => void (d.spec!.strategy = { type: 'Recreate' }),
    (d) => void (d.spec!.paused = true),
    (d) => void (d.spec!.minReadySeconds = 30),
    (d) => void (d.spec!.revisionHistoryLimit = 1),
    (d) => void (d.spec!.progressDeadlineSeconds = 1200),
    (d) => void (d.spec!.template.metadata!.labels = { ...d.spec!.template.metadata!.labels, extra: 'yes' }),
    (d) => void (d.spec!.template.metadata!.annotations = { 'kubectl.kubernetes.io/restartedAt': '2026-12-05T00:00:00Z' }),
    (d) => void (d.spec!.template.spec!.containers[0]!.ports = [{ name: 'http', containerPort: 9999, protocol: 'TCP' }]),
    (d) => void (d.spec!.template.spec!.containers[0]!.readinessProbe = undefined),
    (d) => void (d.spec!.template.spec!.containers[0]!.resources = { limits: { cpu: '2' } }),
    // What a default-resources admission policy adds: not written back (owned-fields.ts POLICY_ADDED).
    (d) => void (d.spec!.template.spec!.containers[0]!.resources = { ...d.spec!.template.spec!.containers[0]!.resources, limits: { memory: '1Gi' } }),
    (d) => void (d.spec!.template.spec!.containers[0]!.volumeMounts = [{ name: 'tmp', mountPath: '/tmp' }]),
    (d) => void (d.spec!.template.spec!.terminationGracePeriodSeconds = 5),
    (d) => void (d.spec!.template.spec!.volumes = [{ name: 'tmp', emptyDir: {} }]),
  ),
);

const serviceDrift: fc.Arbitrary<Drift<Service>> = fc.constantFrom<Drift<Service>>(
  ...serviceAdditions,
  (s) => void (s.spec!.type = 'NodePort'),
  (s) => void Object.assign(s.spec!, { type: 'NodePort', externalTrafficPolicy: 'Local' }),
  (s) => void Object.assign(s.spec!, { type: 'LoadBalancer', externalTrafficPolicy: 'Local', allocateLoadBalancerNodePorts: true }),
  (s) => void Object.assign(s.spec!, { type: 'LoadBalancer', loadBalancerSourceRanges: ['10.0.0.0/8'] }),
  (s) => void Object.assign(s.spec!, { sessionAffinity: 'ClientIP' }),
  (s) => void Object.assign(s.spec!, { internalTrafficPolicy: 'Local' }),
  (s) => void Object.assign(s.spec!, { publishNotReadyAddresses: true }),
  (s) => void (s.spec!.selector = { other: 'pods' }),
  (s) => void s.spec!.ports!.push({ name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' }),
  (s) => void (s.spec!.ports![0]!.targetPort = 'http'),
  (s) => void (s.spec!.ports = [{ name: 'web', port: 81, targetPort: 8080, protocol: 'TCP' }]),
  (s) => void Object.assign(s.spec!, { type: 'ExternalName', externalName: 'example.com' }),
);

const metadataDrift = fc.constantFrom<Drift<Deployment | Service>>(
  (o) => void (o.metadata.labels = { ...o.metadata.labels, 'others.io/team': 'b' }),
  (o) => void (o.metadata.annotations = { ...o.metadata.annotations, 'others.io/note': 'kept' }),
  (o) => void (o.metadata.labels = { 'others.io/team': 'b' }),
  () => undefined,
);

test('a drifted Deployment or Service is repaired in one write the API server accepts, and others\' labels stay', { timeout: 300_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const defaults = parsePlatformDefaults({ replicas: 0 });
  const seen = { repaired: 0, driftRefused: 0, additionsSeen: 0 };
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(deploymentDrift, { minLength: 1, maxLength: 3 }), fc.array(serviceDrift, { minLength: 1, maxLength: 3 }), metadataDrift, async (dDrifts, sDrifts, mDrift) => {
      const name = `drift-${n++}`;
      const ms = (await client.create(MicroserviceKind, microservice(ns, name, 'example.com/app:1', 8080))) as Microservice;
      const desired = renderDesiredState(ms, defaults);
      for (const [kind, want, drifts, update, additions] of [
        [DeploymentKind, desired.deployment, dDrifts, deploymentUpdate, deploymentAdditions],
        [ServiceKind, desired.service, sDrifts, serviceUpdate, serviceAdditions],
      ] as const) {
        await client.create(kind as typeof DeploymentKind, structuredClone(want) as never);
        const key = { namespace: ns, name };
        // Both writes go over what was read just before, again on a conflict (the Deployment
        // controller writes the status meanwhile), as the operator's own writes do.
        const drifted = await onFreshRead(() => client.get(kind as typeof DeploymentKind, key), (current) => {
          const d = structuredClone(current) as Deployment & Service;
          for (const drift of drifts) (drift as Drift<Deployment & Service>)(d);
          mDrift(d);
          return client.replace(kind as typeof DeploymentKind, d as never);
        }).catch((err: unknown) => {
          if (err instanceof ApiError && err.code === 422) return undefined; // not a drift anyone could make
          throw err;
        });
        if (!drifted) {
          seen.driftRefused++;
          continue;
        }
        if (drifts.some((d) => (additions as readonly unknown[]).includes(d))) {
          // The reconciler's own no-op check (child-writes.ts) and what explain shows.
          const body = (update as (c: unknown, d: unknown) => Deployment)(drifted, want);
          assert.equal(containsDesired(drifted, body, ownedFieldsOfKind(kind.kind)), false, `an added key in the ${kind.kind} is not seen: ${JSON.stringify((drifted as Deployment).spec).slice(0, 800)}`);
          assert.notDeepEqual(describeDifferences(drifted, want), [], `explain shows no difference for an added key in the ${kind.kind}`);
          seen.additionsSeen++;
        }
        let live = drifted;
        const stored = await onFreshRead(() => client.get(kind as typeof DeploymentKind, key), (current) => {
          live = current;
          const body = (update as (c: unknown, d: unknown) => Deployment)(current, want);
          return client.replace(kind as typeof DeploymentKind, body as never, { dryRun: true });
        }).catch((err: unknown) => assert.fail(`the repair of a drifted ${kind.kind} is refused: ${err instanceof Error ? err.message : String(err)}\ndrifted spec: ${JSON.stringify((live as Deployment).spec).slice(0, 800)}`));
        assert.deepEqual(describeDifferences(stored, want), [], `one repair of the drifted ${kind.kind} leaves a difference: the next check would write again`);
        for (const [k, v] of Object.entries(live.metadata.labels ?? {})) {
          if (!(k in (want.metadata.labels ?? {}))) assert.equal(stored.metadata.labels?.[k], v, `another writer's label ${k} was dropped`);
        }
        seen.repaired++;
      }
    }),
    { numRuns: Number(process.env.CONVERGE_DRIFT_RUNS ?? 40) },
  );
  t.diagnostic(`repairs checked ${seen.repaired}, drifts the API server refused ${seen.driftRefused}, added keys seen ${seen.additionsSeen}`);
  assert.ok(seen.additionsSeen > 10, `only ${seen.additionsSeen} added-key drifts checked`);
  assert.ok(seen.repaired > 20, `only ${seen.repaired} repairs checked`);
});
