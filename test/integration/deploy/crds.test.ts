/**
 * The generated CRDs on a real API server: they install and become established (so every CEL rule
 * compiles within the cost budget), bad input is rejected with the readable messages the schemas
 * promise, defaults are applied, and `kubectl get` shows the printer columns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testCluster, withNamespace } from '../../support/cluster.ts';
import { run as crds } from '../../../packages/operators/src/cli/commands/crds.ts';
import { runKubectl, type CommandIO } from '../../../packages/operators/src/cli/shared/kubectl.ts';

function capture(): CommandIO & { out: string; err: string } {
  const io = { out: '', err: '', env: process.env, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

async function installed() {
  const cluster = await testCluster();
  const io = capture();
  assert.equal(await crds(['--apply', '--kubeconfig', cluster.kubeconfigPath], io), 0, io.err);
  return cluster;
}

const microservice = (ns: string, name: string, spec: unknown) => ({
  apiVersion: 'platform.example.io/v1alpha1',
  kind: 'Microservice',
  metadata: { name, namespace: ns },
  spec,
});

const provider = (ns: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'dhp.example.com/v1alpha1',
  kind: 'DigitalHumanProvider',
  metadata: { name, namespace: ns },
  spec: { endpoint: 'https://vendor.example', region: 'eu-west-1', credentialsSecretRef: { name: 'creds' }, ...spec },
});

test('converge crds --apply installs both CRDs and they become established', async () => {
  const cluster = await installed();
  for (const name of ['microservices.platform.example.io', 'digitalhumanproviders.dhp.example.com']) {
    const res = await cluster.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    assert.equal(res.status, 200);
    const established = res.body.status.conditions.find((c: { type: string }) => c.type === 'Established');
    assert.equal(established?.status, 'True', name);
  }
});

test('Microservice: invalid input is rejected with readable messages', async (t) => {
  const cluster = await installed();
  const ns = await withNamespace(t, 'crd-ms');
  const path = `/apis/platform.example.io/v1alpha1/namespaces/${ns}/microservices`;
  const cases: Array<[string, unknown, RegExp]> = [
    ['port-zero', { image: 'nginx:1', port: 0 }, /spec\.port: Invalid value: 0: spec\.port in body should be greater than or equal to 1/],
    ['port-big', { image: 'nginx:1', port: 70000 }, /spec\.port: Invalid value: 70000: spec\.port in body should be less than or equal to 65535/],
    ['empty-image', { image: '', port: 8080 }, /spec\.image: Invalid value: "": spec\.image in body should be at least 1 chars long/],
    ['bad-image', { image: 'Not An Image!', port: 8080 }, /spec\.image: Invalid value: "Not An Image!": image must be a valid image reference such as ghcr\.io\/org\/app:1\.0\.0/],
    ['no-image', { port: 8080 }, /spec\.image: Required value/],
    ['1-starts-with-digit', { image: 'nginx:1', port: 8080 }, /metadata\.name: Invalid value: "1-starts-with-digit": must be a DNS-1035 label/],
    ['dotted.name', { image: 'nginx:1', port: 8080 }, /metadata\.name: Invalid value: "dotted\.name": must be a DNS-1035 label/],
    [`a${'b'.repeat(63)}`, { image: 'nginx:1', port: 8080 }, /metadata\.name: Too long/],
  ];
  for (const [name, spec, message] of cases) {
    const res = await cluster.request('POST', path, microservice(ns, name, spec));
    assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
    assert.match(res.body.message, message, name);
    t.diagnostic(`${name}: ${res.body.message}`);
  }
  const ok = await cluster.request('POST', path, microservice(ns, 'todo-api', { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 }));
  assert.equal(ok.status, 201, JSON.stringify(ok.body));

  // Status goes through its subresource and is validated too.
  const badStatus = await cluster.request('PATCH', `${path}/todo-api/status`, { status: { phase: 'Done' } }, { contentType: 'application/merge-patch+json' });
  assert.equal(badStatus.status, 422);
  assert.match(badStatus.body.message, /status\.phase: Unsupported value: "Done"/);
  const goodStatus = await cluster.request(
    'PATCH',
    `${path}/todo-api/status`,
    { status: { phase: 'ResourcesApplied', conditions: [{ type: 'Ready', status: 'True', reason: 'Available', message: 'ok', lastTransitionTime: '2025-01-01T00:00:00Z', observedGeneration: 1 }] } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(goodStatus.status, 200, JSON.stringify(goodStatus.body));

  const table = await runKubectl(['--kubeconfig', cluster.kubeconfigPath, 'get', 'ms', '-n', ns]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^NAME\s+IMAGE\s+PORT\s+PHASE\s+READY\s+AGE\n/);
  assert.match(table.stdout, /todo-api\s+ghcr\.io\/yrw9281\/it30-todo-api:0\.1\.0\s+8080\s+ResourcesApplied\s+True\s+/);
  const wide = await runKubectl(['--kubeconfig', cluster.kubeconfigPath, 'get', 'converge', '-n', ns, '-o', 'wide']);
  assert.equal(wide.code, 0, wide.stderr);
  assert.match(wide.stdout, /REASON\s+AVAILABLE\s+ENDPOINTS/);
});

test('DigitalHumanProvider: https endpoint, non-empty immutable region, credentials reference with a default key', async (t) => {
  const cluster = await installed();
  const ns = await withNamespace(t, 'crd-dhp');
  const path = `/apis/dhp.example.com/v1alpha1/namespaces/${ns}/digitalhumanproviders`;
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['http', { endpoint: 'http://vendor.example' }, /spec\.endpoint in body should match '\^https:\/\/'/],
    ['not-a-url', { endpoint: 'https://exa mple' }, /endpoint must be an absolute https:\/\/ URL/],
    ['empty-region', { region: '' }, /spec\.region in body should be at least 1 chars long/],
    ['no-credentials', { credentialsSecretRef: undefined }, /spec\.credentialsSecretRef: Required value/],
  ];
  for (const [name, spec, message] of cases) {
    const res = await cluster.request('POST', path, provider(ns, name, spec));
    assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
    assert.match(res.body.message, message, name);
    t.diagnostic(`${name}: ${res.body.message}`);
  }
  const created = await cluster.request('POST', path, provider(ns, 'studio', { displayName: 'Studio' }));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.spec.credentialsSecretRef.key, 'token', 'the key defaults to "token"');

  const moved = await cluster.request('PATCH', `${path}/studio`, { spec: { region: 'us-east-1' } }, { contentType: 'application/merge-patch+json' });
  assert.equal(moved.status, 422);
  assert.match(moved.body.message, /region is immutable; create a new DigitalHumanProvider/);
  t.diagnostic(`region change: ${moved.body.message}`);
  const renamed = await cluster.request('PATCH', `${path}/studio`, { spec: { displayName: 'Studio 2' } }, { contentType: 'application/merge-patch+json' });
  assert.equal(renamed.status, 200, 'mutable fields still change');

  const table = await runKubectl(['--kubeconfig', cluster.kubeconfigPath, 'get', 'dhp', '-n', ns]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^NAME\s+REGION\s+READY\s+QUOTA LEFT\s+LIMITED BY\s+AGE\n/);
});
