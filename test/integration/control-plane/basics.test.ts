/** Smoke tests: the local control plane answers, serves the APIs we build on, and has Ready nodes. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { testCluster } from '../../support/cluster.ts';

const exec = promisify(execFile);

test('/readyz answers ok, through the API and through kubectl', async () => {
  const cluster = await testCluster();
  const res = await cluster.request('GET', '/readyz');
  assert.equal(res.status, 200);
  assert.equal(res.body, 'ok');
  const { stdout } = await exec('kubectl', ['--kubeconfig', cluster.kubeconfigPath, 'get', '--raw', '/readyz']);
  assert.equal(stdout.trim(), 'ok');
});

test('the server reports the Kubernetes version it was built from', async () => {
  const cluster = await testCluster();
  const res = await cluster.request('GET', '/version');
  assert.equal(res.status, 200);
  assert.match(res.body.gitVersion, /^v1\.\d+\.\d+$/);
  assert.equal(res.body.major, '1');
});

test('kubectl api-resources lists deployments, endpointslices and leases', async () => {
  const cluster = await testCluster();
  const { stdout } = await exec('kubectl', ['--kubeconfig', cluster.kubeconfigPath, 'api-resources', '-o', 'wide', '--no-headers']);
  const rows = stdout.split('\n').map((l) => l.trim().split(/\s+/));
  const has = (name: string, groupVersion: string) => rows.some((r) => r[0] === name && r.includes(groupVersion));
  assert.ok(has('deployments', 'apps/v1'), 'apps/v1 deployments');
  assert.ok(has('endpointslices', 'discovery.k8s.io/v1'), 'discovery.k8s.io/v1 endpointslices');
  assert.ok(has('leases', 'coordination.k8s.io/v1'), 'coordination.k8s.io/v1 leases');
  assert.ok(has('customresourcedefinitions', 'apiextensions.k8s.io/v1'), 'CRDs');
});

test('the simulated nodes are Ready and untainted', async () => {
  const cluster = await testCluster();
  for (const name of cluster.nodeNames) {
    const res = await cluster.request('GET', `/api/v1/nodes/${name}`);
    assert.equal(res.status, 200, `node ${name}`);
    const ready = res.body.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    assert.equal(ready.status, 'True');
    assert.deepEqual(res.body.spec.taints ?? [], []);
  }
});

test('RBAC is enforced: an unprivileged service account is forbidden', async () => {
  const cluster = await testCluster();
  const res = await cluster.request('GET', '/api/v1/namespaces/kube-system/secrets', undefined, {
    headers: { 'Impersonate-User': 'system:serviceaccount:default:default' },
  });
  assert.equal(res.status, 403);
});
