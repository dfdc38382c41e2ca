/**
 * `createEventRecorder`: fire-and-forget `events.k8s.io/v1` Events, de-duplicated into series
 * and rate limited.
 * @module
 */
import type { Logger } from 'pino';
import { EventKind, type KubeEvent } from '../objects/index.ts';
import { ApiError, type KubeClient } from '../client/index.ts';
import { systemClock, type Clock, type Timer } from '../clock/index.ts';
import { TokenBucket } from '../rate-limit/index.ts';
import { eventObject, MAX_FIELD_BYTES, MAX_NOTE_BYTES, microTime, referenceOf, truncateUtf8, withSeries, type EventSubject, type ObjectReference } from './event-object.ts';
import { GiveWayQueue } from './give-way-queue.ts';

export interface EventRecorderOptions {
  client: KubeClient;
  /** Who reports, as a qualified name, e.g. `converge.dev/microservice-controller`. */
  reportingController: string;
  /** Which replica reports, e.g. the pod name (cut to 128 bytes). */
  reportingInstance: string;
  clock?: Clock;
  log?: Logger;
  /** Overall budget of API writes (creates and series updates): default 10 per second … */
  qps?: number;
  /** … with bursts of up to 100. */
  burst?: number;
  /** Budget of new (non-identical) events per object: default 1 per 300 s, burst 25 (client-go's spam filter). */
  perObject?: { qps: number; burst: number };
  /** Minimum time between two writes of one series (default 30 000 ms; monotonic, a wall-clock step does not shift it). */
  seriesIntervalMs?: number;
  /** A series not seen for this long (monotonic) is finished and forgotten, once its last count is written (default 6 min, as client-go). */
  seriesTtlMs?: number;
  /**
   * Bound on remembered events and per-object buckets (default 4096, least recently seen evicted;
   * series whose count is written before those with a count still to write, which count as dropped).
   */
  maxEntries?: number;
  /** Bound on queued writes; beyond it, events are dropped (default 1000). */
  maxPendingWrites?: number;
  /**
   * Work that goes first. While `giveWayTo()` returns true (the manager passes "reconciles are
   * waiting in a controller's queue"), queued writes wait: a Warning until at most `maxGiveWayMs`
   * after it was queued, a Normal event until at most `maxNormalGiveWayMs`, and nothing longer
   * than a Warning queued behind it (writes stay in order). Without it, writes go as soon as
   * their budget allows.
   */
  giveWayTo?: () => boolean;
  /** The longest a Warning waits for `giveWayTo` (default 30 000 ms, the series interval). */
  maxGiveWayMs?: number;
  /**
   * The longest a Normal event waits for `giveWayTo` (default 300 000 ms): a backlog of a few
   * minutes (an operator starting on thousands of objects) writes no routine Event before the
   * reconciles it would slow down; a Warning behind them still goes after `maxGiveWayMs`.
   */
  maxNormalGiveWayMs?: number;
}

export interface EventRecorderStats {
  /** Events created on the API server. */
  created: number;
  /** Series updates written. */
  seriesUpdates: number;
  /** Occurrences folded into an existing event (counted, not written one by one). */
  deduplicated: number;
  /** Events dropped by a rate limit or a full queue (new events and series updates), or left unwritten by `close`. */
  dropped: number;
  /** Writes the API server refused or that failed. */
  failed: number;
  /** Writes that waited for `giveWayTo` before they were sent. */
  gaveWay: number;
}

export interface EventRecorder {
  /** Records a Normal event. Never throws, never waits. */
  normal(regarding: EventSubject, reason: string, action: string, note?: string): void;
  /** Records a Warning event. Never throws, never waits. */
  warning(regarding: EventSubject, reason: string, action: string, note?: string): void;
  /**
   * Writes every pending series count now (ignoring the interval, not the overall rate limit) and
   * waits for all queued writes, bounded by `timeoutMs` of real time (default 5000). Never rejects.
   */
  flush(timeoutMs?: number): Promise<void>;
  /**
   * `flush`, then stop: later events are ignored, timers cancelled. Idempotent. With a
   * `timeoutMs` of 0 nothing more is written (what is held back or pending is dropped, writes in
   * flight are aborted): for a process that no longer leads. Each event whose create or series
   * update is left unwritten (held back, queued, in flight) counts in `stats().dropped`, with one
   * warning; a series count not yet due is left uncounted (a refused update counted it already).
   */
  close(timeoutMs?: number): Promise<void>;
  stats(): EventRecorderStats;
}

/**
 * The part of an `EventRecorder` a reconciler needs: record and move on. Reconcilers take this
 * (not the recorder) so a test can pass a plain object that collects what was recorded.
 */
