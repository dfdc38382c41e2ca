/**
 * Lists then watches one resource (in one namespace or all), and never stops silently.
 *
 * Recovery, in the order it is tried:
 * - a watch the server ends normally resumes from the last resourceVersion seen (events and
 *   bookmarks both move it forward) — at once when the watch delivered something; a watch that
 *   ended within a second with nothing delivered is a failure, as client-go treats it ("very
 *   short watch"), and backs off like one: a proxy or server that closes every watch at once
 *   must not make the process spin at its client QPS (the token bucket that writes and lease
 *   renewals share). Only a list, an event or a bookmark counts as progress and resets the
 *   failure count; a watch that ends with nothing delivered does not;
 * - a watch that has gone quiet (no event or bookmark within `quietTimeoutMs`) is closed and
 *   resumed the same way — this catches half-open connections that never error;
 * - `410 Gone` on the watch (the version was compacted away) relists at once, and the store
 *   reports only what differs; a list answered 410 (the client already lists unpaged when a
 *   continue token expires) is a failure like any other and backs off;
 * - `504 Too large resource version` (the API server's history is behind ours: etcd restored
 *   from a backup) relists from "" and the list is taken as a new history (see `store.ts`);
 * - before a watch resumes after a failure or a quiet spell, a one-item list asks where the API
 *   server's history is: behind the resourceVersion we would resume from (etcd restored from a
 *   backup without `--bump-revision`), it relists as a new history too. kube-apiserver 1.36 does
 *   not answer such a watch with 504 but with silence; resuming it would wait for the new
 *   history to pass ours and then miss every change in between (ghosts of objects the backup
 *   does not have). A restore restarts the API server, so the watch always fails first. Only
 *   resourceVersions that compare as numbers (`resource-version.ts`) are checked;
 * - a kind the API server does not serve (404 on the collection: a CustomResourceDefinition not
 *   installed, or deleted) is reported by name, with what to do (`installHint`), and retried with
 *   a short, capped backoff (≤ 2 s by default), so it recovers quickly once installed;
 * - an answer with Retry-After (429, e.g. "storage is (re)initializing" while a re-created CRD's
 *   storage starts) is retried after what the server asked (at most the backoff's maximum), not
 *   after a backoff grown by the failures before it;
 * - any other error reconnects after a jittered exponential backoff (`backoff`), for ever, until
 *   the caller's signal aborts.
 * `run(signal)` settles only when the signal aborts.
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import type { KubeClient, ListAllOptions } from '../client/index.ts';
import { ApiError } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';
import { compareResourceVersions } from './resource-version.ts';

export interface WatcherSink<T extends KubeObject> {
  /** A list is about to be requested (`historyChanged`: the API server's history was found behind ours, by a 504 Too large resource version or before a watch resumed). */
  beginList?(historyChanged: boolean): void;
  replace(items: T[], resourceVersion: string): void;
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
  /** A bookmark: every event up to `resourceVersion` has been delivered. */
  bookmark?(resourceVersion: string): void;
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
  /** Wall-clock time of the last list, event or bookmark (to show; it moves with clock steps). */
  lastProgressAt: number;
  /** How long ago that was when this snapshot was taken, on the monotonic clock (to judge staleness). */
  lastProgressAgeMs: number;
  restarts: number;
  relists: number;
  consecutiveFailures: number;
  lastError?: string;
  /**
   * The `ApiError` reason of that failure (`NotFound`, `Forbidden`, `Gone`…) when the API server
   * answered it; absent when it was no answer (a connection refused or reset, a timeout).
   */
  lastErrorReason?: string;
  /** While backing off: how long until the next attempt (ms). */
  retryInMs?: number;
}

export type WatchRestartReason = 'quiet' | 'error' | 'gone' | 'too-large' | 'rewound' | 'closed';

