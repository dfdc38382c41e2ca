import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { Deployment, EndpointSlice, KubeEvent, Service } from '@converge/runtime';
import { renderDesiredState, defaultPlatformDefaults, HANDOVER_ANNOTATION } from '../../operators/microservice/index.ts';
import type { Microservice } from '../../operators/microservice/index.ts';
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { eventViews, type Explanation } from './explanation.ts';
import { explainMicroservice, countEndpoints, ownershipOfChild } from './explain-microservice.ts';
import { explainProvider } from './explain-provider.ts';
import { renderExplanationText } from './explanation-text.ts';
import { stripAnsi, createStyle } from './style.ts';

const now = new Date('2026-01-01T00:10:00Z');
const T0 = '2026-01-01T00:00:00Z';
const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason: string, observedGeneration: number, message = '') => ({
  type, status, reason, message, observedGeneration, lastTransitionTime: T0,
});

function microservice(generation = 1, status?: Microservice['status']): Microservice {
  return {
    apiVersion: 'platform.example.io/v1alpha1',
    kind: 'Microservice',
    metadata: { name: 'todo-api', namespace: 'demo', uid: 'ms-uid', generation, creationTimestamp: T0 },
    spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } },
    ...(status ? { status } : {}),
  };
}

const readyStatus = (generation = 1): Microservice['status'] => ({
  phase: 'ResourcesApplied',
  observedGeneration: generation,
  conditions: [cond('Ready', 'True', 'Available', generation, '2/2 replicas available, 2 ready endpoints'), cond('Progressing', 'False', 'RolloutComplete', generation), cond('Stalled', 'False', 'NotStalled', generation)],
  managedResources: { deployment: 'todo-api', service: 'todo-api' },
  rollout: { replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyEndpoints: 2 },
});

/** The children as the API server would return them after the operator wrote them: desired + server fields. */
function liveChildren(ms: Microservice): { deployment: Deployment; service: Service } {
  const desired = renderDesiredState(ms, defaultPlatformDefaults);
  const deployment: Deployment = structuredClone(desired.deployment);
  deployment.metadata = { ...deployment.metadata, uid: 'dep-uid', generation: 1, resourceVersion: '10' };
  deployment.spec!.strategy = { type: 'RollingUpdate' };
  deployment.status = { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: [{ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }] as never };
  const service: Service = structuredClone(desired.service);
  service.metadata = { ...service.metadata, uid: 'svc-uid' };
  service.spec!.clusterIP = '10.96.0.12';
  return { deployment, service };
}

const slice = (ready: boolean[], subnet = 0): EndpointSlice => ({
  metadata: { name: `todo-api-${subnet}`, namespace: 'demo', labels: { 'kubernetes.io/service-name': 'todo-api' } },
  addressType: 'IPv4',
  endpoints: ready.map((r, i) => ({ addresses: [`10.0.${subnet}.${i + 1}`], conditions: { ready: r } })),
});

const event = (reason: string, time: string, regarding = { kind: 'Microservice', name: 'todo-api', uid: 'ms-uid' }, extra: Partial<KubeEvent> = {}): KubeEvent => ({
  metadata: { name: `e-${reason}-${time}`, namespace: 'demo', creationTimestamp: time },
  eventTime: time, reportingController: 'converge.dev/operators', reportingInstance: 'x', action: 'Apply', reason, type: 'Normal', note: `${reason} note`, regarding, ...extra,
});

