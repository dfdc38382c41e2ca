/**
 * The page's state: every row of every cluster, the clusters, and whether the live stream is
 * connected, kept from one EventSource on `/api/v1/events?snapshot=true` (a snapshot, then
 * changes; on reconnect a fresh snapshot replaces everything, so nothing is missed).
 * Subscribers are told at most once per animation frame, however many changes arrived.
 *
 * Reconnecting: the browser reconnects by itself after a dropped connection, but gives up for
 * good on an answer that is not a 200 event stream (a reverse proxy's 502/503/504 while the
 * dashboard restarts, a 401). The store then opens a new EventSource itself, after `retryMs`
 * doubling up to `maxRetryMs`, until one opens; events of an EventSource it let go are ignored.
 * @module
 */
import type { ClusterView, Item, ServerEvent } from '../shared/types.ts';

export type Connection = 'connecting' | 'live' | 'reconnecting';

export interface StoreOptions {
  /** Wait before a new EventSource when the browser gave up on one (default 1000 ms); doubles. */
  retryMs?: number;
  /** The longest wait (default 30 s). */
  maxRetryMs?: number;
}

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
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  #nextRetryMs: number;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(options: StoreOptions = {}) {
    this.#retryMs = options.retryMs ?? 1_000;
    this.#maxRetryMs = options.maxRetryMs ?? 30_000;
    this.#nextRetryMs = this.#retryMs;
  }

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
    this.#closed = false;
    clearTimeout(this.#retryTimer);
    this.#source?.close();
    const source = new EventSource(url);
    this.#source = source;
    const current = () => this.#source === source && !this.#closed;
    // With a snapshot asked for, the page is live once it is in (the `snapshot` case of `apply`):
    // before, a reconnected page still shows the old stream's rows.
    const snapshotFirst = new URL(url, 'http://page.invalid').searchParams.get('snapshot') === 'true';
    const on = (type: ServerEvent['type']) =>
      source.addEventListener(type, (e) => {
        if (current()) this.apply(JSON.parse((e as MessageEvent<string>).data) as ServerEvent);
      });
    on('snapshot');
    on('upsert');
    on('delete');
    on('cluster');
    source.addEventListener('open', () => {
      if (!current()) return;
      this.#nextRetryMs = this.#retryMs;
      if (snapshotFirst) return;
      this.connection = 'live';
      this.#changed();
    });
    source.addEventListener('error', () => {
      if (!current()) return;
      this.connection = 'reconnecting';
      this.#changed();
      // CONNECTING: the browser retries by itself. CLOSED: it gave up for good; retry here.
      if (source.readyState !== EventSource.CLOSED) return;
      const wait = this.#nextRetryMs;
      this.#nextRetryMs = Math.min(this.#nextRetryMs * 2, this.#maxRetryMs);
      this.#retryTimer = setTimeout(() => {
        if (current()) this.connect(url);
      }, wait);
    });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
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
