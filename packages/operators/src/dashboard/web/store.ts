/**
 * The page's state: every row of every cluster, the clusters, and whether the live stream is
 * connected, kept from one EventSource on `/api/v1/events?snapshot=true` (a snapshot, then
 * changes; on reconnect a fresh snapshot replaces everything, so nothing is missed).
 * Subscribers are told at most once per animation frame, however many changes arrived.
 * @module
 */
import type { ClusterView, Item, ServerEvent } from '../shared/types.ts';

export type Connection = 'connecting' | 'live' | 'reconnecting';

export class Store {
  readonly items = new Map<string, Item>();
  clusters: ClusterView[] = [];
  connection: Connection = 'connecting';
  /** performance.now() when the first snapshot arrived; null before. */
  snapshotAt: number | null = null;
  /** Bumped on every change, so views can memoize on it. */
  version = 0;
  readonly #listeners = new Set<() => void>();
  #scheduled = false;
  #source: EventSource | undefined;

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    this.version += 1;
    if (this.#scheduled) return;
    this.#scheduled = true;
    requestAnimationFrame(() => {
      this.#scheduled = false;
      for (const l of this.#listeners) l();
    });
  }

  connect(url = '/api/v1/events?snapshot=true'): void {
    const source = new EventSource(url);
    this.#source = source;
    const on = (type: ServerEvent['type']) =>
      source.addEventListener(type, (e) => this.apply(JSON.parse((e as MessageEvent<string>).data) as ServerEvent));
    on('snapshot');
    on('upsert');
    on('delete');
    on('cluster');
    source.addEventListener('open', () => {
      this.connection = 'live';
      this.#changed();
    });
    source.addEventListener('error', () => {
      this.connection = 'reconnecting';
      this.#changed();
    });
  }

  close(): void {
    this.#source?.close();
  }

  apply(event: ServerEvent): void {
    switch (event.type) {
      case 'snapshot':
        this.items.clear();
        for (const i of event.microservices) this.items.set(i.key, i);
        for (const i of event.providers) this.items.set(i.key, i);
        this.clusters = event.clusters;
        this.connection = 'live';
        this.snapshotAt ??= performance.now();
        break;
      case 'upsert':
        this.items.set(event.item.key, event.item);
        break;
      case 'delete':
        this.items.delete(event.key);
        break;
      case 'cluster': {
        const i = this.clusters.findIndex((c) => c.name === event.cluster.name);
        if (i >= 0) this.clusters = this.clusters.map((c, j) => (j === i ? event.cluster : c));
        else this.clusters = [...this.clusters, event.cluster].sort((a, b) => (a.name < b.name ? -1 : 1));
        break;
      }
    }
    this.#changed();
  }
}
