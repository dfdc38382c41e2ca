/**
 * `converge manifests`: prints (or applies) everything that installs Converge on a cluster — CRDs,
 * namespace, ServiceAccount, RBAC, configuration and the operator Deployment — rendered from the
 * kustomize tree under `deploy/` by `kubectl kustomize`.
 *
 * Modes: `cluster` (a ClusterRole; the operator watches every namespace) and `namespace` (a Role
 * in each watched namespace; `--namespace` is repeatable and also goes on the operator's command
 * line). `--apply` pipes the result to `kubectl apply --server-side`, after checking that nothing
 * will be refused (shared/kubectl.ts): a watched namespace that does not exist stops it before
 * anything is written, unless `--create-namespace` asks to create it; `--kubeconfig`, `--context`
 * and `KUBECONFIG` are honoured as kubectl does. Needs `kubectl` on PATH.
 *
 * Exit codes: 0 done, 1 kubectl failed, 2 usage error.
 * @module
 */
import * as YAML from 'yaml';
import { parseAllDocuments } from 'yaml';
import { parseCommandArgs } from '../shared/command-args.ts';
import { assetDir } from '../shared/package-assets.ts';
import { applyServerSide, connectionFlags, processIO, runKubectl } from '../shared/kubectl.ts';
import type { CommandIO, ConnectionValues } from '../shared/kubectl.ts';
import { printYaml } from '../shared/printed-yaml.ts';
import { OPERATOR_DEPLOYMENT, RBAC_KINDS, rbacDeleteArgs } from '../shared/install-names.ts';
import { listInstallRbac } from '../shared/install-facts.ts';
import type { ListedRbac } from '../shared/install-names.ts';

/** The repository's `deploy/` folder (also present in the container image). */
export const DEPLOY_DIR = assetDir('deploy');

/** The watched namespace written in `deploy/overlays/namespace-mode`; replaced when rendering for others. */
export const PLACEHOLDER_NAMESPACE = 'default';
const OPERATOR_CONTAINER = 'operator';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export type InstallMode = 'cluster' | 'namespace';

export interface RenderOptions {
  mode: InstallMode;
  /** Watched namespaces (namespace mode only); default `[PLACEHOLDER_NAMESPACE]`. */
  namespaces?: readonly string[];
  /** Operator image; default the `converge:dev` placeholder. */
  image?: string;
  env?: NodeJS.ProcessEnv;
}

/** Renders the install manifests for a mode as multi-document YAML. Throws with kubectl's message on failure. */
export async function renderManifests(options: RenderOptions): Promise<string> {
  const overlay = `${DEPLOY_DIR}overlays/${options.mode}-mode`;
  const result = await runKubectl(['kustomize', overlay], options.env ? { env: options.env } : {});
  if (result.code !== 0) throw new Error(`kubectl kustomize ${overlay} failed:\n${result.stderr.trim()}`);
  const namespaces = options.namespaces ?? [PLACEHOLDER_NAMESPACE];
  const retarget = options.mode === 'namespace' && !(namespaces.length === 1 && namespaces[0] === PLACEHOLDER_NAMESPACE);
  if (!retarget && options.image === undefined) return result.stdout;

  const out: unknown[] = [];
  for (const doc of parseAllDocuments(result.stdout)) {
    if (doc.errors.length > 0) throw new Error(`kubectl kustomize gave unreadable YAML: ${doc.errors[0]?.message}`);
    const obj = doc.toJS() as KubeDoc | null;
    if (!obj) continue;
    if (retarget && (obj.kind === 'Role' || obj.kind === 'RoleBinding') && obj.metadata?.namespace === PLACEHOLDER_NAMESPACE) {
      for (const ns of namespaces) out.push({ ...structuredClone(obj), metadata: { ...obj.metadata, namespace: ns } });
      continue;
    }
    if (obj.kind === 'Deployment' && obj.metadata?.name === OPERATOR_DEPLOYMENT) {
      const container = obj.spec?.template?.spec?.containers?.find((c) => c.name === OPERATOR_CONTAINER);
      if (!container) throw new Error('the operator Deployment has no "operator" container');
      if (options.image !== undefined) container.image = options.image;
      if (retarget) {
        const args = (container.args ?? []).filter((a) => !a.startsWith('--namespace='));
        container.args = [...args, ...namespaces.map((ns) => `--namespace=${ns}`)];
      }
    }
    out.push(obj);
  }
  return out.map((o) => printYaml(YAML, o)).join('---\n');
}

interface KubeDoc {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: { template?: { spec?: { containers?: Array<{ name: string; image?: string; args?: string[] }> } } };
}

