/**
 * `converge uninstall`: removes what `converge manifests` installed, in the order that strands
 * nothing — after checking, on the cluster, that removing the operator now loses nothing.
 *
 * Guarantees:
 * - **Nothing is deleted while a check refuses.** The facts are read first
 *   (`../shared/install-facts.ts`); a refusal names what is left and what to do, and exits 1 with
 *   the cluster untouched. `--dry-run` prints the checks and the plan and deletes nothing.
 * - **Refused while a DigitalHumanProvider exists where the operator acts** (the namespaces its
 *   `--namespace` flags name; every namespace without them; with no operator Deployment or pods,
 *   where the install's RBAC still lets one act), also one being deleted: only the running
 *   operator deletes a provider's vendor instance and releases its finalizer. `--force` removes
 *   the install anyway (those providers keep their finalizer and instances until an operator runs
 *   again). With neither an operator nor its RBAC left there is nothing to strand: no check.
 * - **Refused while the late-create ledger holds a key** (`converge_vendor_late_create_keys` above
 *   0, ADR 0037): a vendor create that lands after the operator is gone would never be deleted.
 *   `--force` skips this check.
 * - **The CRDs stay** unless `--crds`. Kept, they convert through the operator's webhook: refused
 *   while they store objects in an older version (`status.storedVersions`; `converge
 *   migrate-storage` first), unless `--force`. Deleted, they take every Microservice and, by
 *   garbage collection, its Deployment and Service: refused while a Microservice exists, unless
 *   `--force`. Never deleted, `--force` or not, while a provider exists in any namespace or an
 *   older version is stored: the API server could not finish (finalizers nobody releases, objects
 *   it cannot convert) and the CRD would stay Terminating. These checks run again right before the
 *   CRDs go (the operator ran until then and may have been given new objects).
 * - The order: the operator Deployment (its pods gone; pods it orphaned too), then — checked
 *   again, unless `--force`: the operator ran until then — the install's RBAC (`isInstallRbac`:
 *   exact names and labels, bindings first), the namespace `converge-system` (the ledger, Leases,
 *   the webhook's Secrets), then the CRDs when asked. A provider created or a ledger key recorded
 *   while the operator stopped keeps the RBAC and the ledger: installing the operator again picks
 *   them up. Each step is idempotent: running again after a failure finishes the job.
 *
 * Caveats: an operator run outside the cluster (`converge run --kubeconfig`) is not found: stop it
 * yourself. Deleting `converge-system` deletes what else is in it (a ServiceAccount for the
 * dashboard, say): named in a warning first. The dashboard's ClusterRole is not the install's and
 * stays. Exit codes: 0 done (or the dry run's plan allowed), 1 refused or kubectl failed, 2 usage.
 * @module
 */
import { parseCommandArgs } from '../shared/command-args.ts';
import { connectionFlags, processIO, runKubectl } from '../shared/kubectl.ts';
import type { CommandIO, ConnectionValues } from '../shared/kubectl.ts';
import { INSTALL_CRDS, INSTALL_RBAC_SELECTOR, OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE, OPERATOR_POD_SELECTOR, rbacDeleteArgs } from '../shared/install-names.ts';
import type { ListedRbac } from '../shared/install-names.ts';
import { listInstallRbac, readInstallFacts } from '../shared/install-facts.ts';
import type { InstallFacts, ProviderFacts } from '../shared/install-facts.ts';

export type { InstallFacts } from '../shared/install-facts.ts';

export interface UninstallOptions {
  crds: boolean;
  force: boolean;
}

export interface UninstallPlan {
  /** Why it must not go ahead; empty when it may. */
  refusals: string[];
  /** What `--force` let through, or what will go that is not the install's: said before the deletions. */
  warnings: string[];
}

const NAMED = 5;
const PROVIDERS = 'digitalhumanproviders.dhp.example.com';

function someOf(names: readonly string[]): string {
  return names.slice(0, NAMED).join(', ') + (names.length > NAMED ? `, and ${names.length - NAMED} more` : '');
}

function providersText(p: ProviderFacts, where: string): string {
  const n = p.names.length;
  const deleting = p.deleting > 0 ? ` (${p.deleting} being deleted: wait for them)` : '';
  return `${n} DigitalHumanProvider${n === 1 ? '' : 's'} exist${n === 1 ? 's' : ''}${where}${deleting}: ${someOf(p.names)}`;
}

/** The checks, as a pure function of the facts (see the module header). */
export function planUninstall(facts: InstallFacts, options: UninstallOptions): UninstallPlan {
  const refusals: string[] = [];
  const warnings: string[] = [];
  const check = (text: string, forcible: boolean) => (options.force && forcible ? warnings : refusals).push(text);

  for (const text of strandRefusals(facts)) check(text, true);
  if (options.crds) {
    const forCrds = crdRefusals(facts, options);
    refusals.push(...forCrds.refusals);
    warnings.push(...forCrds.warnings);
  } else {
    for (const [crd, older] of olderStoredVersions(facts)) {
      check(`${crd} may still store objects as ${older.join(', ')} (status.storedVersions): without the operator's conversion webhook they cannot be read as v1. Run converge migrate-storage while the operator runs, or pass --force`, true);
    }
  }
  if (facts.otherServiceAccounts.length > 0) {
    warnings.push(`namespace ${OPERATOR_NAMESPACE} also holds ServiceAccount${facts.otherServiceAccounts.length === 1 ? '' : 's'} ${someOf(facts.otherServiceAccounts)}, not made by the install (the dashboard's, deploy/dashboard/?): deleted with the namespace; bindings to ${facts.otherServiceAccounts.length === 1 ? 'it' : 'them'} stay`);
  }
  return { refusals, warnings };
}

