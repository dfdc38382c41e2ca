/**
 * Caches objects in memory: a read-only `Store` for reconcilers and handlers, and the
 * `StoreWriter` that only the cache's watchers and the client's write notifications feed.
 *
 * Guarantees:
 * - Readers get the objects the API server sent (after the transform), never copies that
 *   someone else has mutated: treat them as immutable.
 * - A change is reported once: an object written by this process is applied when the write
 *   returns (read-your-own-writes), and the watch event with the same resourceVersion that
 *   follows is dropped. Older versions never replace newer ones.
 * - A relist reports only what differs from the store, so it never causes a reconcile storm.
 *
 * Assumptions: resourceVersions of one resource are integers that grow (true of every
 * etcd-backed API server; ADR 0002 explains why the runtime relies on it). A non-numeric
 * version disables the ordering guard and the newest event wins.
 * @module
 */
import type { KubeObject, ObjectKey } from '../objects/index.ts';
import { formatKey } from '../objects/index.ts';

export type IndexFunc<T> = (obj: T) => string[];

/** Built-in index: objects by their controller owner's UID. */
export const CONTROLLER_UID_INDEX = 'controller-uid';
/** Built-in index: objects by namespace. */
export const NAMESPACE_INDEX = 'namespace';

export interface Store<T extends KubeObject> {
  /** The cached object with this key, or undefined. */
  get(key: ObjectKey | string): T | undefined;
  /** Every cached object, or those of one namespace. */
  list(namespace?: string): T[];
  /** Objects whose index function returned `value` (see `CONTROLLER_UID_INDEX`, `NAMESPACE_INDEX`). */
  byIndex(index: string, value: string): T[];
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
  /** Applied to every object before it is stored (default: drop `metadata.managedFields`). */
  transform?: (obj: T) => T;
}

