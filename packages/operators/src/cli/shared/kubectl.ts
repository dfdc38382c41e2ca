/**
 * Running `kubectl` for the commands that hand manifests to a cluster (`crds --apply`,
 * `manifests --apply`); it re-exports where commands write (`CommandIO`, from `command-io.ts`).
 * kubectl honours `--kubeconfig`, `--context` and `KUBECONFIG` itself; nothing here reads them.
 *
 * Applying is checked before anything is written (`applyServerSide`), because `kubectl apply`
 * goes on past a refused object and would leave half an install: every namespace the manifests
 * put objects in must exist or be created by them (or, when asked, is created), and the API
 * server must accept a server-side dry run of every object it can check — all of them except
 * those in a namespace the same apply creates, which cannot be dry-run before it exists.
 * Caveat: a write refused for another reason between the dry run and the apply (a concurrent
 * change, an admission webhook that answers differently) can still leave part applied; kubectl's
 * error then says which objects.
 * @module
 */
import { spawn } from 'node:child_process';
import * as YAML from 'yaml';
import { parseAllDocuments } from 'yaml';

import type { CommandIO } from './command-io.ts';
import { printYaml } from './printed-yaml.ts';

export { processIO } from './command-io.ts';
export type { CommandIO } from './command-io.ts';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs kubectl with `args`, feeding `input` on stdin. Never throws for a failing kubectl: the exit
 * code (127 when kubectl is missing) and its output are returned.
 */
export function runKubectl(args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      resolve({ code: error.code === 'ENOENT' ? 127 : 1, stdout, stderr: error.code === 'ENOENT' ? 'kubectl not found on PATH\n' : `${error.message}\n` });
    });
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.on('error', () => {}); // kubectl may exit before reading everything; 'close' reports it
    child.stdin.end(options.input ?? '');
  });
}

export interface ConnectionValues {
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

/**
 * kubectl's global connection flags from ours, and a bound on each request (an API server that
 * never answers); `kubectl wait` gets none (it bounds itself with `--timeout`, and its watch must
 * not be cut by a request timeout).
 */
export function connectionFlags(values: ConnectionValues, options: { requestTimeout?: boolean } = {}): string[] {
  return [
    ...(values.kubeconfig ? [`--kubeconfig=${values.kubeconfig}`] : []),
    ...(values.context ? [`--context=${values.context}`] : []),
    ...(options.requestTimeout === false ? [] : ['--request-timeout=30s']),
  ];
}

/**
 * Why a kubectl run that was to read the cluster failed, for `converge <command>: …`: kubectl
 * missing (127) says what to do instead; anything else quotes kubectl (a kubeconfig that does not
 * exist, a context, a connection refused or timed out).
 */
export function kubectlFailure(command: string, result: KubectlResult): string {
  if (result.code === 127) return `kubectl is not on PATH: --apply runs it. Install kubectl, or print the ${command === 'crds' ? 'CRDs' : 'manifests'} (converge ${command}) and apply them yourself`;
  return `kubectl could not read the cluster (exit ${result.code}); nothing was applied:\n${result.stderr}`;
}

const APPLY_ARGS = ['apply', '--server-side', '--field-manager=converge', '--force-conflicts', '-f', '-'];

export interface ApplyOptions {
  /** Create the namespaces the manifests put objects in but neither create nor find (default: refuse). */
  createNamespaces?: boolean;
}

interface ManifestObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

/**
 * `kubectl apply --server-side` of `yaml` (field manager `converge`, taking over conflicting
 * fields), its output passed on — after the checks in the module comment, so that a refusal
 * leaves nothing written. Returns false, after saying why on stderr, when a check or kubectl
 * failed.
 */
export async function applyServerSide(command: string, yaml: string, values: ConnectionValues, io: CommandIO, options: ApplyOptions = {}): Promise<boolean> {
  const fail = (text: string) => {
    io.stderr(`converge ${command}: ${text.endsWith('\n') ? text : `${text}\n`}`);
    return false;
  };
  const docs: ManifestObject[] = [];
  for (const doc of parseAllDocuments(yaml)) {
    if (doc.errors.length > 0) return fail(`the manifests are not valid YAML (${doc.errors[0]?.message}); nothing was applied`);
    const obj = doc.toJS() as ManifestObject | null;
    if (obj) docs.push(obj);
  }
  const created = new Set(docs.filter((d) => d.kind === 'Namespace' && d.metadata?.name).map((d) => d.metadata!.name!));
  const used = [...new Set(docs.map((d) => d.metadata?.namespace).filter((ns): ns is string => !!ns))];
  const asked = [...new Set([...used, ...created])].sort();
  const existing = new Set<string>();
  if (asked.length > 0) {
    const got = await runKubectl([...connectionFlags(values), 'get', 'namespaces', ...asked, '--ignore-not-found', '-o', 'name'], { env: io.env });
    if (got.code !== 0) return fail(kubectlFailure(command, got));
    for (const line of got.stdout.split('\n')) if (line.startsWith('namespace/')) existing.add(line.slice('namespace/'.length));
  }
  const missing = used.filter((ns) => !existing.has(ns) && !created.has(ns)).sort();
  if (missing.length > 0 && !options.createNamespaces) {
    const one = missing.length === 1;
    const holds = (ns: string) => `"${ns}" would hold ${[...new Set(docs.filter((d) => d.metadata?.namespace === ns).map((d) => d.kind))].join(', ')}`;
    return fail(
      `${one ? 'namespace' : 'namespaces'} ${missing.map((ns) => `"${ns}"`).join(', ')} ${one ? 'does' : 'do'} not exist, so nothing was applied ` +
        `(${missing.map(holds).join('; ')}). Create ${one ? 'it' : 'them'} first (kubectl create namespace ${missing.join(' ')}), or add --create-namespace.`,
    );
  }
  const toApply: ManifestObject[] = [...missing.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })), ...docs];
  const render = (objs: readonly ManifestObject[]) => objs.map((o) => printYaml(YAML, o)).join('---\n');

  const checkable = toApply.filter((d) => !d.metadata?.namespace || existing.has(d.metadata.namespace));
  if (checkable.length > 0) {
    const dry = await runKubectl([...connectionFlags(values), ...APPLY_ARGS, '--dry-run=server', '-o', 'name'], { input: render(checkable), env: io.env });
    if (dry.code !== 0) return fail(`the API server refused part of it in a dry run (kubectl exit ${dry.code}); nothing was applied:\n${dry.stderr}`);
  }

  const applied = await runKubectl([...connectionFlags(values), ...APPLY_ARGS], { input: missing.length > 0 ? render(toApply) : yaml, env: io.env });
  io.stdout(applied.stdout);
  if (applied.code !== 0) return fail(`kubectl apply failed (exit ${applied.code}):\n${applied.stderr}`);
  if (applied.stderr) io.stderr(applied.stderr);
  return true;
}