const base = { defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' };

test('a converged Microservice: Ready for the current generation, children controlled and containing the desired state', () => {
  const ms = microservice(1, readyStatus());
  const { deployment, service } = liveChildren(ms);
  const e = explainMicroservice({ ...base, microservice: ms, deployment, service, endpointSlices: [slice([true, true])], events: [event('Created', T0)] });
  assert.equal(e.converged, true, JSON.stringify(e.findings));
  assert.match(e.verdict, /^converged: Ready=True \(Available\)/);
  assert.deepEqual(e.microservice!.children.map((c) => [c.kind, c.ownership, c.differences.length]), [['Deployment', 'controlled', 0], ['Service', 'controlled', 0]]);
  assert.deepEqual(e.microservice!.endpoints, { slices: 1, ready: 2, notReady: 0 });
  assert.equal(e.microservice!.rollout.assessed?.state, 'Available');
  assert.ok(e.findings.every((f) => f.severity === 'ok' || f.severity === 'info'));
  assert.deepEqual(e.conditions.map((c) => [c.type, c.current]), [['Ready', true], ['Progressing', true], ['Stalled', true]]);
  const text = renderExplanationText(e, { now });
  assert.match(text, /^Microservice demo\/todo-api/);
  assert.match(text, /Converged: Ready=True/);
  assert.match(text, /Deployment todo-api: contains the desired state/);
  assert.match(text, /EndpointSlices: 1 \(2 ready endpoints, 0 not ready\)/);
  assert.match(text, /Created\s+Microservice\/todo-api\s+Created note/);
});

test('a rollout that does not progress: explain names the cause from the pods and the deadline (issue 18 item 8)', () => {
  const ms = microservice(1, readyStatus());
  const { deployment, service } = liveChildren(ms);
  deployment.status = { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 2 } as never;
  const failing = (name: string) => ({
    metadata: { name, namespace: 'demo' },
    status: {
      conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'app', ready: false, restartCount: 0, image: 'example.com/todo:fail', imageID: '', state: { waiting: { reason: 'ErrImagePull', message: 'pull failed' } } }],
    },
  });
  const e = explainMicroservice({ ...base, microservice: ms, deployment, service, endpointSlices: [slice([false, false])], events: [], pods: [failing('a'), failing('b')] });
  assert.equal(e.microservice!.rollout.assessed?.state, 'InProgress');
  assert.ok(e.findings.some((f) => f.severity === 'warning' && /RolloutStalled after 600 s without progress/.test(f.message)), JSON.stringify(e.findings));
  assert.ok(e.findings.some((f) => f.severity === 'warning' && f.message === 'pods: 2/2 pods not ready: container app: ErrImagePull — pull failed (2 pods)'), JSON.stringify(e.findings));
  assert.match(renderExplanationText(e, { now }), /pods: 2\/2 pods not ready: container app: ErrImagePull/);
  // Without pods (a reader that cannot list them) the rollout is still explained, without a cause.
  const bare = explainMicroservice({ ...base, microservice: ms, deployment, service, endpointSlices: [], events: [] });
  assert.ok(!bare.findings.some((f) => f.message.startsWith('pods:')));
});

