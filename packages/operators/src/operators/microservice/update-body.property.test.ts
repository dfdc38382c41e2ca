/**
 * Property tests of the diff-and-update step (reliability checklist item 10): for any live child
 * — rendered for another spec, defaulted by the API server, edited by hand, carrying other
 * writers' labels, annotations and ownerReferences — one in-place update makes it contain the
 * desired state (so the next reconcile writes nothing: no write loop), a second update changes
 * nothing (idempotent), what others own survives, and the inputs are never mutated.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Deployment, Service } from '@converge/runtime';
import { renderDesiredState } from './desired-state.ts';
import { containsDesired } from './contains.ts';
import { deploymentUpdate, serviceUpdate } from './update-body.ts';
import { DEPLOYMENT_RULES, SERVICE_RULES } from './owned-fields.ts';
import type { Microservice } from './api/index.ts';

function microservice(name: string, image: string, port: number, generation: number, uid = `uid-${name}`): Microservice {
  return { apiVersion: 'platform.example.io/v1alpha1', kind: 'Microservice', metadata: { name, namespace: 'ns', uid, generation, resourceVersion: '1' }, spec: { container: { image, port } } };
}

/** Hand edits that only add a key inside what the operator owns outright (`owned-fields.ts`). */
const ADDITIONS = ['selector-key', 'probe-host', 'probe-timeout', 'host-port', 'command'] as const;

const name = fc.stringMatching(/^[a-z][-a-z0-9]{0,20}[a-z0-9]$/);
const image = fc
  .tuple(fc.constantFrom('ghcr.io/org', 'registry.example.com:5000/team', 'nginx'), fc.stringMatching(/^[a-z0-9]{1,10}$/), fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,12}$/))
  .map(([repo, app, tag]) => `${repo}/${app}:${tag}`);
const port = fc.integer({ min: 1, max: 65535 });
const generation = fc.integer({ min: 1, max: 1_000_000 });
/** Keys other writers use; never the operator's own (those are under app.kubernetes.io / platform.example.io or `app`). */
const foreignKey = fc.stringMatching(/^(team|other|ci)\.example\.com\/[a-z][a-z0-9-]{0,12}$/);
const foreignMap = fc.dictionary(foreignKey, fc.stringMatching(/^[a-z0-9]{0,12}$/), { maxKeys: 4 });
const foreignOwners = fc.array(fc.record({ apiVersion: fc.constant('v1'), kind: fc.constantFrom('ConfigMap', 'Secret'), name, uid: fc.uuid() }), { maxLength: 2 });

