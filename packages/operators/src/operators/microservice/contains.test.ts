import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { containsDesired, describeDifferences, differencesForLog, findDifferences } from './contains.ts';
import { renderDesiredState } from './desired-state.ts';
import { SERVICE_RULES } from './owned-fields.ts';
import type { Microservice } from './api/index.ts';

const todoApi: Microservice = {
  apiVersion: 'platform.example.io/v1',
  kind: 'Microservice',
  metadata: { name: 'todo-api', namespace: 'todo', uid: '5f0c6c1e-8a51-4b9e-9d0b-2f6f7d1c2a10', generation: 1 },
  spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } },
};

/** The Deployment as the API server returns it after the operator's write (v1.36 defaults). */
const liveDeployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'todo-api',
    namespace: 'todo',
    uid: '0b5e0a4c-4d6e-4a0e-b1c2-6b1f5f2a9e31',
    resourceVersion: '1842',
    generation: 1,
    creationTimestamp: '2025-11-30T22:50:01Z',
    labels: {
      app: 'todo-api',
      'app.kubernetes.io/instance': 'todo-api',
      'app.kubernetes.io/managed-by': 'converge',
      'app.kubernetes.io/name': 'todo-api',
      'team.example.io/owner': 'someone-added-this',
    },
    annotations: { 'deployment.kubernetes.io/revision': '1', 'platform.example.io/generation': '1' },
    ownerReferences: [
      {
        apiVersion: 'platform.example.io/v1',
        kind: 'Microservice',
        name: 'todo-api',
        uid: '5f0c6c1e-8a51-4b9e-9d0b-2f6f7d1c2a10',
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
    managedFields: [{ manager: 'converge-microservice', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1' }],
  },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'todo-api' } },
    template: {
      metadata: {
        creationTimestamp: null,
        labels: {
          app: 'todo-api',
          'app.kubernetes.io/instance': 'todo-api',
          'app.kubernetes.io/managed-by': 'converge',
          'app.kubernetes.io/name': 'todo-api',
        },
      },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0',
            ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
            env: [
              { name: 'ASPNETCORE_URLS', value: 'http://+:8080' },
              { name: 'OTEL_SERVICE_NAME', value: 'todo-api' },
              { name: 'OTEL_SERVICE_VERSION', value: 'ghcr.io/yrw9281/it30-todo-api:0.1.0' },
              { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability.svc.cluster.local:4317' },
            ],
            resources: { requests: { cpu: '25m', memory: '128Mi' } },
            readinessProbe: {
              httpGet: { path: '/health/ready', port: 8080, scheme: 'HTTP' },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
            livenessProbe: {
              httpGet: { path: '/health/live', port: 8080, scheme: 'HTTP' },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'IfNotPresent',
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        securityContext: {},
        schedulerName: 'default-scheduler',
      },
    },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
  },
  status: {
    observedGeneration: 1,
    replicas: 2,
    updatedReplicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
  },
};

/** The Service as the API server returns it (allocated clusterIP, IP families, affinity). */
const liveService = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'todo-api',
    namespace: 'todo',
    uid: 'c7d1b7a2-3f7e-4c55-9a3e-1e9b2f0d4c88',
    resourceVersion: '1843',
    creationTimestamp: '2025-11-30T22:50:01Z',
    labels: {
      app: 'todo-api',
      'app.kubernetes.io/instance': 'todo-api',
      'app.kubernetes.io/managed-by': 'converge',
      'app.kubernetes.io/name': 'todo-api',
    },
    annotations: { 'platform.example.io/generation': '1' },
    ownerReferences: liveDeployment.metadata.ownerReferences,
  },
  spec: {
    type: 'ClusterIP',
    selector: { app: 'todo-api' },
    ports: [{ name: 'http', protocol: 'TCP', port: 8080, targetPort: 'http' }],
    clusterIP: '10.0.0.117',
    clusterIPs: ['10.0.0.117'],
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
  },
  status: { loadBalancer: {} },
};

const desired = renderDesiredState(todoApi);

test('a server-defaulted Deployment and Service contain the desired state', () => {
  assert.ok(containsDesired(liveDeployment, desired.deployment), describeDifferences(liveDeployment, desired.deployment).join('\n'));
  assert.ok(containsDesired(liveService, desired.service), describeDifferences(liveService, desired.service).join('\n'));
  assert.deepEqual(findDifferences(liveDeployment, desired.deployment), []);
});

test('an image edited by hand is a difference, at the right path', () => {
  const edited = structuredClone(liveDeployment);
  edited.spec.template.spec.containers[0]!.image = 'nginx:1.27';
  assert.equal(containsDesired(edited, desired.deployment), false);
  assert.deepEqual(describeDifferences(edited, desired.deployment), [
    'spec.template.spec.containers[0].image: want "ghcr.io/yrw9281/it30-todo-api:0.1.0", have "nginx:1.27"',
  ]);
});

