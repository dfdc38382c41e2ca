/**
 * Tracks which objects a controller has not yet converged, and since when — the data behind
 * the `converge_longest_unconverged_seconds{controller}` gauge and `/debug/unconverged`.
 *
 * Expected flow: the controller calls `observe(obj)` for every version of a primary object it
 * sees (cache events, or after each reconcile) and `forget(key)` when the object is deleted.
 * Scrapes call `oldestAgeSeconds()`, the debug endpoint calls `top(n)`.
 *
 * Guarantees:
 * - Pure bookkeeping over an injected `Clock`: no timers, no I/O, never throws on odd objects
 *   (a predicate that throws counts the object as unconverged with reason `PredicateError`).
 * - An object keeps its original "since" time while it stays unconverged, even when the reason
 *   changes; it leaves the tracker the moment it is observed converged (or forgotten).
 * - With the default predicate, an object whose Ready condition is not True is dated from that
 *   condition's `lastTransitionTime` when that is earlier than first sight, so a restarted
 *   operator reports the real age, not the age since its own start. Times never lie in the
 *   future: "since" is clamped to `now`.
 *
 * Assumptions: keys are `namespace/name` (as the work queue uses); one tracker per controller.
 *
 * Caveats: `oldestAgeSeconds` is O(n) and `top` is O(n log n) in the number of unconverged
 * objects (not of all objects): fine at scrape rate for tens of thousands.
 * @module
 */
export { ConvergenceTracker, defaultConvergencePredicate } from './convergence-tracker.ts';
export type { ConvergencePredicate, ConvergenceTrackerOptions, Unconverged, UnconvergedEntry } from './convergence-tracker.ts';
