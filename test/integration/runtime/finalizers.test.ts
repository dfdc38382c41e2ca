/**
 * The finalizer helpers against a real API server: adding and removing carry the
 * resourceVersion that was read (a concurrent change is a Conflict, never a lost finalizer), and
 * `removeFinalizer` resolves with `undefined` once the object is gone — because this removal
 * released it, or because it was already gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMapKind, addFinalizer, hasFinalizer, isConflict, isNotFound, removeFinalizer, withFinalizer } from '@converge/runtime';
import type { ConfigMap } from '@converge/runtime';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

const MINE = 'converge.test/mine';
const THEIRS = 'converge.test/theirs';

test('removeFinalizer: undefined once the object is gone (released by this removal, or gone before it); the object otherwise', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'finalizers');
  const key = { namespace: ns, name: 'guarded' };
  const created = await client.create(ConfigMapKind, { metadata: { ...key, finalizers: [MINE, THEIRS] } });

  // Still held by another finalizer: the object, without ours.
  await client.delete(ConfigMapKind, key);
  const terminating = await client.get(ConfigMapKind, key);
  const held = await removeFinalizer(client, ConfigMapKind, terminating, MINE);
  assert.ok(held, 'another finalizer still holds it');
  assert.deepEqual(held.metadata.finalizers, [THEIRS]);

  // The last finalizer of a terminating object: the object is gone, and the answer says so.
  const released = await removeFinalizer(client, ConfigMapKind, { ...held, metadata: { ...held.metadata, finalizers: [THEIRS] } }, THEIRS);
  assert.equal(released, undefined, 'this removal released the object');
  await assert.rejects(client.get(ConfigMapKind, key), (e: unknown) => isNotFound(e));

  // Gone before the removal (someone else released it): not an error.
  assert.equal(await removeFinalizer(client, ConfigMapKind, created, MINE), undefined);
});

test('addFinalizer and removeFinalizer refuse to overwrite a list changed since it was read (Conflict)', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'finalizers');
  const key = { namespace: ns, name: 'raced' };
  const read = await client.create(ConfigMapKind, { metadata: { ...key } });
  await client.patch(ConfigMapKind, key, { type: 'merge', body: { metadata: { finalizers: [THEIRS] } } });
  await assert.rejects(addFinalizer(client, ConfigMapKind, read, MINE), (e: unknown) => isConflict(e), 'a stale add would drop their finalizer');
  const fresh = await addFinalizer(client, ConfigMapKind, await client.get(ConfigMapKind, key), MINE);
  assert.deepEqual(fresh.metadata.finalizers, [THEIRS, MINE]);
  await client.patch(ConfigMapKind, key, { type: 'merge', body: { metadata: { labels: { touched: 'yes' } } } });
  await assert.rejects(removeFinalizer(client, ConfigMapKind, fresh, MINE), (e: unknown) => isConflict(e));
  const cleaned = await removeFinalizer(client, ConfigMapKind, await client.get(ConfigMapKind, key), MINE);
  assert.ok(cleaned && !hasFinalizer(cleaned, MINE) && hasFinalizer(cleaned, THEIRS));
  await client.patch(ConfigMapKind, key, { type: 'merge', body: { metadata: { finalizers: null } } });
});

test('withFinalizer: the finalizer is in place before apply; cleanup runs once deleted, then the object is released', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'finalizers');
  const key = { namespace: ns, name: 'flow' };
  await client.create(ConfigMapKind, { metadata: { ...key } });
  const seen: string[] = [];
  const handlers = {
    apply: async (cm: ConfigMap) => { seen.push(`apply ${hasFinalizer(cm, MINE)}`); return 'applied'; },
    cleanup: async () => { seen.push('cleanup'); },
  };
  assert.equal(await withFinalizer(client, ConfigMapKind, await client.get(ConfigMapKind, key), MINE, handlers), 'applied');
  await client.delete(ConfigMapKind, key);
  assert.equal(await withFinalizer(client, ConfigMapKind, await client.get(ConfigMapKind, key), MINE, handlers), undefined);
  assert.deepEqual(seen, ['apply true', 'cleanup']);
  await assert.rejects(client.get(ConfigMapKind, key), (e: unknown) => isNotFound(e));
});
