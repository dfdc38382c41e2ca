/**
 * Smoke test: compacting etcd makes resourceVersions from before the compaction expire (410 Gone)
 * for exact-version lists and continue tokens, once the API server has noticed (≤ ~15 s).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testCluster, waitFor, withNamespace } from '../../support/cluster.ts';

test('after compactEtcd(), old resourceVersions and continue tokens answer 410 Gone', { timeout: 120_000 }, async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, 'cp-compact');
  for (let i = 0; i < 3; i++) {
    assert.equal((await cluster.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `cm-${i}` } })).status, 201);
  }
  const page = await cluster.request('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`);
  const { continue: token, resourceVersion } = page.body.metadata;
  assert.ok(token);
  await cluster.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/cm-0`, { data: { v: '1' } }, {
    contentType: 'application/merge-patch+json',
  });

  const revision = await cluster.compactEtcd();
  assert.ok(revision > Number(resourceVersion));

  const expired = await waitFor('410 for the old resourceVersion', async () => {
    const r = await cluster.request('GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${resourceVersion}&resourceVersionMatch=Exact`);
    return r.status === 410 && r;
  }, { timeoutMs: 60_000, intervalMs: 500 });
  assert.equal(expired.body.reason, 'Expired');
  const cont = await cluster.request('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1&continue=${encodeURIComponent(token)}`);
  assert.equal(cont.status, 410);
  assert.equal(cont.body.reason, 'Expired');
});
