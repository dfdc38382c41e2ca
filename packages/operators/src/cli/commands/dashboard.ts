/**
 * `converge dashboard`: one live web page and a read-only JSON API over one or more clusters
 * (see `packages/operators/src/dashboard/`). Prints the URL when it listens; runs until Ctrl-C
 * or SIGTERM.
 *
 * Exit codes: 0 stopped by a signal, 1 could not start (kubeconfig unreadable, port taken, a
 * non-loopback listen without a token), 2 usage error (a `--listen` that is not host:port included).
 * @module
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadKubeConfig } from '@converge/runtime';
import type { KubeConfig } from '@converge/runtime';
import { DEFAULT_LISTEN, ListenError, parseListen, startDashboard } from '../../dashboard/index.ts';
import type { ClusterSpec } from '../../dashboard/index.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { stopSignal } from '../shared/stop-signal.ts';
import { LOG_LEVEL_CHOICES, logLevelError } from '../shared/log-level.ts';

const HELP = `Usage: converge dashboard [--kubeconfig [NAME=]PATH]... [--listen host:port] [--token-file <file>]

Serve a live web page and a read-only JSON API (/api/v1, OpenAPI at /api/v1/openapi.yaml) over the
Microservices and DigitalHumanProviders of one or more clusters. Every cluster is watched (list +
watch, nothing is written); one that becomes unreachable is shown so while the others stay live.

Flags:
  --kubeconfig [NAME=]PATH  a cluster to show (repeatable). NAME is how the page and the API call it;
                            a bare PATH is named by its current context. Default: $KUBECONFIG, then
                            ~/.kube/config, then in-cluster, named by the current context
  --listen <host:port>      where to listen (default ${DEFAULT_LISTEN}; port 0 = any free port).
                            A non-loopback address needs --token-file, or the dashboard refuses to start
  --token-file <file>       a bearer token (one line, at least 16 characters): every request must send
                            "Authorization: Bearer <token>" (the page: open it once with ?token=<token>)
  --log-level <level>       ${LOG_LEVEL_CHOICES} (default warn; JSON on stderr)
  -h, --help                show this help

The RBAC the dashboard needs is read-only: deploy/dashboard/clusterrole.yaml (get/list/watch; no Secrets).
`;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** A name the page can use, from a context name like `arn:aws:eks:eu-west-1:123:cluster/prod`. */
export function clusterNameFromContext(context: string): string {
  const cleaned = context.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 63).replace(/-+$/, '');
  return cleaned || 'cluster';
}

/**
 * `NAME=PATH` or a bare `PATH` (whose name is then decided by its context). A leading `~/` is
 * the user's home: a shell expands `~` only at the start of a word or after the `=` of a
 * variable assignment, and `prod-eu=~/.kube/eu.yaml` is neither (`prod-eu` is no variable name).
 */
export function parseClusterFlag(text: string): { name: string | undefined; path: string } {
  const i = text.indexOf('=');
  if (i > 0 && NAME.test(text.slice(0, i))) return { name: text.slice(0, i), path: expandHome(text.slice(i + 1)) };
  return { name: undefined, path: expandHome(text) };
}

function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
}

function clusterSpec(name: string | undefined, kubeConfig: KubeConfig): ClusterSpec {
  return { name: name ?? clusterNameFromContext(kubeConfig.getCurrentContext() || 'default'), kubeConfig };
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs('dashboard', HELP, argv, {
    kubeconfig: { type: 'string', multiple: true },
    listen: { type: 'string', default: DEFAULT_LISTEN },
    'token-file': { type: 'string' },
    'log-level': { type: 'string', default: 'warn' },
  });
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  const badLevel = logLevelError('dashboard', values['log-level']);
  if (badLevel) {
    process.stderr.write(badLevel);
    return 2;
  }
  try {
    parseListen(values.listen);
  } catch (err) {
    process.stderr.write(`converge dashboard: ${(err as Error).message}\n`);
    return 2;
  }
  let clusters: ClusterSpec[];
  try {
    const flags = values.kubeconfig ?? [];
    clusters = flags.length === 0 ? [clusterSpec(undefined, loadKubeConfig())] : flags.map((f) => {
      const { name, path } = parseClusterFlag(f);
      if (!path) throw new Error(`--kubeconfig ${f}: no path`);
      return clusterSpec(name, loadKubeConfig(path));
    });
  } catch (err) {
    process.stderr.write(`converge dashboard: cannot load the kubeconfig: ${(err as Error).message}\n`);
    return 1;
  }
  const signal = stopSignal();
  const log = createLogger({ level: values['log-level'], name: 'converge-dashboard', destination: process.stderr });
  let dashboard;
  try {
    dashboard = await startDashboard({ clusters, listen: values.listen, ...(values['token-file'] ? { tokenFile: values['token-file'] } : {}), log });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE' ? `${values.listen} is already in use (choose another with --listen)` : (err as Error).message;
    process.stderr.write(`converge dashboard: ${err instanceof ListenError ? '' : 'cannot start: '}${why}\n`);
    return 1;
  }
  process.stdout.write(`converge dashboard: ${dashboard.url}  (${clusters.map((c) => c.name).join(', ')}; Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await dashboard.close();
  return 0;
}
