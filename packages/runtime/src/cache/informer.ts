/**
 * One resource kept in memory: watchers (one per namespace, or one for all) feeding a store,
 * and the handlers told of each change.
 *
 * Contracts:
 * - Handlers run synchronously, in change order, on the event loop; they must be cheap and
 *   must not throw (a thrown error is logged and swallowed). Enqueueing a key is the intended use.
 * - A handler added after the informer has synced is first told of every cached object as an add.
 * - `start(signal)` settles only when the signal aborts.
 * - Write-through respects the informer's scope: an object this process wrote enters the store
 *   only if the watch would deliver it (watched namespace, label and field selectors); one that
 *   left the selection is removed; one whose field selector cannot be judged here is left to the
 *   watch.
 * - `metadataOnly` informers hold `PartialObjectMetadata`; those and the objects of a declared
 *   `transform` are marked partial, and the client refuses to write them back.
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject, ObjectKey, ResourceKind } from '../objects/index.ts';
import { markPartial, toPartialObjectMetadata } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import { StoreWriter, dropManagedFields } from './store.ts';
import type { Change, DeletedObject, IndexFunc, Store } from './store.ts';
import { Watcher } from './watcher.ts';
import type { WatchHealth, WatchRestartReason } from './watcher.ts';
import { compileSelection } from './selectors.ts';
import type { Selection } from './selectors.ts';

export type ChangeHandler<T extends KubeObject> = (change: Change<T>) => void;

export interface InformerOptions<T extends KubeObject> {
  client: KubeClient;
  kind: ResourceKind<T>;
  /** Namespaces to watch; all namespaces when absent or empty. Ignored for cluster-scoped kinds. */
  namespaces?: string[];
  labelSelector?: string;
  fieldSelector?: string;
  indexes?: Record<string, IndexFunc<T>>;
  /**
   * Reduces each object before it is stored (what it keeps is all a reader gets; marked partial).
   * It must keep `metadata.name`, `namespace`, `uid` and `resourceVersion` unchanged: the store
   * orders and keys objects by them, read before the transform runs.
   */
  transform?: (obj: T) => T;
  /** List and watch metadata only: the store holds `PartialObjectMetadata`. */
  metadataOnly?: boolean;
  /** Items per list page (default 500). */
  pageSize?: number;
  /** Timeout of each list page (default: the client's request timeout). */
  pageTimeoutMs?: number;
  /** What to do when the API server does not serve this kind (e.g. how to install its CRD). */
  installHint?: string;
  quietTimeoutMs?: number;
  clock?: Clock;
  log?: Logger;
  onRestart?: (kind: string, reason: WatchRestartReason) => void;
  onRelist?: (kind: string) => void;
}

export class Informer<T extends KubeObject> {
  readonly kind: ResourceKind<T>;
  readonly store: Store<T>;
  readonly #writer: StoreWriter<T>;
  readonly #watchers: Watcher<T>[];
  readonly #handlers = new Set<ChangeHandler<T>>();
  readonly #log: Logger | undefined;
  /** Failures of the transform and of each index function (see `#functionFailed`). */
  readonly #functionFailures = new Map<string, number>();
  readonly #syncWaiters = new Set<() => void>();
  readonly #namespaces: Set<string> | undefined;
  readonly #selection: Selection;
  #synced = false;
  #started = false;

  constructor(options: InformerOptions<T>) {
    this.kind = options.kind;
    this.#log = options.log;
    // Items of a list carry no apiVersion/kind; every cached object does (as client-go fills them).
    const { apiVersion, kind } = options.kind;
    const user = options.transform;
    const transform: (obj: T) => T = options.metadataOnly
      ? (obj) => toPartialObjectMetadata(obj) as unknown as T
      : user
        ? (obj) => markPartial(user(obj))
        : dropManagedFields;
    const perNamespace = options.kind.namespaced && (options.namespaces?.length ?? 0) > 0;
    this.#namespaces = perNamespace ? new Set(options.namespaces) : undefined;
    this.#selection = compileSelection(options.labelSelector, options.fieldSelector);
    const failed = this.#functionFailed.bind(this);
    this.#writer = new StoreWriter<T>({
      ...(options.indexes ? { indexes: options.indexes } : {}),
      perNamespace,
      selective: Boolean(options.labelSelector || options.fieldSelector),
      transform: (obj) => {
        const full = obj.apiVersion && obj.kind ? obj : { ...obj, apiVersion, kind };
        try {
          return transform(full);
        } catch (err) {
          failed('transform', full, err);
          return dropManagedFields(full);
        }
      },
      onFunctionError: failed,
    });
    this.store = this.#writer.readOnly();
    const namespaces = perNamespace ? options.namespaces! : [undefined];
    this.#watchers = namespaces.map((namespace) => {
      const sink = {
        beginList: (historyChanged: boolean) => this.#writer.beginList(namespace, { historyChanged }),
        replace: (items: T[], rv: string) => this.#dispatchAll(this.#writer.replace(items, rv, namespace)),
        apply: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T) => this.#dispatch(this.#writer.apply(type, obj)),
        bookmark: (rv: string) => this.#writer.bookmark(rv, namespace),
      };
      return new Watcher<T>(
        {
          client: options.client,
          kind: options.kind,
          ...(namespace ? { namespace } : {}),
          ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
          ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
          ...(options.metadataOnly ? { metadataOnly: true } : {}),
          ...(options.pageSize ? { pageSize: options.pageSize } : {}),
          ...(options.pageTimeoutMs ? { pageTimeoutMs: options.pageTimeoutMs } : {}),
          ...(options.installHint ? { installHint: options.installHint } : {}),
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

  /**
   * Resolves once every watcher has completed its first list; rejects if the signal aborts first
   * (at once if it already has: an 'abort' listener added then would never run).
   */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
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

  /**
   * The transform or an index function threw (a bug in the caller's function: the object is
   * cached all the same, see `StoreWriterOptions.onFunctionError`): an error log for the first
   * failure of each function, then one per 1,000 with the count.
   */
  #functionFailed(fn: string, obj: KubeObject, err: unknown): void {
    const count = (this.#functionFailures.get(fn) ?? 0) + 1;
    this.#functionFailures.set(fn, count);
    if (count !== 1 && count % 1_000 !== 0) return;
    this.#log?.error({ kind: this.kind.kind, fn, object: `${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name ?? ''}`, resourceVersion: obj.metadata.resourceVersion, failures: count, err }, `the cache's ${fn} threw; the object is cached ${fn === 'transform' ? 'as received' : 'under no value of that index'}`);
  }

  health(): WatchHealth[] {
    return this.#watchers.map((w) => w.health());
  }

  /** Read-your-own-writes: the client reports what this process wrote (see the scope rule above). */
  noteWrite(obj: T): void {
    if (!this.#watches(obj.metadata.namespace)) return;
    const selected = this.#selection.matches(obj);
    if (selected === undefined) return; // a field selector this process cannot judge: the watch tells
    this.#dispatch(selected ? this.#writer.noteWrite(obj) : this.#writer.noteGone(obj));
  }

  /** This process deleted `key`: `still` is the object when it still exists (finalizers). */
  noteDelete(key: ObjectKey, still: T | undefined, deleted: DeletedObject = {}): void {
    if (still) return this.noteWrite(still);
    if (!this.#watches(key.namespace)) return;
    this.#dispatch(this.#writer.noteDelete(key, deleted));
  }

  #watches(namespace: string | undefined): boolean {
    return !this.#namespaces || this.#namespaces.has(namespace ?? '');
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
