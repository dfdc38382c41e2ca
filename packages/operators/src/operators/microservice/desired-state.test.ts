import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { renderDesiredState, InvalidSpecError, selectorLabels } from './desired-state.ts';
import { parsePlatformDefaults, isLabelKey, isLabelValue } from './platform-defaults.ts';
import { containsDesired } from './contains.ts';
import { isValidImageReference, type Microservice } from './api/index.ts';

function microservice(name: string, image: string, port: number, generation = 1): Microservice {
  return {
    apiVersion: 'platform.example.io/v1',
    kind: 'Microservice',
    metadata: { name, namespace: 'todo', uid: `uid-${name}`, generation, resourceVersion: '7' },
    spec: { container: { image, port } },
  };
}

const todoApi = microservice('todo-api', 'ghcr.io/yrw9281/it30-todo-api:0.1.0', 8080, 3);

test('todo-api renders the Deployment and Service of the seed, field by field', () => {
  const { deployment, service } = renderDesiredState(todoApi);
  const labels = {
    app: 'todo-api',
    'app.kubernetes.io/name': 'todo-api',
    'app.kubernetes.io/instance': 'todo-api',
    'app.kubernetes.io/managed-by': 'converge',
  };
  const metadata = {
    name: 'todo-api',
    namespace: 'todo',
    labels,
    annotations: { 'platform.example.io/generation': '3' },
    ownerReferences: [
      { apiVersion: 'platform.example.io/v1', kind: 'Microservice', name: 'todo-api', uid: 'uid-todo-api', controller: true, blockOwnerDeletion: true },
    ],
  };
  assert.deepEqual(deployment, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: 2,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: 'todo-api' } },
      template: {
        metadata: { labels },
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
              readinessProbe: { httpGet: { path: '/health/ready', port: 8080 } },
              livenessProbe: { httpGet: { path: '/health/live', port: 8080 } },
              resources: { requests: { cpu: '25m', memory: '128Mi' } },
            },
          ],
        },
      },
    },
  });
  assert.deepEqual(service, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: (({ annotations: _stamp, ...rest }) => rest)(metadata),
    spec: {
      type: 'ClusterIP',
      selector: { app: 'todo-api' },
      ports: [{ name: 'http', protocol: 'TCP', port: 8080, targetPort: 'http' }],
    },
  });
});

test('the Service reaches the pods by the container port\'s name, so it follows the port the pods declare', () => {
  const { deployment, service } = renderDesiredState(microservice('todo-api', 'a:1', 9090));
  const containerPort = deployment.spec!.template.spec!.containers[0]!.ports![0]!;
  assert.equal(service.spec?.ports?.[0]?.targetPort, containerPort.name, 'a numeric targetPort switches before the pods do (a refused Deployment write, every rollout)');
  assert.equal(service.spec?.ports?.[0]?.port, 9090);
});

test('the generation stamp is on the objects, never on the pod template', () => {
  const a = renderDesiredState(microservice('svc', 'nginx', 80, 1));
  const b = renderDesiredState(microservice('svc', 'nginx', 80, 2));
  assert.deepEqual(a.deployment.spec?.template, b.deployment.spec?.template);
  assert.notDeepEqual(a.deployment.metadata, b.deployment.metadata);
  assert.equal(a.deployment.spec?.template.metadata?.annotations, undefined);
});

