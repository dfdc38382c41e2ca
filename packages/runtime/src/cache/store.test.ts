import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../objects/index.ts';
import { StoreWriter, CONTROLLER_UID_INDEX, compareResourceVersions } from './store.ts';

const obj = (name: string, rv: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv, ...extra },
});

test('apply adds, updates and deletes, reporting each change once', () => {
  const s = new StoreWriter();
  assert.equal(s.apply('ADDED', obj('a', '1'))?.type, 'add');
  assert.equal(s.apply('MODIFIED', obj('a', '1')), undefined, 'same version: nothing new');
  assert.equal(s.apply('MODIFIED', obj('a', '2'))?.type, 'update');
  assert.equal(s.apply('MODIFIED', obj('a', '1')), undefined, 'older version never replaces newer');
  assert.equal(s.get('ns/a')?.metadata.resourceVersion, '2');
  assert.equal(s.apply('DELETED', obj('a', '3'))?.type, 'delete');
  assert.equal(s.get('ns/a'), undefined);
});

test("read-your-own-writes: a written object is visible at once and its watch echo is dropped", () => {
  const s = new StoreWriter();
  s.apply('ADDED', obj('a', '5'));
  const change = s.noteWrite(obj('a', '7', { labels: { x: 'y' } }));
  assert.equal(change?.type, 'update');
  assert.equal(s.get('ns/a')?.metadata.labels?.x, 'y');
  assert.equal(s.apply('MODIFIED', obj('a', '6')), undefined, 'a stale event in flight is ignored');
  assert.equal(s.apply('MODIFIED', obj('a', '7', { labels: { x: 'y' } })), undefined, 'the echo of our write is ignored');
  assert.equal(s.apply('MODIFIED', obj('a', '8'))?.type, 'update');
});

test('noteDelete removes at once and ignores stale events for the deleted UID', () => {
  const s = new StoreWriter();
  s.apply('ADDED', obj('a', '5'));
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' })?.type, 'delete');
  assert.equal(s.apply('MODIFIED', obj('a', '6')), undefined, 'stale modify of the deleted object');
  assert.equal(s.apply('DELETED', obj('a', '7')), undefined, 'already gone');
  assert.equal(s.apply('ADDED', obj('a', '9', { uid: 'new' }))?.type, 'add', 'a new object of that name is seen');
});

test('replace reports only differences, keeps newer own writes and scopes to a namespace', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '1'), obj('b', '2'), { metadata: { name: 'c', namespace: 'other', resourceVersion: '3' } }], '3');
  s.noteWrite(obj('d', '20'));
  const changes = s.replace([obj('a', '1'), obj('b', '4')], '10', 'ns');
  assert.deepEqual(changes.map((c) => `${c.type}:${c.object.metadata.name}`), ['update:b']);
  assert.ok(s.get('ns/d'), 'written after the list was taken: kept');
  assert.ok(s.get('other/c'), 'other namespace untouched');
  const changes2 = s.replace([obj('a', '1')], '30', 'ns');
  assert.deepEqual(changes2.map((c) => `${c.type}:${c.object.metadata.name}`).sort(), ['delete:b', 'delete:d']);
});

test('indexes follow updates; managedFields are dropped by default', () => {
  const s = new StoreWriter();
  const ref = (uid: string) => [{ apiVersion: 'v1', kind: 'X', name: 'o', uid, controller: true }];
  s.apply('ADDED', obj('a', '1', { ownerReferences: ref('o1'), managedFields: [{}] }));
  assert.equal(s.byIndex(CONTROLLER_UID_INDEX, 'o1').length, 1);
  assert.equal(s.get('ns/a')?.metadata.managedFields, undefined);
  s.apply('MODIFIED', obj('a', '2', { ownerReferences: ref('o2') }));
  assert.equal(s.byIndex(CONTROLLER_UID_INDEX, 'o1').length, 0);
  assert.equal(s.byIndex(CONTROLLER_UID_INDEX, 'o2').length, 1);
  assert.equal(s.list('ns').length, 1);
  assert.equal(s.list('none').length, 0);
  const ro = s.readOnly();
  assert.equal(ro.size, 1);
  assert.equal((ro as unknown as { apply?: unknown }).apply, undefined, 'the read-only view cannot write');
});

test('compareResourceVersions orders integers and refuses the rest', () => {
  assert.equal(compareResourceVersions('9', '10'), -1);
  assert.equal(compareResourceVersions('10', '10'), 0);
  assert.ok(Number.isNaN(compareResourceVersions('abc', '10')));
});

test('indexes can be added later and cover what is already stored', () => {
  const s = new StoreWriter();
  s.apply('ADDED', obj('a', '1', { labels: { team: 'x' } }));
  const byTeam = (o: KubeObject) => [o.metadata.labels?.team ?? ''];
  s.addIndex('team', byTeam);
  s.addIndex('team', byTeam);
  assert.equal(s.byIndex('team', 'x').length, 1);
  assert.throws(() => s.addIndex('team', () => []), /already exists/);
  s.apply('ADDED', obj('b', '2', { labels: { team: 'x' } }));
  assert.equal(s.byIndex('team', 'x').length, 2);
});