test('an extra env var or container is a difference (lists compare by length)', () => {
  const edited = structuredClone(liveDeployment);
  edited.spec.template.spec.containers[0]!.env.push({ name: 'DEBUG', value: '1' });
  assert.equal(containsDesired(edited, desired.deployment), false);
  const [line] = describeDifferences(edited, desired.deployment);
  assert.match(line ?? '', /^spec\.template\.spec\.containers\[0\]\.env: want 4 items .*, have 5 items /);
});

test('a numeric string is not a number (int-or-string ports)', () => {
  const edited = structuredClone(liveService) as unknown as { spec: { ports: Array<Record<string, unknown>> } };
  edited.spec.ports[0]!.targetPort = '8080';
  assert.equal(containsDesired(edited, desired.service), false);
  assert.deepEqual(findDifferences(edited, desired.service), [{ path: 'spec.ports[0].targetPort', expected: 'http', actual: '8080' }]);
});

test('a numeric targetPort equal to the container port (a Service written before targetPorts were named) is the same port; another number is not', () => {
  const legacy = structuredClone(liveService) as unknown as { spec: { ports: Array<Record<string, unknown>> } };
  legacy.spec.ports[0]!.targetPort = 8080;
  assert.ok(containsDesired(legacy, desired.service), describeDifferences(legacy, desired.service).join('\n'));
  legacy.spec.ports[0]!.targetPort = 9090;
  assert.deepEqual(findDifferences(legacy, desired.service), [{ path: 'spec.ports[0].targetPort', expected: 'http', actual: 9090 }]);
});

// ---- what the operator owns outright: an added key is a difference (owned-fields.ts) ----

type Edit = (o: any) => void;
const container = (d: any) => d.spec.template.spec.containers[0];
/** Hand edits that only add something inside what the operator renders, and the difference each one is. */
const additions: Array<[string, 'deployment' | 'service', Edit, string]> = [
  ['a Service selector key (the Service selects no pod)', 'service', (s) => { s.spec.selector.tier = 'x'; }, 'spec.selector.tier: want absent, have "x"'],
  ['a Service port\'s appProtocol', 'service', (s) => { s.spec.ports[0].appProtocol = 'h2c'; }, 'spec.ports[0].appProtocol: want absent, have "h2c"'],
  ['a readiness probe host', 'deployment', (d) => { container(d).readinessProbe.httpGet.host = 'elsewhere.example.com'; }, 'spec.template.spec.containers[0].readinessProbe.httpGet.host: want absent, have "elsewhere.example.com"'],
  ['a probe header', 'deployment', (d) => { container(d).livenessProbe.httpGet.httpHeaders = [{ name: 'X', value: 'y' }]; }, 'spec.template.spec.containers[0].livenessProbe.httpGet.httpHeaders: want absent, have [{"name":"X","value":"y"}]'],
  ['a probe timeout other than the default', 'deployment', (d) => { container(d).readinessProbe.timeoutSeconds = 30; }, 'spec.template.spec.containers[0].readinessProbe.timeoutSeconds: want 1, have 30'],
  ['a probe threshold other than the default', 'deployment', (d) => { container(d).livenessProbe.failureThreshold = 100; }, 'spec.template.spec.containers[0].livenessProbe.failureThreshold: want 3, have 100'],
  ['a probe initial delay', 'deployment', (d) => { container(d).readinessProbe.initialDelaySeconds = 60; }, 'spec.template.spec.containers[0].readinessProbe.initialDelaySeconds: want absent, have 60'],
  ['a hostPort', 'deployment', (d) => { container(d).ports[0].hostPort = 80; }, 'spec.template.spec.containers[0].ports[0].hostPort: want absent, have 80'],
  ['a command', 'deployment', (d) => { container(d).command = ['sleep', 'infinity']; }, 'spec.template.spec.containers[0].command: want absent, have ["sleep","infinity"]'],
  ['args', 'deployment', (d) => { container(d).args = ['--debug']; }, 'spec.template.spec.containers[0].args: want absent, have ["--debug"]'],
  ['a selector key', 'deployment', (d) => { d.spec.selector.matchLabels.tier = 'x'; }, 'spec.selector.matchLabels.tier: want absent, have "x"'],
  ['another termination message path', 'deployment', (d) => { container(d).terminationMessagePath = '/tmp/x'; }, 'spec.template.spec.containers[0].terminationMessagePath: want "/dev/termination-log", have "/tmp/x"'],
];

