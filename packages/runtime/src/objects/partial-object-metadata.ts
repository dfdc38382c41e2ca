/**
 * Objects the runtime holds only in part, and the mark that keeps them from being written back.
 *
 * - `PartialObjectMetadata` is what the API server sends for a metadata-only read (`Accept:
 *   application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`, as controller-runtime's
 *   metadata informers ask): name, namespace, UID, resourceVersion, labels, annotations, owners,
 *   finalizers — no spec, no data. A metadata-only informer stores these.
 * - Any object the cache reduced (metadata only, or an informer's declared `transform`) is
 *   *partial*: `isPartial(obj)` is true, for the object and for shallow copies of it (`{...obj}`
 *   keeps the mark), and the client refuses to create, replace or apply it. A PUT built from a
 *   stripped copy would erase what was stripped; read the object from the API server instead.
 *
 * Caveat: the mark is a symbol-keyed property, so `structuredClone` and JSON round trips drop
 * it; it guards against the honest mistake, not against deliberate copying.
 * @module
 */
import type { KubeObject, ObjectMeta } from './types.ts';

/** A Kubernetes object reduced to its metadata (`meta.k8s.io/v1` `PartialObjectMetadata`). */
export interface PartialObjectMetadata extends KubeObject {
  apiVersion: 'meta.k8s.io/v1';
  kind: 'PartialObjectMetadata';
  metadata: ObjectMeta;
}

const PARTIAL = Symbol.for('converge.partial-object');

/** Marks an object as a reduced copy (see the module comment). Returns a marked shallow copy. */
export function markPartial<T extends KubeObject>(obj: T): T {
  return { ...obj, [PARTIAL]: true };
}

/** True for objects the cache reduced (metadata only, or by an informer's transform). */
export function isPartial(obj: unknown): boolean {
  return typeof obj === 'object' && obj !== null && (obj as Record<symbol, unknown>)[PARTIAL] === true;
}

/**
 * The metadata of any object as a marked `PartialObjectMetadata`, without `managedFields` (they
 * are often larger than the rest of the metadata, and nothing in a cache needs them).
 */
export function toPartialObjectMetadata(obj: KubeObject): PartialObjectMetadata {
  const { managedFields: _dropped, ...metadata } = obj.metadata ?? {};
  return markPartial({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata });
}
