/**
 * `converge explain` on a cluster without the CRDs says that the kind is not served and how to
 * install it, instead of "not found" (issue 18: explain names the cause for item 3). Its own
 * control plane, without CRDs: the shared one has them, and deleting them would disturb every
 * other test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startControlPlane } from '@converge/envtest';
import { testCluster } from '../../support/cluster.ts';
import { ensureCrds } from '../../support/crds.ts';
import { testClient } from '../../support/operator-harness.ts';

const main = fileURLToPath(new URL('../../../packages/operators/src/cli/main.ts', import.meta.url));

function converge(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('explain on a cluster without the CRDs names the missing CRD and the command that installs it', { timeout: 180_000 }, async (t) => {
  const cp = await startControlPlane({ ...(process.env.CONVERGE_TEST_CONTROL_PLANE_BIN ? { binary: process.env.CONVERGE_TEST_CONTROL_PLANE_BIN } : {}) });
  t.after(() => cp.stop());
  const ms = await converge(['explain', 'ms/todo-api', '--kubeconfig', cp.kubeconfigPath]);
  assert.equal(ms.code, 1, ms.stderr);
  assert.match(ms.stderr, /^converge explain: there is no microservice "todo-api": the API server does not serve Microservice \(platform\.example\.io\/v\w+\) — the CustomResourceDefinition microservices\.platform\.example\.io is not installed, or does not serve version v\w+\. Install it with `converge crds --apply`/);
  const dhp = await converge(['explain', 'dhp/studio', '--kubeconfig', cp.kubeconfigPath]);
  assert.equal(dhp.code, 1, dhp.stderr);
  assert.match(dhp.stderr, /CustomResourceDefinition digitalhumanproviders\.dhp\.example\.com is not installed/);
});

test('explain of an object that is simply not there still says "not found"', { timeout: 60_000 }, async () => {
  const cluster = await testCluster();
  await ensureCrds(testClient());
  const ms = await converge(['explain', 'ms/no-such-microservice', '-n', 'default', '--kubeconfig', cluster.kubeconfigPath]);
  assert.equal(ms.code, 1, ms.stderr);
  assert.equal(ms.stderr, 'converge explain: microservice "no-such-microservice" not found in namespace "default"\n');
});