export type EventSink = Pick<EventRecorder, 'normal' | 'warning'>;

interface Entry {
  key: string;
  event: KubeEvent;
  /** Occurrences so far. */
  count: number;
  /** Wall clock of the last occurrence: the series' `lastObservedTime`. */
  lastObservedMs: number;
  /** Monotonic time of the last occurrence (the TTL counts from it). */
  lastSeenAt: number;
  /** `count` as last written to the server (1 after the create). */
  writtenCount: number;
  /** Monotonic time of the last write (the interval counts from it). */
  lastWriteAt: number;
  state: 'creating' | 'created' | 'writing';
  failures: number;
}

/** A queued write; `queuedAt` is monotonic ms; Warnings are urgent. */
type Task = { entry: Entry; op: 'create' | 'patch'; queuedAt: number; urgent: boolean };

export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  return new Recorder(options);
}

class Recorder implements EventRecorder {
  readonly #client: KubeClient;
  readonly #controller: string;
  readonly #instance: string;
  readonly #clock: Clock;
  readonly #log: Logger | undefined;
  readonly #overall: TokenBucket;
  readonly #perObjectOpts: { qps: number; burst: number };
  readonly #perObject = new Map<string, TokenBucket>();
  readonly #intervalMs: number;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #maxPending: number;
  /** Insertion order = least recently observed first. */
  readonly #entries = new Map<string, Entry>();
  /** The single writer: in order, giving way to queued reconciles. */
  readonly #queue: GiveWayQueue<Task>;
  readonly #stats: Omit<EventRecorderStats, 'gaveWay'> = { created: 0, seriesUpdates: 0, deduplicated: 0, dropped: 0, failed: 0 };
  readonly #abort = new AbortController();
  #timer: Timer | undefined;
  #timerAt = Infinity;
  #closed = false;
  #seq = 0;
  #lastWarnAt = -Infinity;

