/**
 * Lists then watches one resource (in one namespace or all), and never stops silently.
 *
 * Recovery, in the order it is tried:
 * - a watch the server ends normally resumes from the last resourceVersion seen (events and
 *   bookmarks both move it forward);
 * - a watch that has gone quiet (no event or bookmark within `quietTimeoutMs`) is closed and
 *   resumed the same way — this catches half-open connections that never error;
 * - `410 Gone` (the version was compacted away) relists, and the store reports only what differs;
 * - any other error reconnects after a jittered exponential backoff (`backoff`), for ever, until
 *   the caller's signal aborts.
 * `run(signal)` settles only when the signal aborts.
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import { ApiError } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';

export interface WatcherSink<T extends KubeObject> {
  replace(items: T[], resourceVersion: string): void;
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
}

export type WatchState = 'starting' | 'listing' | 'watching' | 'backoff' | 'stopped';

export interface WatchHealth {
  kind: string;
  namespace: string;
  state: WatchState;
  /** A first list has completed. */
  synced: boolean;
  /** False after repeated consecutive failures; true again once the watch makes progress. */
  healthy: boolean;
  /** Clock time of the last list, event or bookmark. */
  lastProgressAt: number;
  restarts: number;
  relists: number;
  consecutiveFailures: number;
  lastError?: string;
}

export interface WatcherOptions {
  client: KubeClient;
  kind: ResourceKind;
  /** Watch one namespace; all when absent or empty. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Restart a watch that delivered nothing for this long (default 180 000 ms). */
  quietTimeoutMs?: number;
  /** Server-side watch timeout is drawn from this range in seconds (default 300–600). */
  watchTimeoutSeconds?: [number, number];
  backoff?: { initialMs?: number; maxMs?: number };
  /** Consecutive failures after which the watch reports unhealthy (default 3). */
  unhealthyAfterFailures?: number;
  clock?: Clock;
  log?: Logger;
  /** Called when the watch restarts or relists (for metrics). */
  onRestart?: (reason: 'quiet' | 'error' | 'gone' | 'closed') => void;
  onRelist?: () => void;
}

class QuietWatch extends Error {}

export class Watcher<T extends KubeObject> {
  readonly #opts: WatcherOptions;
  readonly #sink: WatcherSink<T>;
  readonly #clock: Clock;
  #health: WatchHealth;

  constructor(options: WatcherOptions, sink: WatcherSink<T>) {
    this.#opts = options;
    this.#sink = sink;
    this.#clock = options.clock ?? systemClock;
    this.#health = {
      kind: options.kind.kind,
      namespace: options.namespace ?? '',
      state: 'starting',
      synced: false,
      healthy: true,
      lastProgressAt: this.#clock.now(),
      restarts: 0,
      relists: 0,
      consecutiveFailures: 0,
    };
  }

  health(): WatchHealth {
    return { ...this.#health };
  }

  async run(signal: AbortSignal): Promise<void> {
    const { client, kind } = this.#opts;
    const quietMs = this.#opts.quietTimeoutMs ?? 180_000;
    const [minTimeout, maxTimeout] = this.#opts.watchTimeoutSeconds ?? [300, 600];
    const unhealthyAfter = this.#opts.unhealthyAfterFailures ?? 3;
    const selectors = {
      ...(this.#opts.namespace ? { namespace: this.#opts.namespace } : {}),
      ...(this.#opts.labelSelector ? { labelSelector: this.#opts.labelSelector } : {}),
      ...(this.#opts.fieldSelector ? { fieldSelector: this.#opts.fieldSelector } : {}),
    };
    let resourceVersion: string | undefined;
    let needList = true;
    while (!signal.aborted) {
      const watchAbort = new AbortController();
      const onAbort = () => watchAbort.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let quietTimer: { cancel(): void } | undefined;
      const armQuietTimer = () => {
        quietTimer?.cancel();
        quietTimer = this.#clock.setTimer(quietMs, () => watchAbort.abort(new QuietWatch('watch went quiet')));
      };
      try {
        if (needList) {
          this.#health.state = 'listing';
          const list = await client.listAll(kind as ResourceKind<T>, { ...selectors, signal: watchAbort.signal });
          this.#sink.replace(list.items, list.resourceVersion);
          resourceVersion = list.resourceVersion;
          needList = false;
          this.#health.relists++;
          this.#opts.onRelist?.();
          this.#progress();
          this.#health.synced = true;
        }
        this.#health.state = 'watching';
        armQuietTimer();
        const timeoutSeconds = Math.round(minTimeout + Math.random() * (maxTimeout - minTimeout));
        const events = client.watch(
          kind as ResourceKind<T>,
          { ...selectors, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
          watchAbort.signal,
        );
        for await (const event of events) {
          armQuietTimer();
          this.#progress();
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
          if (event.type !== 'BOOKMARK') this.#sink.apply(event.type, event.object);
        }
        this.#progress();
        this.#opts.onRestart?.('closed');
      } catch (err) {
        if (signal.aborted) break;
        const reason = watchAbort.signal.reason;
        if (reason instanceof QuietWatch) {
          this.#health.restarts++;
          this.#opts.log?.warn({ kind: kind.kind, namespace: this.#opts.namespace }, 'watch went quiet; restarting it');
          this.#opts.onRestart?.('quiet');
          continue;
        }
        if (err instanceof ApiError && err.reason === 'Gone') {
          this.#health.restarts++;
          this.#opts.log?.info({ kind: kind.kind, namespace: this.#opts.namespace }, 'resourceVersion expired; relisting');
          this.#opts.onRestart?.('gone');
          needList = true;
          continue;
        }
        this.#health.restarts++;
        this.#health.consecutiveFailures++;
        this.#health.lastError = err instanceof Error ? err.message : String(err);
        if (this.#health.consecutiveFailures >= unhealthyAfter) this.#health.healthy = false;
        this.#opts.onRestart?.('error');
        const delay = this.#backoffMs(this.#health.consecutiveFailures);
        this.#opts.log?.warn(
          { kind: kind.kind, namespace: this.#opts.namespace, err: this.#health.lastError, retryInMs: Math.round(delay) },
          'watch failed; reconnecting',
        );
        this.#health.state = 'backoff';
        try {
          await this.#clock.sleep(delay, signal);
        } catch {
          break;
        }
      } finally {
        quietTimer?.cancel();
        signal.removeEventListener('abort', onAbort);
      }
    }
    this.#health.state = 'stopped';
  }

  #progress(): void {
    this.#health.lastProgressAt = this.#clock.now();
    this.#health.consecutiveFailures = 0;
    this.#health.healthy = true;
    delete this.#health.lastError;
  }

  #backoffMs(failures: number): number {
    const initial = this.#opts.backoff?.initialMs ?? 250;
    const max = this.#opts.backoff?.maxMs ?? 30_000;
    const ceiling = Math.min(max, initial * 2 ** Math.min(failures - 1, 30));
    return ceiling / 2 + Math.random() * (ceiling / 2); // "equal jitter"
  }
}