/**
 * What removing the install now would strand: providers only a running operator can clean up,
 * vendor creates the late-create sweep still looks for. Checked before anything goes, and again
 * once the operator stopped.
 */
function strandRefusals(facts: InstallFacts): string[] {
  const out: string[] = [];
  if (facts.serving && facts.providers.names.length > 0) {
    const cleanup = facts.watched
      ? facts.watched.map((ns) => `kubectl delete ${PROVIDERS} --all -n ${ns}`).join('; ')
      : `kubectl delete ${PROVIDERS} --all --all-namespaces`;
    out.push(`${providersText(facts.providers, facts.watched ? ' where the operator watches' : '')}. Only the running operator deletes a provider's vendor instance and releases its finalizer: ` +
      (facts.operator
        ? `delete them first (${cleanup}), wait until they are gone, then run this again`
        : `no operator runs now; install it again (converge manifests --apply), delete them (${cleanup}), wait until they are gone, then run this again`) +
      '; --force removes the install anyway, and they keep their finalizer and instances until an operator runs again');
  }
  if (facts.ledgerKeys > 0) {
    out.push(`the late-create sweep still looks for ${facts.ledgerKeys} vendor create${facts.ledgerKeys === 1 ? '' : 's'} that may land late` +
      (facts.ledgerUntil ? ` (its window ends ${facts.ledgerUntil}; a key the vendor has not answered for is looked up after that too)` : '') +
      ': an instance created after the operator is gone would never be deleted. ' +
      (facts.operator
        ? 'Run this again once converge_vendor_late_create_keys is 0 (ADR 0037)'
        : 'No operator runs now to look: install it again (converge manifests --apply) and run this again once converge_vendor_late_create_keys is 0 (ADR 0037)') +
      '; --force removes the install now');
  }
  return out;
}

function olderStoredVersions(facts: InstallFacts): Array<[string, string[]]> {
  return Object.entries(facts.storedVersions).map(([crd, versions]): [string, string[]] => [crd, versions.filter((v) => v !== 'v1')]).filter(([, older]) => older.length > 0);
}

/** The checks that guard the CRDs' deletion, also run again right before it. */
function crdRefusals(facts: InstallFacts, options: UninstallOptions): UninstallPlan {
  const refusals: string[] = [];
  const warnings: string[] = [];
  for (const [crd, older] of olderStoredVersions(facts)) {
    refusals.push(`${crd} may still store objects as ${older.join(', ')} (status.storedVersions): once the operator (its conversion webhook) is gone the API server cannot convert them, and the CRD would stay Terminating. Run converge migrate-storage while the operator runs, then this again`);
  }
  const anywhere = facts.providersAnywhere ?? facts.providers;
  if (anywhere.names.length > 0) {
    refusals.push(`${providersText(anywhere, ' in the cluster')}. The CRDs cannot go before them: a CRD stays Terminating while its objects keep a finalizer. Delete them while the operator that serves them runs`);
  }
  if (facts.microservices > 0) {
    const text = `${facts.microservices} Microservice${facts.microservices === 1 ? '' : 's'} exist${facts.microservices === 1 ? 's' : ''}: deleting the CRDs deletes them and, by garbage collection, their Deployments and Services. Delete them yourself first, or pass --force`;
    (options.force ? warnings : refusals).push(text);
  }
  return { refusals, warnings };
}

