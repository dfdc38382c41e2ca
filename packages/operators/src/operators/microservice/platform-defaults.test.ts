import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPlatformDefaults, parsePlatformDefaults, loadPlatformDefaults, PlatformDefaultsError } from './platform-defaults.ts';

test('the defaults match the existing Todo API', () => {
  assert.equal(defaultPlatformDefaults.replicas, 2);
  assert.deepEqual(defaultPlatformDefaults.resources.requests, { cpu: '25m', memory: '128Mi' });
  assert.deepEqual(defaultPlatformDefaults.probes, { readinessPath: '/health/ready', livenessPath: '/health/live' });
  assert.ok(Object.isFrozen(defaultPlatformDefaults));
});

test('a missing section gives the defaults; given fields override, the rest is kept', () => {
  assert.equal(parsePlatformDefaults(undefined), defaultPlatformDefaults);
  const d = parsePlatformDefaults({ replicas: 3, resources: { requests: { cpu: '0.1' }, limits: { memory: '1024Mi' } }, labels: { team: 'payments' } });
  assert.equal(d.replicas, 3);
  assert.equal(d.otlpEndpoint, defaultPlatformDefaults.otlpEndpoint);
  assert.deepEqual(d.resources, { requests: { cpu: '100m' }, limits: { memory: '1Gi' } });
  assert.deepEqual(d.labels, { team: 'payments' });
  assert.deepEqual(d.probes, defaultPlatformDefaults.probes);
});

test('every problem is reported, with its path', () => {
  assert.throws(
    () => parsePlatformDefaults({ replicas: -1, otlpEndpoint: 'collector:4317', probes: { readinesPath: '/x' } }),
    (e: unknown) =>
      e instanceof PlatformDefaultsError &&
      e.problems.some((p) => p.startsWith('replicas:')) &&
      e.problems.some((p) => p.startsWith('otlpEndpoint:')) &&
      e.problems.some((p) => p.startsWith('probes')),
  );
  assert.throws(
    () => parsePlatformDefaults({ resources: { requests: { cpu: '1e3', gpu: '1' } }, labels: { app: 'x', 'bad key!': 'v', ok: 'x'.repeat(64) } }),
    (e: unknown) =>
      e instanceof PlatformDefaultsError &&
      e.problems.length === 5 &&
      e.problems.some((p) => p.includes('"gpu"')) &&
      e.problems.some((p) => p.includes('app is set by the operator')),
  );
});

test('loadPlatformDefaults reads microservice.defaults of a YAML or JSON file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'converge-defaults-'));
  try {
    const yamlFile = join(dir, 'config.yaml');
    await writeFile(yamlFile, 'provider:\n  anything: true\nmicroservice:\n  resyncPeriodSeconds: 5\n  defaults:\n    replicas: 4\n    otlpEndpoint: http://collector:4318\n');
    const fromYaml = await loadPlatformDefaults(yamlFile);
    assert.equal(fromYaml.replicas, 4);
    assert.equal(fromYaml.otlpEndpoint, 'http://collector:4318');

    const jsonFile = join(dir, 'config.json');
    await writeFile(jsonFile, JSON.stringify({ microservice: { defaults: { containerName: 'web' } } }));
    assert.equal((await loadPlatformDefaults(jsonFile)).containerName, 'web');

    const empty = join(dir, 'empty.yaml');
    await writeFile(empty, '');
    assert.equal(await loadPlatformDefaults(empty), defaultPlatformDefaults);

    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'microservice: [\n');
    const invalid = join(dir, 'invalid.yaml');
    await writeFile(invalid, 'microservice:\n  defaults:\n    replicas: -1\n');
    await assert.rejects(loadPlatformDefaults(invalid), /invalid platform defaults in .*invalid\.yaml:\n  - microservice\.defaults\.replicas: /);
    await assert.rejects(loadPlatformDefaults(broken), PlatformDefaultsError);
    const tagged = join(dir, 'tagged.yaml');
    await writeFile(tagged, 'microservice:\n  defaults:\n    containerName: !name web\n');
    await assert.rejects(loadPlatformDefaults(tagged), /invalid platform defaults in .*tagged\.yaml:\n  - line 3, column 20: unresolved tag !name/);
    await assert.rejects(loadPlatformDefaults(join(dir, 'missing.yaml')), /cannot read the file/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('progressDeadlineSeconds: Kubernetes\' 600 by default, a platform setting, rendered on every Deployment', async () => {
  assert.equal(defaultPlatformDefaults.progressDeadlineSeconds, 600);
  assert.equal(parsePlatformDefaults({ progressDeadlineSeconds: 60 }).progressDeadlineSeconds, 60);
  for (const bad of [0, 1.5, -3, '60']) {
    assert.throws(() => parsePlatformDefaults({ progressDeadlineSeconds: bad }), (e: unknown) => e instanceof PlatformDefaultsError && e.problems.some((p) => p.startsWith('progressDeadlineSeconds:')), String(bad));
  }
  const { renderDesiredState } = await import('./desired-state.ts');
  const ms = { metadata: { name: 'a', namespace: 'n', uid: 'u', generation: 1 }, spec: { container: { image: 'nginx:1', port: 80 } } };
  assert.equal(renderDesiredState(ms, parsePlatformDefaults({ progressDeadlineSeconds: 45 })).deployment.spec?.progressDeadlineSeconds, 45);
});

test('values next to a field the schema refuses are checked too, in one report', () => {
  assert.throws(
    () => parsePlatformDefaults({ replicas: 'two', resources: { requests: { cpu: 5, memory: 'lots' } }, labels: { tier: 1, 'bad key!': 'v' } }),
    (e: unknown) =>
      e instanceof PlatformDefaultsError &&
      e.problems.some((p) => p.startsWith('replicas: expected integer')) &&
      e.problems.some((p) => p.startsWith('resources.requests.cpu: expected string')) &&
      e.problems.some((p) => p.startsWith('resources.requests.memory: "lots"')) &&
      e.problems.some((p) => p.startsWith('labels.tier: expected string')) &&
      e.problems.some((p) => p === 'labels: "bad key!" is not a valid label key'),
  );
});

test('a limit below its request is refused at load, naming the request it is below (the API server would refuse every Deployment)', () => {
  assert.throws(
    () => parsePlatformDefaults({ resources: { limits: { memory: '25m', cpu: '1' } } }),
    (err: Error) => err instanceof PlatformDefaultsError
      && err.problems.length === 1
      && /resources\.limits\.memory: 25m is less than the request of 128Mi \(the default request; set resources\.requests\.memory too\)/.test(err.problems[0]!),
  );
  assert.throws(
    () => parsePlatformDefaults({ resources: { requests: { cpu: '2' }, limits: { cpu: '1999m' } } }),
    (err: Error) => err instanceof PlatformDefaultsError && /limits\.cpu: 1999m is less than the request of 2;/.test(err.problems[0]!),
    'a request the section gives',
  );
  const equal = parsePlatformDefaults({ resources: { requests: { cpu: '1.5', memory: '1Gi' }, limits: { cpu: '1500m', memory: '1024Mi' } } });
  assert.deepEqual(equal.resources, { requests: { cpu: '1500m', memory: '1Gi' }, limits: { cpu: '1500m', memory: '1Gi' } }, 'equal amounts in other spellings are fine');
  assert.deepEqual(parsePlatformDefaults({ resources: { requests: { cpu: '1' }, limits: { memory: '1Mi' } } }).resources.limits, { memory: '1Mi' }, 'a limit with no request beside it (the requests map was given without it) is fine');
});
