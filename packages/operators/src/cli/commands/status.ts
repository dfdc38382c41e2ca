/**
 * `converge status`: every Microservice and DigitalHumanProvider in a namespace (or all), like
 * `kubectl get` but with rollout detail and the reasons behind Ready. `-o json|yaml` prints the
 * stable `Status` document described in `packages/operators/src/cli/views/status-view.ts`; `--watch` redraws on change.
 *
 * Exit codes: 0 shown, 1 the API server could not be read, 2 usage error.
 * @module
 */
import { ApiError, KubeClient, isForbidden } from '@converge/runtime';
import { kubeConfigFrom } from '../shared/kubeconfig-flag.ts';
import { namespaceFrom } from '../shared/namespace-flag.ts';
import { readStatus } from '../shared/status-reader.ts';
import { colorEnabled, createStyle } from '../views/style.ts';
import { renderStatusText } from '../views/status-view.ts';
import type { StatusDocument } from '../views/index.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { printYaml } from '../shared/printed-yaml.ts';

const HELP = `Usage: converge status [-n <namespace> | -A] [-o wide|json|yaml] [--watch] [--kubeconfig <path>]

Show every Microservice (image, port, phase, available/desired replicas, ready endpoints,
Ready and its reason) and every DigitalHumanProvider (region, provider ID, Ready and its reason).

Flags:
  -n, --namespace <ns>     namespace (default: the kubeconfig context's, else "default")
  -A, --all-namespaces     every namespace
  -o, --output <format>    wide (more columns: updated replicas, generations, messages),
                           json or yaml (the stable "Status" document, apiVersion converge.dev/v1alpha1)
  -w, --watch              keep running and show the state again whenever it changes (polls every second);
                           with -o json, one compact document per line
      --kubeconfig <path>  kubeconfig (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)
      --context <name>     kubeconfig context
  -h, --help               show this help

In the READY column, "*" marks a condition computed for an older generation of the object
(the operator has not caught up with the latest spec yet).
`;

type Output = 'table' | 'wide' | 'json' | 'yaml';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs('status', HELP, argv, {
    namespace: { type: 'string', short: 'n' },
    'all-namespaces': { type: 'boolean', short: 'A', default: false },
    output: { type: 'string', short: 'o' },
    watch: { type: 'boolean', short: 'w', default: false },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
  });
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  const output = (values.output ?? 'table') as Output;
  if (!['table', 'wide', 'json', 'yaml'].includes(output)) {
    process.stderr.write(`converge status: unknown output format "${values.output}"; use wide, json or yaml\n`);
    return 2;
  }
  if (values.namespace && values['all-namespaces']) {
    process.stderr.write('converge status: use either --namespace or --all-namespaces, not both\n');
    return 2;
  }
  let client: KubeClient;
  let namespace: string | null;
  try {
    const kubeConfig = kubeConfigFrom(values.kubeconfig);
    if (values.context) kubeConfig.setCurrentContext(values.context);
    namespace = namespaceFrom(kubeConfig, values.namespace, values['all-namespaces']);
    client = new KubeClient({ kubeConfig, userAgent: 'converge-cli/0.1', timeoutMs: 15_000 });
  } catch (err) {
    process.stderr.write(`converge status: cannot load the kubeconfig: ${(err as Error).message}\n`);
    return 1;
  }
  const style = createStyle(output !== 'json' && output !== 'yaml' && colorEnabled(process.stdout));
  // The YAML printer only for `-o yaml`: loading it costs ≈ 50 ms of start-up (issue 17, goal 5).
  const yaml = output === 'yaml' ? await import('yaml') : undefined;
  const render = (doc: StatusDocument): string => {
    if (output === 'json') return values.watch ? JSON.stringify(doc) : JSON.stringify(doc, null, 2);
    if (yaml) return printYaml(yaml, doc).trimEnd();
    return renderStatusText(doc, { wide: output === 'wide', style, now: new Date() });
  };

  try {
    if (!values.watch) {
      const doc = await readStatus(client, namespace);
      process.stdout.write(`${render(doc)}\n`);
      return 0;
    }
    return await watch(client, namespace, output, render);
  } catch (err) {
    process.stderr.write(`converge status: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await client.close();
  }
}

/**
 * Polls every second until SIGINT/SIGTERM. On a terminal with a table, the screen is redrawn
 * whenever the text changes (ages included); otherwise the state is printed again only when
 * the document changes. Read errors are reported on stderr and polling goes on, except a refusal
 * of the permission (403), or of the credentials (401) twice in a row, which ends the command
 * (exit 1).
 */
async function watch(client: KubeClient, namespace: string | null, output: Output, render: (doc: StatusDocument) => string): Promise<number> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const redraw = process.stdout.isTTY === true && (output === 'table' || output === 'wide');
  let lastDoc = '';
  let lastText = '';
  let lastError = '';
  let unauthorizedBefore = false;
  try {
    while (!abort.signal.aborted) {
      try {
        const doc = await readStatus(client, namespace, abort.signal);
        lastError = '';
        unauthorizedBefore = false;
        const docText = JSON.stringify(doc);
        if (redraw) {
          const text = render(doc);
          if (text !== lastText) {
            const time = new Date().toTimeString().slice(0, 8);
            process.stdout.write(`\u001b[H\u001b[2J${text}\n\nEvery 1s: converge status${namespace ? ` -n ${namespace}` : ' -A'}   ${time}   (Ctrl-C to stop)\n`);
            lastText = text;
          }
        } else if (docText !== lastDoc) {
          const text = render(doc);
          if (output === 'yaml' && lastDoc) process.stdout.write('---\n');
          else if ((output === 'table' || output === 'wide') && lastDoc) process.stdout.write(`\n${new Date().toISOString()}\n`);
          process.stdout.write(`${text}\n`);
        }
        lastDoc = docText;
      } catch (err) {
        if (abort.signal.aborted) break;
        // A refused permission: no retry changes that (as `kubectl get --watch`). Refused
        // credentials twice in a row too (once may be a token just rotated: the next request takes
        // fresh ones); a credential plugin that failed (no answer at all) is retried.
        if (isForbidden(err)) throw err;
        const refused = err instanceof ApiError && err.reason === 'Unauthorized' && err.code === 401;
        if (refused && unauthorizedBefore) throw err;
        unauthorizedBefore = refused;
        const message = (err as Error).message;
        if (message !== lastError) process.stderr.write(`converge status: ${message} (retrying)\n`);
        lastError = message;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        abort.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
}