for (const [what, kind, edit, difference] of additions) {
  test(`an added key is a difference where the operator owns the whole map: ${what}`, () => {
    const live = structuredClone(kind === 'deployment' ? liveDeployment : liveService);
    edit(live);
    const want = kind === 'deployment' ? desired.deployment : desired.service;
    assert.equal(containsDesired(live, want), false);
    assert.deepEqual(describeDifferences(live, want), [difference]);
  });
}

test('what the API server fills in, and what the operator does not own, are not differences', () => {
  const d = structuredClone(liveDeployment) as any;
  container(d).imagePullPolicy = 'Always'; // its default depends on the image; policies set it
  container(d).resources = { requests: { cpu: '25m', memory: '128Mi' } };
  d.spec.template.metadata.annotations = { 'kubectl.kubernetes.io/restartedAt': 'now' };
  d.spec.template.metadata.labels.role = 'canary'; // a pod label an admission policy adds
  container(d).securityContext = { runAsNonRoot: true }; // hardening an admission policy adds
  // What admission policies commonly add to a Deployment's containers (Kyverno autogen): each,
  // were it a difference, would be written back and mutated again on every resync, for ever.
  container(d).volumeMounts = [{ name: 'ca-certs', mountPath: '/etc/ssl/certs' }];
  container(d).lifecycle = { preStop: { sleep: { seconds: 5 } } };
  container(d).startupProbe = { tcpSocket: { port: 8080 } };
  d.spec.template.spec.nodeSelector = { zone: 'a' };
  d.spec.paused = false;
  d.metadata.labels.extra = 'yes';
  assert.deepEqual(describeDifferences(d, desired.deployment), []);
  const s = structuredClone(liveService) as any;
  s.spec.sessionAffinity = 'ClientIP';
  assert.deepEqual(describeDifferences(s, desired.service), []);
  // A limit or another request added to the rendered resources (a default-resources policy).
  container(d).resources = { requests: { cpu: '25m', memory: '128Mi', 'ephemeral-storage': '1Gi' }, limits: { memory: '1Gi' } };
  assert.deepEqual(describeDifferences(d, desired.deployment), []);
  // Empty is no addition: `resources: {}` (the API server's own), an empty command.
  container(d).resources = { requests: { cpu: '25m', memory: '128Mi' }, limits: {} };
  container(d).command = [];
  assert.ok(containsDesired(d, desired.deployment));
});

test('the owned fields follow the desired object\'s kind; a caller passes them where that object lacks it', () => {
  const live = structuredClone(liveService) as any;
  live.spec.selector.tier = 'x';
  const { apiVersion: _a, kind: _k, ...anonymous } = desired.service;
  assert.ok(containsDesired(live, anonymous), 'no kind: no owned fields');
  assert.equal(containsDesired(live, anonymous, SERVICE_RULES), false);
});

