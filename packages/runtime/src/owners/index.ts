/**
 * Controller ownerReferences: make one, and check one strictly (UID, API group, kind and
 * `controller: true`), so a same-named object owned by someone else — or by an older object of
 * the same name — is never mistaken for ours. The version in a reference's apiVersion is not
 * compared: garbage collection resolves owners by group, kind and UID, and a reference written
 * for an older served version of the owner's kind names the same owner.
 * @module
 */
import type { KubeObject, OwnerReference, ResourceKind } from '../objects/index.ts';

/** The controller ownerReference an object created for `owner` should carry. */
export function controllerReference(owner: KubeObject, kind: ResourceKind, options: { blockOwnerDeletion?: boolean } = {}): OwnerReference {
  const { name, uid } = owner.metadata;
  if (!name || !uid) throw new Error('owner has no name or uid (was it read from the API server?)');
  return { apiVersion: kind.apiVersion, kind: kind.kind, name, uid, controller: true, blockOwnerDeletion: options.blockOwnerDeletion ?? true };
}

/** The object's controller ownerReference, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

export type Ownership =
  /** Controlled by exactly this owner. */
  | 'owned'
  /** No controller at all: adoptable, but only by explicit handover. */
  | 'unowned'
  /** Controlled by another object (or an older one of the same name). */
  | 'foreign';

export function ownershipOf(obj: KubeObject, owner: KubeObject, kind: ResourceKind): Ownership {
  const ref = controllerOf(obj);
  if (!ref) return 'unowned';
  return ref.uid === owner.metadata.uid && refersToKind(ref, kind) ? 'owned' : 'foreign';
}

/**
 * Whether an ownerReference names an object of `kind`: the same API group and kind, whichever
 * version of the group it was written for (garbage collection resolves owners the same way).
 */
export function refersToKind(ref: OwnerReference, kind: ResourceKind): boolean {
  return ref.kind === kind.kind && groupOf(ref.apiVersion) === kind.group;
}

/** The API group of an apiVersion (`''` for the core group's `v1`). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export function isControlledBy(obj: KubeObject, owner: KubeObject, kind: ResourceKind): boolean {
  return ownershipOf(obj, owner, kind) === 'owned';
}
