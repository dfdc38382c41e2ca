/**
 * What an install of Converge (as `converge manifests` renders it) leaves on a cluster that
 * decides whether it can be removed now, read with kubectl: the CRDs and their stored versions,
 * the operator Deployment and the namespaces it watches, the DigitalHumanProviders where it
 * watches (and, when asked, everywhere), the Microservices, the late-create ledger, and
 * ServiceAccounts in the operator's namespace that are not the install's. Used by `uninstall`; the
 * install's RBAC (`listInstallRbac`) also by `manifests --apply`.
 *
 * Guarantees: `readInstallFacts` reads only (kubectl `get`); it throws with kubectl's words when
 * something cannot be read, so a caller never decides on a partial picture. Every output shape of
 * `kubectl get -o json` is read: a List, one object printed bare, nothing at all
 * (`--ignore-not-found` that found none).
 * @module
 */
import { connectionFlags, runKubectl } from './kubectl.ts';
import type { ConnectionValues } from './kubectl.ts';
import { INSTALL_CRDS, INSTALL_RBAC_SELECTOR, OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE, OPERATOR_POD_SELECTOR, isInstallRbac } from './install-names.ts';
import type { ListedRbac } from './install-names.ts';
import { decodeLedger } from '../../operators/provider/late-create-ledger.ts';
import type { LedgerData } from '../../operators/provider/late-create-ledger.ts';
import { ledgerShardNames } from '../../operators/provider/late-create-ledger-shards.ts';

const PROVIDERS = 'digitalhumanproviders.dhp.example.com';
const MICROSERVICES = 'microservices.platform.example.io';
/** ServiceAccounts of the operator's namespace that the install makes or Kubernetes does. */
const INSTALL_SERVICE_ACCOUNTS = new Set(['converge', 'default']);

export interface ProviderFacts {
  /** `namespace/name`, sorted. */
  names: string[];
  /** How many of them are being deleted. */
  deleting: number;
}

export interface InstallFacts {
  /**
   * Whether the operator runs or may run: its Deployment exists, or pods of it do (a Deployment
   * deleted with `--cascade=orphan` leaves them running).
   */
  operator: boolean;
  /**
   * Where the install's operator acts, when that is some namespaces only: the `--namespace` flags
   * of its Deployment (or of its pods); with neither, the namespaces holding the install's Role
   * `converge`. Absent when it acts in every namespace (cluster mode: no flags, or the install's
   * ClusterRole `converge` exists).
   */
  watched?: string[];
  /**
   * Whether anything of the install still gives an operator rights over providers: an operator
   * (above), or the install's RBAC for them (a Role `converge` in a watched namespace, the
   * ClusterRole `converge`). False once both are gone: nothing left to strand a provider.
   */
  serving: boolean;
  /** The providers where the operator acts (`watched`); none when nothing is `serving`. */
  providers: ProviderFacts;
  /** The providers in every namespace; read only when asked (deleting the CRDs). */
  providersAnywhere?: ProviderFacts;
  /** How many Microservices exist, in every namespace. */
  microservices: number;
  /** Keys in the late-create ledger (each UID once, entries that cannot be read included). */
  ledgerKeys: number;
  /** The latest `until` of the readable entries (RFC 3339), when there is one. */
  ledgerUntil?: string;
  /** Per installed CRD, its `status.storedVersions`. */
  storedVersions: Record<string, string[]>;
  /** ServiceAccounts in the operator's namespace the install did not make (the dashboard's, a person's). */
  otherServiceAccounts: string[];
}

interface PodSpec {
  containers?: Array<{ name?: string; args?: string[] }>;
}

export interface ListedObject {
  kind?: string;
  metadata?: { name?: string; namespace?: string; deletionTimestamp?: string; labels?: Record<string, string> };
  spec?: { template?: { spec?: PodSpec } } & PodSpec;
  status?: { storedVersions?: string[] };
  data?: LedgerData;
}

/** kubectl could not read the cluster; `code` is kubectl's exit code (127: not on PATH). */
class KubectlReadError extends Error {
  readonly code: number;
  constructor(code: number, stderr: string) {
    super(code === 127 ? 'kubectl is not on PATH (this command runs it): install kubectl' : `kubectl could not read the cluster (exit ${code}):\n${stderr}`);
    this.name = 'KubectlReadError';
    this.code = code;
  }
}

