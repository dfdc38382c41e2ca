/**
 * The object model every other part of the runtime speaks: plain JSON Kubernetes objects
 * (`KubeObject`), the descriptor that names a resource on the API server (`ResourceKind`),
 * object keys (`namespace/name`), and descriptors for the built-in kinds the runtime and
 * its operators use.
 *
 * What a caller can rely on:
 * - Objects are plain JSON as the API server sends them (timestamps are RFC 3339 strings);
 *   nothing here mutates an object it is given.
 * - Objects the cache holds only in part (`PartialObjectMetadata`, or reduced by a transform)
 *   are marked, and the client refuses to write them back (`isPartial`).
 * - A `ResourceKind<T>` carries the TypeScript type of its objects, so every client and cache
 *   call that takes one returns `T` without casts at the call site.
 *
 * @module
 */
export type { KubeObject, ObjectMeta, OwnerReference, ObjectList, Condition, ListMeta } from './types.ts';
export type { ResourceKind } from './resource-kind.ts';
export { defineKind } from './resource-kind.ts';
export type { ObjectKey } from './object-key.ts';
export { keyOf, formatKey, parseKey } from './object-key.ts';
export type { PartialObjectMetadata } from './partial-object-metadata.ts';
export { isPartial, markPartial, toPartialObjectMetadata } from './partial-object-metadata.ts';
export * from './builtin-kinds.ts';
