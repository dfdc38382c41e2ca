/**
 * Finalizers: add and remove one safely, and `withFinalizer`, the flow that guards cleanup of
 * something outside the cluster.
 *
 * Expected flow (`withFinalizer`): while the object lives, the finalizer is added *before*
 * `apply` runs, so nothing external exists without a finalizer guarding it. Once deletion starts
 * (`deletionTimestamp` set), `cleanup` runs; when it resolves the finalizer is removed and the
 * API server deletes the object.
 *
 * Guarantees:
 * - Adding and removing are patches carrying the resourceVersion that was read: a concurrent
 *   change to the finalizer list yields `Conflict` instead of dropping someone else's finalizer.
 * - The finalizer is removed only after `cleanup` resolved.
 *
 * Assumptions:
 * - `cleanup` is idempotent and treats "already gone" as success; it may run more than once
 *   (a crash after cleanup and before the finalizer removal runs it again).
 * - `obj` is no older than any read of the object this process acted on before (an informer
 *   cache's view gives that: it never goes back), and one call at a time runs per object (a
 *   controller's queue gives that). A read from before the deletion, used after this process's
 *   cleanup and removal of its finalizer, still shows the finalizer and no deletion: `apply`
 *   would run again, and nothing would guard what it makes.
 *
 * Caveats:
 * - If `cleanup` keeps failing, the object stays Terminating: make failures visible (a status
 *   condition, an Event) and let them retry with backoff; never remove the finalizer to "unstick".
 * - An object deleted before the finalizer was added skips `cleanup` (there was nothing to clean).
 * - kube-apiserver (1.36 included) removes an object at once when a DELETE found no finalizer on
 *   it, even if one was added between that look and the removal (kubernetes/kubernetes#77988). So
 *   `apply` may run for a brand-new object that is then gone without `cleanup`: what it creates
 *   outside the cluster should carry a key derived from the object's UID, stored durably before
 *   the first such create, so that whoever finds the object gone can clean up by that key (the
 *   provider operator's late-create sweep, `beforeCreate` entries, is an example).
 * @module
 */
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import { keyOf } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import { isNotFound } from '../client/index.ts';

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** Adds the finalizer unless present; resolves with the object as it now is. */
export async function addFinalizer<T extends KubeObject>(client: KubeClient, kind: ResourceKind<T>, obj: T, finalizer: string, options: { signal?: AbortSignal } = {}): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  const finalizers = [...(obj.metadata.finalizers ?? []), finalizer];
  return client.patch(kind, keyOf(obj), { type: 'merge', body: { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } } }, options);
}

/**
 * Removes the finalizer if present. Resolves with the object as it now is, or `undefined` once
 * it is gone: this removal released a terminating object (its last finalizer), or it was gone
 * already (NotFound is success here: someone else released it). A list changed since `obj` was
 * read is a `Conflict`.
 */
export async function removeFinalizer<T extends KubeObject>(client: KubeClient, kind: ResourceKind<T>, obj: T, finalizer: string, options: { signal?: AbortSignal } = {}): Promise<T | undefined> {
  if (!hasFinalizer(obj, finalizer)) return obj;
  const finalizers = (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  let after: T;
  try {
    after = await client.patch(kind, keyOf(obj), { type: 'merge', body: { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } } }, options);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  // The API server deletes a terminating object in the same request that empties its
  // finalizers, and answers with the object as it would have been written.
  return after.metadata.deletionTimestamp && !after.metadata.finalizers?.length ? undefined : after;
}

export interface FinalizerHandlers<T extends KubeObject, R> {
  /** Converge the live object. Runs only once the finalizer is in place. */
  apply(obj: T): Promise<R>;
  /** Remove what `apply` created outside the cluster. Idempotent; "already gone" is success. */
  cleanup(obj: T): Promise<void>;
}

/** The finalizer flow described in this module's header. Resolves with `apply`'s result, or undefined after cleanup. */
export async function withFinalizer<T extends KubeObject, R>(
  client: KubeClient,
  kind: ResourceKind<T>,
  obj: T,
  finalizer: string,
  handlers: FinalizerHandlers<T, R>,
  options: { signal?: AbortSignal } = {},
): Promise<R | undefined> {
  if (obj.metadata.deletionTimestamp) {
    if (!hasFinalizer(obj, finalizer)) return undefined;
    await handlers.cleanup(obj);
    await removeFinalizer(client, kind, obj, finalizer, options);
    return undefined;
  }
  const guarded = await addFinalizer(client, kind, obj, finalizer, options);
  return handlers.apply(guarded);
}
