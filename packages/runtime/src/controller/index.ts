/**
 * Controllers: a builder that wires watches to a work queue (`ControllerBuilder`), and the
 * worker loop that drives a `Reconciler` (`Controller`). A controller is a runnable: `start`
 * settles only after its workers have stopped.
 *
 * Stopping: `start(signal, abortNow)`. When `signal` aborts, intake stops and in-flight
 * reconciles get the grace period, then their signals abort. When `abortNow` aborts (the
 * manager: leadership lost), also in the middle of that grace period, in-flight reconciles are
 * aborted at once and no worker takes another key. A reconcile that ignores its signal keeps
 * `start` pending; the manager bounds that wait. Every series of the controller and its queue
 * exists in the metrics from construction on, at zero. Durations are measured on monotonic time.
 * @module
 */
export { Controller, LeadershipLostError } from './controller.ts';
export type { ControllerOptions, ControllerDeps } from './controller.ts';
export { ControllerBuilder } from './builder.ts';
export type { ControllerHost, WatchOptions, ForOptions } from './builder.ts';
