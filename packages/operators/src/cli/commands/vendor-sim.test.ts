import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVendorSimAdmin } from '../../vendor-sim/index.ts';
import { parseListen } from './vendor-sim.ts';

const main = fileURLToPath(new URL('../main.ts', import.meta.url));

function converge(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, [main, 'vendor-sim', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe('converge vendor-sim', () => {
  it('parses --listen', () => {
    assert.deepEqual(parseListen('127.0.0.1:8443'), { host: '127.0.0.1', port: 8443 });
    assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 });
    assert.deepEqual(parseListen(':9000'), { host: '127.0.0.1', port: 9000 });
    assert.deepEqual(parseListen('localhost:1'), { host: 'localhost', port: 1 });
    assert.throws(() => parseListen('127.0.0.1'), /host:port/);
    assert.throws(() => parseListen('h:70000'), /0-65535/);
  });

  it('rejects missing token and unknown flags on stderr with exit 2', async () => {
    const noToken = converge(['--listen', '127.0.0.1:0']);
    assert.equal(await noToken.exited, 2);
    assert.match(noToken.err(), /--token is required/);
    const bad = converge(['--token', 't', '--bogus']);
    assert.equal(await bad.exited, 2);
    assert.match(bad.err(), /bogus/);
    const help = converge(['--help']);
    assert.equal(await help.exited, 0);
    assert.match(help.out(), /Usage: converge vendor-sim/);
  });

  it('a start that fails (busy port, faults it refuses) leaves no temporary folder with its keys behind', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'converge-vendor-sim-test-'));
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    try {
      const port = (busy.address() as { port: number }).port;
      const taken = converge(['--listen', `127.0.0.1:${port}`, '--token', 't'], { ...process.env, TMPDIR: tmp });
      assert.equal(await taken.exited, 1, taken.err());
      assert.match(taken.err(), new RegExp(`cannot start: address 127\\.0\\.0\\.1:${port} is already in use`));
      assert.deepEqual(await readdir(tmp), [], 'no folder left after a busy port');

      const refused = converge(['--token', 't', '--faults', '{"errors":{"rate":7}}'], { ...process.env, TMPDIR: tmp });
      assert.equal(await refused.exited, 2, refused.err());
      assert.match(refused.err(), /errors\.rate: must be in \[0, 1\]/);
      assert.deepEqual(await readdir(tmp), [], 'no folder left after refused faults');
    } finally {
      busy.close();
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it('prints its base URL and CA path, serves, and stops cleanly on SIGTERM', async () => {
    const sim = converge(['--listen', '127.0.0.1:0', '--token', 'cli-token', '--faults', '{"latency":{"ms":1}}']);
    try {
      while (!sim.out().includes('vendor-sim ready')) {
        if (sim.child.exitCode !== null) assert.fail(`exited early: ${sim.err()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      const url = /^vendor-sim base URL: (https:\/\/127\.0\.0\.1:\d+)$/m.exec(sim.out())?.[1];
      const caPath = /^vendor-sim CA: (.+)$/m.exec(sim.out())?.[1];
      const adminToken = /^vendor-sim admin token: (\S+)$/m.exec(sim.out())?.[1];
      assert.ok(url && caPath && adminToken, sim.out());
      const admin = createVendorSimAdmin({ baseUrl: url, adminToken, ca: await readFile(caPath) });
      try {
        assert.deepEqual(await admin.faults(), { latency: { ms: 1 } });
        assert.equal((await admin.stats()).liveInstances, 0);
      } finally {
        await admin.close();
      }
      sim.child.kill('SIGTERM');
      assert.equal(await sim.exited, 0);
      assert.match(sim.err(), /SIGTERM, stopping/);
    } finally {
      if (sim.child.exitCode === null) sim.child.kill('SIGKILL');
    }
  });
});
