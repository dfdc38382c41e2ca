/**
 * Smoke test (serial: it stops the shared API server): the API server can be stopped and started
 * again on the same address; data survives in etcd, and watches from a resourceVersion older than
 * the restart are answered with 410 Gone by the fresh watch cache.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testCluster, waitFor, withNamespace } from '../../support/cluster.ts';

test('stopApiServer/startApiServer: outage, same address, data kept, old watches expire', { timeout: 180_000 }, async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, 'cp-restart');
  const created = await cluster.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'kept' } });
  assert.equal(created.status, 201);
  const oldRv = created.body.metadata.resourceVersion;
  // A later write, so that oldRv is strictly older than anything the restarted cache starts from.
  await cluster.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/kept`, { data: { v: '2' } }, {
    contentType: 'application/merge-patch+json',
  });

  await cluster.stopApiServer();
  await assert.rejects(cluster.request('GET', '/readyz', undefined, { timeoutMs: 2000 }), /ECONNREFUSED|socket hang up|ECONNRESET/);
  await cluster.startApiServer();
  assert.equal((await cluster.request('GET', '/readyz')).body, 'ok');

  const kept = await cluster.request('GET', `/api/v1/namespaces/${ns}/configmaps/kept`);
  assert.equal(kept.status, 200);
  const watch = await cluster.request('GET', `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${oldRv}&timeoutSeconds=2`);
  // One event line parses as JSON; several stay text.
  const first = typeof watch.body === 'string' ? JSON.parse(watch.body.split('\n')[0] as string) : watch.body;
  assert.equal(first?.type, 'ERROR', `watch answered ${watch.status}: ${JSON.stringify(watch.body)}`);
  assert.equal(first.object.code, 410);

  // The controllers and the simulator reconnect on their own.
  const pod = await cluster.request('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: 'after-restart' },
    spec: { containers: [{ name: 'main', image: 'example.com/a:1' }] },
  });
  assert.equal(pod.status, 201, JSON.stringify(pod.body));
  await waitFor('pod Ready after the restart', async () => {
    const p = await cluster.request('GET', `/api/v1/namespaces/${ns}/pods/after-restart`);
    return p.body.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
  }, { timeoutMs: 90_000 });
});
