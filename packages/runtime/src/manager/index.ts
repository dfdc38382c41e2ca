/**
 * The manager: one client, one shared cache, the controllers and runnables, leader election,
 * and the order in which all of it starts and stops. See `manager.ts` for the lifecycle.
 * @module
 */
export { Manager, CacheSyncTimeoutError } from './manager.ts';
export type { ManagerOptions, Runnable, Elector, ReadyCheck } from './manager.ts';
