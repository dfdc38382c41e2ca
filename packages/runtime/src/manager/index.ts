/**
 * The manager: one client, one shared cache, the controllers and runnables, leader election,
 * and the order in which all of it starts and stops. See `manager.ts` for the lifecycle and
 * what `start` promises (loss of leadership, failed runnables, the bounded drain);
 * `checks.ts` and `readiness.ts` for `/healthz` and `/readyz`; `drain.ts` for how long a stop
 * waits for the work; `lifecycle-errors.ts` for why `start` rejects.
 * @module
 */
export { Manager } from './manager.ts';
export type { ManagerOptions, Runnable, Elector, ReadyCheck } from './manager.ts';
export { RunnableFailedError, DrainTimeoutError, CacheSyncTimeoutError } from './lifecycle-errors.ts';
export { readyChecksFor } from './readiness.ts';