/** What the API server adds on a write: defaults and allocated fields. Returns a new object. */
function serverDefaulted<T extends Deployment | Service>(obj: T, kind: 'Deployment' | 'Service'): T {
  const o = structuredClone(obj) as any;
  o.metadata = { uid: 'server-uid', creationTimestamp: '2025-01-01T00:00:00Z', ...o.metadata, resourceVersion: String(Number(o.metadata.resourceVersion ?? 0) + 1) };
  if (kind === 'Deployment') {
    o.metadata.generation = (o.metadata.generation ?? 0) + 1;
    o.spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
    o.spec.progressDeadlineSeconds ??= 600;
    o.spec.revisionHistoryLimit ??= 10;
    const pod = o.spec.template.spec;
    Object.assign(pod, { restartPolicy: pod.restartPolicy ?? 'Always', dnsPolicy: pod.dnsPolicy ?? 'ClusterFirst', schedulerName: pod.schedulerName ?? 'default-scheduler', securityContext: pod.securityContext ?? {} });
    for (const c of pod.containers) {
      Object.assign(c, { terminationMessagePath: c.terminationMessagePath ?? '/dev/termination-log', terminationMessagePolicy: c.terminationMessagePolicy ?? 'File', imagePullPolicy: c.imagePullPolicy ?? 'IfNotPresent' });
      for (const probe of [c.readinessProbe, c.livenessProbe].filter(Boolean)) {
        Object.assign(probe, { timeoutSeconds: probe.timeoutSeconds ?? 1, periodSeconds: probe.periodSeconds ?? 10, successThreshold: 1, failureThreshold: probe.failureThreshold ?? 3 });
        if (probe.httpGet) probe.httpGet.scheme ??= 'HTTP';
      }
      for (const p of c.ports ?? []) p.protocol ??= 'TCP';
    }
  } else {
    Object.assign(o.spec, { clusterIP: o.spec.clusterIP ?? '10.0.0.42', clusterIPs: o.spec.clusterIPs ?? ['10.0.0.42'], sessionAffinity: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster' });
    for (const p of o.spec.ports ?? []) p.protocol ??= 'TCP';
  }
  return o;
}

/** A live child: rendered for `other` (another spec or an older CR generation), defaulted, then touched by others. */
const makeScenario = (owners: fc.Arbitrary<{ apiVersion: string; kind: string; name: string; uid: string }[]>) => fc
  .record({
    name,
    desired: fc.record({ image, port, generation }),
    other: fc.record({ image, port, generation }),
    sameSpec: fc.boolean(),
    labels: foreignMap,
    annotations: foreignMap,
    templateAnnotations: foreignMap,
    owners,
    handEdit: fc.constantFrom('none', 'image', 'extra-container', 'replicas', 'env', 'selector-port', ...ADDITIONS),
  })
  .map((s) => {
    const desired = renderDesiredState(microservice(s.name, s.desired.image, s.desired.port, s.desired.generation));
    const was = s.sameSpec ? s.desired : s.other; // rendered for this very spec, or another one
    const old = renderDesiredState(microservice(s.name, was.image, was.port, was.generation));
    const deployment = serverDefaulted(old.deployment, 'Deployment') as any;
    const service = serverDefaulted(old.service, 'Service') as any;
    for (const o of [deployment, service]) {
      o.metadata.labels = { ...o.metadata.labels, ...s.labels };
      o.metadata.annotations = { ...o.metadata.annotations, ...s.annotations };
      o.metadata.ownerReferences = [...s.owners, ...(o.metadata.ownerReferences ?? [])];
    }
    deployment.spec.template.metadata.annotations = { ...deployment.spec.template.metadata.annotations, ...s.templateAnnotations };
    const c = deployment.spec.template.spec.containers[0];
    if (s.handEdit === 'image') c.image = 'docker.io/library/nginx:hand-edit';
    if (s.handEdit === 'extra-container') deployment.spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox:1' });
    if (s.handEdit === 'replicas') deployment.spec.replicas = 7;
    if (s.handEdit === 'env') c.env = [...(c.env ?? []), { name: 'DEBUG', value: '1' }];
    if (s.handEdit === 'selector-port') service.spec.ports = [{ name: 'x', port: 1, targetPort: 1, protocol: 'TCP' }];
    if (s.handEdit === 'selector-key') service.spec.selector = { ...service.spec.selector, tier: 'x' };
    if (s.handEdit === 'probe-host') c.readinessProbe.httpGet.host = 'elsewhere.example.com';
    if (s.handEdit === 'probe-timeout') c.livenessProbe.timeoutSeconds = 30;
    if (s.handEdit === 'host-port') c.ports[0].hostPort = 80;
    if (s.handEdit === 'command') c.command = ['sleep', 'infinity'];
    return { ...s, desired, current: { deployment: deployment as Deployment, service: service as Service } };
  });
const scenario = makeScenario(foreignOwners);

test('property: a hand edit that only adds inside what the operator owns is something to write', () => {
  fc.assert(
    fc.property(scenario.filter((s) => s.sameSpec && (ADDITIONS as readonly string[]).includes(s.handEdit)), ({ desired, current }) =>
      !(containsDesired(current.deployment, deploymentUpdate(current.deployment, desired.deployment), DEPLOYMENT_RULES)
        && containsDesired(current.service, serviceUpdate(current.service, desired.service), SERVICE_RULES))),
    { numRuns: 200 },
  );
});
/** The same without other writers' ownerReferences (the no-write-loop property below covers those). */
const scenarioWithoutForeignOwners = makeScenario(fc.constant([]));

const containsAfterOneUpdate = ({ desired, current }: { desired: ReturnType<typeof renderDesiredState>; current: { deployment: Deployment; service: Service } }) => {
  const d = deploymentUpdate(current.deployment, desired.deployment);
  const s = serviceUpdate(current.service, desired.service);
  return containsDesired(d, desired.deployment)
    && containsDesired(s, desired.service)
    && containsDesired(serverDefaulted(d, 'Deployment'), desired.deployment)
    && containsDesired(serverDefaulted(s, 'Service'), desired.service);
};

test('property: one update makes any live child contain the desired state, also after the API server defaults it again', () => {
  fc.assert(fc.property(scenarioWithoutForeignOwners, containsAfterOneUpdate), { numRuns: 300 });
});

// Found by this suite: the update keeps other writers' (non-controller) ownerReferences, so the
// reconciler's no-op check is "would the update change anything?": after one update, the next
// check must find nothing to write (no write loop), also once the API server has defaulted it.
const noWriteLoop = ({ desired, current }: Parameters<typeof containsAfterOneUpdate>[0]) => {
  const d = deploymentUpdate(current.deployment, desired.deployment);
  const s = serviceUpdate(current.service, desired.service);
  const dd = serverDefaulted(d, 'Deployment');
  const sd = serverDefaulted(s, 'Service');
  return containsDesired(d, deploymentUpdate(d, desired.deployment), DEPLOYMENT_RULES)
    && containsDesired(s, serviceUpdate(s, desired.service), SERVICE_RULES)
    && containsDesired(dd, deploymentUpdate(dd, desired.deployment), DEPLOYMENT_RULES)
    && containsDesired(sd, serviceUpdate(sd, desired.service), SERVICE_RULES);
};

test('property: after one update the no-op check finds nothing to write, also with other writers\' ownerReferences', () => {
  fc.assert(fc.property(scenario, noWriteLoop), { numRuns: 300 });
});

test('property: updating twice is the same as updating once (idempotent)', () => {
  fc.assert(
    fc.property(scenario, ({ desired, current }) => {
      const d1 = deploymentUpdate(current.deployment, desired.deployment);
      const s1 = serviceUpdate(current.service, desired.service);
      assert.deepEqual(deploymentUpdate(d1, desired.deployment), d1);
      assert.deepEqual(serviceUpdate(s1, desired.service), s1);
    }),
    { numRuns: 300 },
  );
});

test("property: what other writers own survives an update (labels, annotations, other ownerReferences, allocated fields, rollout restarts)", () => {
  fc.assert(
    fc.property(scenario, ({ desired, current, labels, annotations, templateAnnotations, owners }) => {
      const d = deploymentUpdate(current.deployment, desired.deployment);
      const s = serviceUpdate(current.service, desired.service);
      for (const o of [d, s]) {
        for (const [k, v] of Object.entries(labels)) assert.equal(o.metadata.labels?.[k], v, `label ${k}`);
        for (const [k, v] of Object.entries(annotations)) assert.equal(o.metadata.annotations?.[k], v, `annotation ${k}`);
        for (const owner of owners) assert.ok(o.metadata.ownerReferences?.some((r) => r.uid === owner.uid), 'foreign ownerReference kept');
        assert.equal(o.metadata.ownerReferences?.filter((r) => r.controller).length, 1, 'exactly one controller');
      }
      for (const [k, v] of Object.entries(templateAnnotations)) assert.equal(d.spec?.template.metadata?.annotations?.[k], v, `pod-template annotation ${k}`);
      assert.equal(d.metadata.resourceVersion, current.deployment.metadata.resourceVersion, 'compare-and-swap on the version read');
      assert.equal(s.metadata.resourceVersion, current.service.metadata.resourceVersion);
      assert.equal(s.spec?.clusterIP, current.service.spec?.clusterIP, 'allocated clusterIP kept');
      assert.deepEqual(s.spec?.clusterIPs, current.service.spec?.clusterIPs);
    }),
    { numRuns: 300 },
  );
});

test('property: the desired part of the result does not depend on what was live (hand edits never leak through)', () => {
  fc.assert(
    fc.property(scenario, scenario, (a, b) => {
      const desired = a.desired;
      const fromA = deploymentUpdate(a.current.deployment, desired.deployment);
      const fromB = deploymentUpdate(b.current.deployment, desired.deployment);
      assert.deepEqual(fromA.spec?.template.spec, fromB.spec?.template.spec);
      assert.equal(fromA.spec?.replicas, fromB.spec?.replicas);
      assert.deepEqual(serviceUpdate(a.current.service, desired.service).spec?.ports, serviceUpdate(b.current.service, desired.service).spec?.ports);
    }),
    { numRuns: 200 },
  );
});

test('property: inputs are never mutated', () => {
  fc.assert(
    fc.property(scenario, ({ desired, current }) => {
      const before = JSON.stringify({ desired, current });
      deploymentUpdate(current.deployment, desired.deployment);
      serviceUpdate(current.service, desired.service);
      assert.equal(JSON.stringify({ desired, current }), before);
    }),
    { numRuns: 200 },
  );
});
