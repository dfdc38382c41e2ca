import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../objects/index.ts';
import { StoreWriter, CONTROLLER_UID_INDEX } from './store.ts';

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
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'uid-a' })?.type, 'delete');
  assert.equal(s.apply('MODIFIED', obj('a', '6')), undefined, 'stale modify of the deleted object');
  assert.equal(s.apply('DELETED', obj('a', '7')), undefined, 'already gone');
  assert.equal(s.apply('ADDED', obj('a', '9', { uid: 'new' }))?.type, 'add', 'a new object of that name is seen');
});

test('replace reports only differences, keeps newer own writes and scopes to a namespace', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '1'), obj('b', '2'), { metadata: { name: 'c', namespace: 'other', resourceVersion: '3' } }], '3');
  s.beginList('ns');
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
  assert.equal(s.readOnly().countByIndex('team', 'x'), 2, 'counted without copying them out (is a Secret still named by any provider?)');
  assert.equal(s.countByIndex('team', 'y'), 0);
});

// The cases below are the shortest counterexamples the model test (store.model.test.ts) found
// on the store as it was before issue 12; each failed there.

test('a late write note never resurrects an object the watch saw deleted (issue 12, item 2)', () => {
  const s = new StoreWriter();
  s.replace([], '1');
  s.apply('ADDED', obj('a', '2'));
  // Our write commits at 3, someone deletes at 4, and the watch delivers the delete first.
  s.apply('MODIFIED', obj('a', '3'));
  assert.equal(s.apply('DELETED', obj('a', '4'))?.type, 'delete');
  assert.equal(s.noteWrite(obj('a', '3')), undefined, 'the response of our write at 3 arrives after the watch passed 4');
  assert.equal(s.get('ns/a'), undefined, 'no ghost');
  // Also when the watch delivered neither our write nor the delete, but something later.
  s.noteWrite(obj('b', '5'));
  s.apply('ADDED', obj('c', '9'));
  assert.equal(s.noteWrite(obj('b', '6')), undefined, 'behind what the watch delivered (9)');
  assert.equal(s.get('ns/b')?.metadata.resourceVersion, '5');
  s.bookmark('20');
  assert.equal(s.noteWrite(obj('e', '15')), undefined, 'a bookmark moves the watch position too');
  assert.equal(s.noteWrite(obj('e', '21'))?.type, 'add', 'a write newer than the watch is seen at once');
});

test('a relist is authoritative, also with lower resourceVersions after an etcd restore (issue 12, item 3)', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '2')], '3');
  s.apply('MODIFIED', obj('a', '3'));
  // etcd restored to revision 2: the watch answers 504 Too large resource version; relist from "".
  s.beginList(undefined, { historyChanged: true });
  const changes = s.replace([obj('a', '2', { labels: { restored: 'yes' } }), obj('b', '2')], '2');
  assert.deepEqual(changes.map((c) => `${c.type}:${c.object.metadata.name}@${c.object.metadata.resourceVersion}`), ['update:a@2', 'add:b@2']);
  assert.equal(s.get('ns/a')?.metadata.labels?.restored, 'yes');
  assert.equal(s.watchedResourceVersion(), '2');
  assert.equal(s.apply('MODIFIED', obj('a', '3', { labels: { next: 'yes' } }))?.type, 'update', 'the new history goes on from the list');
  // A relist whose version is lower than the watch position is taken as a restore too.
  const again = s.replace([obj('a', '2')], '2');
  assert.deepEqual(again.map((c) => `${c.type}:${c.object.metadata.name}@${c.object.metadata.resourceVersion}`), ['update:a@2', 'delete:b@2']);
});

test('a list taken before our own delete does not bring the object back', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '2')], '2');
  s.beginList();
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'uid-a' })?.type, 'delete');
  assert.deepEqual(s.replace([obj('a', '2')], '2'), [], 'the list (taken before the delete) still shows it: it stays out');
  assert.equal(s.get('ns/a'), undefined);
  assert.equal(s.apply('MODIFIED', obj('a', '2')), undefined);
  s.apply('DELETED', obj('a', '3'));
  assert.equal(s.apply('ADDED', obj('a', '4', { uid: 'new' }))?.type, 'add', 'a new object of that name is seen');
});

