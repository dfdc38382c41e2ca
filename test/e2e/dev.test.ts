/**
 * End to end: `converge dev --no-ui --exit-when-ready`, as `npm start` runs it, in a child
 * process. It starts its own control plane (as the dashboard browser test does, besides the harness),
 * the vendor simulator and both operators, applies the samples, and must see both converge,
 * then tear everything down and exit 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@converge/runtime';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('converge dev --no-ui brings todo-api and the studio provider to Ready, then stops cleanly', { timeout: 900_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-dev-e2e-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  const logFile = join(dir, 'operators.log');
  const child = spawn(
    process.execPath,
    ['packages/operators/src/cli/main.ts', 'dev', '--no-ui', '--exit-when-ready', '--timeout', '600', '--kubeconfig-out', kubeconfig, '--log-file', logFile],
    { cwd: root, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const transcript = `--- stdout\n${stdout}\n--- stderr\n${stderr}`;
  assert.equal(code, 0, transcript);

  // Progress for every step, on stderr.
  for (const step of [/control plane binary: /, /starting etcd/, /starting kube-apiserver/, /control plane ready at https:\/\/127\.0\.0\.1:\d+/, /CRDs installed/, /vendor simulator at https:\/\/127\.0\.0\.1:\d+/, /operators running/, /samples applied in namespace default/]) {
    assert.match(stderr, step, transcript);
  }
  // One line per state change on stdout, ending with both samples Ready.
  assert.match(stdout, /Microservice default\/todo-api: phase=ResourcesApplied ready=True\/Available replicas=2\/2 endpoints=[1-9]\d* image=ghcr\.io\/yrw9281\/it30-todo-api:0\.1\.0 generation=1\/1/, transcript);
  assert.match(stdout, /DigitalHumanProvider default\/studio: ready=True\/ProviderReady providerID=\S+ region=ap-northeast-1 generation=1\/1/, transcript);
  assert.match(stdout, /the samples are Ready/, transcript);
  assert.match(stdout, /kubectl delete service todo-api/);
  // The dashboard ran beside the table (7070, or a free port when 7070 was taken).
  assert.match(stdout, /^dashboard: http:\/\/127\.0\.0\.1:\d+\/$/m, transcript);
  assert.match(stderr, /dashboard at http:\/\/127\.0\.0\.1:\d+\/[\s\S]*stopping the dashboard/, transcript);
  assert.ok(!/\u001b\[/.test(stdout + stderr), 'NO_COLOR: no colours');

  // Torn down: the API server in the kubeconfig it wrote no longer answers.
  assert.match(stderr, /stopping the operators[\s\S]*stopping the vendor simulator[\s\S]*stopping the control plane[\s\S]*stopped cleanly/);
  assert.ok(existsSync(kubeconfig));
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const server = kc.getCurrentCluster()!.server;
  await assert.rejects(fetch(`${server}/readyz`, { signal: AbortSignal.timeout(5_000) }), 'the API server is gone');

  // The vendor token never leaves the Secret: not on screen, not in the operators' log.
  const log = readFileSync(logFile, 'utf8');
  assert.ok(log.length > 0, 'the operators logged to the file');
  for (const text of [stdout, stderr, log]) assert.ok(!/dev-[0-9a-f]{32}/.test(text), 'the simulator token is never printed or logged');
});