export function dropManagedFields<T extends KubeObject>(obj: T): T {
  if (!obj.metadata?.managedFields) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

const defaultIndexes: Record<string, IndexFunc<KubeObject>> = {
  [NAMESPACE_INDEX]: (o) => [o.metadata.namespace ?? ''],
  [CONTROLLER_UID_INDEX]: (o) => {
    const ref = o.metadata.ownerReferences?.find((r) => r.controller);
    return ref ? [ref.uid] : [];
  },
};

/** Compares resourceVersions: negative when a is older than b. NaN when they cannot be ordered. */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return Number.NaN;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export class StoreWriter<T extends KubeObject> implements Store<T> {
  readonly #objects = new Map<string, T>();
  readonly #indexFuncs: Record<string, IndexFunc<T>>;
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  readonly #transform: (obj: T) => T;
  /** UIDs of objects this process deleted, until the watch confirms the deletion. */
  readonly #tombstones = new Map<string, string>();

  constructor(options: StoreWriterOptions<T> = {}) {
    this.#indexFuncs = { ...(defaultIndexes as Record<string, IndexFunc<T>>), ...options.indexes };
    for (const name of Object.keys(this.#indexFuncs)) this.#indexes.set(name, new Map());
    this.#transform = options.transform ?? dropManagedFields;
  }

  /** Adds an index (and indexes what is already stored). Adding the same function again is a no-op. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    const existing = this.#indexFuncs[name];
    if (existing === fn) return;
    if (existing) throw new Error(`index ${name} already exists with another function`);
    this.#indexFuncs[name] = fn;
    const idx = new Map<string, Set<string>>();
    this.#indexes.set(name, idx);
    for (const [key, obj] of this.#objects) {
      for (const value of fn(obj)) {
        let set = idx.get(value);
        if (!set) idx.set(value, (set = new Set()));
        set.add(key);
      }
    }
  }

  /** A view that cannot write. */
  readOnly(): Store<T> {
    const get = this.get.bind(this);
    const list = this.list.bind(this);
    const byIndex = this.byIndex.bind(this);
    const keys = this.keys.bind(this);
    const self = this;
    return Object.freeze({ get, list, byIndex, keys, get size() { return self.size; } });
  }

  get size(): number {
    return this.#objects.size;
  }

  get(key: ObjectKey | string): T | undefined {
    return this.#objects.get(typeof key === 'string' ? key : formatKey(key));
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.#objects.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.#indexes.get(index);
    if (!idx) throw new Error(`no index named ${index}`);
    const keys = idx.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const o = this.#objects.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  keys(): string[] {
    return [...this.#objects.keys()];
  }

  /**
   * Replaces the contents (of one namespace, when `namespace` is given) with a fresh list taken
   * at `listResourceVersion`, and returns what changed. Objects newer than the list (written by
   * this process after the list was taken) are kept.
   */
  replace(items: T[], listResourceVersion: string, namespace?: string): Change<T>[] {
    const changes: Change<T>[] = [];
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = this.#transform(raw);
      const key = formatKey({ namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
      seen.add(key);
      const change = this.#upsert(key, obj);
      if (change) changes.push(change);
    }
    for (const [key, old] of this.#objects) {
      if (seen.has(key)) continue;
      if (namespace !== undefined && (old.metadata.namespace ?? '') !== namespace) continue;
      if (compareResourceVersions(old.metadata.resourceVersion, listResourceVersion) > 0) continue;
      this.#remove(key, old);
      changes.push({ type: 'delete', object: old });
    }
    this.#tombstones.clear();
    return changes;
  }

  /** Applies one watch event; returns the change, or undefined when it changes nothing. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', raw: T): Change<T> | undefined {
    const obj = this.#transform(raw);
    const key = formatKey({ namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
    if (type === 'DELETED') {
      this.#tombstones.delete(key);
      const old = this.#objects.get(key);
      if (!old) return undefined;
      if (compareResourceVersions(old.metadata.resourceVersion, obj.metadata.resourceVersion) > 0 && old.metadata.uid !== obj.metadata.uid) {
        return undefined; // a newer object of the same name already replaced it
      }
      this.#remove(key, old);
      return { type: 'delete', object: old };
    }
    if (this.#tombstones.get(key) === obj.metadata.uid) return undefined;
    return this.#upsert(key, obj);
  }

  /** Records an object this process has just written (read-your-own-writes). */
  noteWrite(raw: T): Change<T> | undefined {
    return this.apply('MODIFIED', raw);
  }

  /** Records that this process has just deleted an object that is now gone. */
  noteDelete(key: ObjectKey): Change<T> | undefined {
    const k = formatKey(key);
    const old = this.#objects.get(k);
    if (!old) return undefined;
    if (old.metadata.uid) this.#tombstones.set(k, old.metadata.uid);
    this.#remove(k, old);
    return { type: 'delete', object: old };
  }

  #upsert(key: string, obj: T): Change<T> | undefined {
    const old = this.#objects.get(key);
    if (old) {
      const order = compareResourceVersions(obj.metadata.resourceVersion, old.metadata.resourceVersion);
      if (order <= 0) return undefined; // same or older version: already seen
      if (Number.isNaN(order) && obj.metadata.resourceVersion === old.metadata.resourceVersion) return undefined;
      this.#unindex(key, old);
    }
    this.#objects.set(key, obj);
    this.#index(key, obj);
    return old ? { type: 'update', object: obj, oldObject: old } : { type: 'add', object: obj };
  }

  #remove(key: string, old: T): void {
    this.#objects.delete(key);
    this.#unindex(key, old);
  }

  #index(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexFuncs)) {
      const idx = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        let set = idx.get(value);
        if (!set) idx.set(value, (set = new Set()));
        set.add(key);
      }
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexFuncs)) {
      const idx = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const set = idx.get(value);
        set?.delete(key);
        if (set?.size === 0) idx.delete(value);
      }
    }
  }
}