test('a stale status and a changed spec: generations and differences explain why it is not converged', () => {
  const old = microservice(1, readyStatus(1));
  const { deployment, service } = liveChildren(old);
  const ms = { ...microservice(2, readyStatus(1)), spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.2.0', port: 8080 } } };
  const e = explainMicroservice({ ...base, microservice: ms, deployment, service, endpointSlices: [slice([true])], events: [] });
  assert.equal(e.converged, false);
  assert.match(e.verdict, /status describes generation 1, the spec is at generation 2/);
  const dep = e.microservice!.children[0]!;
  assert.ok(dep.differenceText.some((d) => d.startsWith('spec.template.spec.containers[0].image: want "ghcr.io/yrw9281/it30-todo-api:0.2.0", have "ghcr.io/yrw9281/it30-todo-api:0.1.0"')), dep.differenceText.join('\n'));
  assert.ok(dep.differences.some((d) => d.path === 'metadata.annotations["platform.example.io/generation"]'));
  assert.ok(e.findings.some((f) => f.message.includes('conditions Ready, Progressing, Stalled were computed for generation 1, the spec is at generation 2')));
  assert.ok(e.findings.some((f) => f.message.includes('Deployment todo-api was written for generation 1, the spec is at generation 2')));
  assert.equal(e.microservice!.rollout.assessed?.state, 'InProgress', 'the old Deployment never counts for the new generation');
  const text = renderExplanationText(e, { now });
  assert.match(text, /1\/2 \(stale\)/);
  assert.match(text, /Deployment todo-api: \d+ differences/);
});

test('an unowned same-named Service: OwnershipConflict explained with the handover command', () => {
  const ms = microservice(1, {
    phase: 'Failed', observedGeneration: 1, reason: 'OwnershipConflict', message: 'Service demo/todo-api exists and has no controller',
    conditions: [cond('Ready', 'False', 'OwnershipConflict', 1, 'Service demo/todo-api exists and has no controller'), cond('Stalled', 'True', 'OwnershipConflict', 1)],
  });
  const service: Service = { metadata: { name: 'todo-api', namespace: 'demo', uid: 'foreign-svc' }, spec: { ports: [{ port: 1234 }] } };
  const e = explainMicroservice({ ...base, microservice: ms, deployment: undefined, service, endpointSlices: [], events: [] });
  assert.equal(e.converged, false);
  assert.match(e.verdict, /phase Failed \(OwnershipConflict\)/);
  const [dep, svc] = e.microservice!.children;
  assert.equal(dep!.ownership, 'missing');
  assert.equal(svc!.ownership, 'unowned');
  assert.ok(e.findings.some((f) => f.severity === 'error' && f.message.includes(`kubectl annotate service todo-api ${HANDOVER_ANNOTATION}=todo-api`)));
  const text = renderExplanationText(e, { now });
  assert.match(text, /Service\s+todo-api\s+no controller/);
  assert.match(text, /not written: not controlled by this Microservice/);
  assert.match(text, /Deployment todo-api: missing/);
});

test('ownership: foreign controller, earlier Microservice of the same name, handover annotation', () => {
  const ms = microservice();
  const ref = (uid: string, kind = 'Microservice', apiVersion = 'platform.example.io/v1alpha1') => ({ metadata: { name: 'todo-api', ownerReferences: [{ apiVersion, kind, name: 'todo-api', uid, controller: true }] } });
  assert.equal(ownershipOfChild(ref('ms-uid'), ms).ownership, 'controlled');
  assert.equal(ownershipOfChild(ref('older-uid'), ms).ownership, 'previous-owner');
  assert.equal(ownershipOfChild(ref('x', 'ReplicaSet', 'apps/v1'), ms).ownership, 'foreign');
  assert.equal(ownershipOfChild(ref('older-uid', 'Microservice', 'legacy.example.com/v1'), ms).ownership, 'foreign', 'a Microservice of another API group');
  assert.equal(ownershipOfChild({ metadata: { annotations: { [HANDOVER_ANNOTATION]: 'todo-api' } } }, ms).ownership, 'handover');
  assert.equal(ownershipOfChild({ metadata: { annotations: { [HANDOVER_ANNOTATION]: 'other' } } }, ms).ownership, 'unowned');
  assert.equal(ownershipOfChild(undefined, ms).ownership, 'missing');
});

test('a Microservice the operator has not seen yet', () => {
  const e = explainMicroservice({ ...base, microservice: microservice(), deployment: undefined, service: undefined, endpointSlices: [], events: [] });
  assert.equal(e.converged, false);
  assert.match(e.verdict, /no status yet/);
  assert.equal(e.object.observedGeneration, null);
});

test('endpoints are counted as the operator counts them', () => {
  assert.deepEqual(countEndpoints([slice([true, false]), slice([true], 1)]), { slices: 2, ready: 2, notReady: 1 });
  // The same endpoints again in a second slice (another address family): counted once.
  assert.deepEqual(countEndpoints([slice([true, false]), slice([true, false])]), { slices: 2, ready: 1, notReady: 1 });
  const noAddress: EndpointSlice = { metadata: {}, addressType: 'IPv4', endpoints: [{ addresses: [], conditions: { ready: true } }] };
  assert.deepEqual(countEndpoints([noAddress]), { slices: 1, ready: 0, notReady: 0 });
});

test('events: most recent kept, oldest first, series and legacy counts honoured', () => {
  const events = [
    event('B', '2026-01-01T00:05:00Z'),
    event('A', '2026-01-01T00:01:00Z', undefined, { series: { count: 4, lastObservedTime: '2026-01-01T00:09:00Z' } }),
    { ...event('C', '2026-01-01T00:02:00Z'), eventTime: null, deprecatedLastTimestamp: '2026-01-01T00:03:00Z', deprecatedCount: 3, reportingController: '', deprecatedSource: { component: 'deployment-controller' } } as unknown as KubeEvent,
  ];
  const views = eventViews(events);
  assert.deepEqual(views.map((v) => [v.reason, v.count]), [['C', 3], ['B', 1], ['A', 4]]);
  assert.equal(views[0]!.reportingController, 'deployment-controller');
  assert.equal(eventViews(events, 2).length, 2);
});

function provider(status?: DigitalHumanProvider['status'], extra: { finalizers?: string[]; deletionTimestamp?: string } = {}): DigitalHumanProvider {
  return {
    metadata: { name: 'studio', namespace: 'demo', uid: 'p-uid', generation: 1, creationTimestamp: T0, finalizers: extra.finalizers ?? ['dhp.example.com/provider-cleanup'], ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}) },
    spec: { endpoint: 'https://127.0.0.1:8443', region: 'ap-northeast-1', displayName: 'Studio', credentials: { secretRef: { name: 'creds', key: 'token' } } },
    ...(status ? { status } : {}),
  };
}

