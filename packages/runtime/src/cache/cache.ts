/**
 * The manager's shared cache: one informer per kind, shared by every controller.
 *
 * Watches are declared, never implied: `informer(kind)` declares one (before or after start);
 * `store(kind)` of an undeclared kind throws instead of quietly starting a cluster-wide watch
 * (the controller-runtime surprise this design avoids).
 *
 * The cache listens to the client's write notifications, so an object this process wrote is
 * in the cache when the write returns (read-your-own-writes, ADR 0002) — if the informer's
 * watch would deliver it (namespace, label and field selectors).
 *
 * A kind can also be cached by metadata only (`informer(kind, { metadataOnly: true })`, as
 * controller-runtime's metadata informers): its store holds `PartialObjectMetadata`, so memory
 * does not grow with the size of objects the process never reads in full (Secrets, for one).
 * That informer is distinct from a full one of the same kind; `store(kind)` is the full one.
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject, ObjectKey, PartialObjectMetadata, ResourceKind } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import { Informer } from './informer.ts';
import type { IndexFunc, Store } from './store.ts';
import type { WatchHealth, WatchRestartReason } from './watcher.ts';

export interface CacheOptions {
  client: KubeClient;
  /** Restrict every namespaced informer to these namespaces; all when absent or empty. */
  namespaces?: string[];
  quietTimeoutMs?: number;
  clock?: Clock;
  log?: Logger;
  onRestart?: (kind: string, reason: WatchRestartReason) => void;
  onRelist?: (kind: string) => void;
}

export interface DeclareOptions<T extends KubeObject> {
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Watch this kind in these namespaces instead of the cache's (`CacheOptions.namespaces`, the
   * manager's namespace mode): an operator limited to its teams' namespaces that reads its own
   * settings where it runs. Ignored for cluster-scoped kinds.
   */
  namespaces?: string[];
  indexes?: Record<string, IndexFunc<T>>;
  /**
   * Keep only part of each object (what a reader needs), to bound memory. Objects it returns are
   * marked partial: the client refuses to write them (read the object from the API server first).
   * It should not throw: an object it throws on is cached as received (not partial), and the
   * failure logged at error level, so no version is skipped.
   */
  transform?: (obj: T) => T;
  /** Items per list page (default 500): smaller for kinds whose objects are large. */
  pageSize?: number;
  /** Timeout of each list page (default: the client's request timeout). */
  pageTimeoutMs?: number;
  /** What to do when the API server does not serve this kind (shown in the watch error and `/readyz`). */
  installHint?: string;
}

export interface MetadataDeclareOptions extends Omit<DeclareOptions<PartialObjectMetadata>, 'transform'> {
  /** Cache `PartialObjectMetadata` only (list and watch ask the API server for metadata only). */
  metadataOnly: true;
}

function kindId(kind: ResourceKind, metadataOnly = false): string {
  return `${kind.group}/${kind.plural}${metadataOnly ? '#metadata' : ''}`;
}

export class Cache {
  readonly #opts: CacheOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #declared = new Map<string, DeclareOptions<KubeObject>>();
  #signal: AbortSignal | undefined;
  readonly #running: Promise<void>[] = [];