export interface WatcherOptions {
  client: KubeClient;
  kind: ResourceKind;
  /** Watch one namespace; all when absent or empty. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** List and watch `PartialObjectMetadata` only. */
  metadataOnly?: boolean;
  /** Items per list page (default 500); smaller for kinds whose objects are large. */
  pageSize?: number;
  /** Timeout of each list page (default: the client's request timeout). */
  pageTimeoutMs?: number;
  /** What a person should do when the API server does not serve this kind (in the error and `/readyz`). */
  installHint?: string;
  /** Restart a watch that delivered nothing for this long (default 180 000 ms). */
  quietTimeoutMs?: number;
  /** Server-side watch timeout is drawn from this range in seconds (default 300–600). */
  watchTimeoutSeconds?: [number, number];
  backoff?: { initialMs?: number; maxMs?: number };
  /** Backoff while the kind is not served (default 250 ms doubling up to 2 000 ms). */
  notServedBackoff?: { initialMs?: number; maxMs?: number };
  /** A watch that ends sooner than this with nothing delivered is a failure (default 1 000 ms). */
  minWatchMs?: number;
  /** Consecutive failures after which the watch reports unhealthy (default 3). */
  unhealthyAfterFailures?: number;
  clock?: Clock;
  log?: Logger;
  /** Called when the watch restarts or relists (for metrics). */
  onRestart?: (reason: WatchRestartReason) => void;
  onRelist?: () => void;
}

class QuietWatch extends Error {}
class ShortWatch extends Error {}

