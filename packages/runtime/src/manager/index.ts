/**
 * The manager: one client, one shared cache, the controllers and runnables, leader election,
 * and the order in which all of it starts and stops. See `manager.ts` for the lifecycle and
 * what `start` promises (loss of leadership, failed runnables, the bounded drain);
 * `readiness.ts` for `/readyz`; `lifecycle-errors.ts` for why `start` rejects.
 * @module
 */
export { Manager, CacheSyncTimeoutError } from './manager.ts';
export type { ManagerOptions, Runnable, Elector, ReadyCheck } from './manager.ts';
export { RunnableFailedError, DrainTimeoutError } from './lifecycle-errors.ts';
export { readyChecksFor } from './readiness.ts';
