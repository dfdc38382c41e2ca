/**
 * The names and labels the install (`deploy/`, as `converge manifests` renders it) gives what it
 * creates, for the commands that find an install on a cluster again: `manifests --apply` (which
 * deletes another mode's RBAC after applying) and `uninstall`.
 *
 * Guarantee: `isInstallRbac` holds only for RBAC objects that carry both install labels and a
 * name the overlays give. Another install made from `deploy/` under a name prefix or in another
 * namespace keeps the labels but not these names, so it is never taken for this one; nor are
 * bindings a person made (to `converge-metrics-reader`, say), which lack the labels.
 * @module
 */

/** The namespace the overlays install the operator in (the late-create ledger lives there too). */
export const OPERATOR_NAMESPACE = 'converge-system';

/** The operator's Deployment, in `OPERATOR_NAMESPACE`. */
export const OPERATOR_DEPLOYMENT = 'converge';

/** What marks the install's own RBAC (every Role, ClusterRole and binding the overlays render). */
export const INSTALL_RBAC_SELECTOR = 'app.kubernetes.io/part-of=converge,app.kubernetes.io/name=converge';

export const RBAC_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'] as const;

/** The two CustomResourceDefinitions the install holds. */
export const INSTALL_CRDS = ['microservices.platform.example.io', 'digitalhumanproviders.dhp.example.com'] as const;

/** An RBAC object as `kubectl get -o json` lists it. */
export interface ListedRbac {
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
}

/**
 * Whether `o` (listed with `INSTALL_RBAC_SELECTOR`) is the install's: cluster-scoped `converge`
 * and `converge-*`; Roles and bindings `converge-*` in the operator's namespace, and `converge`
 * in each watched namespace.
 */
export function isInstallRbac(o: ListedRbac): boolean {
  const name = o.metadata?.name;
  const labels = o.metadata?.labels ?? {};
  if (!o.kind || !name || labels['app.kubernetes.io/part-of'] !== 'converge' || labels['app.kubernetes.io/name'] !== 'converge') return false;
  if (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding') return name === 'converge' || name.startsWith('converge-');
  if (o.kind !== 'Role' && o.kind !== 'RoleBinding') return false;
  return name === 'converge' || (o.metadata?.namespace === OPERATOR_NAMESPACE && name.startsWith('converge-'));
}

/** `kubectl delete` arguments for a listed RBAC object (its full resource name; `-n` when namespaced). */
export function rbacDeleteArgs(o: ListedRbac): string[] {
  const namespace = o.metadata?.namespace;
  return [`${o.kind!.toLowerCase()}s.rbac.authorization.k8s.io`, o.metadata!.name!, ...(namespace ? ['-n', namespace] : [])];
}
