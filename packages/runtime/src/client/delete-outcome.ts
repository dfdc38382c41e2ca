/**
 * What the API server's answer to a DELETE says: is the object gone, or still there?
 *
 * Measured on kube-apiserver 1.36 (the local control plane):
 * - most kinds (Deployments, ConfigMaps, Secrets, custom resources) answer a `Status` with
 *   `details.uid`: the object is gone, or is being deleted with finalizers (then the Status says
 *   nothing of it, and the watch shows the update);
 * - some built-ins answer with the object (`ReturnDeletedObject` in their registry: Services,
 *   Pods, Namespaces). A Service deleted at once comes back as it was — no `deletionTimestamp`,
 *   no finalizers — and is gone. A Pod in graceful deletion comes back with `deletionTimestamp`
 *   and `deletionGracePeriodSeconds: 30`, still there; with a grace period of 0, gone. A
 *   Namespace comes back with `deletionTimestamp` (and `spec.finalizers`), still terminating. An
 *   object with finalizers comes back with them and a `deletionTimestamp`, still there.
 * So a returned object is still there exactly when it has finalizers or a pending graceful
 * deletion (`deletionTimestamp` with a grace period other than 0).
 * @module
 */
import type { KubeObject } from '../objects/index.ts';

export interface DeleteOutcome<T extends KubeObject> {
  /** The object, when it still exists after the delete. */
  still: T | undefined;
  /** The UID of the deleted object, when the answer names it. */
  uid: string | undefined;
}

export function deleteOutcome<T extends KubeObject>(body: unknown): DeleteOutcome<T> {
  const answer = body as (KubeObject & { kind?: string; details?: { uid?: string } }) | undefined;
  if (!answer || typeof answer !== 'object') return { still: undefined, uid: undefined };
  if (answer.kind === 'Status' || typeof answer.metadata !== 'object' || answer.metadata === null) {
    return { still: undefined, uid: answer.details?.uid };
  }
  return { still: stillExists(answer) ? (answer as T) : undefined, uid: answer.metadata.uid };
}

function stillExists(obj: KubeObject): boolean {
  if ((obj.metadata.finalizers?.length ?? 0) > 0) return true;
  if (!obj.metadata.deletionTimestamp) return false;
  return obj.metadata.deletionGracePeriodSeconds === undefined || obj.metadata.deletionGracePeriodSeconds > 0;
}
