/**
 * `converge explain <kind>/<name>`: why a Microservice or DigitalHumanProvider is or is not
 * converged — its conditions with their generations, recent Events (events.k8s.io/v1, matched by
 * `regarding.uid`), the objects it owns with their state and ownership, and the difference
 * between the desired children (rendered with the platform defaults, or `--config`) and the
 * actual ones; for a provider its finalizer, provider ID and whether its Secret exists (never
 * the Secret's data). `-o json|yaml` prints the `Explanation` document described in
 * `packages/operators/src/cli/views/explanation.ts`.
 *
 * An object that is not there because its kind is not served (the CRD is missing, or does not
 * serve the version the CLI reads) is said to be that, with the command that installs the CRDs.
 *
 * Exit codes: 0 explained (converged or not), 1 not found or the API server could not be read,
 * 2 usage error.
 * @module
 */
import { KubeClient, isNotFound } from '@converge/runtime';
import type { KubeObject, ResourceKind } from '@converge/runtime';
import { defaultPlatformDefaults, loadPlatformDefaults } from '../../operators/microservice/platform-defaults.ts';
// The kinds without their CRDs and schemas: explain builds neither (start-up, issue 17 goal 5).
import { MicroserviceKind } from '../../operators/microservice/api/kind.ts';
import { DigitalHumanProviderKind } from '../../operators/provider/api/kind.ts';
import { clientReader, gatherMicroserviceFacts, gatherProviderFacts } from '../shared/explain-facts.ts';
import { kubeConfigFrom } from '../shared/kubeconfig-flag.ts';
import { namespaceFrom } from '../shared/namespace-flag.ts';
import { colorEnabled, createStyle, explainMicroservice, explainProvider, renderExplanationText } from '../views/index.ts';
import type { Explanation } from '../views/index.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { printYaml } from '../shared/printed-yaml.ts';

const HELP = `Usage: converge explain <kind>/<name> [-n <namespace>] [-o json|yaml] [--config <file>] [--kubeconfig <path>]

Explain why an object is or is not converged: its conditions and the generation each was
computed for, recent Events, the objects it owns (state and ownership), and the difference
between the desired and the actual Deployment and Service.

Kinds: microservice (ms), digitalhumanprovider (dhp). "<kind> <name>" works too.

Flags:
  -n, --namespace <ns>     namespace (default: the kubeconfig context's, else "default")
  -o, --output <format>    json or yaml (the "Explanation" document, apiVersion converge.dev/v1alpha1)
      --config <file>      the operator's configuration file, so the desired state is rendered with the
                           same platform defaults as the operator (default: the built-in defaults)
      --kubeconfig <path>  kubeconfig (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)
      --context <name>     kubeconfig context
  -h, --help               show this help
`;

const KINDS: Record<string, 'microservice' | 'provider'> = {
  ms: 'microservice',
  microservice: 'microservice',
  microservices: 'microservice',
  'microservices.platform.example.io': 'microservice',
  dhp: 'provider',
  digitalhumanprovider: 'provider',
  digitalhumanproviders: 'provider',
  'digitalhumanproviders.dhp.example.com': 'provider',
};