const HELP = `Usage: converge uninstall [--crds] [--force] [--dry-run] [--kubeconfig <path>] [--context <name>]

Remove what converge manifests installed: the operator Deployment, the install's RBAC (cluster-wide
and in each watched namespace), the namespace ${OPERATOR_NAMESPACE}; the CRDs only with --crds.
After the operator stopped the checks run again before anything else goes.

Checked first, and refused with nothing deleted while:
  - a DigitalHumanProvider exists where the operator acts (only it deletes the vendor instance);
  - the late-create ledger still holds a key (converge_vendor_late_create_keys above 0);
  - a CRD still stores objects in an older version (converge migrate-storage first);
  - with --crds, a Microservice exists (its Deployment and Service would be deleted with it), or a
    DigitalHumanProvider exists in any namespace.

Options:
  --crds                also delete the two CRDs (and so every Microservice with its workloads)
  --force               go ahead past the checks, except those that keep a CRD from being stuck
                        Terminating (providers anywhere, objects stored in an older version)
  --dry-run             print the checks and the plan; delete nothing
  --kubeconfig <path>   kubeconfig (default: $KUBECONFIG, then ~/.kube/config)
  --context <name>      kubeconfig context
  -h, --help            show this help

Examples:
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

  let facts: InstallFacts;
  try {
    facts = await readInstallFacts(values, io.env, { everywhere: options.crds });
  } catch (err) {
    return fail(`${(err as Error).message.trimEnd()}\nnothing was deleted`);
  }
  const plan = planUninstall(facts, options);
  for (const text of plan.refusals) io.stderr(`converge uninstall: refused: ${text}\n`);
  if (plan.refusals.length > 0) return fail('nothing was deleted');
  for (const text of plan.warnings) io.stderr(`converge uninstall: warning: ${text}\n`);

  if (values['dry-run']) {
    io.stdout(`converge uninstall would delete, in order:\n${plannedSteps(options).map((s) => `  - ${s}\n`).join('')}(dry run: nothing deleted)\n`);
    return 0;
  }
  return (await uninstall(values, options, io)) ? 0 : 1;
}

function plannedSteps(options: UninstallOptions): string[] {
  return [
    `deployment ${OPERATOR_NAMESPACE}/${OPERATOR_DEPLOYMENT} and its pods (the operator stops)`,
    `the install's ClusterRoles and ClusterRoleBindings, and the Roles and RoleBindings "converge" of watched namespaces (labelled ${INSTALL_RBAC_SELECTOR})`,
    `namespace ${OPERATOR_NAMESPACE} (configuration, Leases, the late-create ledger, the webhook's Service and Secrets)`,
    ...(options.crds ? [`customresourcedefinitions ${INSTALL_CRDS.join(', ')} (every Microservice with them), after checking again`] : []),
  ];
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
  // Foreground: kubectl waits until the pods are gone, so no replica acts after its rights went;
  // then any pod a Deployment deleted with --cascade=orphan left running.
  if (!(await step('the operator Deployment', ['deployment', OPERATOR_DEPLOYMENT, '-n', OPERATOR_NAMESPACE, '--cascade=foreground', '--wait', '--timeout=5m'], false))) return false;
  if (!(await step('the operator\'s pods', ['pods', '-n', OPERATOR_NAMESPACE, '-l', OPERATOR_POD_SELECTOR, '--wait', '--timeout=5m'], false))) return false;

  // Again: the operator ran until its pods were gone, and anyone may have created a provider (it
  // got a finalizer, maybe a vendor instance) or released one (a ledger key) meanwhile. The RBAC
  // and the ledger stay until that is settled: installing the operator again picks it all up.
  if (!options.force) {
    let left: string[];
    try {
      left = strandRefusals(await readInstallFacts(values, io.env, { everywhere: false }));
    } catch (err) {
      io.stderr(`converge uninstall: the operator is stopped, but what it left could not be read again, so nothing else was deleted: ${(err as Error).message}\n`);
      return false;
    }
    for (const text of left) io.stderr(`converge uninstall: the operator is stopped, but meanwhile: ${text}\n`);
    if (left.length > 0) {
      io.stderr('converge uninstall: nothing else was deleted (the RBAC, converge-system and its ledger stay): install the operator again (converge manifests --apply) so that it finishes, then run this again\n');
      return false;
    }
  }

  let rbac: ListedRbac[];
  try {
    rbac = await listInstallRbac(values, io.env);
  } catch (err) {
    io.stderr(`converge uninstall: the operator is stopped, but its RBAC could not be listed; run converge uninstall again to finish: ${(err as Error).message}\n`);
    return false;
  }
  // Bindings first: a role left without its binding grants nothing.
  rbac.sort((a, b) => Number(!a.kind?.endsWith('Binding')) - Number(!b.kind?.endsWith('Binding')));
  for (const o of rbac) {
    if (!(await step(`${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`, rbacDeleteArgs(o)))) return false;
  }
  if (!(await step(`namespace ${OPERATOR_NAMESPACE}`, ['namespace', OPERATOR_NAMESPACE, '--wait', '--timeout=5m'], false))) return false;

  if (options.crds) {
    // Again: until its pods were gone the operator ran, and anyone may have created objects since.
    let again: UninstallPlan;
    try {
      again = crdRefusals(await readInstallFacts(values, io.env, { everywhere: true }), options);
    } catch (err) {
      io.stderr(`converge uninstall: the operator is removed; the CRDs stay, as what they hold could not be read again: ${(err as Error).message}\n`);
      return false;
    }
    for (const text of again.refusals) io.stderr(`converge uninstall: the operator is removed; the CRDs stay: ${text}\n`);
    if (again.refusals.length > 0) return false;
    if (!(await step('the CRDs', ['customresourcedefinitions', ...INSTALL_CRDS, '--wait', '--timeout=5m'], false))) return false;
  }
  io.stdout(options.crds
    ? 'converge uninstalled, CRDs included.\n'
    : `converge uninstalled; the CRDs stay (${INSTALL_CRDS.join(', ')}): converge uninstall --crds deletes them, and every Microservice with its Deployment and Service.\n`);
  return true;
}
