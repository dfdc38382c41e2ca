/**
 * `converge vendor-sim fault --for <d>` as a process: it promises to remove the faults it set when
 * the time is up or it is stopped early. An output that can no longer be written (a full disk, a
 * reader gone) or a terminal that closes (SIGHUP) must not leave them on: each stops the command
 * as SIGTERM does. A one-shot command still ends as SIGHUP ends it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

let dir = '';
let sim: ChildProcess | undefined;
let simOut = '';
let handle = '';

/** Resolves once `child` has printed `what` on stdout (or rejects after 20 s). */
async function printed(read: () => string, what: string | RegExp): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(typeof what === 'string' ? read().includes(what) : what.test(read()))) {
    if (Date.now() > deadline) throw new Error(`not printed within 20 s: ${String(what)}; got ${JSON.stringify(read())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const closed = (child: ChildProcess) => new Promise<number | null>((r) => child.once('close', (code) => r(code)));

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-fault-process-'));
  sim = spawn(NODE, [MAIN, 'vendor-sim', '--token', 'fault-process-token'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  sim.stdout!.setEncoding('utf8').on('data', (c: string) => (simOut += c));
  await printed(() => simOut, /^vendor-sim ready$/m);
  const line = (l: string) => new RegExp(`^vendor-sim ${l}: (.+)$`, 'm').exec(simOut)![1]!;
  handle = join(dir, 'sim.json');
  writeFileSync(handle, JSON.stringify({ baseUrl: line('base URL'), caPath: line('CA'), adminToken: line('admin token'), pid: sim.pid }), { mode: 0o600 });
});
after(() => {
  if (sim?.exitCode === null) sim.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

const activeFaults = () => /^faults: (.*)$/m.exec(spawnSync(NODE, [MAIN, 'vendor-sim', 'fault', '--sim', handle], { encoding: 'utf8' }).stdout)?.[1];

test('--for with an output that cannot be written (a full disk, a reader gone) still removes the faults it set', { skip: existsSync('/dev/full') ? false : 'no /dev/full' }, async () => {
  const full = openSync('/dev/full', 'w');
  const onFull = spawn(NODE, [MAIN, 'vendor-sim', 'fault', '--sim', handle, '--errors', '0.5', '--for', '30s'], { stdio: ['ignore', full, 'pipe'] });
  closeSync(full);
  let stderr = '';
  onFull.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  assert.equal(await closed(onFull), 1, 'a full disk is a failure');
  assert.match(stderr, /^converge: cannot write the output: ENOSPC/);
  assert.equal(activeFaults(), 'none', 'removed when the output failed, not left on for 30 s or for ever');

  const gone = spawn(NODE, [MAIN, 'vendor-sim', 'fault', '--sim', handle, '--errors', '0.5', '--for', '30s'], { stdio: ['ignore', 'pipe', 'pipe'] });
  gone.stdout!.destroy(); // like `… | head -1` once head has its line
  assert.equal(await closed(gone), 0, 'a reader gone is a quiet end');
  assert.equal(activeFaults(), 'none');
});

test('--for in a terminal that closes (SIGHUP) removes the faults it set, under nohup too', async () => {
  const hungUp = spawn(NODE, [MAIN, 'vendor-sim', 'fault', '--sim', handle, '--errors', '0.5', '--for', '30s'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  hungUp.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  await printed(() => out, /Ctrl-C ends them early/);
  assert.notEqual(activeFaults(), 'none');
  hungUp.kill('SIGHUP');
  assert.equal(await closed(hungUp), 0, 'an orderly stop');
  assert.equal(activeFaults(), 'none', 'removed at the hangup, not left on for 30 s or for ever');

  // `nohup` ignores SIGHUP, but Node resets every signal's disposition at start: without a
  // listener the command died at the hangup all the same, and left its faults on.
  const nohup = spawn('nohup', [NODE, MAIN, 'vendor-sim', 'fault', '--sim', handle, '--errors', '0.5', '--for', '30s'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((r) => setTimeout(r, 300));
  await printed(() => (activeFaults() === 'none' ? '' : 'on'), 'on');
  nohup.kill('SIGHUP');
  await closed(nohup);
  assert.equal(activeFaults(), 'none', 'removed at the hangup under nohup');
});

test('a one-shot command in a terminal that closes ends as SIGHUP ends it (it holds nothing to undo)', async () => {
  // An API server that accepts and never answers: `converge status` waits on it.
  const { createServer } = await import('node:net');
  const sockets: import('node:net').Socket[] = [];
  const silent = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const port = (silent.address() as import('node:net').AddressInfo).port;
  const kubeconfig = join(dir, 'silent.kubeconfig');
  writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:${port}'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
  try {
    const status = spawn(NODE, [MAIN, 'status', '--kubeconfig', kubeconfig], { stdio: ['ignore', 'pipe', 'pipe'] });
    const ended = new Promise<NodeJS.Signals | number | null>((r) => status.once('exit', (code, signal) => r(signal ?? code)));
    const deadline = Date.now() + 20_000;
    while (sockets.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(sockets.length > 0, 'converge status reached the server');
    status.kill('SIGHUP');
    assert.equal(await ended, 'SIGHUP');
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});