test('our delete of an object the store has not seen yet keeps it out when the watch brings it', () => {
  const s = new StoreWriter();
  s.replace([], '1');
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'uid-a' }), undefined);
  assert.equal(s.apply('ADDED', obj('a', '2')), undefined, 'created at 2 and deleted by us: never shown');
  assert.equal(s.apply('DELETED', obj('a', '3')), undefined);
  // A delete note after the watch delivered the deletion leaves nothing behind.
  s.apply('ADDED', obj('b', '4'));
  s.apply('DELETED', obj('b', '5'));
  s.noteDelete({ namespace: 'ns', name: 'b' }, { uid: 'uid-b' });
  assert.equal(s.apply('ADDED', obj('b', '6', { uid: 'uid-b2' }))?.type, 'add');
});

test('a write note of an object that left the selection removes it, unless the watch is past it', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '2'), obj('b', '2')], '2');
  assert.equal(s.noteGone(obj('a', '3'))?.type, 'delete');
  assert.equal(s.get('ns/a'), undefined);
  s.apply('MODIFIED', obj('b', '5'));
  assert.equal(s.noteGone(obj('b', '4')), undefined, 'the watch (at 5) is past the write (4)');
  assert.ok(s.get('ns/b'));
});

test('a late write note of an older object of a name does not come back after our later write took that name out of the selection (store model, seed -1057931707)', () => {
  // Under a selector: our write of uid-1@2 (its answer late); someone deletes it at 3; a relist
  // begins; our write of uid-2@4 leaves the selection and is noted first; then uid-1@2's answer.
  const s = new StoreWriter({ selective: true });
  s.replace([], '1');
  s.beginList();
  assert.equal(s.noteGone(obj('a', '4', { uid: 'uid-2' })), undefined, 'nothing held to remove');
  assert.equal(s.noteWrite(obj('a', '2', { uid: 'uid-1' })), undefined, 'older than what our own write took out');
  assert.equal(s.get('ns/a'), undefined);
  // A newer version of the name is news again.
  assert.equal(s.noteWrite(obj('a', '6', { uid: 'uid-3' }))?.type, 'add');
});

test('per-namespace scopes keep their own watch position', () => {
  const s = new StoreWriter({ perNamespace: true });
  s.replace([], '10', 'ns');
  s.replace([], '3', 'other');
  assert.equal(s.noteWrite({ metadata: { name: 'x', namespace: 'other', uid: 'u', resourceVersion: '5' } })?.type, 'add', 'the other namespace is only at 3');
  assert.equal(s.noteWrite(obj('y', '5')), undefined, 'namespace ns is at 10');
});

test('the transform runs only for versions the store keeps: not for an echo of its own write, a stale event or a deletion', () => {
  const seen: string[] = [];
  const s = new StoreWriter({ transform: (o) => { seen.push(`${o.metadata.name}@${o.metadata.resourceVersion}`); return o; } });
  s.apply('ADDED', obj('a', '5'));
  s.noteWrite(obj('a', '7'));
  s.apply('MODIFIED', obj('a', '6')); // stale, in flight before the write
  s.apply('MODIFIED', obj('a', '7')); // the echo of the write
  s.noteWrite(obj('a', '7')); // the same answer noted twice
  s.apply('MODIFIED', obj('a', '8'));
  s.apply('DELETED', obj('a', '9'));
  s.replace([obj('b', '10')], '10');
  assert.deepEqual(seen, ['a@5', 'a@7', 'a@8', 'b@10']);
  assert.equal(s.get('ns/b')?.metadata.resourceVersion, '10');
});

test('after our own write and delete of a name, an older object of that name the watch is still replaying is not shown (store model, seed -837657529)', () => {
  const s = new StoreWriter();
  s.beginList();
  // The server: uid-1 created at 2 and deleted at 3 (by someone else); then ours, uid-2, created at 4 and deleted at 5.
  assert.equal(s.noteWrite(obj('a', '4', { uid: 'uid-2' }))?.type, 'add');
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'uid-2' })?.type, 'delete');
  assert.deepEqual(s.replace([], '1'), [], 'the list was taken at 1');
  // The watch replays from 1: uid-1 is older than what this store has already reported of ns/a.
  assert.equal(s.apply('ADDED', obj('a', '2', { uid: 'uid-1' })), undefined, 'no ghost of the past');
  assert.equal(s.apply('DELETED', obj('a', '3', { uid: 'uid-1' })), undefined);
  assert.equal(s.apply('ADDED', obj('a', '4', { uid: 'uid-2' })), undefined);
  assert.equal(s.apply('DELETED', obj('a', '5', { uid: 'uid-2' })), undefined);
  assert.equal(s.apply('ADDED', obj('a', '6', { uid: 'uid-3' }))?.type, 'add', 'a newer object of that name is seen');
});

