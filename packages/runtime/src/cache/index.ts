/**
 * Keeps Kubernetes objects in memory: `Watcher` (list+watch that never dies silently) →
 * `StoreWriter` (the only writer) → `Store` (read-only, indexed) → change handlers; and the
 * manager's shared `Cache`, one informer per kind, declared explicitly.
 * @module
 */
export { Cache } from './cache.ts';
export type { CacheOptions, DeclareOptions, MetadataDeclareOptions } from './cache.ts';
export { Informer } from './informer.ts';
export type { InformerOptions, ChangeHandler } from './informer.ts';
export { StoreWriter, dropManagedFields, CONTROLLER_UID_INDEX, NAMESPACE_INDEX } from './store.ts';
export { compareResourceVersions } from './resource-version.ts';
export type { Store, Change, ChangeType, IndexFunc, StoreWriterOptions, DeletedObject } from './store.ts';
export { Watcher } from './watcher.ts';
export type { WatchHealth, WatchState, WatcherOptions, WatcherSink, WatchRestartReason } from './watcher.ts';
