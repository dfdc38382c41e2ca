/**
 * `converge uninstall`: removes what `converge manifests` installed, in the order that strands
 * nothing — after checking, on the cluster, that removing the operator now loses nothing.
 *
 * Guarantees:
 * - **Nothing is deleted while a check refuses.** The facts are read first (providers,
 *   Microservices, the late-create ledger, the CRDs' stored versions); a refusal names what is
 *   left and what to do, and exits 1 with the cluster untouched. `--dry-run` prints the plan and
 *   the refusals and deletes nothing.
 * - **Refused while a DigitalHumanProvider exists** (also one being deleted) where the installed
 *   operator watches (the namespaces its `--namespace` flags name; every namespace when it has
 *   none, or when no operator Deployment is found): only the running
 *   operator deletes its vendor instance and releases its finalizer. `--force` removes the
 *   operator anyway (the providers keep their finalizer and their instances until an operator
 *   runs again); with `--crds` never (the CRD would stay Terminating with them).
 * - **Refused while the late-create ledger holds a key** (`converge_vendor_late_create_keys` above
 *   0, ADR 0037): a vendor create that lands after the operator is gone would never be deleted.
 *   `--force` skips this check.
 * - **The CRDs stay** unless `--crds`: deleting them deletes every Microservice and, by garbage
 *   collection, its Deployment and Service — refused while a Microservice exists, unless
 *   `--force`. Kept CRDs convert through the operator's webhook: refused while they store objects
 *   in an older version (`status.storedVersions`; `converge migrate-storage` first), unless
 *   `--force`.
 * - The order: the operator Deployment (its pods gone), the install's RBAC (`isInstallRbac`:
 *   cluster-wide and each watched namespace's), the namespace `converge-system` (the ledger,
 *   Leases, the webhook's Secrets), then the CRDs when asked. Each step is idempotent: running
 *   again after a failure finishes the job.
 *
 * Caveats: an operator run outside the cluster (`converge run --kubeconfig`) is not found: stop it
 * yourself. The dashboard's ClusterRole (`deploy/dashboard/`) is not part of the install and stays.
 * Exit codes: 0 done (or the dry run's plan allowed), 1 refused or kubectl failed, 2 usage error.
 * @module
 */
import { parseCommandArgs } from '../shared/command-args.ts';
import { connectionFlags, kubectlFailure, processIO, runKubectl } from '../shared/kubectl.ts';
import type { CommandIO, ConnectionValues } from '../shared/kubectl.ts';
import { INSTALL_CRDS, INSTALL_RBAC_SELECTOR, OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE, isInstallRbac, rbacDeleteArgs } from '../shared/install-names.ts';
import type { ListedRbac } from '../shared/install-names.ts';
import { decodeLedger } from '../../operators/provider/late-create-ledger.ts';
import type { LedgerData } from '../../operators/provider/late-create-ledger.ts';
import { ledgerShardNames } from '../../operators/provider/late-create-ledger-shards.ts';

/** What the checks read from the cluster. */
export interface UninstallFacts {
  /**
   * The namespaces the installed operator watches (its Deployment's `--namespace` flags, namespace
   * mode); absent when it watches every namespace or no operator Deployment was found.
   */
  watched?: string[];
  /** `namespace/name` of every DigitalHumanProvider the operator watches (none when its CRD is absent). */
  providers: string[];
  /** How many of them are being deleted. */
  providersDeleting: number;
  /** How many Microservices exist (none when the CRD is absent). */
  microservices: number;
  /** Keys in the late-create ledger, entries that cannot be read included. */
  ledgerKeys: number;
  /** The latest `until` of the readable entries (RFC 3339), when there is one. */
  ledgerUntil?: string;
  /** Per installed CRD, its `status.storedVersions`. */
  storedVersions: Record<string, string[]>;
}

export interface UninstallOptions {
  crds: boolean;
  force: boolean;
}

export interface UninstallPlan {
  /** Why it must not go ahead; empty when it may. */
  refusals: string[];
  /** What `--force` let through, said before the deletions. */
  warnings: string[];
}

const PROVIDERS_NAMED = 5;

