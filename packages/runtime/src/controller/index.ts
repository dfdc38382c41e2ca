/**
 * Controllers: a builder that wires watches to a work queue (`ControllerBuilder`), and the
 * worker loop that drives a `Reconciler` (`Controller`). A controller is a runnable: `start`
 * settles only after its workers have stopped.
 * @module
 */
export { Controller, LeadershipLostError } from './controller.ts';
export type { ControllerOptions, ControllerDeps } from './controller.ts';
export { ControllerBuilder } from './builder.ts';
export type { ControllerHost, WatchOptions, ForOptions } from './builder.ts';
