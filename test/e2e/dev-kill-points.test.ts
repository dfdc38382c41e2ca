/**
 * `converge dev` (`npm start`) stopped at any step of its start: Ctrl-C (SIGINT) a random few
 * hundred milliseconds after each step began must end in an orderly teardown (exit 0, "stopped
 * cleanly"), with no process left (the control plane's components are found by a marker in their
 * environment, which they inherit), no `vendor-sim.json` handle left beside the kubeconfig, and the
 * API server gone. A second Ctrl-C right after the first kills at once (exit 130): nothing may be
 * left running then either, nor after a SIGKILL (the control plane's components die with their
 * parent), and the simulator's temporary folder such a kill leaves (it holds private keys) is
 * swept by the next start. A closed terminal (SIGHUP) tears down as a Ctrl-C does. The delays come
 * from a printed seed (`CONVERGE_KILL_SEED` replays).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killPointMark, killPointRandom, processesMarked, until } from '../support/kill-points.ts';
import { within } from '../support/within.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Progress lines of `converge dev` (stderr) a Ctrl-C is aimed at. */
const STEPS = ['starting etcd', 'starting kube-apiserver', 'control plane ready at', 'CRDs installed', 'vendor simulator at', 'operators running', 'samples applied'];

test('converge dev stopped by Ctrl-C at any step of its start tears everything down; a second Ctrl-C or a SIGKILL leaves nothing running either', { timeout: 900_000 }, async (t) => {
  const random = killPointRandom(t);
  const runs: string[] = [];
  /** The simulator folders SIGKILLed runs left (they hold private keys): a later start sweeps them. */
  const leftBehind: string[] = [];
  // `hangup`: the terminal closed (SIGHUP) instead of a Ctrl-C; the same orderly teardown.
  const plan = [...STEPS, ...STEPS.slice(0, 3).map((s) => `${s}|twice`), 'operators running|kill', 'samples applied|kill', 'vendor simulator at', 'operators running|hangup'];
  for (const [i, step] of plan.entries()) {
    const [aim, mode] = step.split('|') as [string, 'twice' | 'kill' | 'hangup' | undefined];
    const twice = mode === 'twice';
    const dir = mkdtempSync(join(tmpdir(), 'converge-dev-kill-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = join(dir, 'kubeconfig');
    const { entry: mark, env: markEnv } = killPointMark();
    const child = spawn(
      process.execPath,
      ['packages/operators/src/cli/main.ts', 'dev', '--no-ui', '--dashboard', '127.0.0.1:0', '--kubeconfig-out', kubeconfig, '--log-file', join(dir, 'operators.log')],
      { cwd: root, env: { ...process.env, NO_COLOR: '1', ...markEnv }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    t.after(() => {
      child.kill('SIGKILL');
      for (const pid of processesMarked(mark)) process.kill(pid, 'SIGKILL');
    });
    let stderr = '';
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    const stderrEnded = new Promise<void>((resolve) => child.stderr.once('end', () => resolve()));
    const reached = new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (c: string) => {
        stderr += c;
        if (stderr.includes(aim)) resolve();
      });
      void exited.then((code) => reject(new Error(`converge dev exited (${code}) before "${aim}":\n${stderr}`)));
    });
    await reached;
    const delayMs = Math.floor(random() < 0.5 ? random() * 30 : random() * 500);
    await new Promise((r) => setTimeout(r, delayMs));
    if (mode === 'kill') {
      child.kill('SIGKILL');
      const simDir = /CA (\/\S+)\/ca\.pem/.exec(stderr)?.[1];
      assert.ok(simDir && existsSync(simDir), `the simulator's folder is left by a SIGKILL (${simDir}):\n${stderr}`);
      leftBehind.push(simDir);
      await exited;
      await until(`nothing started by converge dev runs after its SIGKILL ${delayMs} ms after "${aim}":\n${stderr}`, () => processesMarked(mark).length === 0, 15_000);
      runs.push(`SIGKILL ${delayMs} ms after "${aim}"`);
      continue;
    }
    if (aim === 'vendor simulator at') for (const dir of leftBehind.splice(0)) assert.ok(!existsSync(dir), `${dir}, left by a SIGKILLed run, was swept when this run's simulator started`);
    child.kill(mode === 'hangup' ? 'SIGHUP' : 'SIGINT');
    const againMs = Math.floor(random() * 300);
    if (twice) {
      await new Promise((r) => setTimeout(r, againMs));
      child.kill('SIGINT');
    }
    const code = await within(exited, 120_000, 'still running after 120 s');
    // What it printed up to its end (the last lines say why it exited as it did), not up to the Ctrl-C.
    await within(stderrEnded, 2_000, undefined);
    const transcript = `(run ${i}: ${mode === 'hangup' ? 'SIGHUP' : 'Ctrl-C'} ${delayMs} ms after "${aim}"${twice ? `, again ${againMs} ms later` : ''})\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
    if (twice) assert.ok(code === 130 || code === 0, `exit code ${code} ${transcript}`);
    else {
      assert.equal(code, 0, transcript);
      assert.match(stderr, /stopped cleanly/, transcript);
    }
    await until(`nothing started by converge dev is running ${transcript}`, () => processesMarked(mark).length === 0, 15_000);
    if (!twice || code === 0) assert.ok(!existsSync(join(dir, 'vendor-sim.json')), `the vendor simulator's handle is removed ${transcript}`);
    if (existsSync(kubeconfig)) {
      const server = /server: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))?.[1];
      if (server) await assert.rejects(fetch(`${server}/readyz`, { signal: AbortSignal.timeout(5_000) }), `the API server is gone ${transcript}`);
    }
    runs.push(`${mode === 'hangup' ? 'SIGHUP ' : ''}${delayMs} ms after "${aim}"${twice ? ` and again ${againMs} ms later (exit ${code})` : ''}`);
  }
  t.diagnostic(`Ctrl-C ${runs.join('; ')}`);
});
