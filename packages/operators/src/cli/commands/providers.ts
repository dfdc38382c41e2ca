/**
 * `converge providers [--region R]`: the upstream's pick in one line — the DigitalHumanProviders
 * it can send work to now, best first. The order is the dashboard's (`shared/ranking.ts`, the
 * same function behind `GET /api/v1/providers?region=R&ready=true`): usable first, healthy before
 * degraded, not limited before limited, most quota left, Ready the longest, then by name.
 *
 * `-o name` prints `namespace/name` lines for scripts; `-o json` the ranked items.
 * Exit codes: 0 listed (even none), 1 the API server could not be read, 2 usage error.
 * @module
 */
import { KubeClient, isNotFound } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../operators/provider/api/index.ts';
import { providerItem } from '../../dashboard/items.ts';
import { rankProviders } from '../../dashboard/shared/ranking.ts';
import type { ProviderItem } from '../../dashboard/shared/types.ts';
import { kubeConfigFrom } from '../shared/kubeconfig-flag.ts';
import { namespaceFrom } from '../shared/namespace-flag.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { colorEnabled, createStyle, terminalSafe } from '../views/index.ts';
import { renderTable, type Column } from '../views/table.ts';

const HELP = `Usage: converge providers [--region <region>] [-n <namespace> | -A] [--all] [-o table|name|json] [--kubeconfig <path>]

List the DigitalHumanProviders the upstream can send work to now, best first: Ready for the
current generation (healthy or degraded, vendor account active, quota left), then healthy before
degraded, not rate-limited before rate-limited, most quota left, Ready the longest. The same order
as the dashboard's GET /api/v1/providers?region=<region>&ready=true.

Flags:
      --region <region>    only providers in this vendor region
  -n, --namespace <ns>     namespace (default: the kubeconfig context's, else "default")
  -A, --all-namespaces     every namespace
      --all                also list providers that are not usable now (after the usable ones)
  -o, --output <format>    table (default), name (namespace/name per line, best first) or json
      --kubeconfig <path>  kubeconfig (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)
      --context <name>     kubeconfig context
  -h, --help               show this help

Example (the upstream's one line):
  converge providers -A --region ap-northeast-1 -o name | head -1
`;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs('providers', HELP, argv, {
    region: { type: 'string' },
    namespace: { type: 'string', short: 'n' },
    'all-namespaces': { type: 'boolean', short: 'A', default: false },
    all: { type: 'boolean', default: false },
    output: { type: 'string', short: 'o', default: 'table' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
  });
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  if (!['table', 'name', 'json'].includes(values.output)) {
    process.stderr.write(`converge providers: unknown output format "${values.output}"; use table, name or json\n`);
    return 2;
  }
  if (values.namespace && values['all-namespaces']) {
    process.stderr.write('converge providers: use either --namespace or --all-namespaces, not both\n');
    return 2;
  }
  let client: KubeClient;
  let namespace: string | null;
  let cluster: string;
  try {
    const kubeConfig = kubeConfigFrom(values.kubeconfig);
    if (values.context) kubeConfig.setCurrentContext(values.context);
    cluster = kubeConfig.getCurrentContext() || 'cluster';
    namespace = namespaceFrom(kubeConfig, values.namespace, values['all-namespaces']);
    client = new KubeClient({ kubeConfig, userAgent: 'converge-cli/0.1', timeoutMs: 15_000 });
  } catch (err) {
    process.stderr.write(`converge providers: cannot load the kubeconfig: ${(err as Error).message}\n`);
    return 1;
  }
  let items: ProviderItem[];
  try {
    const list = await client.list(DigitalHumanProviderKind, namespace === null ? {} : { namespace });
    const now = new Date().toISOString();
    items = pickProviders(list.items.map((p) => providerItem(cluster, p, true, now)), { region: values.region, all: values.all });
  } catch (err) {
    process.stderr.write(`converge providers: ${listFailure(err)}\n`);
    return 1;
  } finally {
    await client.close();
  }
  if (values.output === 'json') process.stdout.write(`${JSON.stringify({ apiVersion: 'converge.dev/v1alpha1', kind: 'ProviderList', items }, null, 2)}\n`);
  else if (values.output === 'name') process.stdout.write(items.map((i) => `${i.namespace}/${i.name}\n`).join(''));
  else process.stdout.write(`${renderProviderPick(items, colorEnabled(process.stdout))}\n`);
  return 0;
}

/** The pick: ranked best first, in `region` when given, usable ones only unless `all`. Pure. */
export function pickProviders(items: readonly ProviderItem[], options: { region?: string | undefined; all?: boolean } = {}): ProviderItem[] {
  const inRegion = options.region === undefined ? items : items.filter((i) => i.region === options.region);
  return rankProviders(inRegion).filter((i) => options.all || i.usable);
}

export function renderProviderPick(picked: readonly ProviderItem[], color = false): string {
  const items = terminalSafe(picked);
  if (items.length === 0) return 'no usable DigitalHumanProvider (use --all to see the others)';
  const style = createStyle(color);
  const columns: Column[] = [{ header: 'rank' }, { header: 'namespace' }, { header: 'name' }, { header: 'region' }, { header: 'usable' }, { header: 'quota-left' }, { header: 'limited-by' }, { header: 'reason' }];
  const rows = items.map((i) => [
    String(i.rank ?? '-'),
    i.namespace,
    i.name,
    i.region,
    i.usable ? 'yes' : 'no',
    i.quota?.left === null || i.quota?.left === undefined ? '-' : String(i.quota.left),
    i.limitingReason ?? '-',
    i.why ?? '-',
  ]);
  return renderTable(columns, rows, style);
}

/** What `converge providers` says when the list fails: a missing CRD as `converge status` says it. */
export function listFailure(err: unknown): string {
  if (isNotFound(err)) return `the DigitalHumanProvider CRD (${DigitalHumanProviderKind.plural}.${DigitalHumanProviderKind.group}) is not installed; install it with \`converge crds --apply\``;
  return `cannot list DigitalHumanProviders: ${(err as Error).message}`;
}