test('platform defaults from configuration flow into the objects', () => {
  const defaults = parsePlatformDefaults({
    replicas: 3,
    otlpEndpoint: 'http://collector:4318',
    containerName: 'web',
    resources: { requests: { cpu: '0.1' }, limits: { memory: '512Mi' } },
    probes: { readinessPath: '/ready', livenessPath: '/live' },
    labels: { 'team.example.io/name': 'payments' },
  });
  const { deployment, service } = renderDesiredState(todoApi, defaults);
  const container = deployment.spec?.template.spec?.containers[0];
  assert.equal(deployment.spec?.replicas, 3);
  assert.equal(container?.name, 'web');
  assert.deepEqual(container?.resources, { requests: { cpu: '100m' }, limits: { memory: '512Mi' } });
  assert.equal(container?.readinessProbe?.httpGet?.path, '/ready');
  assert.equal(container?.livenessProbe?.httpGet?.path, '/live');
  assert.deepEqual(container?.env?.at(-1), { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://collector:4318' });
  assert.equal(service.metadata.labels?.['team.example.io/name'], 'payments');
  assert.equal(deployment.spec?.template.metadata?.labels?.['team.example.io/name'], 'payments');
  // Extra labels never reach the selectors.
  assert.deepEqual(deployment.spec?.selector.matchLabels, { app: 'todo-api' });
  assert.deepEqual(service.spec?.selector, { app: 'todo-api' });
});

test('no resources block when the platform sets no requests or limits', () => {
  const defaults = parsePlatformDefaults({ resources: { requests: {}, limits: {} } });
  const container = renderDesiredState(todoApi, defaults).deployment.spec?.template.spec?.containers[0];
  assert.equal(container?.resources, undefined);
});

test('specs the API server should have rejected throw InvalidSpecError with every problem', () => {
  const cases: Array<[Microservice, RegExp]> = [
    [microservice('a', 'nginx', 0), /spec\.container\.port/],
    [microservice('a', 'nginx', 70000), /spec\.container\.port/],
    [microservice('a', 'nginx', 80.5), /spec\.container\.port/],
    [microservice('a', '', 80), /spec\.container\.image/],
    [microservice('a', 'Not An Image', 80), /spec\.container\.image: must be a valid image reference/],
    [microservice('1-api', 'nginx', 80), /metadata\.name/],
    [microservice('a'.repeat(64), 'nginx', 80), /metadata\.name/],
    [{ ...microservice('a', 'nginx', 80), spec: {} as Microservice['spec'] }, /spec\.container/],
    [{ ...microservice('a', 'nginx', 80), spec: { container: { image: 'nginx', port: 80, env: [{ name: 'OTEL_SERVICE_NAME', value: 'x' }] } } }, /env\[0\]\.name: OTEL_SERVICE_NAME is set by the platform/],
    [{ ...microservice('a', 'nginx', 80), spec: { container: { image: 'nginx', port: 80, env: [{ name: 'A', value: '1', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] } } }, /exactly one of value and valueFrom/],
    [{ ...microservice('a', 'nginx', 80), spec: { container: { image: 'nginx', port: 80 }, replicas: -1 } }, /spec\.replicas/],
  ];
  for (const [ms, message] of cases) {
    assert.throws(() => renderDesiredState(ms), (e: unknown) => e instanceof InvalidSpecError && message.test(e.message), JSON.stringify(ms.spec));
  }
});

test('v1 fields: replicas override the platform default; env follows the platform\'s own, Secret keys as references, empty values omitted', () => {
  const ms = { ...microservice('a', 'nginx:1', 80), spec: { container: { image: 'nginx:1', port: 80, env: [{ name: 'LOG', value: 'debug' }, { name: 'EMPTY', value: '' }, { name: 'DB', valueFrom: { secretKeyRef: { name: 'db', key: 'url' } } }] }, replicas: 3 } };
  const { deployment } = renderDesiredState(ms);
  assert.equal(deployment.spec?.replicas, 3);
  const env = deployment.spec!.template.spec!.containers[0]!.env!;
  assert.deepEqual(env.map((e) => e.name), ['ASPNETCORE_URLS', 'OTEL_SERVICE_NAME', 'OTEL_SERVICE_VERSION', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'LOG', 'EMPTY', 'DB']);
  assert.deepEqual(env.slice(4), [{ name: 'LOG', value: 'debug' }, { name: 'EMPTY' }, { name: 'DB', valueFrom: { secretKeyRef: { name: 'db', key: 'url' } } }]);
  assert.equal(renderDesiredState(microservice('a', 'nginx:1', 80)).deployment.spec?.replicas, 2, 'the platform default without spec.replicas');
});

test('a CR not read from the API server is a programming error, not InvalidSpec', () => {
  const ms = microservice('a', 'nginx', 80);
  delete ms.metadata.uid;
  assert.throws(() => renderDesiredState(ms), (e: unknown) => !(e instanceof InvalidSpecError) && /metadata/.test((e as Error).message));
});

// ---- properties ----

const dns1035 = fc
  .tuple(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), fc.stringMatching(/^[-a-z0-9]{0,40}[a-z0-9]$/))
  .map(([first, rest]) => `${first}${rest}`.slice(0, 63))
  .filter((s) => /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(s));
const component = fc.stringMatching(/^[a-z0-9]{1,8}([._-][a-z0-9]{1,8}){0,2}$/);
const image = fc
  .tuple(
    fc.option(fc.constantFrom('ghcr.io', 'registry.example.com:5000', 'localhost:5000', 'docker.io'), { nil: undefined }),
    fc.array(component, { minLength: 1, maxLength: 3 }),
    fc.option(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}$/), { nil: undefined }),
    fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: undefined }),
  )
  .map(([registry, path, tag, digest]) => `${registry ? `${registry}/` : ''}${path.join('/')}${tag ? `:${tag}` : ''}${digest ? `@sha256:${digest}` : ''}`);
const port = fc.integer({ min: 1, max: 65535 });
const generation = fc.integer({ min: 1, max: 2 ** 40 });

test('property: the image generator only makes valid references', () => {
  fc.assert(fc.property(image, (ref) => isValidImageReference(ref)));
});