/** The checks, as a pure function of the facts (see the module header). */
export function planUninstall(facts: UninstallFacts, options: UninstallOptions): UninstallPlan {
  const refusals: string[] = [];
  const warnings: string[] = [];
  const check = (refused: boolean, text: string, forcible = true) => {
    if (!refused) return;
    if (options.force && forcible) warnings.push(text);
    else refusals.push(text);
  };
  const n = facts.providers.length;
  if (n > 0) {
    const named = facts.providers.slice(0, PROVIDERS_NAMED).join(', ') + (n > PROVIDERS_NAMED ? `, and ${n - PROVIDERS_NAMED} more` : '');
    const deleting = facts.providersDeleting > 0 ? ` (${facts.providersDeleting} being deleted: wait for them)` : '';
    check(true,
      `${n} DigitalHumanProvider${n === 1 ? '' : 's'} exist${n === 1 ? 's' : ''}${facts.watched ? ' in the watched namespaces' : ''}${deleting}: ${named}. Only the running operator deletes a provider's vendor instance and releases its finalizer: ` +
      `delete them first (kubectl delete digitalhumanproviders.dhp.example.com --all --all-namespaces), wait until they are gone, then run this again` +
      (options.crds ? ' (the CRDs cannot go before them: a CRD stays Terminating with its objects)' : '; --force removes the operator anyway, and they keep their finalizer and instances until an operator runs again'),
      !options.crds);
  }
  if (facts.ledgerKeys > 0) {
    check(true,
      `the late-create sweep still looks for ${facts.ledgerKeys} vendor create${facts.ledgerKeys === 1 ? '' : 's'} that may land late` +
      (facts.ledgerUntil ? ` (its window ends ${facts.ledgerUntil}; a key the vendor has not answered for is looked up after that too)` : '') +
      `: an instance created after the operator is gone would never be deleted. Run this again once converge_vendor_late_create_keys is 0 (ADR 0037); --force removes the operator now`);
  }
  if (options.crds && facts.microservices > 0) {
    check(true, `${facts.microservices} Microservice${facts.microservices === 1 ? '' : 's'} exist: deleting the CRDs deletes them and, by garbage collection, their Deployments and Services. Delete them yourself first, or pass --force`);
  }
  if (!options.crds) {
    for (const [crd, versions] of Object.entries(facts.storedVersions)) {
      const older = versions.filter((v) => v !== 'v1');
      if (older.length > 0) {
        check(true, `${crd} may still store objects as ${older.join(', ')} (status.storedVersions): without the operator's conversion webhook they cannot be read as v1. Run converge migrate-storage while the operator runs, or pass --crds to delete the CRDs too, or --force`);
      }
    }
  }
  return { refusals, warnings };
}

const HELP = `Usage: converge uninstall [--crds] [--force] [--dry-run] [--kubeconfig <path>] [--context <name>]

Remove what converge manifests installed: the operator Deployment, the install's RBAC (cluster-wide
and in each watched namespace), the namespace ${OPERATOR_NAMESPACE}; the CRDs only with --crds.

Checked first, and refused with nothing deleted while:
  - a DigitalHumanProvider exists (only the running operator deletes its vendor instance);
  - the late-create ledger still holds a key (converge_vendor_late_create_keys above 0);
  - with --crds, a Microservice exists (its Deployment and Service would be deleted with it);
  - without --crds, a CRD still stores objects in an older version (converge migrate-storage first).

Options:
  --crds                also delete the two CRDs (and so every Microservice and DigitalHumanProvider)
  --force               go ahead past the checks (never deletes the CRDs while providers exist)
  --dry-run             print the checks and the plan; delete nothing
  --kubeconfig <path>   kubeconfig (default: $KUBECONFIG, then ~/.kube/config)
  --context <name>      kubeconfig context
  -h, --help            show this help

Examples:
  kubectl delete digitalhumanproviders.dhp.example.com --all --all-namespaces
  converge uninstall --dry-run
  converge uninstall
`;

