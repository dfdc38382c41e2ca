/**
 * One resource kept in memory: watchers (one per namespace, or one for all) feeding a store,
 * and the handlers told of each change.
 *
 * Contracts:
 * - Handlers run synchronously, in change order, on the event loop; they must be cheap and
 *   must not throw (a thrown error is logged and swallowed). Enqueueing a key is the intended use.
 * - A handler added after the informer has synced is first told of every cached object as an add.
 * - `start(signal)` settles only when the signal aborts.
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject, ObjectKey, ResourceKind } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import { StoreWriter, dropManagedFields } from './store.ts';
import type { Change, IndexFunc, Store } from './store.ts';
import { Watcher } from './watcher.ts';
import type { WatchHealth } from './watcher.ts';

export type ChangeHandler<T extends KubeObject> = (change: Change<T>) => void;

export interface InformerOptions<T extends KubeObject> {
  client: KubeClient;
  kind: ResourceKind<T>;
  /** Namespaces to watch; all namespaces when absent or empty. Ignored for cluster-scoped kinds. */
  namespaces?: string[];
  labelSelector?: string;
  fieldSelector?: string;
  indexes?: Record<string, IndexFunc<T>>;
  transform?: (obj: T) => T;
  quietTimeoutMs?: number;
  clock?: Clock;
  log?: Logger;
  onRestart?: (kind: string, reason: string) => void;
  onRelist?: (kind: string) => void;
}

export class Informer<T extends KubeObject> {
  readonly kind: ResourceKind<T>;
  readonly store: Store<T>;
  readonly #writer: StoreWriter<T>;
  readonly #watchers: Watcher<T>[];
  readonly #handlers = new Set<ChangeHandler<T>>();
  readonly #log: Logger | undefined;
  readonly #syncWaiters = new Set<() => void>();
  #synced = false;
  #started = false;

  constructor(options: InformerOptions<T>) {
    this.kind = options.kind;
    this.#log = options.log;
    // Items of a list carry no apiVersion/kind; every cached object does (as client-go fills them).
    const { apiVersion, kind } = options.kind;
    const transform = options.transform ?? dropManagedFields;
    this.#writer = new StoreWriter<T>({
      ...(options.indexes ? { indexes: options.indexes } : {}),
      transform: (obj) => transform(obj.apiVersion && obj.kind ? obj : { ...obj, apiVersion, kind }),
    });
    this.store = this.#writer.readOnly();
    const namespaces = options.kind.namespaced && options.namespaces?.length ? options.namespaces : [undefined];
    this.#watchers = namespaces.map((namespace) => {
      const sink = {
        replace: (items: T[], rv: string) => this.#dispatchAll(this.#writer.replace(items, rv, namespace)),
        apply: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T) => this.#dispatch(this.#writer.apply(type, obj)),
      };
      return new Watcher<T>(
        {
          client: options.client,
          kind: options.kind,
          ...(namespace ? { namespace } : {}),
          ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
          ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
          ...(options.quietTimeoutMs ? { quietTimeoutMs: options.quietTimeoutMs } : {}),
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.log ? { log: options.log } : {}),
          onRestart: (reason) => options.onRestart?.(options.kind.kind, reason),
          onRelist: () => options.onRelist?.(options.kind.kind),
        },
        sink,
      );
    });
  }

  /** Adds indexes to the store (see `StoreWriter.addIndex`). */
  addIndexes(indexes: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexes)) this.#writer.addIndex(name, fn);
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** Adds a handler; returns a function that removes it. */
  addHandler(handler: ChangeHandler<T>): () => void {
    this.#handlers.add(handler);
    if (this.#synced) for (const object of this.store.list()) this.#call(handler, { type: 'add', object });
    return () => this.#handlers.delete(handler);
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`informer for ${this.kind.kind} already started`);
    this.#started = true;
    await Promise.all(this.#watchers.map((w) => w.run(signal)));
  }

  /** Resolves once every watcher has completed its first list; rejects if the signal aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#syncWaiters.delete(done);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.add(done);
    });
  }

  health(): WatchHealth[] {
    return this.#watchers.map((w) => w.health());
  }

  /** Read-your-own-writes: the client reports what this process wrote. */
  noteWrite(obj: T): void {
    this.#dispatch(this.#writer.noteWrite(obj));
  }

  noteDelete(key: ObjectKey, still: T | undefined): void {
    this.#dispatch(still ? this.#writer.noteWrite(still) : this.#writer.noteDelete(key));
  }

  #dispatchAll(changes: Change<T>[]): void {
    for (const c of changes) this.#dispatch(c);
    // replace() runs just before the watcher marks itself synced: check once it has.
    if (!this.#synced) this.#pendingSync();
  }

  #pendingSync(): void {
    queueMicrotask(() => {
      if (this.#synced || !this.#watchers.every((w) => w.health().synced)) return;
      this.#synced = true;
      for (const w of this.#syncWaiters) w();
      this.#syncWaiters.clear();
    });
  }

  #dispatch(change: Change<T> | undefined): void {
    if (!change) return;
    for (const h of this.#handlers) this.#call(h, change);
  }

  #call(handler: ChangeHandler<T>, change: Change<T>): void {
    try {
      handler(change);
    } catch (err) {
      this.#log?.error({ err, kind: this.kind.kind }, 'change handler threw');
    }
  }
}
