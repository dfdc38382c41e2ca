/**
 * Smoke tests: Deployments become Available on simulated nodes, Services get ready EndpointSlice
 * endpoints, deletion garbage-collects ReplicaSets and Pods, and images tagged `fail…` end a
 * rollout with ProgressDeadlineExceeded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testCluster, waitFor, withNamespace } from '../../support/cluster.ts';

function deployment(ns: string, name: string, image: string, replicas: number, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image, ports: [{ containerPort: 8080 }] }] },
      },
      ...extra,
    },
  };
}

test('a 2-replica Deployment becomes available, its Service gets ready endpoints, deletion collects its children', async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, 'cp-workloads');
  const created = await cluster.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, deployment(ns, 'web', 'example.com/web:1.0', 2));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const svc = await cluster.request('POST', `/api/v1/namespaces/${ns}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: ns },
    spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  assert.equal(svc.status, 201, JSON.stringify(svc.body));

  const status = await waitFor('availableReplicas 2', async () => {
    const d = await cluster.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`);
    return d.body.status?.availableReplicas === 2 && d.body.status;
  });
  assert.equal(status.readyReplicas, 2);

  const pods = (await cluster.request('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).body.items;
  assert.equal(pods.length, 2);
  for (const pod of pods) {
    assert.equal(pod.status.phase, 'Running');
    assert.ok(cluster.nodeNames.includes(pod.spec.nodeName), `bound to a simulated node: ${pod.spec.nodeName}`);
    assert.match(pod.status.podIP, /^10\.244\.\d+\.\d+$/);
  }
  assert.notEqual(pods[0].status.podIP, pods[1].status.podIP, 'pod IPs are unique');

  const endpoints = await waitFor('2 ready endpoints', async () => {
    const slices = await cluster.request('GET',
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb`);
    const eps = slices.body.items.flatMap((s: { endpoints?: unknown[] }) => s.endpoints ?? []) as {
      addresses: string[];
      conditions: { ready?: boolean };
    }[];
    const ready = eps.filter((e) => e.conditions.ready === true);
    return ready.length === 2 && ready;
  });
  assert.deepEqual(
    endpoints.map((e) => e.addresses[0]).sort(),
    pods.map((p: { status: { podIP: string } }) => p.status.podIP).sort(),
  );

  const del = await cluster.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/web`);
  assert.equal(del.status, 200);
  await waitFor('ReplicaSets and Pods garbage-collected', async () => {
    const rs = await cluster.request('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`);
    const ps = await cluster.request('GET', `/api/v1/namespaces/${ns}/pods`);
    return rs.body.items.length === 0 && ps.body.items.length === 0;
  });
});

test('a Deployment whose image tag starts with "fail" ends with ProgressDeadlineExceeded', async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, 'cp-fail');
  const created = await cluster.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`,
    deployment(ns, 'broken', 'example.com/app:fail', 1, { progressDeadlineSeconds: 5 }));
  assert.equal(created.status, 201, JSON.stringify(created.body));

  const pod = await waitFor('a bound pod with ErrImagePull', async () => {
    const ps = await cluster.request('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dbroken`);
    const p = ps.body.items[0];
    return p?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImagePull' && p;
  });
  assert.equal(pod.status.phase, 'Running');
  const ready = pod.status.conditions.find((c: { type: string }) => c.type === 'Ready');
  assert.equal(ready.status, 'False');

  const progressing = await waitFor('Progressing=False', async () => {
    const d = await cluster.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/broken`);
    const c = d.body.status?.conditions?.find((x: { type: string }) => x.type === 'Progressing');
    return c?.status === 'False' && c;
  }, { timeoutMs: 90_000 });
  assert.equal(progressing.reason, 'ProgressDeadlineExceeded');
});
