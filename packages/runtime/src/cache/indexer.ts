/**
 * The store's memory: objects by key, and the indexes over them (built-in: by namespace and by
 * controller UID; more can be added at any time and cover what is already stored).
 *
 * It decides nothing: `StoreWriter` (store.ts) decides what goes in, this keeps the indexes in
 * step with every `set` and `remove`.
 * @module
 */
import type { KubeObject } from '../objects/index.ts';

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

export class Indexer<T extends KubeObject> {
  readonly #objects = new Map<string, T>();
  readonly #indexFuncs: Record<string, IndexFunc<T>>;
  readonly #indexes = new Map<string, Map<string, Set<string>>>();

  constructor(indexes: Record<string, IndexFunc<T>> = {}) {
    this.#indexFuncs = { ...(defaultIndexes as Record<string, IndexFunc<T>>), ...indexes };
    for (const name of Object.keys(this.#indexFuncs)) this.#indexes.set(name, new Map());
  }

  /** Adds an index (and indexes what is already stored). Adding the same function again is a no-op. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    const existing = this.#indexFuncs[name];
    if (existing === fn) return;
    if (existing) throw new Error(`index ${name} already exists with another function`);
    this.#indexFuncs[name] = fn;
    this.#indexes.set(name, new Map());
    for (const [key, obj] of this.#objects) this.#indexOne(name, fn, key, obj);
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

  set(key: string, obj: T): void {
    const old = this.#objects.get(key);
    if (old) this.#unindex(key, old);
    this.#objects.set(key, obj);
    for (const [name, fn] of Object.entries(this.#indexFuncs)) this.#indexOne(name, fn, key, obj);
  }

  remove(key: string): void {
    const old = this.#objects.get(key);
    if (!old) return;
    this.#objects.delete(key);
    this.#unindex(key, old);
  }

  #indexOne(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const idx = this.#indexes.get(name)!;
    for (const value of fn(obj)) {
      let set = idx.get(value);
      if (!set) idx.set(value, (set = new Set()));
      set.add(key);
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
