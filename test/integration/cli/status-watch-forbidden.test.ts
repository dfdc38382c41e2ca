/**
 * `converge status --watch` for a user the API server refuses: it said "(retrying)" once and then
 * polled every second for ever, exit 0 on Ctrl-C, as if the cluster were briefly unreachable.
 * A refusal of the credentials (401) or of the permission (403) is permanent for the command, as
 * `kubectl get --watch` takes it: it exits 1 with the API server's words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceAccountKind } from '@converge/runtime';
import { ensureCrds } from '../../support/crds.ts';
import { serviceAccountKubeConfig } from '../../support/service-account.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

const MAIN = fileURLToPath(new URL('../../../packages/operators/src/cli/main.ts', import.meta.url));

test('status --watch as a user with no permission to read Microservices exits 1 with the refusal, instead of polling for ever', { timeout: 60_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'status-forbidden');
  await client.create(ServiceAccountKind, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: ns, name: 'nobody' } });
  const dir = mkdtempSync(join(tmpdir(), 'converge-forbidden-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, (await serviceAccountKubeConfig(client, ns, 'nobody')).exportConfig());
  const started = Date.now();
  const result = await new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [MAIN, 'status', '--watch', '-n', ns, '--kubeconfig', kubeconfig], { timeout: 15_000, killSignal: 'SIGKILL' }, (_err, _stdout, stderr) => resolve({ code: child.exitCode, signal: child.signalCode, stderr }));
  });
  t.diagnostic(`ended after ${Date.now() - started} ms: code ${result.code}, signal ${result.signal}`);
  assert.equal(result.signal, null, `still polling after 15 s; stderr: ${result.stderr}`);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /forbidden/i);
  assert.doesNotMatch(result.stderr, /retrying/);
});
