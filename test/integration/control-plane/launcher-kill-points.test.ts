/**
 * The launcher's promise that "even a SIGKILLed launcher leaves no processes behind"
 * (packages/envtest/src/launcher.ts), searched at kill points: a process running the launcher is
 * SIGKILLed at each step of a start (certificates, etcd, kube-apiserver, the controllers, ready),
 * a random few hundred milliseconds after the step began (the seed is printed;
 * `CONVERGE_KILL_SEED` replays it). Every component it started must be gone within seconds (PR_SET_PDEATHSIG), and its state
 * folder swept by the next start. A component is found by a marker in its environment (the
 * launcher's children inherit it), so one spawned a moment before the kill is not missed.
 *
 * And the narrowest kill point, made certain: a parent that is gone before the component has
 * asked the kernel for its parent-death signal (the component is still initialising).
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePorts } from '@converge/envtest';
import { TEST_ENV } from '../../support/cluster.ts';
import { killPointMark, killPointRandom, processesMarked, until } from '../../support/kill-points.ts';

const LAUNCHER = fileURLToPath(new URL('../../support/launcher-process.ts', import.meta.url));
const binary = process.env[TEST_ENV.binary];

/** Temp state folders whose owner file names `pid`. */
function stateDirsOf(pid: number): string[] {
  return readdirSync(tmpdir())
    .filter((n) => n.startsWith('converge-cp-'))
    .map((n) => join(tmpdir(), n))
    .filter((dir) => {
      try {
        return readFileSync(join(dir, 'owner.pid'), 'utf8') === String(pid);
      } catch {
        return false;
      }
    });
}

/**
 * A launcher process, marked (what it starts inherits the marker) and killed with all it started
 * when the test ends. `reached(prefix)` resolves once it has printed a line starting so, and
 * rejects, naming what it printed, if it exits first; `exited` gives its signal or exit code.
 */
function startLauncher(t: TestContext) {
  const { entry: marker, env: markEnv } = killPointMark();
  const child = spawn(process.execPath, [LAUNCHER], { env: { ...process.env, ...markEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => {
    child.kill('SIGKILL');
    for (const pid of processesMarked(marker)) process.kill(pid, 'SIGKILL');
  });
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(String(signal ?? code))));
  const seen: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => seen.push(line));
  const reached = (prefix: string) => new Promise<void>((resolve, reject) => {
    if (seen.some((l) => l.startsWith(prefix))) return resolve();
    lines.on('line', (line) => line.startsWith(prefix) && resolve());
    void exited.then((how) => reject(new Error(`the launcher exited (${how}) before "${prefix}"; it printed: ${seen.join(' | ')}`)));
  });
  return { child, pid: child.pid!, marker, exited, reached };
}

/** Rejects, naming what still runs, unless nothing carrying `marker` runs within 15 s. */
async function noneRunning(marker: string, what: string): Promise<void> {
  try {
    await until(what, () => processesMarked(marker).length === 0, 15_000);
  } catch (err) {
    const left = processesMarked(marker).map((pid) => `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 2).join(' ')}`);
    throw new Error(`${(err as Error).message}; still running: ${left.join('; ')}`);
  }
}

