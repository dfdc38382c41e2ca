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

/** The labels of the operator's pods (its Deployment's selector). */
export const OPERATOR_POD_SELECTOR = 'app.kubernetes.io/name=converge,app.kubernetes.io/component=operator';

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

/** The cluster-scoped RBAC the overlays render (every mode; `install-names.test.ts` renders them). */
const CLUSTER_RBAC_NAMES = new Set(['converge', 'converge-webhook', 'converge-metrics-auth', 'converge-metrics-reader']);
/** The Roles and RoleBindings the overlays render in the operator's namespace. */
const OPERATOR_NAMESPACE_RBAC_NAMES = new Set(['converge-leader-election', 'converge-operator-state', 'converge-webhook']);
/** The Role and RoleBinding namespace mode renders in each watched namespace. */
const WATCHED_NAMESPACE_RBAC_NAME = 'converge';

/**
 * Whether `o` is the install's: both install labels and exactly a name the overlays give it
 * (cluster-wide; in the operator's namespace; `converge` in a watched namespace). A name that
 * only starts like one (`converge-staging`, an install with a name suffix) is not.
 */
export function isInstallRbac(o: ListedRbac): boolean {
  const name = o.metadata?.name;
  const labels = o.metadata?.labels ?? {};
  if (!o.kind || !name || labels['app.kubernetes.io/part-of'] !== 'converge' || labels['app.kubernetes.io/name'] !== 'converge') return false;
  if (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding') return CLUSTER_RBAC_NAMES.has(name);
  if (o.kind !== 'Role' && o.kind !== 'RoleBinding') return false;
  return name === WATCHED_NAMESPACE_RBAC_NAME || (o.metadata?.namespace === OPERATOR_NAMESPACE && OPERATOR_NAMESPACE_RBAC_NAMES.has(name));
}

/** `kubectl delete` arguments for a listed RBAC object (its full resource name; `-n` when namespaced). */
export function rbacDeleteArgs(o: ListedRbac): string[] {
  const namespace = o.metadata?.namespace;
  return [`${o.kind!.toLowerCase()}s.rbac.authorization.k8s.io`, o.metadata!.name!, ...(namespace ? ['-n', namespace] : [])];
}
