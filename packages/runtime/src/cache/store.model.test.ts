/**
 * Model-based test of the cache's store (`StoreWriter`), the part of the data path where the
 * watch, relists and this process's own writes meet.
 *
 * A reference model of the API server keeps the history of every key: creates (each with a new
 * UID), updates, deletes, re-creates, compactions, and etcd restores (resourceVersions go back
 * and a different history follows). A store is fed what a correct watcher and client would feed
 * it, in random interleavings: consistent list snapshots (the list starts, other things happen,
 * the list ends), watch events (in order, per watched scope), bookmarks, 410 Gone (the resume
 * point was compacted away: relist), write-through notes of this process's writes and deletes
 * delivered early (before the watch shows them) or late (after), and relists at any time. A
 * restore makes every watcher relist (the watch answers 504 "Too large resource version").
 * Half the runs watch through a label selector: writes move objects in and out of it, and the
 * watch translates as kube-apiserver does (ADDED on entering, DELETED with the last selected state
 * on leaving, nothing outside); lists show the selected objects; this process's writes are noted
 * as the informer notes them (`noteWrite` in the selection, `noteGone` out of it). Some delete
 * answers name no UID (a Status without details).
 *
 * Checked after every step:
 * - the store never shows an object whose deletion it has already seen (the watch delivered
 *   the DELETED event, or this process's delete of that UID was noted);
 * - the changes reported to handlers replay to exactly the store's contents: an add only for an
 *   absent key, an update or delete only of the object the store held;
 * - per key, each version is reported once and in order (resourceVersions grow; an etcd restore
 *   starts a new history, after which the order starts again);
 * - every index (two whose values move with the versions, and the namespace index) answers
 *   exactly the stored objects that give its value;
 * - read-your-own-writes (ADR 0002): right after a note of this process's write of a selected
 *   object, the store holds that version or a later one, unless the watch (or a list) has already
 *   shown a later change of the key, or a later delete or write of this process that took the key
 *   out was noted first, or (accepted, ADR 0002) the note comes during the relist after an etcd
 *   restore, of a UID whose deletion the store knew of before the restore;
 * and at every quiescent point (every watcher caught up, no list in flight, no note pending):
 * - the store equals the model, key by key (UID, resourceVersion, content);
 * at the end, once quiescent:
 * - no floor is left (each was reached by the watch or a list); under a selector, the tombstones
 *   left are at most the deletes noted while a list was in flight and those of objects the store
 *   did not hold since the last list (outside the selection the watch never delivers the deletion;
 *   the store caps them, a bound these 6 keys never reach); after one more relist of
 *   every scope no tombstone either (one noted while a list was in flight may outlive that list:
 *   the list cannot say whether it was taken before the object existed or after its deletion).
 *
 * `npm test` runs 30 000 sequences; CONVERGE_RELIABILITY_LONG=1 runs 100 000.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../objects/index.ts';
import { StoreWriter } from './store.ts';
import { compileSelection } from './selectors.ts';
import type { Change } from './store.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = Number(process.env.CONVERGE_MODEL_RUNS ?? (LONG ? 100_000 : 30_000));

const NAMESPACES = ['ns0', 'ns1'];
const NAMES = ['a', 'b', 'c'];
const KEYS = NAMESPACES.flatMap((ns) => NAMES.map((n) => `${ns}/${n}`));

interface Obj extends KubeObject {
  data: { v: number };
}

type Op =
  | { t: 'write'; key: number; own: boolean; out: number }
  | { t: 'delete'; key: number; own: boolean; noUid: number }
  | { t: 'deliver'; scope: number; n: number }
  | { t: 'bookmark'; scope: number }
  | { t: 'note'; pick: number }
  | { t: 'compact' }
  | { t: 'relist'; scope: number }
  | { t: 'listEnd'; scope: number }
  | { t: 'restore'; back: number };

/**
 * CONVERGE_MODEL_OPS=write,deliver,… narrows the operations (to study one kind of interleaving);
 * without `note` in it, no write is this process's own.
 */
