/**
 * Caches objects in memory: a read-only `Store` for reconcilers and handlers, and the
 * `StoreWriter` that only the cache's watchers and the client's write notifications feed.
 *
 * Two sources feed the store: the watch (lists, events and bookmarks, in resourceVersion order
 * per watched scope — all namespaces, or one namespace per watcher) and this process's own
 * writes (write-through: read-your-own-writes, ADR 0002), which arrive whenever a response
 * does, earlier or later than the watch shows the same change.
 *
 * Guarantees:
 * - Readers get the objects the API server sent (after the transform), never copies that
 *   someone else has mutated: treat them as immutable.
 * - **The watch is never contradicted by an older fact.** The store remembers, per scope, the
 *   highest resourceVersion the watch has delivered (an event, a bookmark, a list). A write
 *   note at or below it is dropped: the watch has already shown that version or a later state,
 *   deletion included — so a late response can never resurrect an object the watch saw deleted.
 * - A write note above it is applied at once; the watch event with the same resourceVersion
 *   that follows is dropped. Older versions never replace newer ones, from either source.
 * - An object this process deleted stays out (a tombstone per key and UID) until the watch
 *   confirms the deletion, whatever stale event or list was already in flight. Under a label or
 *   field selector (`selective`), an object the store does not hold is most likely outside the
 *   selection, whose watch never delivers the deletion: such a tombstone goes at the latest with
 *   a relist (below), and only the 4 096 most recent are kept (oldest dropped first; a dropped
 *   one leaves that object to the watch). The one exception: a delete answer that names no UID is left to
 *   the watch (the store cannot tell the deleted object from one of that name created since;
 *   kube-apiserver always names it).
 * - Under a selector the watch says DELETED also when an object merely leaves the selection; the
 *   same UID seen again (an event, or a note of this process newer than that DELETED) is back,
 *   and a DELETED of a UID older than the version of it the store holds (brought back in by this
 *   process's write since) is not applied. Without a selector the watch's DELETED of a UID
 *   removes whatever version of it the store holds.
 * - Once this process's own note took a key out (a delete, a write that left the selection), a
 *   watch event or write note for that key at or below the version taken out is not shown: the
 *   watch, still behind, replays a past that readers have seen superseded (another object of the
 *   same name, created and deleted before ours).
 * - What the store keeps beside the objects for these guards (per key: the UIDs this process
 *   deleted, the version its own note took out) goes once the watch has confirmed it, and at the
 *   latest with the scope's first list that began after it was noted: it never grows with the
 *   objects that came and went (`bookkeeping()` counts it). Under a selector, tombstones the
 *   watch may never confirm are also capped (above).
 * - **A relist is authoritative**, as in client-go: the list replaces the store's contents for
 *   its scope, also when its versions are *lower* than the cached ones (etcd restored from a
 *   backup: resourceVersions went back). The only exceptions are keys this process wrote after
 *   the list began (`beginList`) at a version above the list's: those are newer than the list.
 *   A relist reports only what differs, so it never causes a reconcile storm.
 * - Every change is reported once, in order per key.
 *
 * Assumptions: resourceVersions of one resource are integers that grow within one etcd history
 * (true of every etcd-backed API server; ADR 0002 explains why the runtime relies on it). A
 * non-numeric version disables the ordering guard and the newest event wins. After an etcd
 * restore the watcher relists (it is told by a 504 "Too large resource version"). A write note
 * that arrives during that relist cannot be placed in one history or the other:
 * - if the store knew that UID deleted (by this process, or by the watch at or above the note's
 *   version), the note is dropped, as a late response of the old history would be; the
 *   deletions the store knew of go when the list ends. So our write, during the relist, of an
 *   object the restore brought back is shown only once the list or the write's watch echo does;
 * - else it is kept, as a write newer than the list. If it was a late response of the old
 *   history, that version stays until the next relist of the scope, a watch event of the key at
 *   a higher version, or (without a selector) the watch's DELETED of that UID (should the new
 *   history give that UID that very version, the store takes it for the same one).
 * @module
 */