export async function run(argv: string[], io: CommandIO = processIO): Promise<number> {
  const parsed = parseCommandArgs('uninstall', HELP, argv, {
    crds: { type: 'boolean' },
    force: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
  }, false, io);
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values } = parsed;
  const options: UninstallOptions = { crds: values.crds === true, force: values.force === true };
  const fail = (text: string) => {
    io.stderr(`converge uninstall: ${text}\n`);
    return 1;
  };

  let facts: UninstallFacts;
  try {
    facts = await readFacts(values, io.env);
  } catch (err) {
    return fail((err as Error).message);
  }
  const plan = planUninstall(facts, options);
  for (const text of plan.refusals) io.stderr(`converge uninstall: refused: ${text}\n`);
  if (plan.refusals.length > 0) return fail('nothing was deleted');
  for (const text of plan.warnings) io.stderr(`converge uninstall: --force: ${text}\n`);

  const steps = plannedSteps(options);
  if (values['dry-run']) {
    io.stdout(`converge uninstall would delete, in order:\n${steps.map((s) => `  - ${s}\n`).join('')}(dry run: nothing deleted)\n`);
    return 0;
  }
  return (await uninstall(values, options, io)) ? 0 : 1;
}

function plannedSteps(options: UninstallOptions): string[] {
  return [
    `deployment ${OPERATOR_NAMESPACE}/${OPERATOR_DEPLOYMENT} and its pods (the operator stops)`,
    `the install's ClusterRoles, ClusterRoleBindings and the Roles and RoleBindings "converge" of watched namespaces (labelled ${INSTALL_RBAC_SELECTOR})`,
    `namespace ${OPERATOR_NAMESPACE} (configuration, Leases, the late-create ledger, the webhook's Service and Secrets)`,
    ...(options.crds ? [`customresourcedefinitions ${INSTALL_CRDS.join(', ')} (every Microservice and DigitalHumanProvider with them)`] : []),
  ];
}

interface Listed<T> {
  items?: T[];
}

async function getJson<T>(values: ConnectionValues, env: NodeJS.ProcessEnv | undefined, args: string[]): Promise<Listed<T>> {
  const got = await runKubectl([...connectionFlags(values), 'get', ...args, '-o', 'json'], env ? { env } : {});
  if (got.code !== 0) throw new Error(kubectlFailure('uninstall', got).replace('; nothing was applied', '; nothing was deleted'));
  // kubectl prints nothing when --ignore-not-found found none, and one object asked by name bare.
  const body = JSON.parse(got.stdout || '{"kind":"List","items":[]}') as Listed<T> & { kind?: string };
  return body.kind === 'List' || Array.isArray(body.items) ? body : { items: [body as T] };
}

export interface ListedObject {
  metadata?: { name?: string; namespace?: string; deletionTimestamp?: string };
  spec?: { template?: { spec?: { containers?: Array<{ name?: string; args?: string[] }> } } };
  status?: { storedVersions?: string[] };
  data?: LedgerData;
}

/** Reads what `planUninstall` decides on. Throws (kubectl's words) when the cluster cannot be read. */
async function readFacts(values: ConnectionValues, env: NodeJS.ProcessEnv | undefined): Promise<UninstallFacts> {
  const crds = (await getJson<ListedObject>(values, env, ['customresourcedefinitions', ...INSTALL_CRDS, '--ignore-not-found'])).items ?? [];
  const installed = new Set(crds.map((c) => c.metadata?.name));
  const storedVersions = Object.fromEntries(crds.map((c) => [c.metadata?.name ?? '', c.status?.storedVersions ?? []]));
  const [operator] = (await getJson<ListedObject>(values, env, ['deployment', OPERATOR_DEPLOYMENT, '-n', OPERATOR_NAMESPACE, '--ignore-not-found'])).items ?? [];
  const watched = operator ? watchedNamespaces(operator) : undefined;
  const providers: ListedObject[] = [];
  if (installed.has('digitalhumanproviders.dhp.example.com')) {
    for (const where of watched ? watched.map((ns) => ['-n', ns]) : [['--all-namespaces']]) {
      providers.push(...((await getJson<ListedObject>(values, env, ['digitalhumanproviders.dhp.example.com', ...where])).items ?? []));
    }
  }
  const microservices = installed.has('microservices.platform.example.io')
    ? (await getJson<ListedObject>(values, env, ['microservices.platform.example.io', '--all-namespaces'])).items ?? []
    : [];
  const shards = (await getJson<ListedObject>(values, env, ['configmaps', ...ledgerShardNames(), '-n', OPERATOR_NAMESPACE, '--ignore-not-found'])).items ?? [];
  let ledgerKeys = 0;
  let ledgerUntil: string | undefined;
  for (const shard of shards) {
    const { entries, unreadable } = decodeLedger(shard.data);
    ledgerKeys += entries.length + unreadable.length;
    for (const e of entries) if (!ledgerUntil || Date.parse(e.until) > Date.parse(ledgerUntil)) ledgerUntil = e.until;
  }
  return {
    ...(watched ? { watched } : {}),
    providers: providers.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort(),
    providersDeleting: providers.filter((p) => p.metadata?.deletionTimestamp).length,
    microservices: microservices.length,
    ledgerKeys,
    ...(ledgerUntil ? { ledgerUntil } : {}),
    storedVersions,
  };
}

