import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Microservice } from '../../operators/microservice/api/index.ts';
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { buildStatusDocument, renderStatusText, statusLines, microserviceRow, providerRow } from './status-view.ts';
import { createStyle, stripAnsi } from './style.ts';

const now = new Date('2026-01-01T00:10:00Z');
const T0 = '2026-01-01T00:00:00Z';

function ms(name: string, overrides: { generation?: number; status?: Microservice['status']; namespace?: string; deleting?: boolean } = {}): Microservice {
  return {
    apiVersion: 'platform.example.io/v1alpha1',
    kind: 'Microservice',
    metadata: {
      name,
      namespace: overrides.namespace ?? 'default',
      uid: `uid-${name}`,
      generation: overrides.generation ?? 1,
      creationTimestamp: T0,
      ...(overrides.deleting ? { deletionTimestamp: T0 } : {}),
    },
    spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } },
    ...(overrides.status ? { status: overrides.status } : {}),
  };
}

const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason: string, observedGeneration: number, message = '') => ({
  type, status, reason, message, observedGeneration, lastTransitionTime: T0,
});

const readyStatus: Microservice['status'] = {
  phase: 'ResourcesApplied',
  observedGeneration: 1,
  conditions: [cond('Ready', 'True', 'Available', 1, '2/2 replicas available, 2 ready endpoints'), cond('Progressing', 'False', 'RolloutComplete', 1), cond('Stalled', 'False', 'NotStalled', 1)],
  managedResources: { deployment: 'todo-api', service: 'todo-api' },
  rollout: { replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyEndpoints: 2 },
};

function dhp(name: string, overrides: { generation?: number; status?: DigitalHumanProvider['status']; finalizer?: boolean } = {}): DigitalHumanProvider {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      generation: overrides.generation ?? 1,
      creationTimestamp: T0,
      ...(overrides.finalizer === false ? {} : { finalizers: ['dhp.example.com/provider-cleanup'] }),
    },
    spec: { endpoint: 'https://127.0.0.1:8443', region: 'ap-northeast-1', credentials: { secretRef: { name: 'creds', key: 'token' } } },
    ...(overrides.status ? { status: overrides.status } : {}),
  };
}

test('a ready Microservice row carries rollout detail and is converged', () => {
  const row = microserviceRow(ms('todo-api', { status: readyStatus }));
  assert.equal(row.converged, true);
  assert.deepEqual(row.replicas, { desired: 2, updated: 2, available: 2, readyEndpoints: 2 });
  assert.equal(row.ready?.reason, 'Available');
  assert.equal(row.ready?.current, true);
  assert.equal(row.phase, 'ResourcesApplied');
});

test('a Ready=True computed for an older generation is not converged and is marked stale', () => {
  const row = microserviceRow(ms('todo-api', { generation: 2, status: readyStatus }));
  assert.equal(row.converged, false);
  assert.equal(row.ready?.current, false);
  const text = renderStatusText(buildStatusDocument({ namespace: 'default', microservices: [ms('todo-api', { generation: 2, status: readyStatus })], providers: [] }), { now });
  assert.match(text, /True\*/);
  assert.match(text, /older generation/);
});

test('a Microservice without status has no phase, no replicas, and is not converged', () => {
  const row = microserviceRow(ms('new'));
  assert.equal(row.phase, null);
  assert.equal(row.replicas, null);
  assert.equal(row.ready, null);
  assert.equal(row.observedGeneration, null);
  assert.equal(row.converged, false);
});

test('a Failed Microservice shows its reason', () => {
  const failed = ms('taken', {
    status: { phase: 'Failed', observedGeneration: 1, reason: 'OwnershipConflict', message: 'Service x/taken exists and has no controller', conditions: [cond('Ready', 'False', 'OwnershipConflict', 1, 'Service x/taken exists')] },
  });
  const text = renderStatusText(buildStatusDocument({ namespace: 'default', microservices: [failed], providers: [] }), { now, wide: true });
  const line = text.split('\n').find((l) => l.startsWith('taken'))!;
  assert.match(line, /Failed\s+-\s+-\s+-\s+False\s+OwnershipConflict\s+10m\s+1\/1\s+Service x\/taken exists/);
});

