import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../objects/index.ts';
import { generationChanged, labelsChanged, annotationsChanged, resourceVersionChanged, hasLabels, or, and, not } from './index.ts';

const obj = (meta: KubeObject['metadata']): KubeObject => ({ metadata: { name: 'a', namespace: 'n', ...meta } });

test('generationChanged passes adds, deletes and generation bumps only', () => {
  const a = obj({ generation: 1, resourceVersion: '1' });
  assert.equal(generationChanged({ type: 'add', object: a }), true);
  assert.equal(generationChanged({ type: 'delete', object: a }), true);
  assert.equal(generationChanged({ type: 'update', object: obj({ generation: 1, resourceVersion: '2' }), oldObject: a }), false);
  assert.equal(generationChanged({ type: 'update', object: obj({ generation: 2, resourceVersion: '2' }), oldObject: a }), true);
  assert.equal(
    generationChanged({ type: 'update', object: obj({ generation: 1, deletionTimestamp: 'x' }), oldObject: a }),
    true,
    'deletion start passes even when the generation did not move',
  );
});

test('generationChanged on a kind the API server gives no generation (ConfigMap, Secret, Service) passes every new version: it cannot tell spec edits from others', () => {
  const before = obj({ resourceVersion: '1' });
  assert.equal(generationChanged({ type: 'update', object: obj({ resourceVersion: '2' }), oldObject: before }), true, 'a data change of a ConfigMap');
  assert.equal(generationChanged({ type: 'update', object: before, oldObject: before }), false, 'a resync of the same version');
});

test('labels, annotations and resourceVersion predicates', () => {
  const a = obj({ labels: { x: '1' }, annotations: { y: '1' }, resourceVersion: '1' });
  const sameButRv = obj({ labels: { x: '1' }, annotations: { y: '1' }, resourceVersion: '2' });
  assert.equal(labelsChanged({ type: 'update', object: sameButRv, oldObject: a }), false);
  assert.equal(labelsChanged({ type: 'update', object: obj({ labels: { x: '2' } }), oldObject: a }), true);
  assert.equal(labelsChanged({ type: 'update', object: obj({ labels: { x: '1', z: '1' } }), oldObject: a }), true);
  assert.equal(annotationsChanged({ type: 'update', object: sameButRv, oldObject: a }), false);
  assert.equal(annotationsChanged({ type: 'update', object: obj({ annotations: {} }), oldObject: a }), true);
  assert.equal(resourceVersionChanged({ type: 'update', object: sameButRv, oldObject: a }), true);
  assert.equal(resourceVersionChanged({ type: 'update', object: a, oldObject: a }), false);
});

test('combinators', () => {
  const a = obj({ labels: { team: 'x' }, generation: 1 });
  const b = obj({ labels: { team: 'x' }, generation: 1, annotations: { k: 'v' } });
  const change = { type: 'update' as const, object: b, oldObject: a };
  assert.equal(hasLabels({ team: 'x' })(change), true);
  assert.equal(hasLabels({ team: 'y' })(change), false);
  assert.equal(or(generationChanged, annotationsChanged)(change), true);
  assert.equal(and(generationChanged, annotationsChanged)(change), false);
  assert.equal(not(generationChanged)(change), true);
});