import type { KubeObject, ObjectKey } from '../objects/index.ts';
import { formatKey } from '../objects/index.ts';
import { Indexer, NAMESPACE_INDEX } from './indexer.ts';
import type { IndexFunc } from './indexer.ts';
import { internStrings } from './intern-strings.ts';
import { compareResourceVersions } from './resource-version.ts';

export { CONTROLLER_UID_INDEX, NAMESPACE_INDEX } from './indexer.ts';
export type { IndexFunc } from './indexer.ts';

export interface Store<T extends KubeObject> {
  /** The cached object with this key, or undefined. */
  get(key: ObjectKey | string): T | undefined;
  /** Every cached object, or those of one namespace. */
  list(namespace?: string): T[];
  /** Objects whose index function returned `value` (see `CONTROLLER_UID_INDEX`, `NAMESPACE_INDEX`). */
  byIndex(index: string, value: string): T[];
  /** How many objects `byIndex(index, value)` would return, in constant time. */
  countByIndex(index: string, value: string): number;
  keys(): string[];
  readonly size: number;
}

export type ChangeType = 'add' | 'update' | 'delete';
export interface Change<T extends KubeObject> {
  type: ChangeType;
  object: T;
  /** The previous version, for updates. */
  oldObject?: T;
}

export interface StoreWriterOptions<T extends KubeObject> {
  indexes?: Record<string, IndexFunc<T>>;
  /**
   * Applied to every object before it is stored (default: drop `metadata.managedFields`). Short
   * string values of the result are then shared with equal ones already cached (`internStrings`).
   * It must keep `metadata.name`, `namespace`, `uid` and `resourceVersion` as they were: the store
   * reads them from the object as received, and skips the transform of a version it already holds
   * (a watch event echoing this process's own write) or of a deletion.
   */
  transform?: (obj: T) => T;
  /**
   * The transform or an index function threw on `obj` (`fn`: `transform` or `index <name>`). The
   * object is stored all the same — as received (managed fields dropped) when the transform threw,
   * under no value of the index that threw — so no version is skipped and a write-through never
   * fails the write that the API server accepted. Default: nothing reported.
   */
  onFunctionError?: (fn: string, obj: KubeObject, err: unknown) => void;
  /**
   * One watch per namespace feeds this store (a namespace-scoped informer): the watch position
   * is then kept per namespace. Default: one watch for all.
   */
  perNamespace?: boolean;
  /**
   * The watch delivers only part of its scope (a label or field selector): it says DELETED also
   * when an object leaves the selection, and the deletion of an object outside it never comes, so
   * the tombstones of deletes of objects the store does not hold are capped (oldest dropped first).
   */
  selective?: boolean;
}

/** What the API server's answer to a delete says about the deleted object. */
export interface DeletedObject {
  /** The deleted object's UID (from the returned object or the Status details). */
  uid?: string;
}