test('after our own write moved an object out of the selection, an older version the watch replays is not shown', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '2')], '2');
  assert.equal(s.noteGone(obj('a', '4'))?.type, 'delete');
  assert.equal(s.apply('MODIFIED', obj('a', '3')), undefined, 'version 3 is older than the write at 4 that took it out');
  assert.equal(s.apply('MODIFIED', obj('a', '6'))?.type, 'add', 'back in the selection later');
});

test('the same after an etcd restore: own notes during the relist are of the new history and keep the older name out (seed -616178219)', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '9', { uid: 'old' })], '9');
  s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'old' });
  s.beginList(undefined, { historyChanged: true });
  assert.equal(s.noteWrite(obj('a', '4', { uid: 'uid-2' }))?.type, 'add', 'a note during the relist is news, whatever its version');
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'uid-2' })?.type, 'delete');
  assert.deepEqual(s.replace([], '1'), []);
  assert.equal(s.apply('ADDED', obj('a', '2', { uid: 'uid-1' })), undefined, 'no ghost of the past');
  assert.equal(s.apply('ADDED', obj('a', '6', { uid: 'uid-3' }))?.type, 'add');
});

test('after an etcd restore, our delete during the relist of an object read before the restore hides no later version of the name (store model, bookkeeping check)', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '2', { uid: 'uid-1' })], '2');
  s.noteWrite(obj('a', '4', { uid: 'uid-1' })); // our write at 4, in the history about to be lost
  // etcd restored to 2; the relist is in flight when our delete of uid-1 (at 3, the new history) is noted.
  s.beginList(undefined, { historyChanged: true });
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'uid-1' })?.type, 'delete');
  assert.deepEqual(s.replace([obj('a', '2', { uid: 'uid-1' })], '2'), [], 'the list was taken before the delete: uid-1 stays out');
  assert.equal(s.apply('DELETED', obj('a', '3', { uid: 'uid-1' })), undefined);
  // Version 4 of the new history: another object of that name. Version 4 of the old one must not hide it.
  assert.equal(s.apply('ADDED', obj('a', '4', { uid: 'uid-3' }))?.type, 'add');
  assert.deepEqual(s.bookkeeping(), { tombstones: 0, floors: 0 });
});

test('a delete noted while a list is in flight, of a UID that list does not show, is forgotten by the next relist', () => {
  const s = new StoreWriter();
  s.replace([], '1');
  // uid-1 was created at 2 and deleted by us at 3; the watch has delivered neither when the relist begins.
  s.beginList();
  s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'uid-1' });
  s.replace([], '3');
  // Taken after the delete (the watch never mentions uid-1 again) or before its create (the watch
  // will bring both): the list cannot say which, so the tombstone stays for now.
  assert.deepEqual(s.bookkeeping(), { tombstones: 1, floors: 0 });
  s.beginList();
  s.replace([], '5');
  assert.deepEqual(s.bookkeeping(), { tombstones: 0, floors: 0 });
});

test('an object that left the label selection and came back (same UID): later own writes are written through again (ADR 0002)', () => {
  // Someone else relabels it out (the selector watch says DELETED), then back in (ADDED, same UID).
  const s = new StoreWriter({ selective: true });
  s.replace([obj('a', '10')], '10');
  s.apply('DELETED', obj('a', '11'));
  assert.equal(s.apply('ADDED', obj('a', '12'))?.type, 'add');
  assert.equal(s.noteWrite(obj('a', '13'))?.type, 'update', 'our write at 13 is shown at once');
  assert.equal(s.get('ns/a')?.metadata.resourceVersion, '13');
  // This process relabels it out, the watch confirms, then this process relabels it back in.
  const t = new StoreWriter({ selective: true });
  t.replace([obj('a', '10')], '10');
  assert.equal(t.noteGone(obj('a', '11'))?.type, 'delete');
  assert.equal(t.apply('DELETED', obj('a', '11')), undefined);
  assert.equal(t.noteWrite(obj('a', '12'))?.type, 'add', 'a note newer than the DELETED proves the UID is back');
  assert.equal(t.get('ns/a')?.metadata.resourceVersion, '12');
  assert.equal(t.apply('ADDED', obj('a', '12')), undefined, 'its echo');
  assert.equal(t.noteWrite(obj('a', '14'))?.type, 'update');
});

