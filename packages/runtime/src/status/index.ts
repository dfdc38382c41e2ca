/**
 * Status writes that cost nothing when nothing changed.
 *
 * `patchStatus` compares the desired status with the object's current one and, only when they
 * differ, sends a JSON merge patch of the difference to the status subresource. The patch
 * carries the object's UID and resourceVersion, so it lands only on the exact version that
 * was read: a recreated object or a concurrent change yields a `Conflict` (re-read and retry),
 * never a status computed for something else. The spec is never written.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import { keyOf } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';

type WithStatus<S> = KubeObject & { status?: S };

/**
 * Writes `status` when it differs from `current.status`; resolves with the updated object, or
 * `undefined` when no write was needed.
 */
export async function patchStatus<S extends object, T extends WithStatus<S>>(
  client: KubeClient,
  kind: ResourceKind<T>,
  current: T,
  status: S,
  options: { fieldManager?: string; signal?: AbortSignal } = {},
): Promise<T | undefined> {
  const before = (current.status ?? {}) as Record<string, unknown>;
  if (isDeepStrictEqual(before, status)) return undefined;
  const body = {
    metadata: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion },
    status: mergePatchFrom(before, status as Record<string, unknown>),
  };
  return client.patch(kind, keyOf(current), { type: 'merge', body }, { subresource: 'status', ...options });
}

/**
 * The JSON merge patch (RFC 7386) that turns `from` into `to`: changed keys carry their new
 * value, removed keys `null`; nested objects are diffed, arrays replaced whole.
 */
export function mergePatchFrom(from: Record<string, unknown>, to: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(to)) {
    const old = from[k];
    if (isDeepStrictEqual(old, v)) continue;
    patch[k] = isPlainObject(old) && isPlainObject(v) ? mergePatchFrom(old, v) : v;
  }
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  return patch;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