  constructor(o: EventRecorderOptions) {
    // Its own view of the client: Events never take a token from the client-side limit of the
    // reconciles' own writes (the recorder's budget below is theirs), nor wait behind them.
    this.#client = o.client.withRateLimit(null);
    this.#controller = o.reportingController;
    this.#instance = truncateUtf8(o.reportingInstance, MAX_FIELD_BYTES);
    this.#clock = o.clock ?? systemClock;
    this.#log = o.log;
    this.#overall = new TokenBucket({ qps: o.qps ?? 10, burst: o.burst ?? 100 }, this.#clock);
    this.#perObjectOpts = o.perObject ?? { qps: 1 / 300, burst: 25 };
    this.#intervalMs = o.seriesIntervalMs ?? 30_000;
    this.#ttlMs = o.seriesTtlMs ?? 6 * 60_000;
    this.#maxEntries = o.maxEntries ?? 4096;
    this.#maxPending = o.maxPendingWrites ?? 1000;
    const maxGiveWayMs = o.maxGiveWayMs ?? 30_000;
    this.#queue = new GiveWayQueue<Task>({
      clock: this.#clock,
      write: (task) => this.#write(task),
      ...(o.giveWayTo ? { giveWayTo: o.giveWayTo } : {}),
      maxGiveWayMs,
      maxNormalGiveWayMs: Math.max(maxGiveWayMs, o.maxNormalGiveWayMs ?? 300_000),
    });
  }

  normal(regarding: EventSubject, reason: string, action: string, note?: string): void {
    this.#record('Normal', regarding, reason, action, note);
  }

  warning(regarding: EventSubject, reason: string, action: string, note?: string): void {
    this.#record('Warning', regarding, reason, action, note);
  }

  stats(): EventRecorderStats {
    return { ...this.#stats, gaveWay: this.#queue.gaveWay };
  }

  async flush(timeoutMs = 5_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    const release = this.#queue.hurry(); // the last writes go at once
    try {
      for (;;) {
        let queued = false;
        for (const entry of this.#entries.values()) {
          if (entry.state === 'created' && entry.count > entry.writtenCount) queued = this.#enqueue(entry, 'patch', this.#clock.monotonic()) || queued;
        }
        if (!queued && !this.#queue.busy) return;
        await this.#queue.drain(deadline - performance.now());
        if (performance.now() >= deadline) return;
      }
    } finally {
      release();
    }
  }

  async close(timeoutMs = 5_000): Promise<void> {
    if (this.#closed) return;
    if (timeoutMs > 0) await this.flush(timeoutMs);
    this.#closed = true;
    // What the flush did not get to (held back, queued, or in flight and about to be aborted) is
    // lost: counted as dropped and said once, so that a close under a backlog is not silent. A
    // series count still to write is not: it was counted when its update found no budget.
    let unwritten = 0;
    for (const e of this.#entries.values()) if (e.state !== 'created') unwritten++;
    if (unwritten) {
      this.#stats.dropped += unwritten;
      this.#log?.warn({ unwritten }, `event recorder closed with ${unwritten} event(s) not written (dropped)`);
    }
    this.#queue.close();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#abort.abort(new Error('event recorder closed'));
    this.#entries.clear();
    this.#perObject.clear();
  }

  #record(type: 'Normal' | 'Warning', regarding: EventSubject, reason: string, action: string, note: string | undefined): void {
    if (this.#closed) return;
    try {
      const ref = referenceOf(regarding);
      if (!ref.name || !reason || !action) {
        this.#log?.debug({ regarding: ref, reason, action }, 'event not recorded: regarding name, reason and action are required');
        return;
      }
      const now = this.#clock.now();
      const at = this.#clock.monotonic();
      const text = note === undefined ? undefined : truncateUtf8(note, MAX_NOTE_BYTES);
      const objectId = ref.uid || `${ref.apiVersion ?? ''}/${ref.kind ?? ''}/${ref.namespace ?? ''}/${ref.name}`;
      const key = JSON.stringify([objectId, type, reason, action, text ?? '']);
      this.#expire(at);
      const known = this.#entries.get(key);
      if (known) {
        known.count++;
        known.lastObservedMs = now;
        known.lastSeenAt = at;
        this.#stats.deduplicated++;
        this.#entries.delete(key); // keep the map ordered by last observation
        this.#entries.set(key, known);
        this.#scheduleSeries(known, at);
        return;
      }
      if (!this.#admit(objectId)) {
        this.#stats.dropped++;
        this.#log?.debug({ regarding: ref, reason, type }, 'event dropped by rate limit');
        return;
      }
      const entry: Entry = {
        key,
        event: this.#newEvent(type, ref, reason, action, text, now),
        count: 1,
        lastObservedMs: now,
        lastSeenAt: at,
        writtenCount: 0,
        lastWriteAt: at,
        state: 'creating',
        failures: 0,
      };
      this.#entries.set(key, entry);
      this.#evictSeries();
      this.#enqueue(entry, 'create', at);
    } catch (err) {
      this.#log?.debug({ err }, 'event not recorded');
    }
  }

  /** Per-object, then overall token; neither is spent unless both are there. */
  #admit(objectId: string): boolean {
    let bucket = this.#perObject.get(objectId);
    if (bucket) this.#perObject.delete(objectId);
    else bucket = new TokenBucket(this.#perObjectOpts, this.#clock);
    this.#perObject.set(objectId, bucket);
    this.#evict(this.#perObject, this.#maxEntries, () => true);
    if (bucket.available() < 1 || this.#overall.available() < 1) return false;
    return bucket.tryTake() && this.#overall.tryTake();
  }

  #newEvent(type: 'Normal' | 'Warning', regarding: ObjectReference, reason: string, action: string, note: string | undefined, now: number): KubeEvent {
    return eventObject({ type, regarding, reason, action, note, reportingController: this.#controller, reportingInstance: this.#instance }, now, this.#seq++);
  }

  /** An occurrence of a known event: write the new count when its interval has passed. `at` is monotonic. */
  #scheduleSeries(entry: Entry, at: number): void {
    if (entry.state !== 'created') return; // written when the pending write completes
    const due = entry.lastWriteAt + this.#intervalMs;
    if (due <= at) this.#enqueue(entry, 'patch', at);
    else this.#arm(due);
  }

  /** Wakes `#onTimer` at monotonic time `at` (or earlier, when already armed for earlier). */
  #arm(at: number): void {
    if (this.#closed || at >= this.#timerAt) return;
    this.#timer?.cancel();
    this.#timerAt = at;
    this.#timer = this.#clock.setTimer(at - this.#clock.monotonic(), () => this.#onTimer());
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const at = this.#clock.monotonic();
    let next = Infinity;
    for (const entry of this.#entries.values()) {
      if (entry.state !== 'created' || entry.count <= entry.writtenCount) continue;
      const due = entry.lastWriteAt + this.#intervalMs;
      if (due <= at) this.#enqueue(entry, 'patch', at);
      else next = Math.min(next, due);
    }
    this.#expire(at);
    if (next < Infinity) this.#arm(next);
  }

  /**
   * Forgets series not seen for `seriesTtlMs` whose last count is written. One whose count is
   * still to be written (a write held up, failed or waiting for a token) stays until it is, and
   * does not keep the series seen after it from being forgotten.
   */
  #expire(at: number): void {
    for (const [key, entry] of this.#entries) {
      if (at - entry.lastSeenAt < this.#ttlMs) break;
      if (entry.state === 'created' && entry.count <= entry.writtenCount) this.#entries.delete(key);
    }
  }

  /**
   * Keeps `maxEntries` series: the least recently seen whose count is written go first; only
   * when that is not enough does one with a count still to write go, counted as dropped.
   */
  #evictSeries(): void {
    this.#evict(this.#entries, this.#maxEntries, (e) => e.state === 'created' && e.count <= e.writtenCount);
    const before = this.#entries.size;
    this.#evict(this.#entries, this.#maxEntries, (e) => e.state === 'created');
    this.#stats.dropped += before - this.#entries.size;
  }

  #evict<V>(map: Map<string, V>, max: number, evictable: (v: V) => boolean): void {
    if (map.size <= max) return;
    for (const [key, value] of map) {
      if (map.size <= max) return;
      if (evictable(value)) map.delete(key);
    }
  }

  /**
   * Queues a create or a series update (`at`: monotonic now); false when it was not queued
   * (closed, queue full, or a series update without an overall token).
   */
  #enqueue(entry: Entry, op: Task['op'], at: number): boolean {
    if (this.#closed) return false;
    if (this.#queue.length >= this.#maxPending) {
      this.#stats.dropped++;
      if (op === 'create') this.#entries.delete(entry.key);
      return false;
    }
    if (op === 'patch') {
      if (!this.#overall.tryTake()) {
        // Over budget: the occurrences stay counted and are written with the next update.
        this.#stats.dropped++;
        this.#arm(this.#clock.monotonic() + Math.ceil(1000 / this.#overall.qps));
        return false;
      }
      entry.state = 'writing';
    }
    this.#queue.push({ entry, op, queuedAt: at, urgent: entry.event.type === 'Warning' });
    return true;
  }

  async #write({ entry, op }: Task): Promise<void> {
    const signal = this.#abort.signal;
    const count = entry.count;
    const now = this.#clock.now();
    const at = this.#clock.monotonic();
    try {
      if (op === 'create' || entry.event.metadata.resourceVersion === undefined) {
        const body = count > 1 ? withSeries(entry.event, count, entry.lastObservedMs) : entry.event;
        const created = await this.#client.create(EventKind, body, { signal });
        entry.event = { ...entry.event, metadata: { ...entry.event.metadata, resourceVersion: created.metadata.resourceVersion ?? '' } };
        this.#stats.created++;
      } else {
        const patch = { series: { count, lastObservedTime: microTime(entry.lastObservedMs) } };
        try {
          await this.#client.patch(EventKind, { namespace: entry.event.metadata.namespace ?? '', name: entry.event.metadata.name ?? '' }, { type: 'merge', body: patch }, { signal });
        } catch (err) {
          if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
          // The event expired on the server (default TTL 1 h): start it again, series included.
          const fresh = this.#newEvent(entry.event.type, entry.event.regarding as ObjectReference, entry.event.reason, entry.event.action, entry.event.note, now);
          const created = await this.#client.create(EventKind, withSeries(fresh, count, entry.lastObservedMs), { signal });
          entry.event = { ...fresh, metadata: { ...fresh.metadata, resourceVersion: created.metadata.resourceVersion ?? '' } };
          this.#stats.created++;
        }
        this.#stats.seriesUpdates++;
      }
      entry.writtenCount = count;
      entry.lastWriteAt = at;
      entry.failures = 0;
      entry.state = 'created';
      if (entry.count > entry.writtenCount) this.#scheduleSeries(entry, this.#clock.monotonic());
    } catch (err) {
      if (signal.aborted) return;
      this.#stats.failed++;
      entry.failures++;
      this.#warn(err, entry);
      if (op === 'create' || entry.failures >= 3) {
        this.#entries.delete(entry.key); // the next occurrence starts over
      } else {
        entry.state = 'created';
        entry.lastWriteAt = at; // retried after the interval
        this.#scheduleSeries(entry, this.#clock.monotonic());
      }
    }
  }

  #warn(err: unknown, entry: Entry): void {
    const at = this.#clock.monotonic();
    const fields = { err, reason: entry.event.reason, regarding: entry.event.regarding };
    if (at - this.#lastWarnAt >= 60_000) {
      this.#lastWarnAt = at;
      this.#log?.warn(fields, 'could not write event (further failures within a minute are logged at debug)');
    } else {
      this.#log?.debug(fields, 'could not write event');
    }
  }
}