test('under a selector, deleting objects the store does not hold (outside the selection) keeps their tombstones bounded: 10 000 deletes, 4 096 left, oldest dropped first', () => {
  const s = new StoreWriter({ selective: true });
  s.replace([], '10');
  for (let i = 0; i < 10_000; i++) assert.equal(s.noteDelete({ namespace: 'ns', name: `job-${i}` }, { uid: `u-${i}` }), undefined);
  // The watch goes on without a relist and never mentions those objects.
  for (let rv = 2000; rv < 2100; rv++) s.apply('ADDED', obj(`other-${rv}`, String(rv)));
  assert.deepEqual(s.bookkeeping(), { tombstones: 4_096, floors: 0 });
  assert.equal(s.apply('ADDED', obj('job-9999', '2100', { uid: 'u-9999' })), undefined, 'a recent delete is still kept out');
  assert.equal(s.apply('ADDED', obj('job-0', '2101', { uid: 'u-0' }))?.type, 'add', 'the oldest was forgotten (left to the watch)');
  // One the watch confirms goes at once, and makes room.
  assert.equal(s.apply('DELETED', obj('job-9999', '2102', { uid: 'u-9999' })), undefined);
  assert.deepEqual(s.bookkeeping(), { tombstones: 4_095, floors: 0 });
  // One the store holds is still removed and kept out until the watch confirms its deletion.
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'other-2000' }, { uid: 'uid-other-2000' })?.type, 'delete');
  assert.equal(s.apply('MODIFIED', obj('other-2000', '2103')), undefined);
  // A relist forgets those its list does not show.
  s.beginList();
  s.noteDelete({ namespace: 'ns', name: 'b' }, { uid: 'uid-b' });
  assert.deepEqual(s.replace([obj('b', '2050')], '2104').filter((c) => c.object.metadata.name === 'b'), [], 'the list (taken before the delete) does not bring it back');
  assert.deepEqual(s.bookkeeping(), { tombstones: 1, floors: 0 }, 'only the delete noted while that list was in flight');
});

test('a delete answer without a UID does not remove a re-created object of that name', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '10', { uid: 'U1' })], '10');
  s.apply('DELETED', obj('a', '11', { uid: 'U1' })); // our delete at 11, seen by the watch first
  s.apply('ADDED', obj('a', '12', { uid: 'U2' })); // someone re-creates the name
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, {}), undefined, 'our answer (a Status without details.uid) arrives last');
  assert.equal(s.get('ns/a')?.metadata.uid, 'U2');
  assert.equal(s.apply('MODIFIED', obj('a', '13', { uid: 'U2' }))?.type, 'update');
  // The same when the store never saw the deleted object: U2 came with the first list, taken after our delete.
  const t = new StoreWriter();
  t.replace([obj('a', '12', { uid: 'U2' })], '12');
  assert.equal(t.noteDelete({ namespace: 'ns', name: 'a' }, {}), undefined);
  assert.equal(t.get('ns/a')?.metadata.uid, 'U2');
  // Without a UID the store cannot tell the deleted object from a re-creation: the watch removes it.
  const u = new StoreWriter();
  u.replace([obj('a', '10', { uid: 'U1' })], '10');
  assert.equal(u.noteDelete({ namespace: 'ns', name: 'a' }, {}), undefined);
  assert.equal(u.apply('DELETED', obj('a', '11', { uid: 'U1' }))?.type, 'delete');
  assert.deepEqual(u.bookkeeping(), { tombstones: 0, floors: 0 });
});