/** Parses `ms/name`, `ms name`, `microservice.platform.example.io/name`…; undefined when not understood. */
export function parseTarget(positionals: string[]): { kind: 'microservice' | 'provider'; name: string } | undefined {
  let kindText: string | undefined;
  let name: string | undefined;
  if (positionals.length === 1 && positionals[0]!.includes('/')) {
    const i = positionals[0]!.indexOf('/');
    kindText = positionals[0]!.slice(0, i);
    name = positionals[0]!.slice(i + 1);
  } else if (positionals.length === 2) {
    [kindText, name] = positionals;
  }
  if (!kindText || !name || name.includes('/')) return undefined;
  const lower = kindText.toLowerCase();
  // Own keys only: `constructor/x` or `__proto__/x` is not a kind (Object.prototype's members are not).
  const kindOf = (text: string) => (Object.hasOwn(KINDS, text) ? KINDS[text] : undefined);
  const kind = kindOf(lower) ?? kindOf(lower.replace(/\.(platform\.example\.io|dhp\.example\.com)$/, ''));
  return kind ? { kind, name } : undefined;
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs('explain', HELP, argv, {
    namespace: { type: 'string', short: 'n' },
    output: { type: 'string', short: 'o' },
    config: { type: 'string' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
  }, true);
  if (args.exitCode !== undefined) return args.exitCode;
  const { values, positionals } = args;
  const target = parseTarget(positionals);
  if (!target) {
    process.stderr.write(`converge explain: expected <kind>/<name> with kind microservice (ms) or digitalhumanprovider (dhp), got "${positionals.join(' ')}"\n\n${HELP}`);
    return 2;
  }
  const output = values.output ?? 'text';
  if (!['text', 'json', 'yaml'].includes(output)) {
    process.stderr.write(`converge explain: unknown output format "${values.output}"; use json or yaml\n`);
    return 2;
  }
  let client: KubeClient;
  let namespace: string;
  try {
    const kubeConfig = kubeConfigFrom(values.kubeconfig);
    if (values.context) kubeConfig.setCurrentContext(values.context);
    namespace = namespaceFrom(kubeConfig, values.namespace) ?? 'default';
    client = new KubeClient({ kubeConfig, userAgent: 'converge-cli/0.1', timeoutMs: 15_000 });
  } catch (err) {
    process.stderr.write(`converge explain: cannot load the kubeconfig: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    const explanation = target.kind === 'microservice'
      ? await explainMicroserviceFromCluster(client, namespace, target.name, values.config)
      : await explainProviderFromCluster(client, namespace, target.name);
    if (!explanation) {
      const kind = target.kind === 'microservice' ? MicroserviceKind : DigitalHumanProviderKind;
      process.stderr.write(`converge explain: ${notFoundMessage(kind, target.name, namespace, await isServed(client, kind, namespace))}\n`);
      return 1;
    }
    if (output === 'json') process.stdout.write(`${JSON.stringify(explanation, null, 2)}\n`);
    else if (output === 'yaml') process.stdout.write(printYaml(await import('yaml'), explanation));
    else process.stdout.write(`${renderExplanationText(explanation, { style: createStyle(colorEnabled(process.stdout)), now: new Date() })}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`converge explain: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await client.close();
  }
}

async function explainMicroserviceFromCluster(client: KubeClient, namespace: string, name: string, configPath: string | undefined): Promise<Explanation | undefined> {
  const defaults = configPath ? await loadPlatformDefaults(configPath) : defaultPlatformDefaults;
  const defaultsSource = configPath ? `platform defaults from ${configPath}` : 'built-in platform defaults';
  const facts = await gatherMicroserviceFacts(clientReader(client), namespace, name, { defaults, defaultsSource });
  return facts && explainMicroservice(facts);
}

async function explainProviderFromCluster(client: KubeClient, namespace: string, name: string): Promise<Explanation | undefined> {
  const facts = await gatherProviderFacts(clientReader(client), namespace, name);
  return facts && explainProvider(facts);
}

/** Whether the API server serves `kind` (its CRD is installed and serves that version): a list of one answers. */
export async function isServed(client: KubeClient, kind: ResourceKind<KubeObject>, namespace: string): Promise<boolean> {
  try {
    await client.list(kind, { namespace, limit: 1 });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** What to say when the object is not there: it does not exist, or its kind is not served at all. Pure. */
export function notFoundMessage(kind: ResourceKind<KubeObject>, name: string, namespace: string, served: boolean): string {
  const lower = kind.kind.toLowerCase();
  if (served) return `${lower} "${name}" not found in namespace "${namespace}"`;
  return (
    `there is no ${lower} "${name}": the API server does not serve ${kind.kind} (${kind.apiVersion}) — ` +
    `the CustomResourceDefinition ${kind.plural}.${kind.group} is not installed, or does not serve version ${kind.version}. ` +
    'Install it with `converge crds --apply` (or kubectl apply -k deploy/crds/)'
  );
}