test('a launcher SIGKILLed at any step of a start leaves no component running, and its state folder is swept by the next start', { timeout: 600_000 }, async (t) => {
  const random = killPointRandom(t);
  const steps = ['writing certificates', 'starting etcd', 'starting kube-apiserver', 'starting kube-controller-manager and the node simulator', 'ready '];
  const killed: { step: string; delayMs: number; stateDirs: string[] }[] = [];
  for (const step of steps) {
    const launcher = startLauncher(t);
    // Half the kills land within 30 ms of the step (a component still initialising), half later.
    const delayMs = Math.floor(random() < 0.5 ? random() * 30 : random() * 400);
    await launcher.reached(step);
    await new Promise((r) => setTimeout(r, delayMs));
    const stateDirs = stateDirsOf(launcher.pid);
    launcher.child.kill('SIGKILL');
    killed.push({ step, delayMs, stateDirs });
    await noneRunning(launcher.marker, `no component of the launcher killed ${delayMs} ms after "${step}" is running`);
  }
  // The next start sweeps what the killed launchers left (each kill above came after the folder
  // was made, so every one of them left one).
  for (const k of killed) assert.ok(k.stateDirs.length === 1, `a state folder was found for the launcher killed at "${k.step}"`);
  const next = startLauncher(t);
  await next.reached('starting etcd');
  for (const k of killed) for (const dir of k.stateDirs) assert.ok(!existsSync(dir), `${dir} (launcher killed at "${k.step}") was swept`);
  next.child.kill('SIGTERM');
  t.diagnostic(killed.map((k) => `killed ${k.delayMs} ms after "${k.step.trim()}"`).join('; '));
});

test('a launcher stopped while it writes its certificates leaves no process behind, and nothing writes its swept state folder again', { skip: !binary && 'the harness gives the control-plane binary', timeout: 120_000 }, async (t) => {
  // The certificate writer did not die with its parent: left running, it wrote the folder again
  // after the launcher (SIGTERM) or its successor's sweep (SIGKILL) removed it — the CA key and
  // the admin token in a folder with no owner file.
  const random = killPointRandom(t);
  const stopped: string[] = [];
  for (let i = 0; i < 6; i++) {
    const signal = i % 2 === 0 ? 'SIGTERM' : 'SIGKILL';
    const launcher = startLauncher(t);
    await launcher.reached('writing certificates');
    // The writer takes ~250 ms on the reference machine: stop it early, midway, late.
    const delayMs = Math.floor(random() * 80) + Math.floor(i / 2) * 80;
    await new Promise((r) => setTimeout(r, delayMs));
    const [stateDir] = stateDirsOf(launcher.pid);
    assert.ok(stateDir, 'the launcher made its state folder before the certificates');
    launcher.child.kill(signal);
    assert.equal(await launcher.exited, signal, signal === 'SIGTERM' ? 'the launcher ends by the signal, as it re-raises it' : 'the launcher is killed');
    // A SIGKILLed launcher removes nothing; its successor's sweep does, at once (its owner is gone).
    if (signal === 'SIGKILL') rmSync(stateDir, { recursive: true, force: true });
    await noneRunning(launcher.marker, `nothing of the launcher stopped (${signal}) ${delayMs} ms into its certificates is running`);
    // Long enough for a writer left running to finish (it takes well under a second).
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(existsSync(stateDir), false, `${stateDir} is gone ${delayMs} ms into the certificates (${signal}), and stays gone`);
    stopped.push(`${signal} at ${delayMs} ms`);
  }
  t.diagnostic(`stopped ${stopped.join(', ')} after "writing certificates"`);
});

test('a component whose parent is gone before it asked for the parent-death signal exits instead of running on', { skip: !binary && 'the harness gives the control-plane binary', timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-orphan-'));
  const [client, peer] = await freePorts(2);
  const { entry: marker } = killPointMark();
  t.after(() => {
    for (const pid of processesMarked(marker)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  // The shell starts etcd in the background as the launcher does (passing its own pid as the
  // parent) and exits at once: long before the Go program has run its initialisers.
  const shell = spawnSync('sh', ['-c', `${marker} CONVERGE_PARENT_PID=$$ "$0" etcd --data-dir "$1" --client-port "$2" --peer-port "$3" >"$1.log" 2>&1 &`, binary!, join(dir, 'etcd'), String(client), String(peer)]);
  assert.equal(shell.status, 0);
  await new Promise((r) => setTimeout(r, 3000));
  assert.deepEqual(processesMarked(marker), [], 'etcd, orphaned before it could ask for the signal, is still running');
});
