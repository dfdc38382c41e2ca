/**
 * End to end: the fault tools of `npm start`. `converge dev --no-ui` runs (its own control plane,
 * as test/e2e/dev.test.ts), tells where its vendor simulator's handle is, and
 * `converge vendor-sim fault` — another process, as a person in a second terminal — changes
 * that simulator: the studio provider's Ready follows. A failing image is RolloutStalled after
 * dev's one-minute progress deadline, not Kubernetes' ten. When dev stops, the handle is gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const main = 'packages/operators/src/cli/main.ts';

async function until(what: string, probe: () => boolean, timeoutMs: number, transcript: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}\n${transcript()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('converge vendor-sim fault drives the simulator of a running converge dev; a failing image stalls after a minute', { timeout: 900_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-dev-faults-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const handle = join(dir, 'vendor-sim.json');
  const child = spawn(process.execPath, [main, 'dev', '--no-ui', '--dashboard', 'off', '--kubeconfig-out', join(dir, 'kubeconfig'), '--log-file', join(dir, 'operators.log')], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const transcript = () => `--- stdout\n${stdout}\n--- stderr\n${stderr}`;

  await until('the samples Ready', () => stdout.includes('the samples are Ready'), 600_000, transcript);
  assert.match(stdout, new RegExp(`npx converge vendor-sim fault --sim ${handle.replace(/[.]/g, '\\.')} --outage 30s`), transcript());
  assert.match(stderr, /vendor simulator at https:\/\/127\.0\.0\.1:\d+ \(CA \S+ca\.pem; faults: npx converge vendor-sim fault --help\)/, transcript());
  assert.equal(statSync(handle).mode & 0o777, 0o600, 'the handle holds the admin token: only its owner reads it');

  const fault = (...args: string[]) => spawnSync(process.execPath, [main, 'vendor-sim', 'fault', '--sim', handle, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  const degraded = fault('--health', 'degraded:GPU hot');
  assert.equal(degraded.status, 0, degraded.stderr);
  assert.match(degraded.stdout, /^instance inst-\S+: health degraded \(GPU hot\)$/m);
  await until('studio ProviderDegraded', () => /DigitalHumanProvider default\/studio: ready=True\/ProviderDegraded/.test(stdout), 60_000, transcript);

  const shown = fault();
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /^faults: none$/m);
  assert.match(shown.stdout, /^ {2}inst-\S+ {2}ap-northeast-1 {2}degraded \(GPU hot\)/m);

  // npm start's progress deadline is a minute: a failing image is called stalled after it.
  const patched = spawnSync('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), 'patch', 'ms', 'todo-api', '--type=merge', '-p', '{"spec":{"container":{"image":"example.com/todo:fail"}}}'], { encoding: 'utf8' });
  assert.equal(patched.status, 0, patched.stderr);
  const since = Date.now();
  await until('todo-api RolloutStalled', () => /Microservice default\/todo-api: phase=ResourcesApplied ready=False\/RolloutStalled/.test(stdout), 180_000, transcript);
  process.stdout.write(`# failing image → RolloutStalled after ${Math.round((Date.now() - since) / 1000)} s under converge dev\n`);

  child.kill('SIGTERM');
  assert.equal(await exited, 0, transcript());
  assert.ok(!existsSync(handle), 'the handle is removed when converge dev stops');
  const after = fault();
  assert.equal(after.status, 1);
  assert.match(after.stderr, /no running vendor simulator found/);
});
