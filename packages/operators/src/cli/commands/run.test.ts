/**
 * `converge run`'s metrics HTTPS flags, through the real command in a child process, with a
 * kubeconfig whose API server is not there (the metrics server starts before the caches sync):
 * - `--metrics-cert-dir` without `--metrics-secure`, or empty: exit 2, one line on stderr, nothing
 *   started; `--help` lists both flags;
 * - `--metrics-secure`: `/metrics` over HTTPS with a certificate made in memory (a client that
 *   skips verification reads it; plain HTTP gets nothing); with `--metrics-cert-dir`, the
 *   folder's certificate, verified against its CA. SIGTERM stops it with exit 0.
 * (The generated argv of argv.adversarial.test.ts model the same rules.)
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { memoryCaStore, selfManagedCertificates } from '@converge/runtime';
import type { ServingCertificate } from '@converge/runtime';

const main = fileURLToPath(new URL('../main.ts', import.meta.url));
const converge = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 60_000 });
const OFF = ['--health-probe-bind-address=0', '--webhook-bind-address=0', '--kubeconfig', '/nonexistent'];

test('--metrics-cert-dir without --metrics-secure, or empty, is a usage error; --help lists both flags', () => {
  const without = converge('run', ...OFF, '--metrics-cert-dir', '/etc/converge/metrics-certs');
  assert.equal(without.status, 2, without.stderr);
  assert.equal(without.stderr, 'converge run: --metrics-cert-dir needs --metrics-secure (without it the metrics are plain HTTP)\n');
  assert.equal(without.stdout, '');
  for (const empty of ['--metrics-cert-dir=', '--metrics-cert-dir=  ']) {
    const r = converge('run', ...OFF, '--metrics-secure', empty);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr, 'converge run: --metrics-cert-dir must name a folder (with tls.crt and tls.key)\n');
  }
  const help = converge('run', '--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^ {2}--metrics-secure {2,}serve them over HTTPS/m);
  assert.match(help.stdout, /^ {2}--metrics-cert-dir <dir> {2,}with --metrics-secure/m);
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-run-metrics-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `converge run` with the metrics on `port` and `extra` flags, against an API server that is not there; stopped (SIGTERM) when the test ends. */
async function runOperator(t: TestContext, dir: string, port: number, extra: string[]): Promise<{ exit: () => Promise<number | null> }> {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters: [{ name: nowhere, cluster: { server: 'https://127.0.0.1:${await freePort()}', insecure-skip-tls-verify: true } }]
users: [{ name: nobody, user: { token: not-a-token } }]
contexts: [{ name: nowhere, context: { cluster: nowhere, user: nobody } }]
current-context: nowhere
`);
  const child = spawn(process.execPath, [main, 'run', '--kubeconfig', kubeconfig, '--operators', 'microservice', '--log-level', 'error',
    `--metrics-bind-address=127.0.0.1:${port}`, '--health-probe-bind-address=0', '--webhook-bind-address=0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  return {
    exit: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      assert.equal(stderr, '', 'nothing on stderr');
      return code;
    },
  };
}

interface Answer { status: number; body: string; peer: X509Certificate }

function httpsGet(port: number, ca?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', agent: false, ...(ca ? { ca } : { rejectUnauthorized: false }) }, (res) => {
      const peer = (res.socket as unknown as { getPeerX509Certificate(): X509Certificate }).getPeerX509Certificate();
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The first answer from `port` within 30 s (the process takes a moment to start). */
async function firstAnswer(port: number, ca?: string): Promise<Answer> {
  const until = performance.now() + 30_000;
  for (;;) {
    try {
      return await httpsGet(port, ca);
    } catch (err) {
      if (performance.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test('--metrics-secure: /metrics over HTTPS, self-signed in memory without a folder; plain HTTP gets nothing; SIGTERM exits 0', { timeout: 60_000 }, async (t) => {
  const port = await freePort();
  const operator = await runOperator(t, scratch(t), port, ['--metrics-secure']);
  const answer = await firstAnswer(port);
  assert.equal(answer.status, 200);
  assert.match(answer.body, /^# TYPE workqueue_depth gauge$/m);
  assert.match(answer.peer.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`));
  assert.equal(await operator.exit(), 0);
});

test('--metrics-secure --metrics-cert-dir: the folder\'s certificate, verified against its CA', { timeout: 60_000 }, async (t) => {
  const dir = scratch(t);
  const stop = new AbortController();
  const got = Promise.withResolvers<ServingCertificate>();
  const issuing = selfManagedCertificates({ store: memoryCaStore(), hosts: ['127.0.0.1'] }).start(stop.signal, (c) => got.resolve(c));
  const cert = await got.promise;
  stop.abort();
  await issuing;
  writeFileSync(join(dir, 'tls.crt'), cert.certPem);
  writeFileSync(join(dir, 'tls.key'), cert.keyPem);
  const port = await freePort();
  const operator = await runOperator(t, dir, port, ['--metrics-secure', '--metrics-cert-dir', dir]);
  const answer = await firstAnswer(port, cert.caPem!);
  assert.equal(answer.status, 200);
  assert.equal(answer.peer.fingerprint256, new X509Certificate(cert.certPem).fingerprint256);
  assert.equal(await operator.exit(), 0);
});