test('after an etcd restore, our write that moved an object out of the selection during the relist removes what the old history left (store model, selector runs)', () => {
  const s = new StoreWriter({ selective: true });
  s.replace([], '1');
  s.noteWrite(obj('a', '3', { uid: 'uid-2' })); // the old history: created by us at 3
  // etcd restored to 2 (uid-2 never existed); during the relist our write creates uid-3 at 3, outside the selection.
  s.beginList(undefined, { historyChanged: true });
  assert.equal(s.noteGone(obj('a', '3', { uid: 'uid-3' }))?.type, 'delete', 'uid-2@3 is of the lost history');
  s.replace([], '2');
  assert.equal(s.get('ns/a'), undefined);
});

test('under a selector, the floor of our write that moved an already-departed object out goes with the first bookmark past it (store model, selector runs)', () => {
  const s = new StoreWriter({ selective: true });
  s.replace([], '1');
  s.apply('ADDED', obj('c', '2'));
  assert.equal(s.noteGone(obj('c', '4'))?.type, 'delete', 'our write at 4 (the store still held version 2)');
  s.apply('DELETED', obj('c', '3')); // someone else had moved it out at 3: our write at 4 is invisible to this watch
  assert.deepEqual(s.bookkeeping(), { tombstones: 0, floors: 1 });
  s.bookmark('5');
  assert.deepEqual(s.bookkeeping(), { tombstones: 0, floors: 0 }, 'nothing at or below 4 can come any more');
});

test('after an etcd restore brought back an object we had deleted, our write of it during the relist is hidden until the list and its echo show it (accepted: see the late response of the old history above)', () => {
  const s = new StoreWriter();
  s.replace([obj('b', '2', { uid: 'uid-1' })], '2');
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'b' }, { uid: 'uid-1' })?.type, 'delete'); // at 3, in the history about to be lost
  // etcd restored to 2 (uid-1 exists again); the relist is in flight when our write of uid-1 at 3 returns.
  s.beginList(undefined, { historyChanged: true });
  // The store cannot tell it from a late response of the old history (previous tests): the
  // tombstone stands until the list ends.
  assert.equal(s.noteWrite(obj('b', '3', { uid: 'uid-1' })), undefined);
  assert.deepEqual(s.replace([obj('b', '2', { uid: 'uid-1' })], '2').map((c) => `${c.type}@${c.object.metadata.resourceVersion}`), ['add@2'], 'the list, of the new history, is authoritative');
  assert.deepEqual(s.bookkeeping(), { tombstones: 0, floors: 0 }, 'the old history\'s tombstone went with the list');
  assert.equal(s.apply('MODIFIED', obj('b', '3', { uid: 'uid-1' }))?.type, 'update', 'the echo of our write shows it');
  assert.equal(s.get('ns/b')?.metadata.resourceVersion, '3');
});

test('under a selector, the DELETED of an object leaving it does not remove the newer version our write brought back in (store model, selector runs)', () => {
  const s = new StoreWriter({ selective: true });
  s.replace([obj('b', '2')], '2');
  assert.equal(s.noteWrite(obj('b', '4'))?.type, 'update', 'ours at 4 moved it back in');
  assert.equal(s.apply('DELETED', obj('b', '3')), undefined, 'someone had moved it out at 3');
  assert.equal(s.get('ns/b')?.metadata.resourceVersion, '4');
  assert.equal(s.apply('ADDED', obj('b', '4')), undefined, 'the echo of our write');
  assert.equal(s.noteWrite(obj('b', '5'))?.type, 'update');
});

// A review of b03be05 found these (each failed on it).

test('after an etcd restore, a late write response from before it, of an object this process had deleted, does not bring it back (review of b03be05)', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '10', { uid: 'A' })], '10');
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'A' })?.type, 'delete');
  s.beginList(undefined, { historyChanged: true });
  // The response of an update sent before our delete (old history, at 11) arrives during the relist.
  assert.equal(s.noteWrite(obj('a', '11', { uid: 'A' })), undefined, 'the tombstone stands until the relist ends');
  assert.deepEqual(s.replace([], '5'), []);
  assert.equal(s.get('ns/a'), undefined, 'no ghost of a deleted object');
});

test('after an etcd restore, a late write response from before it, of an object the watch saw deleted, does not bring it back (review of b03be05)', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '10', { uid: 'A' })], '10');
  s.apply('DELETED', obj('a', '12', { uid: 'A' }));
  s.beginList(undefined, { historyChanged: true });
  assert.equal(s.noteWrite(obj('a', '11', { uid: 'A' })), undefined, 'older than the deletion the watch delivered');
  assert.deepEqual(s.replace([], '5'), []);
  assert.equal(s.get('ns/a'), undefined, 'no ghost of a deleted object');
});

