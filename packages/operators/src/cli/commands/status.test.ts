/**
 * `converge status` with no kubeconfig anywhere (issue 18, item 4): it says that none was found
 * and where it looked, instead of a network error about HTTP and skipTLSVerify.
 * @module
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

test('with no $KUBECONFIG, no ~/.kube/config and not in a pod, status names the places it looked', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'converge-no-kubeconfig-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [MAIN, 'status'], { env: { PATH: process.env.PATH ?? '', HOME: home } }, (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /no kubeconfig found: looked at \$KUBECONFIG \(unset\), ~\/\.kube\/config \(missing\), in-cluster \(not in a pod/);
  assert.doesNotMatch(result.stderr, /HTTP protocol is not allowed|skipTLSVerify/);
});
