/** Smoke test: the shared control plane's audit log lets tests count writes per resource and client. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditLogSize, readAuditLog } from '@converge/envtest';
import { testCluster, waitFor, withNamespace } from '../../support/cluster.ts';

test('writes are counted per verb, resource and User-Agent', async (t) => {
  const cluster = await testCluster();
  const log = cluster.auditLogPath;
  assert.ok(log, 'the harness starts the control plane with an audit log');
  const ns = await withNamespace(t, 'cp-audit');
  const offset = await auditLogSize(log);
  const ua = { 'user-agent': `converge-audit-test/${ns}` };
  for (let i = 0; i < 3; i++) {
    const r = await cluster.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `cm-${i}` } }, { headers: ua });
    assert.equal(r.status, 201);
  }
  const patch = await cluster.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/cm-0`, { data: { a: 'b' } }, {
    headers: ua, contentType: 'application/merge-patch+json',
  });
  assert.equal(patch.status, 200);
  await cluster.request('GET', `/api/v1/namespaces/${ns}/configmaps`, undefined, { headers: ua });

  const mine = await readAuditLog(log, { fromOffset: offset, userAgent: ua['user-agent'] });
  const writes = mine.filter((e) => ['create', 'update', 'patch', 'delete'].includes(e.verb));
  assert.equal(writes.filter((e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps').length, 3);
  assert.equal(writes.filter((e) => e.verb === 'patch').length, 1);
  assert.equal(mine.filter((e) => e.verb === 'list').length, 1);
  assert.equal((await readAuditLog(log, { fromOffset: offset, userAgent: ua['user-agent'], writesOnly: true })).length, 4);
  assert.ok(mine.every((e) => e.user.username === 'admin' && e.objectRef?.namespace === ns));
});

test('the simulator and controllers are identifiable by User-Agent', async (t) => {
  const cluster = await testCluster();
  const log = cluster.auditLogPath as string;
  const ns = await withNamespace(t, 'cp-audit-ua');
  const offset = await auditLogSize(log);
  const created = await cluster.request('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: 'solo' },
    spec: { containers: [{ name: 'main', image: 'example.com/solo:1' }] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await waitFor('pod Ready', async () => {
    const p = await cluster.request('GET', `/api/v1/namespaces/${ns}/pods/solo`);
    return p.body.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
  });
  const sim = await readAuditLog(log, { fromOffset: offset, userAgent: 'converge-simulator', namespace: ns, writesOnly: true });
  assert.deepEqual(sim.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource}`).sort(),
    ['create pods/binding', 'update pods/status']);
});
