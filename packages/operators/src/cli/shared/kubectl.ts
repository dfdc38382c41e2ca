/**
 * Running `kubectl` for the commands that hand manifests to a cluster (`crds --apply`,
 * `manifests --apply`), and where commands write (`CommandIO`, so tests can capture it).
 * kubectl honours `--kubeconfig`, `--context` and `KUBECONFIG` itself; nothing here reads them.
 * @module
 */
import { spawn } from 'node:child_process';

/** Where the command writes; tests pass their own. */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

export const processIO: CommandIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
};

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

/** kubectl's global connection flags from ours. */
export function connectionFlags(values: ConnectionValues): string[] {
  return [
    ...(values.kubeconfig ? [`--kubeconfig=${values.kubeconfig}`] : []),
    ...(values.context ? [`--context=${values.context}`] : []),
  ];
}

/**
 * `kubectl apply --server-side` of `yaml` (field manager `converge`, taking over conflicting
 * fields), its output passed on. Returns false, after saying why on stderr, when kubectl failed.
 */
export async function applyServerSide(command: string, yaml: string, values: ConnectionValues, io: CommandIO): Promise<boolean> {
  const applied = await runKubectl([...connectionFlags(values), 'apply', '--server-side', '--field-manager=converge', '--force-conflicts', '-f', '-'], {
    input: yaml,
    env: io.env,
  });
  io.stdout(applied.stdout);
  if (applied.code !== 0) {
    io.stderr(`converge ${command}: kubectl apply failed (exit ${applied.code}):\n${applied.stderr}`);
    return false;
  }
  if (applied.stderr) io.stderr(applied.stderr);
  return true;
}