  constructor(options: CacheOptions) {
    this.#opts = options;
    const both = (kind: ResourceKind) => [this.#informers.get(kindId(kind)), this.#informers.get(kindId(kind, true))];
    options.client.observe({
      onWrite: (kind, obj) => {
        for (const i of both(kind)) i?.noteWrite(obj);
      },
      onDelete: (kind, key, still, deleted) => {
        for (const i of both(kind)) i?.noteDelete(key, still, deleted);
      },
    });
  }

  /**
   * Declares that this kind is cached and returns its informer (the same one for every caller).
   * Later declarations may add indexes; one that names no selector or transform (a controller's
   * `for`, `owns`, `watches`) takes the kind as first declared, selectors included (but not other
   * namespaces than its own: `DeclareOptions.namespaces` must agree); one that names
   * other selectors or another transform than the first declaration throws (one watch per kind
   * serves everyone, so they must agree): declare a restricted kind before anything uses it, as
   * controller-runtime configures its cache before the controllers. After `start`, a new
   * declaration starts its watch at once.
   */
  informer(kind: ResourceKind, options: MetadataDeclareOptions): Informer<PartialObjectMetadata>;
  informer<T extends KubeObject>(kind: ResourceKind<T>, options?: DeclareOptions<T>): Informer<T>;
  informer<T extends KubeObject>(kind: ResourceKind<T>, options: DeclareOptions<T> | MetadataDeclareOptions = {}): Informer<T> {
    const metadataOnly = 'metadataOnly' in options && options.metadataOnly === true;
    const id = kindId(kind, metadataOnly);
    let informer = this.#informers.get(id) as Informer<T> | undefined;
    if (informer) {
      const first = this.#declared.get(id)!;
      const transform = 'transform' in options ? options.transform : undefined;
      // Selectors and transform may be left to the first declaration; namespaces may not: a
      // declaration without them wants the cache's, and a narrower watch would hide its objects.
      const asDeclared = options.labelSelector === undefined && options.fieldSelector === undefined && transform === undefined;
      const sameNamespaces = (options.namespaces ?? []).join(',') === (first.namespaces ?? []).join(',');
      if (!sameNamespaces || (!asDeclared && ((options.labelSelector ?? '') !== (first.labelSelector ?? '') || (options.fieldSelector ?? '') !== (first.fieldSelector ?? '') || (transform && (transform as unknown) !== first.transform)))) {
        throw new Error(
          `${kind.kind} is already cached with other selectors or transform; one watch per kind serves every controller: declare it with its selectors before anything else uses the kind (before the controllers that watch it are built)`,
        );
      }
      if (options.indexes) informer.addIndexes(options.indexes as Record<string, IndexFunc<T>>);
    } else {
      this.#declared.set(id, options as unknown as DeclareOptions<KubeObject>);
      informer = new Informer<T>({
        client: this.#opts.client,
        kind,
        ...(this.#opts.namespaces ? { namespaces: this.#opts.namespaces } : {}),
        ...(this.#opts.quietTimeoutMs ? { quietTimeoutMs: this.#opts.quietTimeoutMs } : {}),
        ...(this.#opts.clock ? { clock: this.#opts.clock } : {}),
        ...(this.#opts.log ? { log: this.#opts.log } : {}),
        ...(this.#opts.onRestart ? { onRestart: this.#opts.onRestart } : {}),
        ...(this.#opts.onRelist ? { onRelist: this.#opts.onRelist } : {}),
        ...(options as DeclareOptions<T>),
        ...(metadataOnly ? { metadataOnly: true } : {}),
      });
      this.#informers.set(id, informer as unknown as Informer<KubeObject>);
      if (this.#signal) this.#running.push(informer.start(this.#signal));
    }
    return informer;
  }

  /** The read-only store of a declared kind (cached whole). Throws for a kind nobody declared. */
  store<T extends KubeObject>(kind: ResourceKind<T>): Store<T> {
    const informer = this.#informers.get(kindId(kind));
    if (!informer) {
      const partial = this.#informers.has(kindId(kind, true)) ? ' (it is cached by metadata only: use metadataStore)' : '';
      throw new Error(`${kind.kind} is not cached${partial}: declare it (cache.informer, or a controller's for/owns/watches)`);
    }
    return informer.store as unknown as Store<T>;
  }

  /** The read-only store of a kind declared `metadataOnly`. Throws for a kind nobody declared so. */
  metadataStore(kind: ResourceKind): Store<PartialObjectMetadata> {
    const informer = this.#informers.get(kindId(kind, true));
    if (!informer) throw new Error(`${kind.kind} is not cached by metadata only: declare it with cache.informer(kind, { metadataOnly: true })`);
    return informer.store as unknown as Store<PartialObjectMetadata>;
  }

  /** Shorthand for `store(kind).get(key)`. */
  get<T extends KubeObject>(kind: ResourceKind<T>, key: ObjectKey | string): T | undefined {
    return this.store(kind).get(key);
  }

  get synced(): boolean {
    return [...this.#informers.values()].every((i) => i.synced);
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
  }

  health(): WatchHealth[] {
    return [...this.#informers.values()].flatMap((i) => i.health());
  }

  /** Starts every declared informer; settles when the signal aborts and all watches stopped. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#signal) throw new Error('cache already started');
    this.#signal = signal;
    for (const informer of this.#informers.values()) this.#running.push(informer.start(signal));
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.all(this.#running);
  }
}