test('a Failed Microservice with an empty status.reason shows no reason ("-"), as with none', () => {
  const failed = ms('taken', { status: { phase: 'Failed', observedGeneration: 1, reason: '', message: '' } });
  const text = renderStatusText(buildStatusDocument({ namespace: 'default', microservices: [failed], providers: [] }), { now, wide: true });
  const line = text.split('\n').find((l) => l.startsWith('taken'))!;
  assert.match(line, /Failed\s+-\s+-\s+-\s+-\s+-\s+10m\s+1\/1$/);
  assert.equal(statusLines(buildStatusDocument({ namespace: 'default', microservices: [failed], providers: [] })).get('Microservice default/taken'), 'Microservice default/taken: phase=Failed ready=- image=ghcr.io/yrw9281/it30-todo-api:0.1.0 generation=1/1');
});

test('provider rows: converged needs Ready, current generation, providerID and the finalizer', () => {
  const status = { observedGeneration: 1, providerID: 'inst-1', conditions: [cond('Ready', 'True', 'ProviderReady', 1)] };
  assert.equal(providerRow(dhp('studio', { status })).converged, true);
  assert.equal(providerRow(dhp('studio', { status, finalizer: false })).converged, false);
  assert.equal(providerRow(dhp('studio', { status: { ...status, providerID: '' } })).converged, false);
  assert.equal(providerRow(dhp('studio', { status, generation: 2 })).converged, false);
  assert.equal(providerRow(dhp('studio', { status })).providerID, 'inst-1');
});

test('the document is sorted, summarised and stable', () => {
  const input = {
    namespace: null,
    microservices: [ms('b', { namespace: 'z', status: readyStatus }), ms('a', { namespace: 'z' }), ms('c', { namespace: 'a', status: readyStatus })],
    providers: [dhp('studio')],
    warnings: ['w'],
  };
  const doc = buildStatusDocument(input);
  assert.deepEqual(doc.microservices.map((m) => `${m.namespace}/${m.name}`), ['a/c', 'z/a', 'z/b']);
  assert.deepEqual(doc.summary, { microservices: { total: 3, ready: 2 }, providers: { total: 1, ready: 0 } });
  assert.equal(doc.apiVersion, 'converge.dev/v1alpha1');
  assert.equal(doc.kind, 'Status');
  assert.equal(doc.namespace, null);
  assert.deepEqual(doc.warnings, ['w']);
  assert.equal(JSON.stringify(buildStatusDocument(input)), JSON.stringify(doc), 'same input, same document');
  // The shape: every documented key is present (null rather than absent).
  assert.deepEqual(Object.keys(doc.microservices[1]!).sort(), [
    'converged', 'createdAt', 'deleting', 'generation', 'image', 'managedResources', 'message', 'name', 'namespace',
    'observedGeneration', 'phase', 'port', 'progressing', 'ready', 'reason', 'replicas', 'stalled', 'uid',
  ]);
  assert.deepEqual(Object.keys(doc.providers[0]!).sort(), [
    'converged', 'createdAt', 'deleting', 'displayName', 'endpoint', 'finalizer', 'generation', 'limitedBy', 'name', 'namespace', 'observedGeneration', 'providerID', 'ready', 'recommendation', 'region', 'uid', 'usage',
  ]);
});

test('text: a namespace column only for all namespaces, "none" lines, warnings, colours only with a colour style', () => {
  const doc = buildStatusDocument({ namespace: null, microservices: [ms('todo-api', { status: readyStatus })], providers: [], warnings: ['the DigitalHumanProvider CRD is not installed'] });
  const text = renderStatusText(doc, { now });
  const lines = text.split('\n');
  assert.equal(lines[0], 'Microservices (1/1 ready)');
  assert.match(lines[1]!, /^NAMESPACE\s+NAME\s+IMAGE\s+PORT\s+PHASE\s+REPLICAS\s+ENDPOINTS\s+READY\s+REASON\s+AGE$/);
  assert.match(lines[2]!, /^default\s+todo-api\s+ghcr.io\/yrw9281\/it30-todo-api:0.1.0\s+8080\s+ResourcesApplied\s+2\/2\s+2\s+True\s+Available\s+10m$/);
  assert.match(text, /DigitalHumanProviders: none in any namespace/);
  assert.match(text, /warning: the DigitalHumanProvider CRD is not installed/);
  assert.ok(!text.includes('\u001b['));
  const coloured = renderStatusText(doc, { now, style: createStyle(true) });
  assert.ok(coloured.includes('\u001b['));
  assert.equal(stripAnsi(coloured), text);
  const single = renderStatusText(buildStatusDocument({ namespace: 'default', microservices: [ms('todo-api', { status: readyStatus })], providers: [] }), { now });
  assert.match(single.split('\n')[1]!, /^NAME\s+IMAGE/);
  assert.match(single, /DigitalHumanProviders: none in namespace default/);
});