export function dropManagedFields<T extends KubeObject>(obj: T): T {
  if (!obj.metadata?.managedFields) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** What the store knows of one watched scope. */
interface Scope {
  /** The highest resourceVersion the watch has delivered (list, event or bookmark). */
  watched?: string;
  /** While a list is in flight: keys written through since it began, with the highest version. */
  writtenSinceList?: Map<string, string | undefined>;
  /** While a list is in flight: keys whose object this process deleted since it began. */
  deletedSinceList?: Set<string>;
  /** The list in flight follows an etcd restore: what the store knows of deletions is void. */
  historyChanged?: boolean;
}

/** Deletions the watch delivered, kept for a while: a late note of this process's own delete of one is not news. */
const DELETION_FACTS = 4_096;
/** Under a selector, tombstones of objects the store did not hold, kept for a while (see `noteDelete`). */
const UNHELD_TOMBSTONES = 4_096;

export class StoreWriter<T extends KubeObject> implements Store<T> {
  readonly #memory: Indexer<T>;
  /** The transform, then strings shared with `previous` (the cached version it replaces) and the cache. */
  readonly #transform: (obj: T, previous: T | undefined) => T;
  readonly #perNamespace: boolean;
  readonly #selective: boolean;
  readonly #scopes = new Map<string, Scope>();
  /** Per key, the UIDs of objects this process deleted, until the watch (or a list) confirms it. */
  readonly #tombstones = new Map<string, Set<string>>();
  /**
   * Under a selector: the tombstones of deletes of objects the store did not hold (UID → key),
   * oldest first. Their watch may never deliver the deletion; at most `UNHELD_TOMBSTONES` are kept.
   */
  readonly #unheldTombstones = new Map<string, string>();
  /**
   * Per key, the UID of the last deletion the watch delivered and that event's resourceVersion
   * (bounded, oldest dropped first). Under a selector the object may only have left the selection:
   * the record goes when the watch, or a newer note of this process, shows that UID again.
   */
  readonly #deletedByWatch = new Map<string, { uid: string; rv: string | undefined }>();
  /**
   * Per key, the resourceVersion of the last version this process's own note took out of the
   * store (a delete, a write that left the selection), until the watch or a list reaches it.
   */
  readonly #floors = new Map<string, string>();

  constructor(options: StoreWriterOptions<T> = {}) {
    const onError = options.onFunctionError;
    this.#memory = new Indexer<T>(options.indexes, onError && ((index, obj, err) => onError(`index ${index}`, obj, err)));
    const transform = options.transform ?? dropManagedFields;
    const transformed = (obj: T): T => {
      try {
        return transform(obj);
      } catch (err) {
        onError?.('transform', obj, err);
        return dropManagedFields(obj);
      }
    };
    // Equal strings shared between cached objects (intern-strings.ts): ≈ 30 % less heap per object.
    this.#transform = (obj, previous) => internStrings(transformed(obj), previous);
    this.#perNamespace = options.perNamespace ?? false;
    this.#selective = options.selective ?? false;
  }

  /** Adds an index (and indexes what is already stored). Adding the same function again is a no-op. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    this.#memory.addIndex(name, fn);
  }

  /** A view that cannot write. */
  readOnly(): Store<T> {
    const get = this.get.bind(this);
    const list = this.list.bind(this);
    const byIndex = this.byIndex.bind(this);
    const countByIndex = this.countByIndex.bind(this);
    const keys = this.keys.bind(this);
    const self = this;
    return Object.freeze({ get, list, byIndex, countByIndex, keys, get size() { return self.size; } });
  }

  get size(): number {
    return this.#memory.size;
  }

  get(key: ObjectKey | string): T | undefined {
    return this.#memory.get(typeof key === 'string' ? key : formatKey(key));
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return this.#memory.values();
    return this.#memory.byIndex(NAMESPACE_INDEX, namespace);
  }

  byIndex(index: string, value: string): T[] {
    return this.#memory.byIndex(index, value);
  }

  countByIndex(index: string, value: string): number {
    return this.#memory.countByIndex(index, value);
  }

  keys(): string[] {
    return this.#memory.keys();
  }

  /** The highest resourceVersion the watch of this scope has delivered (for tests and diagnostics). */
  watchedResourceVersion(namespace?: string): string | undefined {
    return this.#scope(namespace).watched;
  }

  /**
   * A list of this scope (one namespace, when `namespace` is given) is about to be requested:
   * from now until `replace`, write notes are remembered as newer candidates than the list.
   * `historyChanged`: the watcher relists because the API server's history went back (504 "Too
   * large resource version" after an etcd restore): deletions the store knew of may be undone.
   */
  beginList(namespace?: string, options: { historyChanged?: boolean } = {}): void {
    const scope = this.#scope(namespace);
    scope.writtenSinceList = new Map();
    scope.deletedSinceList = new Set();
    if (options.historyChanged) {
      // The old position means nothing in the new history: every write note is news until the list ends.
      scope.historyChanged = true;
      delete scope.watched;
      for (const key of [...this.#floors.keys()]) if (this.#keyInScope(key, namespace)) this.#floors.delete(key);
      // The deletions it knew of stay until the list ends (`replace` drops them then): until then a
      // late write response of the old history of a UID deleted there must not come back as news.
      // The cost: our write, during this relist, of an object the restore brought back is hidden
      // until the list or its watch echo shows it (the store cannot tell the two apart).
    }
  }

  /**
   * Replaces the contents of one scope with a list taken at `listResourceVersion` (authoritative:
   * see the module comment) and returns what changed.
   */
  replace(items: T[], listResourceVersion: string, namespace?: string): Change<T>[] {
    const scope = this.#scope(namespace);
    const written = scope.writtenSinceList ?? new Map<string, string | undefined>();
    // Versions went back (etcd restored): equal versions may now name different contents, and
    // objects this process (or the watch) saw deleted may be back.
    const regressed = scope.historyChanged === true || compareResourceVersions(listResourceVersion, scope.watched) < 0;
    if (regressed) {
      for (const key of [...this.#tombstones.keys(), ...this.#deletedByWatch.keys()]) {
        if (!this.#keyInScope(key, namespace)) continue;
        this.#deletedByWatch.delete(key);
        if (!scope.deletedSinceList?.has(key)) this.#setTombstones(key, undefined);
      }
    }
    for (const [key, floor] of [...this.#floors]) {
      if (!this.#keyInScope(key, namespace)) continue;
      // The list has reached the version taken out; or that version belongs to a history that is
      // gone (noted before the list began, when versions went back since).
      const notedSinceList = written.has(key) || scope.deletedSinceList?.has(key) === true;
      if ((regressed && !notedSinceList) || !(compareResourceVersions(listResourceVersion, floor) < 0)) this.#floors.delete(key);
    }
    const changes: Change<T>[] = [];
    const listed = new Map<string, T>();
    for (const raw of items) {
      const key = keyOf(raw);
      listed.set(key, this.#transform(raw, this.#memory.get(key)));
    }
    const newerThanList = (key: string) => {
      if (!written.has(key)) return false;
      const order = compareResourceVersions(written.get(key), listResourceVersion);
      return order > 0 || Number.isNaN(order);
    };
    for (const [key, obj] of listed) {
      if (this.#tombstoned(key, obj.metadata.uid)) continue; // deleted by us after the list was taken
      // Alive again (etcd restored; back in the selection).
      if (this.#deletedByWatch.get(key)?.uid === obj.metadata.uid) this.#deletedByWatch.delete(key);
      if (newerThanList(key)) continue;
      const old = this.#memory.get(key);
      if (old && sameVersion(old, obj) && (!regressed || sameContent(old, obj))) continue;
      this.#memory.set(key, obj);
      changes.push(old ? { type: 'update', object: obj, oldObject: old } : { type: 'add', object: obj });
    }
    // What this scope held: one namespace's objects through its index (a relist of one namespace
    // costs what that namespace holds, not what every namespace does), or everything.
    const held: [string, T][] = namespace === undefined ? [...this.#memory.entries()] : this.#memory.byIndex(NAMESPACE_INDEX, namespace).map((o) => [keyOf(o), o]);
    for (const [key, old] of held) {
      if (!this.#inScope(old, namespace) || newerThanList(key)) continue;
      const item = listed.get(key);
      // Listed (and set above), unless this process deleted that very UID since the list was taken.
      if (item && !this.#tombstoned(key, item.metadata.uid)) continue;
      this.#memory.remove(key);
      changes.push({ type: 'delete', object: old });
    }
    for (const [key, uids] of [...this.#tombstones]) {
      if (!this.#keyInScope(key, namespace) || scope.deletedSinceList?.has(key)) continue;
      // Deleted before the list began: the list is later than the delete, and shows that UID only
      // if it still exists (a delete that left it Terminating is noted as a write, not here).
      const alive = listed.get(key)?.metadata.uid;
      this.#setTombstones(key, alive !== undefined && uids.has(alive) ? new Set([alive]) : undefined);
    }
    delete scope.writtenSinceList;
    delete scope.deletedSinceList;
    delete scope.historyChanged;
    scope.watched = listResourceVersion;
    return changes;
  }

  /**
   * Keys for which the store holds something beside the objects: tombstones (UIDs this process
   * deleted, not yet confirmed by the watch) and floors (versions its own notes took out, not yet
   * reached). Diagnostics: floors are 0 once the watch has caught up; tombstones too, or else
   * after the scope's next list (one noted while a list was in flight may outlive that list).
   */
  bookkeeping(): { tombstones: number; floors: number } {
    return { tombstones: this.#tombstones.size, floors: this.#floors.size };
  }

  /** Applies one watch event; returns the change, or undefined when it changes nothing. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): Change<T> | undefined {
    // Identity and order come from the object as received (the transform keeps them); it is
    // transformed only when it is stored.
    const key = keyOf(obj);
    this.#advance(this.#scope(obj.metadata.namespace), obj.metadata.resourceVersion);
    const uid = obj.metadata.uid;
    if (type === 'DELETED') {
      this.#belowFloor(key, obj.metadata.resourceVersion);
      this.#untomb(key, uid);
      const old = this.#memory.get(key);
      const sameUid = old !== undefined && old.metadata.uid === uid;
      if (old && (!sameUid || this.#selective) && compareResourceVersions(old.metadata.resourceVersion, obj.metadata.resourceVersion) > 0) {
        // A newer version of the name is held: another object that replaced it, or (under a
        // selector) this one, left the selection and brought back in by our own write since.
        // Without a selector a DELETED is final for its UID: a newer version of that UID held is
        // of a history etcd no longer has (a write response from before a restore, kept by the
        // relist as newer than its list), and goes.
        if (uid && !sameUid) this.#rememberDeletion(key, uid, obj.metadata.resourceVersion);
        return undefined;
      }
      if (uid) this.#rememberDeletion(key, uid, obj.metadata.resourceVersion);
      if (!old) return undefined;
      this.#memory.remove(key);
      return { type: 'delete', object: old };
    }
    // The UID whose deletion the watch delivered is there again: it had only left the selection.
    const gone = this.#deletedByWatch.get(key);
    if (gone !== undefined && gone.uid === uid && !(compareResourceVersions(obj.metadata.resourceVersion, gone.rv) <= 0)) this.#deletedByWatch.delete(key);
    if (this.#tombstoned(key, uid) || this.#belowFloor(key, obj.metadata.resourceVersion)) return undefined;
    return this.#upsert(key, obj);
  }

  /** A bookmark: the watch of this scope has delivered everything up to `resourceVersion`. */
  bookmark(resourceVersion: string, namespace?: string): void {
    const scope = this.#scope(namespace);
    this.#advance(scope, resourceVersion);
    // A floor the watch position has reached guards nothing more: the watch has delivered every
    // event up to it, and rule 1 drops notes at or below it. Most go with the key's next event;
    // under a selector that event may never come (the key is outside it): bookmarks sweep them.
    for (const [key, floor] of [...this.#floors]) {
      if (this.#keyInScope(key, namespace) && compareResourceVersions(floor, scope.watched) <= 0) this.#floors.delete(key);
    }
  }

  /** Records an object this process has just written (read-your-own-writes). */
  noteWrite(obj: T): Change<T> | undefined {
    const key = keyOf(obj);
    const rv = obj.metadata.resourceVersion;
    const scope = this.#scope(obj.metadata.namespace);
    if (compareResourceVersions(rv, scope.watched) <= 0) return undefined; // the watch is there already
    const uid = obj.metadata.uid;
    if (this.#tombstoned(key, uid)) return undefined;
    // The watch showed this UID deleted: a note at or below that version is of the past; a newer
    // one proves the UID is still there (it had only left the label or field selection).
    const gone = this.#deletedByWatch.get(key);
    const sameUid = gone !== undefined && uid !== undefined && gone.uid === uid;
    if (sameUid && !(compareResourceVersions(rv, gone.rv) > 0)) return undefined;
    if (this.#belowFloor(key, rv)) return undefined;
    if (sameUid) this.#deletedByWatch.delete(key);
    // After an etcd restore, the first note of a key replaces what the old history left, whatever its version.
    const fresh = scope.historyChanged === true && !scope.writtenSinceList?.has(key);
    this.#written(scope, key, rv);
    return this.#upsert(key, obj, fresh);
  }

  /**
   * Records that an object this process has just written is no longer one this store holds (it
   * left the informer's label or field selection): it goes, unless the watch is already past it.
   */
  noteGone(obj: T): Change<T> | undefined {
    const key = keyOf(obj);
    const rv = obj.metadata.resourceVersion;
    const scope = this.#scope(obj.metadata.namespace);
    if (compareResourceVersions(rv, scope.watched) <= 0) return undefined;
    const old = this.#memory.get(key);
    // After an etcd restore, the first note of a key is news, whatever the old history left (as in noteWrite).
    const fresh = scope.historyChanged === true && !scope.writtenSinceList?.has(key);
    this.#written(scope, key, rv);
    if (old && !fresh && compareResourceVersions(old.metadata.resourceVersion, rv) >= 0) return undefined;
    // A floor also when the store holds nothing of the key yet: a late note of an older version
    // (a response that overtook none of ours) must not put back what this write took out.
    this.#raiseFloor(key, rv);
    if (!old) return undefined;
    this.#memory.remove(key);
    return { type: 'delete', object: old };
  }

  /**
   * Records that this process has just deleted an object that is now gone. An answer that names
   * no UID is left to the watch: the store cannot tell whether the object it holds is the deleted
   * one or one of the same name created since (it does not know the delete's resourceVersion).
   */
  noteDelete(key: ObjectKey, deleted: DeletedObject = {}): Change<T> | undefined {
    const k = formatKey(key);
    const scope = this.#scope(key.namespace);
    const old = this.#memory.get(k);
    const uid = deleted.uid;
    if (uid === undefined) return undefined;
    if (old && old.metadata.uid === uid) {
      scope.deletedSinceList?.add(k);
      this.#tomb(k, uid);
      this.#memory.remove(k);
      // Its version is a floor only in the history it was read in: while the relist after an etcd
      // restore is in flight, a version not noted since it began is the old history's, and would
      // hide the new history's versions up to it (the UID's tombstone keeps the object out).
      if (!scope.historyChanged || scope.writtenSinceList?.has(k)) this.#raiseFloor(k, old.metadata.resourceVersion);
      return { type: 'delete', object: old };
    }
    scope.deletedSinceList?.add(k);
    // Not (yet) in the store: keep it out when the watch brings it, unless the watch has shown its deletion already.
    if (this.#deletedByWatch.get(k)?.uid === uid) return undefined;
    this.#tomb(k, uid);
    // Under a selector it is most likely outside the selection, whose watch never delivers the
    // deletion that would clear the tombstone: only a relist does. Such tombstones are bounded
    // (oldest dropped first); a dropped one leaves that object to the watch (ADR 0002).
    if (this.#selective) {
      this.#unheldTombstones.delete(uid);
      this.#unheldTombstones.set(uid, k);
      if (this.#unheldTombstones.size > UNHELD_TOMBSTONES) {
        const [oldest, oldestKey] = this.#unheldTombstones.entries().next().value!;
        this.#unheldTombstones.delete(oldest);
        this.#untomb(oldestKey, oldest);
      }
    }
    return undefined;
  }

  /**
   * Stores `obj`, transformed, unless the store holds this version or a later one (most often the
   * watch echo of this process's own write, noted already: then nothing is transformed). With
   * `ignoreOrder`, any other version or content replaces what is held.
   */
  #upsert(key: string, obj: T, ignoreOrder = false): Change<T> | undefined {
    const old = this.#memory.get(key);
    if (old && !ignoreOrder && notNewer(obj, old)) return undefined;
    const stored = this.#transform(obj, old);
    if (old && ignoreOrder && sameVersion(old, stored) && sameContent(old, stored)) return undefined;
    this.#memory.set(key, stored);
    return old ? { type: 'update', object: stored, oldObject: old } : { type: 'add', object: stored };
  }

  #written(scope: Scope, key: string, rv: string | undefined): void {
    const since = scope.writtenSinceList;
    if (!since) return;
    const before = since.get(key);
    if (!since.has(key) || compareResourceVersions(rv, before) > 0) since.set(key, rv);
  }

  #advance(scope: Scope, rv: string | undefined): void {
    if (!rv) return;
    if (scope.watched === undefined || compareResourceVersions(rv, scope.watched) > 0) scope.watched = rv;
  }

  #raiseFloor(key: string, rv: string | undefined): void {
    if (!rv) return;
    const floor = this.#floors.get(key);
    if (floor === undefined || compareResourceVersions(rv, floor) > 0) this.#floors.set(key, rv);
  }

  /**
   * Whether a version of `key` is at or below the version this process took out of the store.
   * The floor goes once something at or above it arrives (the watch is then past it).
   */
  #belowFloor(key: string, rv: string | undefined): boolean {
    const floor = this.#floors.get(key);
    if (floor === undefined) return false;
    const order = compareResourceVersions(rv, floor);
    if (!(order < 0)) this.#floors.delete(key);
    return order <= 0;
  }

  #tombstoned(key: string, uid: string | undefined): boolean {
    return uid !== undefined && this.#tombstones.get(key)?.has(uid) === true;
  }

  #tomb(key: string, uid: string): void {
    const uids = this.#tombstones.get(key);
    if (uids) uids.add(uid);
    else this.#tombstones.set(key, new Set([uid]));
  }

  #untomb(key: string, uid: string | undefined): void {
    const uids = this.#tombstones.get(key);
    if (!uids || uid === undefined) return;
    uids.delete(uid);
    this.#unheldTombstones.delete(uid);
    if (uids.size === 0) this.#tombstones.delete(key);
  }

  /** Sets (or, with `undefined`, drops) the tombstones of `key`, forgetting those that go. */
  #setTombstones(key: string, uids: Set<string> | undefined): void {
    for (const uid of this.#tombstones.get(key) ?? []) if (!uids?.has(uid)) this.#unheldTombstones.delete(uid);
    if (uids) this.#tombstones.set(key, uids);
    else this.#tombstones.delete(key);
  }

  #rememberDeletion(key: string, uid: string, rv: string | undefined): void {
    this.#deletedByWatch.delete(key);
    this.#deletedByWatch.set(key, { uid, rv });
    if (this.#deletedByWatch.size > DELETION_FACTS) this.#deletedByWatch.delete(this.#deletedByWatch.keys().next().value!);
  }

  #scope(namespace: string | undefined): Scope {
    const id = this.#perNamespace ? (namespace ?? '') : '';
    let scope = this.#scopes.get(id);
    if (!scope) this.#scopes.set(id, (scope = {}));
    return scope;
  }

  #inScope(obj: T, namespace: string | undefined): boolean {
    return namespace === undefined || (obj.metadata.namespace ?? '') === namespace;
  }

  #keyInScope(key: string, namespace: string | undefined): boolean {
    return namespace === undefined || key.startsWith(`${namespace}/`);
  }
}

function keyOf(obj: KubeObject): string {
  return formatKey({ namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
}

function sameVersion(a: KubeObject, b: KubeObject): boolean {
  return a.metadata.uid === b.metadata.uid && a.metadata.resourceVersion === b.metadata.resourceVersion;
}

function sameContent(a: KubeObject, b: KubeObject): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `obj` is the version `held` is, or an older one (versions that do not compare: only if equal). */
function notNewer(obj: KubeObject, held: KubeObject): boolean {
  const order = compareResourceVersions(obj.metadata.resourceVersion, held.metadata.resourceVersion);
  return order <= 0 || (Number.isNaN(order) && obj.metadata.resourceVersion === held.metadata.resourceVersion);
}
