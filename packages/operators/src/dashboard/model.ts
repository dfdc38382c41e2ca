/**
 * The aggregation model: every Microservice and DigitalHumanProvider of every cluster as rows,
 * the clusters' states, and each object's condition timeline since the dashboard started.
 * Cluster sources feed it (from their informers); the HTTP API reads it; listeners (the SSE
 * streams) are told of every change as a `ServerEvent`, synchronously, in order.
 *
 * Guarantees: a listener is told only of real changes (an update that leaves the row as it was
 * emits nothing); when a cluster's reachability changes, its providers' `usable` follows and
 * each provider whose row changed is emitted. Memory is bounded per object (timeline).
 * @module
 */
import type { Condition, KubeObject } from '@converge/runtime';
import type { Microservice } from '../operators/microservice/api/index.ts';
import type { DigitalHumanProvider } from '../operators/provider/api/index.ts';
import { itemKey, microserviceItem, providerItem } from './items.ts';
import { appendTimeline, conditionTransitions } from './timeline.ts';
import type { ClusterView, Item, ItemKind, MicroserviceItem, ProviderItem, ServerEvent, TimelineEntry } from './shared/types.ts';

export type ModelListener = (event: ServerEvent) => void;

interface Entry {
  item: Item;
  object: KubeObject;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export class DashboardModel {
  readonly #clusters = new Map<string, ClusterView>();
  readonly #entries = new Map<string, Entry>();
  /** The keys of each cluster's providers: re-judged together when the cluster's reachability changes. */
  readonly #providersOf = new Map<string, Set<string>>();
  readonly #timelines = new Map<string, TimelineEntry[]>();
  readonly #seenUnconverged = new Map<string, string>();
  readonly #listeners = new Set<ModelListener>();
  readonly #now: () => Date;

  constructor(options: { now?: () => Date } = {}) {
    this.#now = options.now ?? (() => new Date());
  }

  subscribe(listener: ModelListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event: ServerEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch {
        // a listener's failure (a closed stream) is its own business
      }
    }
  }

  setCluster(view: ClusterView): void {
    const before = this.#clusters.get(view.name);
    if (before && same(before, view)) return;
    this.#clusters.set(view.name, view);
    this.#emit({ type: 'cluster', cluster: view });
    if (before?.reachable !== view.reachable || providersReadable(before) !== providersReadable(view)) {
      for (const key of [...(this.#providersOf.get(view.name) ?? [])]) this.#put(key, 'DigitalHumanProvider', view.name, this.#entries.get(key)!.object);
    }
  }

  clusters(): ClusterView[] {
    return [...this.#clusters.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  cluster(name: string): ClusterView | undefined {
    return this.#clusters.get(name);
  }

  /** An object was added or changed in `cluster`. */
  upsert(cluster: string, kind: ItemKind, object: KubeObject): void {
    const key = itemKey(kind, cluster, object.metadata.namespace ?? '', object.metadata.name ?? '');
    const before = this.#entries.get(key)?.object;
    const sameObject = before?.metadata.uid === object.metadata.uid;
    const seenAt = this.#now().toISOString();
    const transitions = conditionTransitions(
      sameObject ? (before as { status?: { conditions?: Condition[] } } | undefined)?.status?.conditions : undefined,
      (object as { status?: { conditions?: Condition[] } }).status?.conditions,
      seenAt,
      object.metadata.generation ?? 0,
    );
    if (!sameObject) {
      // Another object under this name (recreated; a relist reports it as an update): nothing of its predecessor's.
      this.#timelines.delete(key);
      this.#seenUnconverged.delete(key);
    }
    if (transitions.length) appendTimeline(this.#timelines.get(key) ?? this.#newTimeline(key), transitions);
    this.#put(key, kind, cluster, object);
  }

  #newTimeline(key: string): TimelineEntry[] {
    const t: TimelineEntry[] = [];
    this.#timelines.set(key, t);
    return t;
  }

  #put(key: string, kind: ItemKind, cluster: string, object: KubeObject): void {
    const seenAt = this.#seenUnconverged.get(key) ?? this.#now().toISOString();
    const item: Item = kind === 'Microservice'
      ? microserviceItem(cluster, object as Microservice, seenAt)
      : providerItem(cluster, object as DigitalHumanProvider, providersReadable(this.#clusters.get(cluster)), seenAt);
    if (item.converged) this.#seenUnconverged.delete(key);
    else this.#seenUnconverged.set(key, seenAt);
    const previous = this.#entries.get(key);
    this.#entries.set(key, { item, object });
    if (kind === 'DigitalHumanProvider' && !previous) this.#providersOf.set(cluster, (this.#providersOf.get(cluster) ?? new Set()).add(key));
    if (previous && same(previous.item, item)) return;
    this.#emit({ type: 'upsert', item });
  }

  /** An object was deleted from `cluster`. */
  remove(cluster: string, kind: ItemKind, object: KubeObject): void {
    const key = itemKey(kind, cluster, object.metadata.namespace ?? '', object.metadata.name ?? '');
    if (!this.#entries.delete(key)) return;
    this.#providersOf.get(cluster)?.delete(key);
    this.#timelines.delete(key);
    this.#seenUnconverged.delete(key);
    this.#emit({ type: 'delete', key, cluster, kind });
  }

  microservices(): MicroserviceItem[] {
    return [...this.#entries.values()].map((e) => e.item).filter((i): i is MicroserviceItem => i.kind === 'Microservice');
  }

  providers(): ProviderItem[] {
    return [...this.#entries.values()].map((e) => e.item).filter((i): i is ProviderItem => i.kind === 'DigitalHumanProvider');
  }

  items(): Item[] {
    return [...this.#entries.values()].map((e) => e.item);
  }

  get(key: string): { item: Item; object: KubeObject; timeline: TimelineEntry[] } | undefined {
    const e = this.#entries.get(key);
    return e && { item: e.item, object: e.object, timeline: [...(this.#timelines.get(key) ?? [])] };
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** Whether the cluster's providers are seen now: reachable, and their kind not refused (a row of a refused kind is what was last seen). */
function providersReadable(view: ClusterView | undefined): boolean {
  return view !== undefined && view.reachable && !(view.unreadableKinds ?? []).includes('DigitalHumanProvider');
}