test('provider table shows region, provider ID, Ready and reason; deleting objects say so', () => {
  const doc = buildStatusDocument({
    namespace: 'default',
    microservices: [ms('old', { status: readyStatus, deleting: true })],
    providers: [dhp('studio', { status: { observedGeneration: 1, providerID: 'inst-42', conditions: [cond('Ready', 'False', 'ProviderUnhealthy', 1, 'vendor reports down')] } })],
  });
  const text = renderStatusText(doc, { now, wide: true });
  assert.match(text, /studio\s+ap-northeast-1\s+inst-42\s+False\s+ProviderUnhealthy\s+-\s+-\s+10m\s+https:\/\/127.0.0.1:8443\s+1\/1\s+vendor reports down/);
  assert.match(text, /old\s+.*Deleting\/Available/);
});

test('provider table and lines show quota left and what limits the provider', () => {
  const usage = { callsToday: 10, dailyQuota: 10, quotaRemaining: 0, throttledRequests: 0, throttleWindowSeconds: 60, quotaResetAt: '2025-01-02T00:00:00Z', observedAt: '2025-01-01T12:00:00Z' };
  const doc = buildStatusDocument({
    namespace: 'default',
    microservices: [],
    providers: [dhp('studio', { status: { observedGeneration: 1, providerID: 'inst-42', usage, limitedBy: 'QuotaExhausted', conditions: [cond('Ready', 'False', 'QuotaExhausted', 1, '0 of 10 calls left today')] } })],
  });
  assert.deepEqual([doc.providers[0]!.usage?.quotaRemaining, doc.providers[0]!.limitedBy], [0, 'QuotaExhausted']);
  assert.match(renderStatusText(doc, { now }), /NAME\s+REGION\s+PROVIDER-ID\s+READY\s+REASON\s+QUOTA-LEFT\s+LIMITED-BY\s+AGE\n.*studio\s+ap-northeast-1\s+inst-42\s+False\s+QuotaExhausted\s+0\/10\s+QuotaExhausted\s+10m/);
  assert.match(statusLines(doc).get('DigitalHumanProvider default/studio')!, /ready=False\/QuotaExhausted providerID=inst-42 region=ap-northeast-1 limitedBy=QuotaExhausted generation=1\/1/);
});

test('statusLines change exactly when the state changes', () => {
  const a = statusLines(buildStatusDocument({ namespace: 'default', microservices: [ms('todo-api', { status: readyStatus })], providers: [dhp('studio')] }));
  assert.equal(a.get('Microservice default/todo-api'), 'Microservice default/todo-api: phase=ResourcesApplied ready=True/Available replicas=2/2 endpoints=2 image=ghcr.io/yrw9281/it30-todo-api:0.1.0 generation=1/1');
  assert.equal(a.get('DigitalHumanProvider default/studio'), 'DigitalHumanProvider default/studio: ready=- providerID=- region=ap-northeast-1 generation=-/1');
  const b = statusLines(buildStatusDocument({ namespace: 'default', microservices: [ms('todo-api', { status: readyStatus, generation: 2 })], providers: [dhp('studio')] }));
  assert.notEqual(a.get('Microservice default/todo-api'), b.get('Microservice default/todo-api'));
  assert.equal(a.get('DigitalHumanProvider default/studio'), b.get('DigitalHumanProvider default/studio'));
});

test('statusLines: one line per object, also when a vendor ID or a reason holds line breaks', () => {
  // Found by views.property.test.ts: status.providerID (the vendor's words) or status.limitedBy
  // holding "\n" split an object's line in two, and the second could pass for another object's.
  const p = dhp('studio', { status: { observedGeneration: 1, providerID: 'inst-1\nDigitalHumanProvider default/other: ready=True', limitedBy: 'Rate\nLimited', conditions: [cond('Ready', 'True', 'ProviderReady', 1)] } });
  const lines = statusLines(buildStatusDocument({ namespace: 'default', microservices: [], providers: [p] }));
  assert.deepEqual([...lines.values()], ['DigitalHumanProvider default/studio: ready=True/ProviderReady providerID=inst-1 DigitalHumanProvider default/other: ready=True region=ap-northeast-1 limitedBy=Rate Limited generation=1/1']);
});