const HELP = `Usage: converge manifests [--mode cluster|namespace] [--namespace <ns>]... [--image <ref>] [--apply [--create-namespace]]

Print the manifests that install Converge (CRDs, namespace converge-system, ServiceAccount,
RBAC, configuration, operator Deployment), rendered with kubectl kustomize from deploy/.

Options:
  --mode <mode>         cluster: ClusterRole, watch every namespace (default)
                        namespace: a Role in each watched namespace, no cluster-wide rights on
                        workloads or Secrets; cluster-scoped: create TokenReviews/SubjectAccessReviews,
                        get/patch the two Converge CRDs (caBundle)
  --namespace <ns>      a namespace to watch (repeatable; implies --mode namespace; default "${PLACEHOLDER_NAMESPACE}")
  --image <ref>         operator image (default: the converge:dev placeholder)
  --apply               apply with kubectl apply --server-side instead of printing; checked first
                        (namespaces exist, a server-side dry run passes), so a refusal writes nothing;
                        then deletes the install's RBAC this one does not hold (another mode's
                        ClusterRole, the Role of a namespace no longer watched)
  --create-namespace    with --apply: create the watched namespaces that do not exist yet
                        (default: refuse, naming them, so a typo does not make a namespace)
  --kubeconfig <path>   kubeconfig for --apply (default: $KUBECONFIG, then ~/.kube/config)
  --context <name>      kubeconfig context for --apply
  -h, --help            show this help

Examples:
  converge manifests --mode cluster --image ghcr.io/example/converge:0.1.0 | kubectl apply --server-side -f -
  converge manifests --namespace todo --apply
`;

export async function run(argv: string[], io: CommandIO = processIO): Promise<number> {
  const parsed = parseCommandArgs('manifests', HELP, argv, {
    apply: { type: 'boolean' },
    'create-namespace': { type: 'boolean' },
    mode: { type: 'string' },
    namespace: { type: 'string', short: 'n', multiple: true },
    image: { type: 'string' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
  }, false, io);
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values } = parsed;
  const namespaces = values.namespace;
  const mode = values.mode ?? (namespaces ? 'namespace' : 'cluster');
  if (mode !== 'cluster' && mode !== 'namespace') {
    io.stderr(`converge manifests: --mode must be cluster or namespace, not ${JSON.stringify(mode)}\n`);
    return 2;
  }
  if (mode === 'cluster' && namespaces) {
    io.stderr('converge manifests: --namespace only applies to --mode namespace (cluster mode watches every namespace)\n');
    return 2;
  }
  for (const ns of namespaces ?? []) {
    if (!DNS_LABEL.test(ns) || ns.length > 63) {
      io.stderr(`converge manifests: ${JSON.stringify(ns)} is not a namespace name\n`);
      return 2;
    }
  }
  if (values['create-namespace'] && !values.apply) {
    io.stderr('converge manifests: --create-namespace only applies with --apply\n');
    return 2;
  }
  if (values.image !== undefined && values.image.trim() === '') {
    io.stderr('converge manifests: --image needs an image reference\n');
    return 2;
  }

  let yaml: string;
  try {
    yaml = await renderManifests({
      mode,
      ...(namespaces ? { namespaces: [...new Set(namespaces)] } : {}),
      ...(values.image !== undefined ? { image: values.image } : {}),
      env: io.env,
    });
  } catch (error) {
    io.stderr(`converge manifests: ${(error as Error).message}\n`);
    return 1;
  }
  if (!values.apply) {
    io.stdout(yaml);
    return 0;
  }
  if (!(await applyServerSide('manifests', yaml, values, io, { createNamespaces: values['create-namespace'] === true }))) return 1;
  return (await removeOtherInstallsRbac(yaml, values, io)) ? 0 : 1;
}

/**
 * After an apply: the install's RBAC that the applied manifests no longer hold — left by an
 * install of the other mode (a ClusterRole `converge` after a switch to namespace mode, the
 * Role of a namespace no longer watched) or of the other certificate setup — is deleted, so a
 * switch to namespace mode really leaves no cluster-wide rights on workloads or Secrets. Only the
 * install's own RBAC is taken (`isInstallRbac`: both install labels and a name the overlays give):
 * the dashboard's ClusterRole, another install under a name prefix and bindings a person made (to
 * `converge-metrics-reader`, say) are not the install's.
 */
async function removeOtherInstallsRbac(yaml: string, values: ConnectionValues, io: CommandIO): Promise<boolean> {
  const id = (kind: string, namespace: string | undefined, name: string) => `${kind}/${namespace ?? ''}/${name}`;
  const wanted = new Set<string>();
  for (const doc of parseAllDocuments(yaml)) {
    const o = doc.toJS() as KubeDoc | null;
    if (o?.kind && (RBAC_KINDS as readonly string[]).includes(o.kind) && o.metadata?.name) wanted.add(id(o.kind, o.metadata.namespace, o.metadata.name));
  }
  let items: ListedRbac[];
  try {
    items = await listInstallRbac(values, io.env);
  } catch (err) {
    io.stderr(`converge manifests: applied, but the install's RBAC from an earlier install could not be listed; what another mode left is still there: ${(err as Error).message}\n`);
    return false;
  }
  for (const o of items) {
    const name = o.metadata?.name;
    if (!o.kind || !name || wanted.has(id(o.kind, o.metadata?.namespace, name))) continue;
    const removed = await runKubectl([...connectionFlags(values), 'delete', ...rbacDeleteArgs(o), '--ignore-not-found'], { env: io.env });
    if (removed.code !== 0) {
      io.stderr(`converge manifests: applied, but ${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${name}, left by an earlier install, could not be deleted (kubectl exit ${removed.code}):\n${removed.stderr}`);
      return false;
    }
    io.stdout(`${o.kind.toLowerCase()}.rbac.authorization.k8s.io/${name}${o.metadata?.namespace ? ` (${o.metadata.namespace})` : ''} deleted: an earlier install's, not this one's\n`);
  }
  return true;
}