/**
 * The namespaces the operator's `--namespace` flags name (`--namespace=x` or `--namespace x`, as
 * `converge run` reads them); undefined when there is none (it watches every namespace).
 */
export function watchedNamespaces(deployment: ListedObject): string[] | undefined {
  const args = deployment.spec?.template?.spec?.containers?.find((c) => c.name === 'operator')?.args ?? [];
  const found: string[] = [];
  args.forEach((arg, i) => {
    if (arg.startsWith('--namespace=')) found.push(arg.slice('--namespace='.length));
    else if (arg === '--namespace' && args[i + 1] !== undefined) found.push(args[i + 1]!);
  });
  return found.length > 0 ? [...new Set(found)] : undefined;
}

/** The deletions, in order; stops at the first that fails (running again finishes the job). */
async function uninstall(values: ConnectionValues, options: UninstallOptions, io: CommandIO): Promise<boolean> {
  const env = io.env ? { env: io.env } : {};
  const step = async (what: string, args: string[], requestTimeout = true): Promise<boolean> => {
    const result = await runKubectl([...connectionFlags(values, { requestTimeout }), 'delete', ...args, '--ignore-not-found'], env);
    if (result.stdout) io.stdout(result.stdout);
    if (result.code === 0) return true;
    io.stderr(`converge uninstall: deleting ${what} failed (kubectl exit ${result.code}); run converge uninstall again to finish:\n${result.stderr}`);
    return false;
  };
  // Foreground: kubectl waits until the pods are gone, so no replica acts after its rights went.
  if (!(await step('the operator Deployment', ['deployment', OPERATOR_DEPLOYMENT, '-n', OPERATOR_NAMESPACE, '--cascade=foreground', '--wait', '--timeout=5m'], false))) return false;

  const listed = await runKubectl([...connectionFlags(values), 'get', 'clusterroles,clusterrolebindings,roles,rolebindings', '--all-namespaces', '-l', INSTALL_RBAC_SELECTOR, '-o', 'json'], env);
  if (listed.code !== 0) {
    io.stderr(`converge uninstall: the operator is stopped, but its RBAC could not be listed (kubectl exit ${listed.code}); run converge uninstall again to finish:\n${listed.stderr}`);
    return false;
  }
  const rbac = ((JSON.parse(listed.stdout) as Listed<ListedRbac>).items ?? []).filter(isInstallRbac);
  // Bindings first: a role left without its binding grants nothing.
  rbac.sort((a, b) => Number(!a.kind?.endsWith('Binding')) - Number(!b.kind?.endsWith('Binding')));
  for (const o of rbac) {
    if (!(await step(`${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`, rbacDeleteArgs(o)))) return false;
  }
  if (!(await step(`namespace ${OPERATOR_NAMESPACE}`, ['namespace', OPERATOR_NAMESPACE, '--wait', '--timeout=5m'], false))) return false;
  if (options.crds && !(await step('the CRDs', ['customresourcedefinitions', ...INSTALL_CRDS, '--wait', '--timeout=5m'], false))) return false;
  io.stdout(options.crds
    ? 'converge uninstalled, CRDs included.\n'
    : `converge uninstalled; the CRDs stay (${INSTALL_CRDS.join(', ')}): converge uninstall --crds deletes them, and every Microservice with its Deployment and Service.\n`);
  return true;
}
