/**
 * Status writes that cost nothing when nothing changed.
 *
 * `patchStatus` compares the desired status with the object's current one and, only when they
 * differ, sends a JSON merge patch of the difference to the status subresource. The patch
 * carries the object's UID and resourceVersion, so it lands only on the exact version that
 * was read: a recreated object or a concurrent change yields a `Conflict` (re-read and retry),
 * never a status computed for something else. The spec is never written.
 *
 * The desired status is compared as JSON carries it, and as a merge patch can store it: an
 * `undefined` or `null` field of an object is no field (a merge patch's `null` deletes), `-0`
 * is `0`. So a status built with `message: ok ? undefined : text` converges, and costs no write
 * once it has.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import { keyOf } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';

/**
 * Writes `status` when it differs from `current.status`; resolves with the updated object, or
 * `undefined` when no write was needed. `status` is checked against the object's own status type
 * (so it may be written inline, `{ ...obj.status, observedGeneration }`).
 */
export async function patchStatus<T extends KubeObject & { status?: object }>(
  client: KubeClient,
  kind: ResourceKind<T>,
  current: T,
  status: NonNullable<T['status']>,
  options: { fieldManager?: string; signal?: AbortSignal } = {},
): Promise<T | undefined> {
  if (kind.statusSubresource === false) {
    // The API server would answer 404 for /status, which reads as "the object is gone".
    throw new Error(`${kind.kind} has no status subresource: its CRD must enable it (defineCustomResource version option subresources: { status: true }) for patchStatus to write status`);
  }
  const before = (current.status ?? {}) as Record<string, unknown>;
  if (isDeepStrictEqual(before, status)) return undefined; // converged: no JSON round trip
  const wanted = asMergeable(status) as Record<string, unknown>;
  if (isDeepStrictEqual(asMergeable(before), wanted)) return undefined;
  const body = {
    metadata: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion },
    status: mergePatchFrom(before, wanted),
  };
  return client.patch(kind, keyOf(current), { type: 'merge', body }, { subresource: 'status', ...options });
}

/**
 * The JSON merge patch (RFC 7386) that turns `from` into `to`: changed keys carry their new
 * value, removed keys `null`; nested objects are diffed, arrays replaced whole. Keys are own
 * properties only (a field named `constructor` or `__proto__` is a field like any other); an
 * `undefined` field of `to` counts as absent.
 */
export function mergePatchFrom(from: Record<string, unknown>, to: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined) continue;
    const old = Object.hasOwn(from, k) ? from[k] : undefined;
    if (isDeepStrictEqual(old, v)) continue;
    setOwn(patch, k, isPlainObject(old) && isPlainObject(v) ? mergePatchFrom(old, v) : v);
  }
  for (const k of Object.keys(from)) if (to[k] === undefined || !Object.hasOwn(to, k)) setOwn(patch, k, null);
  return patch;
}

/** `value` as JSON carries it, without the `null` fields of objects (a merge patch deletes them). */
function asMergeable(value: unknown): unknown {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (!isPlainObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) if (e !== null) setOwn(out, k, strip(e));
    return out;
  };
  return strip(JSON.parse(JSON.stringify(value ?? {})));
}

/** `obj[key] = value`, also for `__proto__` (an own field, as `JSON.parse` makes it). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
