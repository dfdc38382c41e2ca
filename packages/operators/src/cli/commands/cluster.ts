/**
 * `converge cluster up --kubeconfig <path> [--audit-log] [--nodes N]`: runs the local Kubernetes
 * control plane (etcd, kube-apiserver, kube-controller-manager, node simulator) in the foreground.
 *
 * Builds the control-plane binary first if needed (with progress on stderr), writes an admin
 * kubeconfig to <path>, prints `control plane ready: kubeconfig=<path> server=<url>` on stdout,
 * and runs until SIGINT/SIGTERM; then stops every component and removes its temp state dir.
 * Exits non-zero if a component dies on its own. A second Ctrl-C kills immediately.
 * @module
 */
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { startControlPlane, type ComponentName } from '@converge/envtest';
import { parseCommandArgs } from '../shared/command-args.ts';

const HELP = `Usage: converge cluster up --kubeconfig <path> [--audit-log] [--nodes N]

Run a local Kubernetes control plane built from upstream Go modules (etcd, kube-apiserver,
kube-controller-manager) plus a node/pod simulator, until interrupted (Ctrl-C / SIGTERM).

Flags:
  --kubeconfig <path>  write the admin kubeconfig here (required)
  --audit-log          write an API server audit log (every request, Metadata level);
                       its path is printed (it lives in the temp state dir, removed on exit)
  --nodes N            number of simulated nodes (default 1)
  -h, --help           show this help

The first run builds the control plane with \`go build\` (minutes on a cold Go build cache);
the binary is cached under $XDG_CACHE_HOME/converge (or ~/.cache/converge).
Pods whose image tag starts with "fail" (e.g. example.com/app:fail) never become Ready.
`;

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (sub !== 'up') {
    process.stderr.write(`converge cluster: ${sub ? `unknown subcommand "${sub}"` : 'missing subcommand'}\n\n${HELP}`);
    return 2;
  }
  const args = parseCommandArgs('cluster up', HELP, rest, {
    kubeconfig: { type: 'string' },
    'audit-log': { type: 'boolean', default: false },
    nodes: { type: 'string', default: '1' },
  });
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  if (!values.kubeconfig) {
    process.stderr.write(`converge cluster up: --kubeconfig <path> is required\n\n${HELP}`);
    return 2;
  }
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 100) {
    process.stderr.write(`converge cluster up: --nodes must be an integer from 1 to 100, got "${values.nodes}"\n`);
    return 2;
  }
  const kubeconfigPath = resolve(values.kubeconfig);

  let wake: (reason: string) => void = () => {};
  const woken = new Promise<string>((r) => (wake = r));
  let failed: string | undefined;
  const onUnexpectedExit = (component: ComponentName, code: number | null, signal: NodeJS.Signals | null) => {
    failed = `${component} exited unexpectedly (code ${code}, signal ${signal})`;
    wake('failure');
  };

  const cp = await startControlPlane({
    auditLog: values['audit-log'],
    nodes,
    onProgress: (m) => process.stderr.write(`${m}\n`),
    onUnexpectedExit,
  });

  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      process.stderr.write(`${sig} again: killing the control plane now\n`);
      process.exit(130); // the launcher's 'exit' hook SIGKILLs every component and removes the state dir
    }
    wake(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const keepAlive = setInterval(() => {}, 1 << 30);

  try {
    await mkdir(dirname(kubeconfigPath), { recursive: true });
    await writeFile(kubeconfigPath, await readFile(cp.kubeconfigPath), { mode: 0o600 });
    const audit = cp.auditLogPath ? ` audit-log=${cp.auditLogPath}` : '';
    process.stdout.write(`control plane ready: kubeconfig=${kubeconfigPath} server=${cp.server}${audit}\n`);
    const reason = await woken;
    if (reason !== 'failure') process.stderr.write(`${reason}: stopping the control plane\n`);
  } finally {
    await cp.stop();
    clearInterval(keepAlive);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  if (failed) {
    process.stderr.write(`converge cluster up: ${failed}; logs were in ${cp.stateDir}/logs\n`);
    return 1;
  }
  process.stderr.write('control plane stopped\n');
  return 0;
}
