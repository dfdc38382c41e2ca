/**
 * Object keys: `namespace/name` for namespaced objects, `name` for cluster-scoped ones.
 * The work queue, the cache and reconcile requests all use this one format.
 * @module
 */
import type { KubeObject } from './types.ts';

export interface ObjectKey {
  /** `''` for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
}

export function formatKey(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

export function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function keyOf(obj: KubeObject): ObjectKey {
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
}