test('a ready provider: finalizer, providerID, credentials present (never their value)', () => {
  const e = explainProvider({ provider: provider({ observedGeneration: 1, providerID: 'inst-1', conditions: [cond('Ready', 'True', 'ProviderReady', 1, 'healthy')] }), credentials: { secretExists: true, keyPresent: true }, events: [] });
  assert.equal(e.converged, true);
  assert.deepEqual(e.provider!.credentials, { secret: 'creds', key: 'token', secretExists: true, keyPresent: true, labelled: null, error: null });
  assert.equal(e.provider!.finalizer.present, true);
  const text = renderExplanationText(e, { now });
  assert.match(text, /credentials Secret creds: present, key "token" present/);
  assert.match(text, /finalizer dhp.example.com\/provider-cleanup: present/);
});

test('a provider with a missing Secret, and one blocked in deletion', () => {
  const missing = explainProvider({ provider: provider({ observedGeneration: 1, conditions: [cond('Ready', 'False', 'CredentialsMissing', 1, 'Secret creds not found')] }), credentials: { secretExists: false, keyPresent: null }, events: [] });
  assert.equal(missing.converged, false);
  assert.match(missing.verdict, /Ready=False \(CredentialsMissing\)/);
  assert.ok(missing.findings.some((f) => f.message.includes('Secret creds does not exist in namespace demo')));
  const blocked = explainProvider({
    provider: provider({ observedGeneration: 1, providerID: 'inst-9', conditions: [cond('Ready', 'False', 'DeletionBlocked', 1, 'vendor unreachable')] }, { deletionTimestamp: T0 }),
    credentials: { secretExists: true, keyPresent: true },
    events: [],
  });
  assert.equal(blocked.converged, false);
  assert.match(blocked.findings[0]!.message, /finalizer dhp.example.com\/provider-cleanup stays until the vendor instance inst-9 is deleted \(blocked: vendor unreachable\)/);
  const text = stripAnsi(renderExplanationText(blocked, { now, style: createStyle(true) }));
  assert.equal(text, renderExplanationText(blocked, { now }));
});

test('a provider with a create sent but no instance recorded, and one with the abandon annotation', () => {
  const sent = explainProvider({ provider: provider({ observedGeneration: 1, instanceEndpoint: 'https://vendor.example', createRequestedAt: '2026-01-01T00:00:00.123Z', conditions: [cond('Ready', 'False', 'EnsureFailed', 1, 'timeout')] }), credentials: { secretExists: true, keyPresent: true }, events: [] });
  assert.equal(sent.provider!.instanceEndpoint, 'https://vendor.example');
  assert.equal(sent.provider!.createRequestedAt, '2026-01-01T00:00:00.123Z');
  assert.ok(sent.findings.some((f) => f.message.startsWith('a create may have been sent to https://vendor.example at 2026-01-01T00:00:00.123Z')));
  assert.match(renderExplanationText(sent, { now }), /instance lives at https:\/\/vendor\.example, last create requested 2026-01-01T00:00:00\.123Z/);
  const p = provider({ observedGeneration: 1, providerID: 'inst-1', instanceEndpoint: 'https://vendor.example', conditions: [cond('Ready', 'True', 'ProviderReady', 1, 'healthy')] });
  p.metadata.annotations = { 'dhp.example.com/abandon-instance': 'inst-1' };
  const marked = explainProvider({ provider: p, credentials: { secretExists: true, keyPresent: true }, events: [] });
  assert.ok(marked.findings.some((f) => f.message === 'vendor instance inst-1 at https://vendor.example'));
  assert.ok(marked.findings.some((f) => f.severity === 'warning' && f.message.startsWith('dhp.example.com/abandon-instance=inst-1: on deletion')));
});