const ONLY = process.env.CONVERGE_MODEL_OPS?.split(',');
const own = !ONLY || ONLY.includes('note') ? fc.boolean() : fc.constant(false);
const weighted: { weight: number; arbitrary: fc.Arbitrary<Op>; t: Op['t'] }[] = [
  // `out` 0: the written version is outside the label selection (in runs that have one).
  { t: 'write', weight: 8, arbitrary: fc.record({ t: fc.constant('write' as const), key: fc.nat(KEYS.length - 1), own, out: fc.nat(3) }) },
  // `noUid` 0: the API server's answer to this process's delete names no UID.
  { t: 'delete', weight: 4, arbitrary: fc.record({ t: fc.constant('delete' as const), key: fc.nat(KEYS.length - 1), own, noUid: fc.nat(3) }) },
  { t: 'deliver', weight: 8, arbitrary: fc.record({ t: fc.constant('deliver' as const), scope: fc.nat(1), n: fc.integer({ min: 1, max: 4 }) }) },
  { t: 'bookmark', weight: 2, arbitrary: fc.record({ t: fc.constant('bookmark' as const), scope: fc.nat(1) }) },
  { t: 'note', weight: 6, arbitrary: fc.record({ t: fc.constant('note' as const), pick: fc.nat(7) }) },
  { t: 'compact', weight: 1, arbitrary: fc.record({ t: fc.constant('compact' as const) }) },
  { t: 'relist', weight: 2, arbitrary: fc.record({ t: fc.constant('relist' as const), scope: fc.nat(1) }) },
  { t: 'listEnd', weight: 3, arbitrary: fc.record({ t: fc.constant('listEnd' as const), scope: fc.nat(1) }) },
  { t: 'restore', weight: 1, arbitrary: fc.record({ t: fc.constant('restore' as const), back: fc.nat(6) }) },
];
const opArb: fc.Arbitrary<Op> = fc.oneof(...weighted.filter((w) => !ONLY || ONLY.includes(w.t)));

interface LogEntry {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  obj: Obj;
  /** The version this entry replaced (for a selector watch's translation). */
  prev?: Obj;
}

/** The API server: the live objects, the event history (etcd), compaction and snapshots. */
class Server {
  rv = 1;
  uids = 0;
  live = new Map<string, Obj>();
  log: LogEntry[] = [];
  compacted = 0;
  /** Deletions by UID (resourceVersion of the delete), in the current history. */
  deletedAt = new Map<string, number>();
  snapshots: { rv: number; live: Map<string, Obj>; logLength: number; deletedAt: Map<string, number> }[] = [];

  write(key: string, selected = true): Obj {
    const [namespace, name] = key.split('/') as [string, string];
    const old = this.live.get(key);
    this.rv++;
    const obj: Obj = {
      metadata: { namespace, name, uid: old?.metadata.uid ?? `uid-${++this.uids}`, resourceVersion: String(this.rv), labels: { sel: selected ? 'in' : 'out' } },
      data: { v: (old?.data.v ?? 0) + 1 },
    };
    this.live.set(key, obj);
    this.log.push({ rv: this.rv, type: old ? 'MODIFIED' : 'ADDED', obj, ...(old ? { prev: old } : {}) });
    this.#snapshot();
    return obj;
  }

  delete(key: string): Obj | undefined {
    const old = this.live.get(key);
    if (!old) return undefined;
    this.rv++;
    this.live.delete(key);
    // A DELETED event carries the object's last state at the revision of the delete.
    const obj: Obj = { ...old, metadata: { ...old.metadata, resourceVersion: String(this.rv) } };
    this.log.push({ rv: this.rv, type: 'DELETED', obj, prev: old });
    this.deletedAt.set(old.metadata.uid!, this.rv);
    this.#snapshot();
    return old;
  }

