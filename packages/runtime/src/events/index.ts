/**
 * Kubernetes Events (`events.k8s.io/v1`) for operators: what happened to an object, shown by
 * `kubectl describe` and `kubectl events`.
 *
 * Expected flow: one recorder per manager (`createEventRecorder`), `recorder.normal(obj, reason,
 * action, note)` / `recorder.warning(...)` from reconcilers, `await recorder.close()` at shutdown.
 *
 * Guarantees:
 * - Fire-and-forget: `normal`/`warning` return at once, never throw and never wait for the API
 *   server; writes happen afterwards, one at a time. Failures are logged (a warning at most once
 *   a minute, the rest at debug) and counted in `stats()`, never surfaced to the caller.
 * - De-duplication into series, as client-go's events broadcaster does: an event identical to a
 *   recent one (same regarding object UID, type, reason, action and note) is not created again;
 *   its occurrence is counted and written as `series.count` / `series.lastObservedTime` by a JSON
 *   merge patch. The second occurrence is written at once when the last write of that event is
 *   at least `seriesIntervalMs` (default 30 s) old; closer occurrences are batched into one
 *   patch per interval. If the Event is gone from the server (its TTL passed), it is created
 *   again with the series. A series not seen for `seriesTtlMs` (default 6 min) is forgotten.
 * - Rate limits: a new (non-identical) event needs a token from its object's bucket (default
 *   burst 25, then 1 per 5 min — client-go's spam filter) and from the overall bucket (default
 *   10/s, burst 100), or it is dropped and counted (`stats().dropped`,
 *   `converge_events_total{outcome="dropped"}`); a series update without a token is postponed
 *   (its count is kept and written later), counted as dropped too.
 * - Never in the way of reconciles: Events are written by the recorder's own single writer
 *   through its own view of the client (`client.withRateLimit(null)`), so they take no token
 *   from the client-side limit the reconciles' writes use, and a slow Events API delays no
 *   reconcile (over `maxPendingWrites` queued, new events are dropped, counted). With
 *   `giveWayTo` (the operator process passes `() => manager.queuedReconciles() > 0`), a queued
 *   write also waits while reconciles wait for a worker: a Warning at most `maxGiveWayMs` (30 s)
 *   after it was queued, a Normal event at most `maxNormalGiveWayMs` (5 min) or until a Warning
 *   behind it goes, so that on an API server that is the bottleneck the reconciles' writes go
 *   first, also through a cold start of thousands of objects; `flush`/`close` never wait. Counted in `stats().gaveWay`.
 * - Bounded memory: at most `maxEntries` (default 4096) remembered events and per-object buckets
 *   (least recently seen first out), at most `maxPendingWrites` (1000) queued writes.
 * - Notes are cut to 1 KiB of UTF-8 (the API server's limit) without splitting a character;
 *   reason and action to 128 characters. Events about cluster-scoped objects go to `default`.
 *
 * Caveats: `close()` (or `flush()`) writes the last counts; without it, counts seen in the last
 * interval are lost at exit and a pending series timer may keep the process alive up to one
 * interval. Pass objects that carry `apiVersion`/`kind` (or an `ObjectReference`): without them
 * `kubectl describe` cannot match the event to its object.
 * @module
 */
export { createEventRecorder } from './event-recorder.ts';
export type { EventRecorder, EventSink, EventRecorderOptions, EventRecorderStats } from './event-recorder.ts';
export { referenceOf, microTime, truncateUtf8, MAX_NOTE_BYTES } from './event-object.ts';
export type { EventSubject, ObjectReference } from './event-object.ts';