test('after an etcd restore, an old-history write note kept as newer than the list goes with the new history\'s DELETED of that UID (review of b03be05)', () => {
  const s = new StoreWriter();
  s.replace([obj('a', '100', { uid: 'A' })], '100');
  s.beginList(undefined, { historyChanged: true });
  assert.equal(s.noteWrite(obj('a', '101', { uid: 'A' }))?.type, 'update', 'cannot be told from a write of the new history');
  assert.deepEqual(s.replace([obj('a', '50', { uid: 'A' })], '50'), [], 'kept as newer than the list');
  assert.equal(s.apply('DELETED', obj('a', '60', { uid: 'A' }))?.type, 'delete', 'without a selector a DELETED is final for its UID');
  assert.equal(s.get('ns/a'), undefined);
});

test('under a selector, our delete of an object the store does not hold keeps out its ADDED still in flight (ADR 0002 rule 3; review of b03be05)', () => {
  const s = new StoreWriter({ selective: true });
  s.replace([], '5');
  // Created at 10 inside the selection and deleted by us at 11; the watch has delivered neither.
  assert.equal(s.noteDelete({ namespace: 'ns', name: 'a' }, { uid: 'A' }), undefined);
  assert.equal(s.apply('ADDED', obj('a', '10', { uid: 'A' })), undefined, 'an object this process deleted is not shown');
  assert.equal(s.apply('DELETED', obj('a', '11', { uid: 'A' })), undefined);
  assert.deepEqual(s.bookkeeping(), { tombstones: 0, floors: 0 }, 'the watch confirmed it');
});

test('an index function or transform that throws on one version: that version is still stored and reported, indexed under no value of that index, and the failure is told', () => {
  const failures: string[] = [];
  const ref = (o: KubeObject): string[] => [o.metadata.labels!['ref']!.toUpperCase()];
  const s = new StoreWriter({ indexes: { byRef: ref }, onFunctionError: (fn, o) => failures.push(`${fn} ${o.metadata.resourceVersion}`) });
  assert.equal(s.apply('ADDED', obj('a', '10', { labels: { ref: 'x' } }))?.type, 'add');
  assert.deepEqual(s.byIndex('byRef', 'X').map((o) => o.metadata.resourceVersion), ['10']);
  // The label goes: the index function throws on the new version.
  assert.equal(s.apply('MODIFIED', obj('a', '11'))?.type, 'update', 'the change is reported (handlers are told, the watch goes on)');
  assert.equal(s.get('ns/a')?.metadata.resourceVersion, '11');
  assert.deepEqual(s.byIndex('byRef', 'X'), [], 'never under a value its current version does not give');
  assert.deepEqual(s.byIndex(CONTROLLER_UID_INDEX, 'none'), []);
  assert.ok(failures.includes('index byRef 11'), failures.join());
  // Write-through of a version the index function throws on: no exception for the writer.
  assert.equal(s.noteWrite(obj('a', '12'))?.type, 'update');
  assert.equal(s.apply('MODIFIED', obj('a', '13', { labels: { ref: 'y' } }))?.type, 'update');
  assert.deepEqual(s.byIndex('byRef', 'Y').map((o) => o.metadata.resourceVersion), ['13'], 'indexed again once it can be');
  assert.equal(s.apply('DELETED', obj('a', '14'))?.type, 'delete');
  assert.deepEqual(s.byIndex('byRef', 'Y'), []);

  const t = new StoreWriter({ transform: (o) => { if (!o.metadata.labels) throw new Error('no labels'); return o; }, onFunctionError: (fn, o) => failures.push(`${fn} ${o.metadata.resourceVersion}`) });
  t.apply('ADDED', obj('b', '1', { labels: {} }));
  assert.equal(t.apply('MODIFIED', obj('b', '2'))?.type, 'update', 'a version the transform throws on is stored as received');
  assert.equal(t.get('ns/b')?.metadata.resourceVersion, '2');
  assert.ok(failures.includes('transform 2'), failures.join());
});