test('property: rendering is deterministic', () => {
  fc.assert(
    fc.property(dns1035, image, port, generation, (name, img, p, g) => {
      const a = renderDesiredState(microservice(name, img, p, g));
      const b = renderDesiredState(microservice(name, img, p, g));
      assert.deepEqual(a, b);
      assert.equal(JSON.stringify(a), JSON.stringify(b));
    }),
  );
});

test('property: the port moves containerPort, probes, env and the Service port together, and nothing else', () => {
  fc.assert(
    fc.property(dns1035, image, port, port, (name, img, p1, p2) => {
      const a = renderDesiredState(microservice(name, img, p1));
      const b = renderDesiredState(microservice(name, img, p2));
      for (const [state, p] of [[a, p1], [b, p2]] as const) {
        const c = state.deployment.spec!.template.spec!.containers[0]!;
        assert.equal(c.ports?.[0]?.containerPort, p);
        assert.equal(c.readinessProbe?.httpGet?.port, p);
        assert.equal(c.livenessProbe?.httpGet?.port, p);
        assert.equal(c.env?.find((e) => e.name === 'ASPNETCORE_URLS')?.value, `http://+:${p}`);
        assert.equal(state.service.spec?.ports?.[0]?.port, p);
        assert.equal(state.service.spec?.ports?.[0]?.targetPort, 'http', 'by name: the pods say which port');
      }
      // Moving exactly those fields of the first rendering to the second port gives the second rendering.
      const moved = structuredClone(a);
      const c = moved.deployment.spec!.template.spec!.containers[0]!;
      c.ports![0]!.containerPort = p2;
      c.readinessProbe!.httpGet!.port = p2;
      c.livenessProbe!.httpGet!.port = p2;
      c.env!.find((e) => e.name === 'ASPNETCORE_URLS')!.value = `http://+:${p2}`;
      moved.service.spec!.ports![0]!.port = p2;
      assert.deepEqual(moved, b);
    }),
  );
});

test('property: rendered names, labels and env names are always valid', () => {
  fc.assert(
    fc.property(dns1035, image, port, generation, (name, img, p, g) => {
      const { deployment, service } = renderDesiredState(microservice(name, img, p, g));
      for (const obj of [deployment, service]) {
        assert.match(obj.metadata.name!, /^[a-z]([-a-z0-9]*[a-z0-9])?$/);
        assert.ok(obj.metadata.name!.length <= 63);
        for (const [k, v] of Object.entries(obj.metadata.labels ?? {})) assert.ok(isLabelKey(k) && isLabelValue(v), `${k}=${v}`);
        for (const [k] of Object.entries(obj.metadata.annotations ?? {})) assert.ok(isLabelKey(k), k);
      }
      const pod = deployment.spec!.template;
      for (const [k, v] of Object.entries(pod.metadata?.labels ?? {})) assert.ok(isLabelKey(k) && isLabelValue(v), `${k}=${v}`);
      // The selector selects the pods, and the Service selects the same pods.
      for (const [k, v] of Object.entries(selectorLabels(name))) {
        assert.equal(pod.metadata?.labels?.[k], v);
        assert.equal(deployment.spec!.selector.matchLabels?.[k], v);
        assert.equal(service.spec!.selector?.[k], v);
      }
      for (const e of pod.spec!.containers[0]!.env ?? []) assert.match(e.name, /^[A-Za-z_][A-Za-z0-9_]*$/);
      assert.match(pod.spec!.containers[0]!.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    }),
  );
});

test('property: what the API server returns after a write (defaults added) contains the rendering', () => {
  const serverDefaulted = (desired: ReturnType<typeof renderDesiredState>) => {
    const d = structuredClone(desired.deployment) as any;
    d.metadata = { ...d.metadata, uid: 'x', resourceVersion: '9', generation: 1, creationTimestamp: '2025-01-01T00:00:00Z' };
    d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
    d.spec.progressDeadlineSeconds = 600;
    d.spec.template.metadata.creationTimestamp = null;
    const c = d.spec.template.spec.containers[0];
    Object.assign(c, { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' });
    for (const probe of [c.readinessProbe, c.livenessProbe]) Object.assign(probe, { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 }, { httpGet: { ...probe.httpGet, scheme: 'HTTP' } });
    Object.assign(d.spec.template.spec, { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', securityContext: {}, schedulerName: 'default-scheduler' });
    const s = structuredClone(desired.service) as any;
    Object.assign(s.spec, { clusterIP: '10.0.0.9', clusterIPs: ['10.0.0.9'], sessionAffinity: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster' });
    s.status = { loadBalancer: {} };
    return { d, s };
  };
  fc.assert(
    fc.property(dns1035, image, port, generation, (name, img, p, g) => {
      const desired = renderDesiredState(microservice(name, img, p, g));
      const { d, s } = serverDefaulted(desired);
      return containsDesired(d, desired.deployment) && containsDesired(s, desired.service);
    }),
  );
});
