/**
 * What kstatus — `sigs.k8s.io/cli-utils/pkg/kstatus/status`, the library Flux, kpt and
 * cli-utils use to decide whether an object is reconciled — says about objects, computed by the
 * real library, not a re-implementation of its rules.
 *
 * The checker is the small Go module beside this file (`main.go`, its own go.mod pinning
 * cli-utils v0.37.2 with the `k8s.io/*` modules of its own era), built and cached by
 * `ensureGoBinary` like the controller-runtime comparison operator: `<cache>/kstatus-check-<hash>`,
 * rebuilt when its sources change. The first build downloads its modules from the Go module
 * proxy and compiles for about a minute on 2 cores; later calls reuse the binary.
 *
 * Guarantees: `kstatusOf` returns one result per object given (List items are expanded), in
 * order; it throws when the checker cannot run or its input is not JSON.
 * @module
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoBinary } from '../../bench/comparison/build.ts';

export const kstatusSourceDir = resolve(fileURLToPath(new URL('.', import.meta.url)));

/** kstatus's statuses (`status.Status`). */
export type KstatusStatus = 'InProgress' | 'Failed' | 'Current' | 'Terminating' | 'NotFound' | 'Unknown';

export interface KstatusResult {
  kind: string;
  namespace?: string;
  name: string;
  /** Absent when kstatus returned an error for this object (then `error` says why). */
  status?: KstatusStatus;
  message?: string;
  error?: string;
}

let binary: Promise<string> | undefined;

/** The path of the kstatus checker, built on first use. */
export function ensureKstatusChecker(onProgress?: (message: string) => void): Promise<string> {
  binary ??= ensureGoBinary({ sourceDir: kstatusSourceDir, prefix: 'kstatus-check', what: 'the kstatus checker (sigs.k8s.io/cli-utils v0.37.2)', ...(onProgress ? { onProgress } : {}) });
  binary.catch(() => { binary = undefined; });
  return binary;
}

/** kstatus's computed status of each object, by the real library. */
export async function kstatusOf(objects: readonly unknown[]): Promise<KstatusResult[]> {
  const bin = await ensureKstatusChecker();
  const input = objects.map((o) => JSON.stringify(o)).join('\n');
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(bin, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.once('error', fail);
    child.once('close', (c) => done({ code: c ?? 1, stdout: out, stderr: err }));
    child.stdin.end(input);
  });
  if (code !== 0) throw new Error(`the kstatus checker failed (exit ${code}): ${stderr.trim()}`);
  return stdout.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as KstatusResult);
}

/** kstatus's status of one object (throws when kstatus returned an error for it). */
export async function kstatusStatusOf(object: unknown): Promise<KstatusStatus> {
  const [result] = await kstatusOf([object]);
  if (!result?.status) throw new Error(`kstatus could not compute a status: ${result?.error ?? 'no result'}`);
  return result.status;
}
