/**
 * The store's memory: objects by key, and the indexes over them (built-in: by namespace and by
 * controller UID; more can be added at any time and cover what is already stored).
 *
 * It decides nothing: `StoreWriter` (store.ts) decides what goes in, this keeps the indexes in
 * step with every `set` and `remove`.
 * @module
 */
import type { KubeObject } from '../objects/index.ts';

/**
 * An index's values for an object. It must depend on the object alone: the indexer keeps an
 * object's entries as they are while a new version gives the same values. It should not throw;
 * an object it throws on is stored all the same, under no value of that index (the informer logs
 * the failure at error level), so the cache never skips a version.
 */
export type IndexFunc<T> = (obj: T) => string[];

/** Built-in index: objects by their controller owner's UID. */
export const CONTROLLER_UID_INDEX = 'controller-uid';
/** Built-in index: objects by namespace. */
export const NAMESPACE_INDEX = 'namespace';

const defaultIndexes: Record<string, IndexFunc<KubeObject>> = {
  [NAMESPACE_INDEX]: (o) => [o.metadata.namespace ?? ''],
  [CONTROLLER_UID_INDEX]: (o) => {
    const ref = o.metadata.ownerReferences?.find((r) => r.controller);
    return ref ? [ref.uid] : [];
  },
};

/** One index: its function and, by value, the keys of the objects it gives that value. */
interface Index<T> {
  fn: IndexFunc<T>;
  byValue: Map<string, Set<string>>;
}

export class Indexer<T extends KubeObject> {
  readonly #objects = new Map<string, T>();
  readonly #indexes = new Map<string, Index<T>>();
  readonly #onError: ((index: string, obj: T, err: unknown) => void) | undefined;

  /** `onError`: an index function threw on `obj` (see `IndexFunc`). */
  constructor(indexes: Record<string, IndexFunc<T>> = {}, onError?: (index: string, obj: T, err: unknown) => void) {
    const all = { ...(defaultIndexes as Record<string, IndexFunc<T>>), ...indexes };
    for (const [name, fn] of Object.entries(all)) this.#indexes.set(name, { fn, byValue: new Map() });
    this.#onError = onError;
  }

  /** `fn`'s values for `obj`; none when it throws (reported). Deterministic, as `fn` is. */
  #values(name: string, fn: IndexFunc<T>, obj: T): string[] {
    try {
      return fn(obj);
    } catch (err) {
      this.#onError?.(name, obj, err);
      return [];
    }
  }

  /** Adds an index (and indexes what is already stored). Adding the same function again is a no-op. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    const existing = this.#indexes.get(name);
    if (existing?.fn === fn) return;
    if (existing) throw new Error(`index ${name} already exists with another function`);
    const index: Index<T> = { fn, byValue: new Map() };
    this.#indexes.set(name, index);
    for (const [key, obj] of this.#objects) addKey(index.byValue, this.#values(name, fn, obj), key);
  }

  get size(): number {
    return this.#objects.size;
  }

  get(key: string): T | undefined {
    return this.#objects.get(key);
  }

  entries(): IterableIterator<[string, T]> {
    return this.#objects.entries();
  }

  values(): T[] {
    return [...this.#objects.values()];
  }

  keys(): string[] {
    return [...this.#objects.keys()];
  }

  /** How many objects `byIndex` would return, without copying them out. */
  countByIndex(index: string, value: string): number {
    const idx = this.#indexes.get(index)?.byValue;
    if (!idx) throw new Error(`no index named ${index}`);
    return idx.get(value)?.size ?? 0;
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.#indexes.get(index)?.byValue;
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

  set(key: string, obj: T): void {
    const old = this.#objects.get(key);
    this.#objects.set(key, obj);
    for (const [name, { fn, byValue }] of this.#indexes) {
      const values = this.#values(name, fn, obj);
      if (old) {
        // A new version mostly keeps its index values (namespace, owner): then nothing moves.
        // (What the old version gave, computed again: it threw then, it throws now, and was filed under none.)
        const before = this.#values(name, fn, old);
        if (sameValues(before, values)) continue;
        removeKey(byValue, before, key);
      }
      addKey(byValue, values, key);
    }
  }

  remove(key: string): void {
    const old = this.#objects.get(key);
    if (!old) return;
    this.#objects.delete(key);
    for (const [name, { fn, byValue }] of this.#indexes) removeKey(byValue, this.#values(name, fn, old), key);
  }
}

function sameValues(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function addKey(byValue: Map<string, Set<string>>, values: string[], key: string): void {
  for (const value of values) {
    let set = byValue.get(value);
    if (!set) byValue.set(value, (set = new Set()));
    set.add(key);
  }
}

function removeKey(byValue: Map<string, Set<string>>, values: string[], key: string): void {
  for (const value of values) {
    const set = byValue.get(value);
    set?.delete(key);
    if (set?.size === 0) byValue.delete(value);
  }
}