test('quotas: explain names what limits a provider, what the vendor refused and what a person could do', () => {
  const usage = { callsToday: 90, dailyQuota: 100, quotaRemaining: 10, throttledRequests: 3, throttleWindowSeconds: 60, quotaResetAt: '2026-01-02T00:00:00.000Z', observedAt: '2026-01-01T12:00:00.000Z' };
  const p = provider({
    observedGeneration: 1,
    providerID: 'inst-1',
    usage,
    limits: { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 100 },
    limitedBy: 'AccountSuspended',
    usable: false,
    recommendation: '90 % of the daily quota used: raise spec.limits.dailyQuota above 100',
    conditions: [
      cond('Ready', 'False', 'AccountSuspended', 1, 'vendor account acct is suspended (NonPayment: invoice unpaid)'),
      cond('AccountSuspended', 'True', 'NonPayment', 1, 'vendor account acct is suspended (NonPayment: invoice unpaid)'),
      cond('RateLimited', 'True', 'Throttled', 1, '3 calls throttled in the last 60 s'),
      cond('ScaleRecommended', 'True', 'QuotaNearlyUsed', 1, '90 % used'),
    ],
  });
  p.spec.limits = { dailyQuota: 200 };
  const e = explainProvider({ provider: p, credentials: { secretExists: true, keyPresent: true }, events: [] });
  const messages = e.findings.map((f) => `${f.severity}: ${f.message}`);
  assert.ok(messages.some((m) => /^error: vendor account acct is suspended .*AccountSuspended\/NonPayment.*pay or resolve it/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => /^warning: 3 calls throttled .*RateLimited.*stays usable/.test(m)));
  assert.ok(messages.some((m) => /^info: recommendation \(never acted on\): 90 %/.test(m)));
  assert.ok(messages.some((m) => /^warning: limits differ from spec\.limits .*dailyQuota 100 \(spec 200\)/.test(m)));
  assert.deepEqual([e.provider!.usable, e.provider!.limitedBy, e.provider!.usage?.quotaRemaining, e.provider!.limits.inForce?.dailyQuota], [false, 'AccountSuspended', 10, 100]);
  const text = renderExplanationText(e, { now: new Date('2026-01-01T12:05:00Z') });
  assert.match(text, /limits: spec dailyQuota 200; in force maxConcurrency 10, requestsPerMinute 600, dailyQuota 100/);
  assert.match(text, /usage: 90 of 100 calls today, 10 left \(resets 2026-01-02T00:00:00.000Z\); 3 throttled in the last 60 s/);
  assert.match(text, /usable: no, limited by AccountSuspended/);

  // Issue 18 item 7: a refused region says that it is immutable and what to do.
  const refused = explainProvider({
    provider: provider({ observedGeneration: 1, conditions: [cond('Ready', 'False', 'VendorRejected', 1, 'the vendor refused the ensure: vendor createInstance: HTTP 400 InvalidRequest: region must be lower-case (the vendor names spec.region, which is immutable: create a new DigitalHumanProvider); not retried until the spec changes')] }),
    credentials: { secretExists: true, keyPresent: true },
    events: [],
  });
  assert.ok(refused.findings.some((f) => f.severity === 'error' && /VendorRejected.*It is sent again when the spec changes, and otherwise only every provider\.rejectedRetrySeconds \(10 minutes by default\); spec\.region is immutable, so create a new DigitalHumanProvider/.test(f.message)));
});