  /** etcd restored from a snapshot `back` writes ago: later history never happened. */
  restore(back: number): void {
    const i = Math.max(0, this.snapshots.length - 1 - back);
    const snap = this.snapshots[i];
    if (!snap) return;
    this.rv = snap.rv;
    this.live = new Map(snap.live);
    this.log = this.log.slice(0, snap.logLength);
    this.deletedAt = new Map(snap.deletedAt);
    this.compacted = Math.min(this.compacted, this.rv);
    this.snapshots = this.snapshots.slice(0, i + 1);
  }

  #snapshot(): void {
    this.snapshots.push({ rv: this.rv, live: new Map(this.live), logLength: this.log.length, deletedAt: new Map(this.deletedAt) });
    if (this.snapshots.length > 8) this.snapshots.shift();
  }
}

/**
 * Indexes whose values move with the object's versions: one value by parity, several (repeated,
 * and in an order that changes) by the version's remainders, none for every third version.
 */
const INDEXES: Record<string, (o: Obj) => string[]> = {
  parity: (o) => [`p${o.data.v % 2}`],
  remainders: (o) => (o.data.v % 3 === 0 ? [] : o.data.v % 2 === 0 ? [`r${o.data.v % 4}`, 'r1', `r${o.data.v % 4}`] : ['r1', `r${o.data.v % 5}`]),
};
const INDEX_VALUES = ['p0', 'p1', 'r0', 'r1', 'r2', 'r3', 'r4', ...NAMESPACES, ''];

/** `rv`: the server's resourceVersion right after the delete. `uid` absent: the answer names none. */
type Note = { kind: 'write'; obj: Obj } | { kind: 'delete'; key: string; uid?: string; rv: number };

interface WatcherState {
  state: 'needList' | 'listing' | 'watching';
  /** The next list follows an etcd restore (the watch answered 504 "Too large resource version"). */
  restored?: boolean;
  /** Resume point: the list's version, then each event's and bookmark's. */
  rv: number;
  snapshot?: { items: Obj[]; rv: number };
}

/** The optional parts of the writer's API (absent on older versions of the store). */
interface WriterExtras {
  beginList?(namespace?: string, options?: { historyChanged?: boolean }): void;
  bookmark?(resourceVersion: string, namespace?: string): void;
}

/** The label selector of runs that have one: `sel=in`. */
const SELECTOR = compileSelection('sel=in', undefined);