export class Watcher<T extends KubeObject> {
  readonly #opts: WatcherOptions;
  readonly #sink: WatcherSink<T>;
  readonly #clock: Clock;
  #health: Omit<WatchHealth, 'lastProgressAgeMs'>;
  /** Monotonic time of the last list, event or bookmark. */
  #lastProgressMono: number;

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
    this.#lastProgressMono = this.#clock.monotonic();
  }

  health(): WatchHealth {
    return { ...this.#health, lastProgressAgeMs: Math.max(0, this.#clock.monotonic() - this.#lastProgressMono) };
  }

  async run(signal: AbortSignal): Promise<void> {
    const { client, kind } = this.#opts;
    const quietMs = this.#opts.quietTimeoutMs ?? 180_000;
    const [minTimeout, maxTimeout] = this.#opts.watchTimeoutSeconds ?? [300, 600];
    const minWatchMs = this.#opts.minWatchMs ?? 1_000;
    const selectors = {
      ...(this.#opts.namespace ? { namespace: this.#opts.namespace } : {}),
      ...(this.#opts.labelSelector ? { labelSelector: this.#opts.labelSelector } : {}),
      ...(this.#opts.fieldSelector ? { fieldSelector: this.#opts.fieldSelector } : {}),
      ...(this.#opts.metadataOnly ? { metadataOnly: true } : {}),
    };
    const where = { kind: kind.kind, ...(this.#opts.namespace ? { namespace: this.#opts.namespace } : {}) };
    let resourceVersion: string | undefined;
    let needList = true;
    let historyChanged = false;
    /** 504s with no event in between: a relist that did not help is retried with backoff. */
    let tooLargeInARow = 0;
    /** After a failure or a quiet spell: look where the API server's history is before resuming. */
    let checkHistory = false;
    while (!signal.aborted) {
      const watchAbort = new AbortController();
      const onAbort = () => watchAbort.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let quietTimer: { cancel(): void } | undefined;
      const armQuietTimer = () => {
        quietTimer?.cancel();
        quietTimer = this.#clock.setTimer(quietMs, () => watchAbort.abort(new QuietWatch('watch went quiet')));
      };
      /** Whether the request that failed (if one does) was the watch; a list answered 410 backs off. */
      let watching = false;
      try {
        if (needList) {
          this.#health.state = 'listing';
          this.#sink.beginList?.(historyChanged);
          // In a method of its own: a local of this long-running loop would keep the whole list
          // (managedFields and all, before the store's transform) alive in the frame for as long
          // as the watch runs — measured: the full initial list of every kind (issue 17).
          resourceVersion = await this.#listInto(selectors, watchAbort.signal);
          needList = false;
          historyChanged = false;
        } else if (checkHistory && resourceVersion && (await this.#historyIsBehind(selectors, resourceVersion, watchAbort.signal))) {
          this.#health.restarts++;
          this.#opts.log?.warn({ ...where, resourceVersion }, 'the API server\'s history is behind our resourceVersion (etcd restored from a backup?); relisting as a new history');
          this.#opts.onRestart?.('rewound');
          needList = true;
          historyChanged = true;
          continue;
        }
        checkHistory = false; // set again by the next failure or quiet spell
        this.#health.state = 'watching';
        watching = true;
        armQuietTimer();
        const timeoutSeconds = Math.round(minTimeout + Math.random() * (maxTimeout - minTimeout));
        const events = client.watch(
          kind as ResourceKind<T>,
          { ...selectors, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
          watchAbort.signal,
        );
        const opened = performance.now(); // monotonic: a wall-clock step cannot make a watch look long or short
        let delivered = 0;
        for await (const event of events) {
          armQuietTimer();
          delivered++;
          tooLargeInARow = 0;
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
          if (event.type === 'BOOKMARK') {
            if (event.object.metadata.resourceVersion) this.#sink.bookmark?.(event.object.metadata.resourceVersion);
          } else {
            this.#sink.apply(event.type, event.object);
          }
          this.#progress();
        }
        const lasted = performance.now() - opened;
        if (delivered === 0 && lasted < minWatchMs) {
          throw new ShortWatch(`very short watch: the server ended it after ${Math.round(lasted)} ms with nothing delivered`);
        }
        this.#opts.onRestart?.('closed');
      } catch (err) {
        if (signal.aborted) break;
        const reason = watchAbort.signal.reason;
        if (reason instanceof QuietWatch) {
          this.#health.restarts++;
          this.#opts.log?.warn(where, 'watch went quiet; restarting it');
          this.#opts.onRestart?.('quiet');
          checkHistory = true;
          continue;
        }
        if (watching && err instanceof ApiError && err.reason === 'Gone') {
          this.#health.restarts++;
          this.#opts.log?.info(where, 'resourceVersion expired; relisting');
          this.#opts.onRestart?.('gone');
          needList = true;
          continue;
        }
        if (err instanceof ApiError && err.reason === 'ResourceVersionTooLarge') {
          this.#health.restarts++;
          this.#opts.log?.warn({ ...where, resourceVersion, err: err.message }, 'the API server is behind our resourceVersion (etcd restored from a backup?); relisting as a new history');
          this.#opts.onRestart?.('too-large');
          needList = true;
          historyChanged = true;
          if (++tooLargeInARow > 1) {
            try {
              await this.#clock.sleep(this.#backoffMs(tooLargeInARow - 1, this.#opts.backoff), signal);
            } catch {
              break;
            }
          }
          continue;
        }
        const notServed = err instanceof ApiError && err.reason === 'NotFound';
        checkHistory = true;
        this.#health.restarts++;
        this.#health.consecutiveFailures++;
        this.#health.lastError = notServed ? this.#notServedMessage(err) : err instanceof Error ? err.message : String(err);
        if (err instanceof ApiError && err.code > 0) this.#health.lastErrorReason = err.reason; // an answer (code 0: none came)
        else delete this.#health.lastErrorReason;
        if (this.#health.consecutiveFailures >= (this.#opts.unhealthyAfterFailures ?? 3)) this.#health.healthy = false;
        this.#opts.onRestart?.('error');
        // What the server asked for is honoured over a backoff grown by earlier failures, but never
        // below the first step: a Retry-After of 0 (a proxy in front of the API server may send
        // one) would reconnect at once, for as long as it is answered so (the controller's own
        // retries treat 0 the same way).
        const retryAfter = err instanceof ApiError && err.retryAfterMs !== undefined && err.retryAfterMs > 0 ? err.retryAfterMs : undefined;
        const delay = retryAfter !== undefined
          ? Math.min(Math.max(retryAfter, this.#opts.backoff?.initialMs ?? 250), this.#opts.backoff?.maxMs ?? 30_000) * (1 + Math.random() * 0.2)
          : this.#backoffMs(this.#health.consecutiveFailures, notServed ? (this.#opts.notServedBackoff ?? { initialMs: 250, maxMs: 2_000 }) : this.#opts.backoff);
        this.#opts.log?.warn({ ...where, err: this.#health.lastError, retryInMs: Math.round(delay) }, notServed ? 'kind not served by the API server; retrying' : 'watch failed; reconnecting');
        this.#health.state = 'backoff';
        this.#health.retryInMs = Math.round(delay);
        try {
          await this.#clock.sleep(delay, signal);
        } catch {
          break;
        } finally {
          delete this.#health.retryInMs;
        }
      } finally {
        quietTimer?.cancel();
        signal.removeEventListener('abort', onAbort);
      }
    }
    this.#health.state = 'stopped';
  }

  /** Lists every page, hands the items to the sink, marks the watch synced, and returns the list's resourceVersion. */
  async #listInto(selectors: Omit<ListAllOptions, 'pageSize' | 'pageTimeoutMs' | 'signal'>, signal: AbortSignal): Promise<string> {
    const list = await this.#opts.client.listAll(this.#opts.kind as ResourceKind<T>, {
      ...selectors,
      ...(this.#opts.pageSize ? { pageSize: this.#opts.pageSize } : {}),
      ...(this.#opts.pageTimeoutMs ? { pageTimeoutMs: this.#opts.pageTimeoutMs } : {}),
      signal,
    });
    this.#sink.replace(list.items, list.resourceVersion);
    // In the same synchronous step as replace(): the informer checks for sync in a microtask.
    this.#health.relists++;
    this.#opts.onRelist?.();
    this.#progress();
    this.#health.synced = true;
    return list.resourceVersion;
  }

  /**
   * Whether the API server's history is behind `resourceVersion`: a one-item list (the same
   * namespace, selectors and shape as the informer's) answers the newest resourceVersion; only
   * resourceVersions that compare as numbers are judged, others never are.
   */
  async #historyIsBehind(selectors: Omit<ListAllOptions, 'pageSize' | 'pageTimeoutMs' | 'signal'>, resourceVersion: string, signal: AbortSignal): Promise<boolean> {
    const now = await this.#opts.client.list(this.#opts.kind as ResourceKind<T>, { ...selectors, limit: 1, signal });
    return compareResourceVersions(now.metadata?.resourceVersion ?? '', resourceVersion) === -1;
  }

  /** Which kind is missing, which CRD would serve it, and what to do. */
  #notServedMessage(err: ApiError): string {
    const { kind } = this.#opts;
    const resource = kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
    const builtIn = kind.group === '' || kind.group.endsWith('.k8s.io') || !kind.group.includes('.');
    const what = builtIn
      ? `the API server does not serve ${kind.kind} (${kind.apiVersion} ${kind.plural}): ${err.message}`
      : `the API server does not serve ${kind.kind} (${kind.apiVersion}): CustomResourceDefinition ${resource} is not installed, or does not serve version ${kind.version}`;
    return this.#opts.installHint ? `${what}; ${this.#opts.installHint}` : what;
  }

  #progress(): void {
    this.#health.lastProgressAt = this.#clock.now();
    this.#lastProgressMono = this.#clock.monotonic();
    this.#health.consecutiveFailures = 0;
    this.#health.healthy = true;
    delete this.#health.lastError;
    delete this.#health.lastErrorReason;
  }

  #backoffMs(failures: number, backoff: { initialMs?: number; maxMs?: number } | undefined): number {
    const initial = backoff?.initialMs ?? 250;
    const max = backoff?.maxMs ?? 30_000;
    const ceiling = Math.min(max, initial * 2 ** Math.min(failures - 1, 30));
    return ceiling / 2 + Math.random() * (ceiling / 2); // "equal jitter"
  }
}