test('a refused change of a serving provider: usable, not converged, and explain says the change was refused and the instance serves', () => {
  const e = explainProvider({
    provider: provider({
      observedGeneration: 1, providerID: 'inst-1', usable: true,
      conditions: [
        cond('Ready', 'True', 'ProviderReady', 1, 'instance inst-1 is healthy'),
        cond('SpecApplied', 'False', 'VendorRejected', 1, 'the vendor refused the limits of generation 1: dailyQuota above the plan (the vendor names spec.limits.dailyQuota)'),
        cond('Stalled', 'True', 'VendorRejected', 1, 'x'),
      ],
    }),
    credentials: { secretExists: true, keyPresent: true },
    events: [],
  });
  assert.equal(e.converged, false);
  assert.equal(e.provider!.usable, true);
  assert.ok(e.findings.some((f) => f.severity === 'error' && /refused this generation's change \(SpecApplied=False\/VendorRejected.*spec\.limits\.dailyQuota.*keeps serving as it was/.test(f.message)), JSON.stringify(e.findings));
  assert.match(e.verdict, /not converged: .*refused/);
});

test('the verdict is one line, also when the message it quotes has several', () => {
  // Found by views.property.test.ts: a Ready message with line breaks (an API server error, say)
  // made `verdict` ("one line", explanation.ts) and the text's second line span several lines.
  const ms = microservice(1, { phase: 'ResourcesApplied', observedGeneration: 1, conditions: [cond('Ready', 'False', 'RolloutInProgress', 1, 'first line\r\n  second line\nthird')] });
  const e = explainMicroservice({ microservice: ms, deployment: undefined, service: undefined, endpointSlices: [], events: [], defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' });
  assert.equal(e.verdict, 'not converged: Ready=False (RolloutInProgress): first line second line third');
  assert.equal(renderExplanationText(e, { now }).split('\n')[1], 'Not converged: Ready=False (RolloutInProgress): first line second line third');
});

// Found by views.property.test.ts (CONVERGE_RELIABILITY_LONG=1, seed -1386421895). The cause is
// `show` in operators/microservice/contains.ts cut a value's JSON at 117 UTF-16 units (found by
// views.property.test.ts in a long run).
test('a difference shown in explain is cut between characters, never through a surrogate pair', () => {
  const ms = microservice(1, readyStatus());
  const { deployment, service } = liveChildren(ms);
  service.spec!.ports![0]!.name = `a${'😀'.repeat(60)}`;
  const e = explainMicroservice({ microservice: ms, deployment, service, endpointSlices: [slice([true, true])], events: [], defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' });
  const text = e.microservice!.children[1]!.differenceText.join('\n');
  assert.match(text, /spec\.ports\[0\]\.name: want "http", have "a😀/);
  assert.ok(text.isWellFormed(), JSON.stringify(text.slice(-12)));
});

test('differences never show an env value (they may be passwords), as the spec summary and the log form do not', () => {
  const ms = microservice(1, readyStatus());
  ms.spec.container.env = [{ name: 'DB_PASSWORD', value: 'want-s3cret' }];
  const { deployment, service } = liveChildren(ms);
  deployment.spec!.template.spec!.containers[0]!.env = deployment.spec!.template.spec!.containers[0]!.env!.map((e) => (e.name === 'DB_PASSWORD' ? { ...e, value: 'have-s3cret' } : e));
  const drifted = explainMicroservice({ microservice: ms, deployment, service, endpointSlices: [slice([true, true])], events: [], ...base });
  // A whole container missing: its env travels inside the value shown.
  const { deployment: bare } = liveChildren(ms);
  bare.spec!.template.spec!.containers = [];
  const missing = explainMicroservice({ microservice: ms, deployment: bare, service, endpointSlices: [slice([true, true])], events: [], ...base });
  for (const e of [drifted, missing]) {
    const shown = JSON.stringify(e) + renderExplanationText(e, { now });
    assert.ok(!shown.includes('s3cret'), shown.slice(shown.indexOf('s3cret') - 200, shown.indexOf('s3cret') + 20));
  }
  assert.match(drifted.microservice!.children[0]!.differenceText.join('\n'), /env\[\d+\]\.value: differs \(value hidden\)/);
  assert.ok(missing.microservice!.children[0]!.differences.length > 0, 'the missing container is still a difference');
});

test('a field the live child lacks: the difference keeps its `actual` key, as null, in -o json and -o yaml (the text still says absent)', () => {
  const ms = microservice(1, readyStatus());
  const { deployment, service } = liveChildren(ms);
  delete deployment.metadata.labels!['app.kubernetes.io/managed-by'];
  const e = explainMicroservice({ ...base, microservice: ms, deployment, service, endpointSlices: [slice([true, true])], events: [] });
  const path = 'metadata.labels["app.kubernetes.io/managed-by"]';
  assert.deepEqual(e.microservice!.children[0]!.differenceText, [`${path}: want "converge", have absent`]);
  const asJson = JSON.parse(JSON.stringify(e)) as Explanation;
  assert.deepEqual(asJson.microservice!.children[0]!.differences, [{ path, expected: 'converge', actual: null }]);
  const asYaml = parseYaml(stringifyYaml(e, { lineWidth: 0 })) as Explanation;
  assert.deepEqual(asYaml.microservice!.children[0]!.differences, [{ path, expected: 'converge', actual: null }]);
});

test('a Failed Microservice with an empty status.reason reads as no reason, not "()"', () => {
  const ms = microservice(1, { phase: 'Failed', observedGeneration: 1, reason: '', message: 'the API server refused the Deployment' });
  const e = explainMicroservice({ ...base, microservice: ms, deployment: undefined, service: undefined, endpointSlices: [], events: [] });
  const finding = e.findings.find((f) => f.message.startsWith('phase Failed'));
  assert.equal(finding?.message, 'phase Failed (no reason): the API server refused the Deployment; not retried until the spec or the object in the way changes');
});

test('an ApplyRejected finding is the status message alone: it says when the write is sent again', () => {
  const message = 'the API server refused to create Deployment web: frozen. The operator tries again when the Microservice or Deployment web changes, and every 10 minutes (a rule of the cluster, such as an admission policy, may have changed)';
  const ms = microservice(1, { phase: 'Failed', observedGeneration: 1, reason: 'ApplyRejected', message });
  const e = explainMicroservice({ ...base, microservice: ms, deployment: undefined, service: undefined, endpointSlices: [], events: [] });
  assert.equal(e.findings.find((f) => f.message.startsWith('phase Failed'))?.message, `phase Failed (ApplyRejected): ${message}`);
});

test('a finding (or a status message) with line breaks continues indented under its text: no line of it passes for another finding or a section', () => {
  const message = 'first line\nBad: second line\n\n  ✗ third line';
  const ms = microservice(1, {
    phase: 'Failed', observedGeneration: 1, reason: 'ApplyRejected', message,
    conditions: [cond('Ready', 'False', 'ApplyRejected', 1, message)],
  });
  const e = explainMicroservice({ ...base, microservice: ms, deployment: undefined, service: undefined, endpointSlices: [], events: [] });
  const lines = renderExplanationText(e, { now }).split('\n');
  const ready = lines.indexOf('  ✗ Ready=False (ApplyRejected): first line');
  assert.ok(ready > 0, lines.join('\n'));
  assert.deepEqual(lines.slice(ready + 1, ready + 5), ['    Bad: second line', '    ', '      ✗ third line', lines[ready + 4]]);
  assert.match(lines[ready + 4]!, /^ {2}[✓·!✗] /, 'the next line is the next finding');
  const phase = lines.findIndex((l) => l.startsWith('  phase Failed, observedGeneration 1/1, reason ApplyRejected: first line'));
  assert.ok(phase > 0, lines.join('\n'));
  assert.deepEqual(lines.slice(phase + 1, phase + 4), ['    Bad: second line', '    ', '      ✗ third line']);
  // The same with colours: the continuation is indented whatever the style paints.
  const coloured = stripAnsi(renderExplanationText(e, { now, style: createStyle(true) })).split('\n');
  assert.deepEqual(coloured.slice(ready, ready + 4), lines.slice(ready, ready + 4));
});

test('explain: a Secret without the vendor-credentials label is named, with the command that labels it', () => {
  const e = explainProvider({ provider: provider({ observedGeneration: 1, conditions: [cond('Ready', 'False', 'CredentialsNotAllowed', 1, 'not labelled')] }), credentials: { secretExists: true, keyPresent: true, labelled: false }, events: [] });
  assert.equal(e.provider!.credentials.labelled, false);
  const finding = e.findings.find((f) => f.message.includes('CredentialsNotAllowed') && f.message.includes('kubectl'));
  assert.equal(finding?.severity, 'error');
  assert.match(finding!.message, /kubectl -n \S+ label secret creds dhp\.example\.com\/vendor-credentials=true/);
});
