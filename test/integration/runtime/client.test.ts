/**
 * The client against a real API server: CRUD, pagination and selectors, every patch type,
 * Server-Side Apply with field ownership and `force`, the status subresource, optimistic
 * concurrency, delete preconditions, and the error taxonomy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, ConfigMapKind, DeploymentKind, isConflict, isNotFound } from '@converge/runtime';
import type { ConfigMap, Deployment } from '@converge/runtime';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

test('CRUD, pagination, selectors and optimistic concurrency', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'client');
  for (let i = 0; i < 7; i++) {
    await client.create(ConfigMapKind, { metadata: { name: `cm-${i}`, namespace: ns, labels: { parity: i % 2 ? 'odd' : 'even' } }, data: { i: String(i) } });
  }
  const all = await client.listAll(ConfigMapKind, { namespace: ns, labelSelector: 'parity', pageSize: 2 });
  assert.equal(all.items.length, 7);
  assert.ok(all.resourceVersion);
  const page = await client.list(ConfigMapKind, { namespace: ns, labelSelector: 'parity', limit: 3 });
  assert.equal(page.items.length, 3);
  assert.ok(page.metadata.continue, 'a continue token for the next page');
  assert.equal((await client.list(ConfigMapKind, { namespace: ns, labelSelector: 'parity=odd' })).items.length, 3);
  assert.equal((await client.list(ConfigMapKind, { namespace: ns, fieldSelector: 'metadata.name=cm-4' })).items.length, 1);

  const cm = await client.get(ConfigMapKind, { namespace: ns, name: 'cm-0' });
  const updated = await client.replace(ConfigMapKind, { ...cm, data: { i: 'changed' } });
  await assert.rejects(client.replace(ConfigMapKind, { ...cm, data: { i: 'stale' } }), (e: unknown) => isConflict(e), 'a stale resourceVersion is a Conflict');
  await assert.rejects(client.create(ConfigMapKind, { metadata: { name: 'cm-0', namespace: ns } }), (e: unknown) => e instanceof ApiError && e.reason === 'AlreadyExists');
  await assert.rejects(
    client.delete(ConfigMapKind, { namespace: ns, name: 'cm-0' }, { preconditions: { resourceVersion: cm.metadata.resourceVersion! } }),
    (e: unknown) => isConflict(e),
    'a delete precondition on an old version fails',
  );
  // A dry run is judged by the server (here: refused on a stale precondition, admitted otherwise),
  // deletes nothing, and tells the client's observers nothing (a cache written through would drop
  // an object that is still there).
  const heard: string[] = [];
  const unobserve = client.observe({ onDelete: (_kind, key) => void heard.push(key.name) });
  await assert.rejects(client.delete(ConfigMapKind, { namespace: ns, name: 'cm-0' }, { dryRun: true, preconditions: { resourceVersion: cm.metadata.resourceVersion! } }), (e: unknown) => isConflict(e));
  assert.equal(await client.delete(ConfigMapKind, { namespace: ns, name: 'cm-0' }, { dryRun: true }), undefined);
  assert.equal((await client.get(ConfigMapKind, { namespace: ns, name: 'cm-0' })).metadata.uid, updated.metadata.uid, 'still there');
  assert.deepEqual(heard, []);
  unobserve();
  assert.equal(await client.delete(ConfigMapKind, { namespace: ns, name: 'cm-0' }, { preconditions: { uid: updated.metadata.uid! }, propagationPolicy: 'Background' }), undefined);
  await assert.rejects(client.get(ConfigMapKind, { namespace: ns, name: 'cm-0' }), (e: unknown) => isNotFound(e));
});

test('merge, JSON and strategic patches; Server-Side Apply with field managers; status', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'patch');
  await client.create(ConfigMapKind, { metadata: { name: 'p', namespace: ns }, data: { a: '1' } });
  const key = { namespace: ns, name: 'p' };
  await client.patch(ConfigMapKind, key, { type: 'merge', body: { data: { b: '2' } } });
  await client.patch(ConfigMapKind, key, { type: 'json', body: [{ op: 'test', path: '/data/a', value: '1' }, { op: 'replace', path: '/data/a', value: '10' }] });
  await client.patch(ConfigMapKind, key, { type: 'strategic', body: { metadata: { labels: { s: 'yes' } } } });
  const p = await client.get(ConfigMapKind, key);
  assert.deepEqual(p.data, { a: '10', b: '2' });
  assert.equal(p.metadata.labels?.s, 'yes');
  await assert.rejects(client.patch(ConfigMapKind, key, { type: 'json', body: [{ op: 'test', path: '/data/a', value: 'nope' }] }), ApiError);

  // SSA: two managers, a conflict, and force.
  const applied = (data: Record<string, string>): ConfigMap => ({ metadata: { name: 'ssa', namespace: ns }, data });
  await client.apply(ConfigMapKind, applied({ x: '1' }), { fieldManager: 'one' });
  await assert.rejects(client.apply(ConfigMapKind, applied({ x: '2' }), { fieldManager: 'two' }), (e: unknown) => isConflict(e), 'field owned by another manager');
  const forced = await client.apply(ConfigMapKind, applied({ x: '2' }), { fieldManager: 'two', force: true });
  assert.equal(forced.data?.x, '2');

  // Status subresource: spec and status are written separately.
  const dep: Deployment = {
    metadata: { name: 'd', namespace: ns },
    spec: { replicas: 0, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'example.com/x:1' }] } } },
  };
  await client.create(DeploymentKind, dep);
  const patched = await client.patch(DeploymentKind, { namespace: ns, name: 'd' }, { type: 'merge', body: { status: { observedGeneration: 42 }, spec: { replicas: 5 } } }, { subresource: 'status' });
  assert.equal(patched.status?.observedGeneration, 42);
  assert.equal(patched.spec?.replicas, 0, 'a status write never changes the spec');
  await assert.rejects(
    client.create(ConfigMapKind, { metadata: { name: 'Not_Valid', namespace: ns } }),
    (e: unknown) => e instanceof ApiError && e.reason === 'Invalid' && e.causes.some((c) => c.field === 'metadata.name'),
    'Invalid carries the field causes',
  );
});