/** `kubectl get … -o json` as a list of objects, whatever shape kubectl printed. */
async function getObjects(values: ConnectionValues, env: NodeJS.ProcessEnv | undefined, args: string[]): Promise<ListedObject[]> {
  const got = await runKubectl([...connectionFlags(values), 'get', ...args, '-o', 'json'], env ? { env } : {});
  if (got.code !== 0) throw new KubectlReadError(got.code, got.stderr);
  if (got.stdout.trim() === '') return [];
  const body = JSON.parse(got.stdout) as ListedObject & { kind?: string; items?: ListedObject[] };
  return Array.isArray(body.items) ? body.items : [body];
}

/** The install's RBAC on the cluster (`isInstallRbac`: its labels and the exact names the overlays give). */
export async function listInstallRbac(values: ConnectionValues, env: NodeJS.ProcessEnv | undefined): Promise<ListedRbac[]> {
  return ((await getObjects(values, env, ['clusterroles,clusterrolebindings,roles,rolebindings', '--all-namespaces', '-l', INSTALL_RBAC_SELECTOR])) as ListedRbac[]).filter(isInstallRbac);
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

function providerFacts(items: ListedObject[]): ProviderFacts {
  return {
    names: items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort(),
    deleting: items.filter((p) => p.metadata?.deletionTimestamp).length,
  };
}

/** Reads the facts (see the module header); `everywhere` also lists providers in every namespace. */
export async function readInstallFacts(values: ConnectionValues, env: NodeJS.ProcessEnv | undefined, options: { everywhere: boolean }): Promise<InstallFacts> {
  const get = (args: string[]) => getObjects(values, env, args);
  const crds = await get(['customresourcedefinitions', ...INSTALL_CRDS, '--ignore-not-found']);
  const installed = new Set(crds.map((c) => c.metadata?.name));
  const storedVersions = Object.fromEntries(crds.map((c) => [c.metadata?.name ?? '', c.status?.storedVersions ?? []]));
  const [deployment] = await get(['deployment', OPERATOR_DEPLOYMENT, '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
  const pods = deployment ? [] : await get(['pods', '-n', OPERATOR_NAMESPACE, '-l', OPERATOR_POD_SELECTOR]);
  const operatorSpec = deployment ?? (pods[0] ? { spec: { template: { spec: pods[0].spec as PodSpec } } } : undefined);
  // Without an operator, its scope is what the install's RBAC still grants.
  const rbac = operatorSpec ? [] : await listInstallRbac(values, env);
  const clusterRole = rbac.some((o) => o.kind === 'ClusterRole' && o.metadata?.name === 'converge');
  const roles = rbac.filter((o) => o.kind === 'Role' && o.metadata?.name === 'converge').map((o) => o.metadata?.namespace ?? '');
  const serving = operatorSpec !== undefined || clusterRole || roles.length > 0;
  const watched = operatorSpec ? watchedNamespaces(operatorSpec) : !clusterRole && roles.length > 0 ? [...new Set(roles)].sort() : undefined;

  const listProviders = async (where: string[][]) => {
    const items: ListedObject[] = [];
    if (installed.has(PROVIDERS)) for (const w of where) items.push(...(await get([PROVIDERS, ...w])));
    return providerFacts(items);
  };
  const providers = serving ? await listProviders(watched ? watched.map((ns) => ['-n', ns]) : [['--all-namespaces']]) : providerFacts([]);
  const providersAnywhere = options.everywhere ? (serving && !watched ? providers : await listProviders([['--all-namespaces']])) : undefined;
  const microservices = installed.has(MICROSERVICES) ? (await get([MICROSERVICES, '--all-namespaces'])).length : 0;

  // An entry may sit in shard 0 and in its home shard at once (a move cut short): each UID once.
  const keys = new Set<string>();
  let ledgerUntil: string | undefined;
  for (const shard of await get(['configmaps', ...ledgerShardNames(), '-n', OPERATOR_NAMESPACE, '--ignore-not-found'])) {
    const { entries, unreadable } = decodeLedger(shard.data);
    for (const key of unreadable) keys.add(key);
    for (const e of entries) {
      keys.add(e.uid);
      if (!ledgerUntil || Date.parse(e.until) > Date.parse(ledgerUntil)) ledgerUntil = e.until;
    }
  }
  const serviceAccounts = await get(['serviceaccounts', '-n', OPERATOR_NAMESPACE]);
  return {
    operator: operatorSpec !== undefined,
    ...(watched ? { watched } : {}),
    serving,
    providers,
    ...(providersAnywhere ? { providersAnywhere } : {}),
    microservices,
    ledgerKeys: keys.size,
    ...(ledgerUntil ? { ledgerUntil } : {}),
    storedVersions,
    otherServiceAccounts: serviceAccounts.map((s) => s.metadata?.name ?? '').filter((n) => n && !INSTALL_SERVICE_ACCOUNTS.has(n)).sort(),
  };
}