function run(ops: Op[], perNamespace: boolean, selective = false): void {
  const server = new Server();
  const writer = new StoreWriter<Obj>({ perNamespace, indexes: INDEXES, selective } as ConstructorParameters<typeof StoreWriter<Obj>>[0]);
  const selected = (o: Obj | undefined) => o !== undefined && (!selective || SELECTOR.matches(o) === true);
  /** What the watch delivers of a log entry, as kube-apiserver's watch cache filters by a selector. */
  const visible = (e: LogEntry): { type: LogEntry['type']; obj: Obj } | undefined => {
    const now = e.type !== 'DELETED' && selected(e.obj);
    const before = selected(e.prev);
    if (now) return { type: before ? 'MODIFIED' : 'ADDED', obj: e.obj };
    // Leaving the selection (or deleted): DELETED with the last selected state, at the event's version.
    if (before) return { type: 'DELETED', obj: { ...e.prev!, metadata: { ...e.prev!.metadata, resourceVersion: String(e.rv) } } };
    return undefined;
  };
  const extras = writer as unknown as WriterExtras;
  const scopes = perNamespace ? NAMESPACES.map((ns) => ns) : [undefined];
  const watchers: WatcherState[] = scopes.map(() => ({ state: 'needList', rv: 0 }));
  const scopeOf = (key: string) => (perNamespace ? NAMESPACES.indexOf(key.split('/')[0]!) : 0);
  const inScope = (key: string, s: number) => scopeOf(key) === s;
  const pending: Note[] = [];
  /** UIDs whose deletion by this process was noted to the store (and that the store must keep out). */
  const ownDeletesNoted = new Set<string>();
  /** Per key, the highest version at which a noted write or delete of this process took it out. */
  const ownRemovals = new Map<string, number>();
  /** Per scope, delete notes delivered while its list was in flight (their tombstones may outlive it). */
  const deletesWhileListing = scopes.map(() => 0);
  /**
   * Per scope, delete notes since its last list began of a UID the store did not hold (under a
   * selector their watch may never deliver the deletion: the tombstone stays until a relist).
   */
  const unheldDeletes = scopes.map(() => 0);
  /** Per UID, the highest version of a DELETED the watch delivered (in this history). */
  const watchDeleted = new Map<string, number>();
  /**
   * Per scope, until its list after an etcd restore ends: the UIDs whose deletion the store knew
   * of before the restore (our noted delete: any version; the watch's DELETED: up to its version).
   */
  const deletedBeforeRestore = scopes.map(() => new Map<string, number>());
  /** What handlers were told, replayed. */
  const replay = new Map<string, Obj>();
  const lastReported = new Map<string, number>();
  let epoch = 0;
  const trace: string[] = [];

  const fail = (what: string) => {
    assert.fail(`${what}\n  trace:\n    ${trace.join('\n    ')}`);
  };

  const observe = (changes: Change<Obj> | Change<Obj>[] | undefined) => {
    for (const c of changes === undefined ? [] : Array.isArray(changes) ? changes : [changes]) {
      const key = `${c.object.metadata.namespace}/${c.object.metadata.name}`;
      const held = replay.get(key);
      const v = `${c.object.metadata.uid}@${c.object.metadata.resourceVersion}`;
      trace.push(`  → handler ${c.type} ${key} ${v}`);
      if (c.type === 'add') {
        if (held) fail(`add of ${key} reported while the handlers hold ${held.metadata.uid}@${held.metadata.resourceVersion}`);
      } else if (!held || held !== (c.type === 'update' ? c.oldObject : c.object)) {
        fail(`${c.type} of ${key} (${v}) does not match what the handlers hold (${held ? `${held.metadata.uid}@${held.metadata.resourceVersion}` : 'nothing'})`);
      }
      if (c.type === 'delete') {
        replay.delete(key);
        continue;
      }
      replay.set(key, c.object);
      const rv = Number(c.object.metadata.resourceVersion);
      const last = lastReported.get(`${epoch}/${key}`);
      if (last !== undefined && rv <= last) fail(`${key}: version ${v} reported after version ${last} (each change once, in order)`);
      lastReported.set(`${epoch}/${key}`, rv);
    }
  };

  const checkAlways = () => {
    const stored = new Map(writer.list().map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
    for (const [key, o] of stored) {
      const uid = o.metadata.uid!;
      const deletedAt = server.deletedAt.get(uid);
      const w = watchers[scopeOf(key)]!;
      if (deletedAt !== undefined && w.state !== 'needList' && w.rv >= deletedAt) {
        fail(`the store shows ${key} ${uid}@${o.metadata.resourceVersion}, deleted at ${deletedAt}, although its watch has delivered up to ${w.rv}`);
      }
      if (ownDeletesNoted.has(uid)) fail(`the store shows ${key} ${uid}@${o.metadata.resourceVersion} after this process's delete of it was noted`);
      if (replay.get(key) !== o) fail(`handlers were not told of ${key} ${uid}@${o.metadata.resourceVersion}`);
    }
    for (const key of replay.keys()) if (!stored.has(key)) fail(`handlers hold ${key}, the store does not`);
    // Every index answers exactly the stored objects that give its value (the indexer moves an
    // object's entries only when a new version's values differ: this checks that shortcut).
    for (const [name, fn] of Object.entries({ ...INDEXES, namespace: (o: Obj) => [o.metadata.namespace ?? ''] })) {
      for (const value of INDEX_VALUES) {
        const want = [...stored].filter(([, o]) => fn(o).includes(value)).map(([k]) => k).sort();
        const got = writer.byIndex(name, value).map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
        if (JSON.stringify(want) !== JSON.stringify(got)) fail(`index ${name}=${value} answers [${got.join(' ')}], the stored objects giving that value are [${want.join(' ')}]`);
        if (writer.countByIndex(name, value) !== want.length) fail(`index ${name}=${value} counts ${writer.countByIndex(name, value)}, the stored objects giving that value are ${want.length}`);
      }
    }
  };

  /** Events the watch of scope `s` has still to deliver after `rv`. */
  const ahead = (s: number, rv: number) => server.log.filter((e) => e.rv > rv && inScope(keyOf(e.obj), s) && visible(e) !== undefined);

  const quiescent = () => pending.length === 0 && watchers.every((w, s) => w.state === 'watching' && ahead(s, w.rv).length === 0);

  const checkQuiescent = () => {
    if (!quiescent()) return;
    const want = [...server.live.values()].filter(selected).map(describe).sort();
    const got = writer.list().map(describe).sort();
    if (JSON.stringify(want) !== JSON.stringify(got)) fail(`at a quiescent point the store differs from the API server:\n    server ${want.join(' ')}\n    store  ${got.join(' ')}`);
  };

  const deliverNote = (i: number) => {
    const [note] = pending.splice(i, 1);
    if (!note) return;
    if (note.kind === 'write') {
      const key = keyOf(note.obj);
      const rv = Number(note.obj.metadata.resourceVersion);
      if (!selected(note.obj)) {
        // The informer notes a write that left the selection as gone.
        trace.push(`note gone ${key} ${note.obj.metadata.uid}@${rv}`);
        observe(writer.noteGone(note.obj));
        ownRemovals.set(key, Math.max(rv, ownRemovals.get(key) ?? 0));
        return;
      }
      trace.push(`note write ${key} ${note.obj.metadata.uid}@${rv}`);
      observe(writer.noteWrite(note.obj));
      // Read-your-own-writes: this version or a later one, unless something later is already known.
      const held = writer.get(key);
      const w = watchers[scopeOf(key)]!;
      const laterShown = server.log.some((e) => keyOf(e.obj) === key && e.rv > rv && e.rv <= w.rv);
      // Accepted (ADR 0002): while the relist after an etcd restore is in flight, a note of a UID
      // whose deletion the store knew of before the restore is hidden until the list (or the
      // note's watch echo) shows it. The store cannot tell our write of an object the restore
      // brought back from a late response of the old history, which would be a ghost for good.
      const beforeRestore = deletedBeforeRestore[scopeOf(key)]!.get(note.obj.metadata.uid!);
      const hiddenAfterRestore = beforeRestore !== undefined && rv <= beforeRestore;
      if ((!held || Number(held.metadata.resourceVersion) < rv) && !laterShown && !((ownRemovals.get(key) ?? 0) > rv) && !hiddenAfterRestore) {
        fail(`read-your-own-writes: after the note of ${key} ${note.obj.metadata.uid}@${rv} the store holds ${held ? `${held.metadata.uid}@${held.metadata.resourceVersion}` : 'nothing'}`);
      }
    } else {
      trace.push(`note delete ${note.key} ${note.uid ?? '(no uid in the answer)'}`);
      const [namespace, name] = note.key.split('/') as [string, string];
      const s = scopeOf(note.key);
      const listing = watchers[s]!.state === 'listing';
      const held = writer.get(note.key)?.metadata.uid === note.uid;
      // The API server's answer to a delete names the deleted UID (Status details, or the object),
      // mostly: without one the store may leave the object to the watch.
      observe((writer.noteDelete as (key: { namespace: string; name: string }, gone?: { uid?: string }) => Change<Obj> | undefined)({ namespace, name }, note.uid === undefined ? {} : { uid: note.uid }));
      ownRemovals.set(note.key, Math.max(note.rv, ownRemovals.get(note.key) ?? 0));
      if (listing) deletesWhileListing[s]!++;
      else if (!held) unheldDeletes[s]!++;
      // Every answer that names the UID keeps it out (under a selector, of an object the store does
      // not hold, for the 4 096 most recent: a bound these 6 keys never reach).
      if (note.uid !== undefined) ownDeletesNoted.add(note.uid);
    }
  };

  const step = (op: Op) => {
    switch (op.t) {
      case 'write':
      case 'delete': {
        const key = KEYS[op.key]!;
        if (op.t === 'write') {
          const obj = server.write(key, !selective || op.out !== 0);
          trace.push(`${op.own ? 'own ' : ''}write ${key} → ${obj.metadata.uid}@${obj.metadata.resourceVersion}`);
          if (op.own) pending.push({ kind: 'write', obj });
        } else {
          const old = server.delete(key);
          if (!old) return;
          trace.push(`${op.own ? 'own ' : ''}delete ${key} ${old.metadata.uid} at ${server.rv}`);
          if (op.own) pending.push({ kind: 'delete', key, rv: server.rv, ...(op.noUid === 0 ? {} : { uid: old.metadata.uid! }) });
        }
        return;
      }
      case 'note':
        if (pending.length) deliverNote(op.pick % pending.length);
        return;
      case 'relist': {
        const s = op.scope % watchers.length;
        startList(s);
        return;
      }
      case 'listEnd': {
        const s = op.scope % watchers.length;
        const w = watchers[s]!;
        if (w.state === 'needList') startList(s);
        if (w.state !== 'listing') return;
        const snap = w.snapshot!;
        trace.push(`list ends scope ${s}: ${snap.items.map(describe).join(' ')} at ${snap.rv}`);
        observe(writer.replace(snap.items, String(snap.rv), scopes[s]));
        deletedBeforeRestore[s]!.clear();
        w.state = 'watching';
        w.rv = snap.rv;
        delete w.snapshot;
        return;
      }
      case 'deliver': {
        const s = op.scope % watchers.length;
        const w = watchers[s]!;
        if (w.state !== 'watching') return;
        if (w.rv < server.compacted) {
          trace.push(`watch of scope ${s} at ${w.rv}: 410 Gone (compacted at ${server.compacted})`);
          w.state = 'needList';
          return;
        }
        for (const e of ahead(s, w.rv).slice(0, op.n)) {
          const event = visible(e)!;
          if (event.type === 'DELETED') watchDeleted.set(event.obj.metadata.uid!, Math.max(e.rv, watchDeleted.get(event.obj.metadata.uid!) ?? 0));
          trace.push(`event ${event.type} ${keyOf(e.obj)} ${e.obj.metadata.uid}@${e.rv} (scope ${s})`);
          observe(writer.apply(event.type, event.obj));
          w.rv = e.rv;
        }
        return;
      }
      case 'bookmark': {
        const s = op.scope % watchers.length;
        const w = watchers[s]!;
        if (w.state !== 'watching' || w.rv < server.compacted) return;
        if (ahead(s, w.rv).length > 0) return; // a bookmark follows the events before it
        trace.push(`bookmark scope ${s} at ${server.rv}`);
        extras.bookmark?.(String(server.rv), scopes[s]);
        w.rv = server.rv;
        return;
      }
      case 'compact':
        trace.push(`compact at ${server.rv}`);
        server.compacted = server.rv;
        return;
      case 'restore': {
        // Responses in flight arrive first; then etcd goes back, and every watch answers 504
        // "Too large resource version", so every watcher relists from "" at once (the list
        // itself may take a while: other steps happen before it ends).
        while (pending.length) deliverNote(0);
        server.restore(op.back);
        trace.push(`etcd restored to ${server.rv}: ${[...server.live.values()].map(describe).join(' ')}`);
        watchers.forEach((w, s) => {
          w.state = 'needList';
          w.restored = true;
          w.rv = 0; // its view of the old history says nothing about the new one
          delete w.snapshot;
          startList(s); // the 504 makes it relist at once
        });
        for (const [uid, rv] of watchDeleted) for (const known of deletedBeforeRestore) known.set(uid, Math.max(rv, known.get(uid) ?? 0));
        for (const uid of ownDeletesNoted) for (const known of deletedBeforeRestore) known.set(uid, Number.POSITIVE_INFINITY);
        watchDeleted.clear();
        ownDeletesNoted.clear();
        ownRemovals.clear();
        epoch++;
        return;
      }
    }
  };

  const startList = (s: number) => {
    const w = watchers[s]!;
    if (w.state === 'listing') return;
    extras.beginList?.(scopes[s], w.restored ? { historyChanged: true } : {});
    delete w.restored;
    w.state = 'listing';
    deletesWhileListing[s] = 0; // this list settles those noted before it began
    unheldDeletes[s] = 0;
    w.snapshot = { items: [...server.live.entries()].filter(([k, o]) => inScope(k, s) && selected(o)).map(([, o]) => o), rv: server.rv };
    trace.push(`list starts scope ${s} at ${server.rv}`);
  };

  for (const op of ops) {
    step(op);
    checkAlways();
    checkQuiescent();
  }
  // Drive to quiescence: every note delivered, every watcher listed and caught up.
  while (pending.length) {
    deliverNote(0);
    checkAlways();
  }
  for (let s = 0; s < watchers.length; s++) {
    for (let attempt = 0; attempt < 3 && !quiescent(); attempt++) {
      step({ t: 'listEnd', scope: s }); // a list in flight ends; a watcher that needs one lists
      step({ t: 'deliver', scope: s, n: 1_000 }); // may answer 410: the next attempt relists
      checkAlways();
    }
  }
  if (!quiescent()) fail('did not reach a quiescent point');
  checkQuiescent();
  // A watch's position passes changes it does not deliver (outside the selection) only with a
  // bookmark, as kube-apiserver sends about once a minute.
  for (let s = 0; s < watchers.length; s++) {
    trace.push(`bookmark scope ${s} at ${server.rv}`);
    extras.bookmark?.(String(server.rv), scopes[s]);
    watchers[s]!.rv = server.rv;
  }
  // What the store keeps beside the objects does not outlive what it guards against.
  if (writer.bookkeeping().floors > 0) fail(`floors left once every watcher caught up: ${JSON.stringify(writer.bookkeeping())}`);
  const listingDeletes = deletesWhileListing.reduce((a, b) => a + b, 0);
  const unheld = unheldDeletes.reduce((a, b) => a + b, 0);
  if (selective && writer.bookkeeping().tombstones > listingDeletes + unheld) {
    fail(`under a selector, tombstones left once every watcher caught up: ${writer.bookkeeping().tombstones}, deletes noted while a list was in flight: ${listingDeletes}, of objects the store did not hold since: ${unheld}`);
  }
  for (let s = 0; s < watchers.length; s++) {
    step({ t: 'relist', scope: s });
    step({ t: 'listEnd', scope: s });
  }
  checkQuiescent();
  const left = writer.bookkeeping();
  if (left.tombstones > 0 || left.floors > 0) fail(`bookkeeping left after one more relist: ${JSON.stringify(left)}`);
}

function keyOf(o: Obj): string {
  return `${o.metadata.namespace}/${o.metadata.name}`;
}

function describe(o: Obj): string {
  return `${keyOf(o)}:${o.metadata.uid}@${o.metadata.resourceVersion}=v${o.data.v}`;
}

test(`store model: ${RUNS} random interleavings of lists, watch events, bookmarks, 410s, restores and own writes, with and without a label selector`, { timeout: LONG ? 3_600_000 : 60_000 }, () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), fc.boolean(), fc.boolean(), (ops, perNamespace, selective) => run(ops, perNamespace, selective)),
    { numRuns: RUNS, ...(process.env.CONVERGE_MODEL_SEED ? { seed: Number(process.env.CONVERGE_MODEL_SEED) } : {}) },
  );
});