test('a label removed, changed or a stale generation stamp is a difference; an extra label is not', () => {
  const removed = structuredClone(liveService) as unknown as { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
  delete removed.metadata.labels['app.kubernetes.io/managed-by'];
  assert.deepEqual(describeDifferences(removed, desired.service), ['metadata.labels["app.kubernetes.io/managed-by"]: want "converge", have absent']);
  const stale = structuredClone(liveDeployment) as unknown as { metadata: { annotations: Record<string, string> } };
  stale.metadata.annotations['platform.example.io/generation'] = '0';
  assert.equal(containsDesired(stale, desired.deployment), false);
  const extra = structuredClone(liveService) as unknown as { metadata: { labels: Record<string, string> } };
  extra.metadata.labels.extra = 'yes';
  assert.ok(containsDesired(extra, desired.service));
});

test('another controller is a difference in ownerReferences', () => {
  const other = structuredClone(liveService);
  other.metadata.ownerReferences = [{ ...other.metadata.ownerReferences[0]!, uid: 'another-uid' }];
  assert.equal(containsDesired(other, desired.service), false);
});

test('edge cases: empty maps and lists match absent fields; null matches absent; undefined asks nothing', () => {
  assert.ok(containsDesired({}, { a: {}, b: [], c: null, d: undefined }));
  assert.ok(containsDesired({ a: {}, b: [], c: null }, { a: {}, b: [], c: null }));
  assert.equal(containsDesired({ c: 1 }, { c: null }), false);
  assert.equal(containsDesired({ a: 'x' }, { a: {} }), false);
  assert.equal(containsDesired({ a: [1] }, { a: [] }), false);
  assert.equal(containsDesired({ a: {} }, { a: [] }), false);
  assert.equal(containsDesired([], {}), false);
  assert.equal(containsDesired(undefined, { a: 1 }), false);
  assert.equal(containsDesired(0, false), false);
  assert.equal(containsDesired('', null), false);
  assert.deepEqual(describeDifferences(undefined, 3), ['<root>: want 3, have absent']);
});

// ---- properties ----

const json = fc.jsonValue({ maxDepth: 4 });

/** x with extra fields added everywhere an object allows them (what API-server defaulting does). */
function merge(x: unknown, extra: unknown): unknown {
  if (isObject(x) && isObject(extra)) {
    // Own properties only, so that keys such as `__proto__` (valid in JSON) stay plain data.
    return Object.fromEntries([
      ...Object.entries(extra),
      ...Object.entries(x).map(([k, v]) => [k, merge(v, Object.hasOwn(extra, k) ? extra[k] : undefined)]),
    ]);
  }
  if (Array.isArray(x) && Array.isArray(extra) && x.length === extra.length) return x.map((v, i) => merge(v, extra[i]));
  return x;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

test('property: every value contains itself', () => {
  fc.assert(fc.property(json, (x) => containsDesired(x, x) && findDifferences(x, x).length === 0));
});

test('property: adding fields to current never breaks containment', () => {
  fc.assert(fc.property(json, json, (x, extra) => containsDesired(merge(x, extra), x)));
  // The counterexample fast-check once found: a `__proto__` key (valid JSON) in the live object.
  assert.ok(containsDesired(merge({ ['__proto__']: [false] }, {}), JSON.parse('{"__proto__":[false]}')));
});

test('property: containsDesired agrees with findDifferences', () => {
  fc.assert(
    fc.property(json, json, (a, b) => {
      const contained = containsDesired(a, b);
      return contained === (findDifferences(a, b).length === 0) && contained === (describeDifferences(a, b).length === 0);
    }),
  );
});

/** Every path to a scalar leaf in x. */
function leaves(x: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(x)) return x.flatMap((v, i) => leaves(v, [...path, i]));
  if (isObject(x)) return Object.entries(x).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [path];
}

function changeLeaf(x: unknown, path: Array<string | number>): unknown {
  if (path.length === 0) {
    if (typeof x === 'string') return `${x}!`;
    if (typeof x === 'number') return String(x); // same digits, other type
    if (typeof x === 'boolean') return !x;
    return 'was-null';
  }
  const [head, ...rest] = path;
  const copy = structuredClone(x) as Record<string | number, unknown>;
  copy[head!] = changeLeaf(copy[head!], rest);
  return copy;
}

test('property: changing any desired leaf in current is detected at that path', () => {
  fc.assert(
    fc.property(
      json.filter((x) => leaves(x).length > 0),
      fc.nat(),
      (x, pick) => {
        const paths = leaves(x);
        const path = paths[pick % paths.length]!;
        const changed = changeLeaf(x, path);
        const diffs = findDifferences(changed, x);
        return !containsDesired(changed, x) && diffs.length === 1;
      },
    ),
  );
});

test('differencesForLog: bounded, and never an env value', () => {
  const current = { spec: { containers: [{ image: 'a:1', env: [{ name: 'DB_PASSWORD', value: 'hunter2' }] }] } };
  const desired = { spec: { containers: [{ image: 'a:2', env: [{ name: 'DB_PASSWORD', value: 's3cret-new' }, { name: 'X', value: 'y' }] }] } };
  const { differences, more } = differencesForLog(current, desired);
  assert.deepEqual(differences, [
    'spec.containers[0].image: want "a:2", have "a:1"',
    'spec.containers[0].env: want 2 items [{"name":"DB_PASSWORD","value":"(value hidden)"},{"name":"X","value":"(value hidden)"}], have 1 item [{"name":"DB_PASSWORD","value":"(value hidden)"}]',
  ], 'names shown, values hidden');
  assert.equal(more, 0);
  assert.ok(!JSON.stringify(differences).includes('hunter2') && !JSON.stringify(differences).includes('s3cret'));
  const one = differencesForLog({ spec: { containers: [{ env: [{ name: 'A', value: 'old-secret' }] }] } }, { spec: { containers: [{ env: [{ name: 'A', value: 'new-secret' }] }] } });
  assert.deepEqual(one.differences, ['spec.containers[0].env[0].value: differs (value hidden)']);
  const whole = differencesForLog({ spec: { containers: [] } }, desired);
  assert.ok(!JSON.stringify(whole).includes('s3cret'), `a whole container shows no env value: ${JSON.stringify(whole)}`);
  const many = differencesForLog({}, Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, 'x'.repeat(500)])));
  assert.equal(many.differences.length, 10);
  assert.equal(many.more, 5);
  assert.ok(many.differences.every((d) => d.length <= 200));
});
