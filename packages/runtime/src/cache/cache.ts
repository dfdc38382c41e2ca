/**
 * The manager's shared cache: one informer per kind, shared by every controller.
 *
 * Watches are declared, never implied: `informer(kind)` declares one (before or after start);
 * `store(kind)` of an undeclared kind throws instead of quietly starting a cluster-wide watch
 * (the controller-runtime surprise this design avoids).
 *
 * The cache listens to the client's write notifications, so an object this process wrote is
 * in the cache when the write returns (read-your-own-writes, ADR 0002).
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject, ObjectKey, ResourceKind } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import { Informer } from './informer.ts';
import type { IndexFunc, Store } from './store.ts';
import type { WatchHealth } from './watcher.ts';

export interface CacheOptions {
  client: KubeClient;
  /** Restrict every namespaced informer to these namespaces; all when absent or empty. */
  namespaces?: string[];
  quietTimeoutMs?: number;
  clock?: Clock;
  log?: Logger;
  onRestart?: (kind: string, reason: string) => void;
  onRelist?: (kind: string) => void;
}

export interface DeclareOptions<T extends KubeObject> {
  labelSelector?: string;
  fieldSelector?: string;
  indexes?: Record<string, IndexFunc<T>>;
  transform?: (obj: T) => T;
}

function kindId(kind: ResourceKind): string {
  return `${kind.group}/${kind.plural}`;
}

export class Cache {
  readonly #opts: CacheOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #declared = new Map<string, DeclareOptions<KubeObject>>();
  #signal: AbortSignal | undefined;
  readonly #running: Promise<void>[] = [];

  constructor(options: CacheOptions) {
    this.#opts = options;
    options.client.observe({
      onWrite: (kind, obj) => this.#informers.get(kindId(kind))?.noteWrite(obj),
      onDelete: (kind, key, still) => this.#informers.get(kindId(kind))?.noteDelete(key, still),
    });
  }

  /**
   * Declares that this kind is cached and returns its informer (the same one for every caller).
   * Later declarations may add indexes; asking for another selector or transform than the first
   * declaration throws (one watch per kind serves everyone, so they must agree). After `start`, a
   * new declaration starts its watch at once.
   */
  informer<T extends KubeObject>(kind: ResourceKind<T>, options: DeclareOptions<T> = {}): Informer<T> {
    const id = kindId(kind);
    let informer = this.#informers.get(id) as Informer<T> | undefined;
    if (informer) {
      const first = this.#declared.get(id)!;
      if ((options.labelSelector ?? '') !== (first.labelSelector ?? '') || (options.fieldSelector ?? '') !== (first.fieldSelector ?? '') || (options.transform && (options.transform as unknown) !== first.transform)) {
        throw new Error(`${kind.kind} is already cached with other selectors or transform; one watch per kind serves every controller`);
      }
      if (options.indexes) informer.addIndexes(options.indexes);
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
        ...options,
      });
      this.#informers.set(id, informer as unknown as Informer<KubeObject>);
      if (this.#signal) this.#running.push(informer.start(this.#signal));
    }
    return informer;
  }

  /** The read-only store of a declared kind. Throws for a kind nobody declared. */
  store<T extends KubeObject>(kind: ResourceKind<T>): Store<T> {
    const informer = this.#informers.get(kindId(kind));
    if (!informer) throw new Error(`${kind.kind} is not cached: declare it (cache.informer, or a controller's for/owns/watches)`);
    return informer.store as unknown as Store<T>;
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
