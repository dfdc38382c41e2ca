/**
 * The simulator's CA folder across restarts and kills: a CA kept in the folder is reused, and a
 * folder a killed start left half-written (or with a key and a certificate that do not belong
 * together) yields a new CA rather than a simulator that can never start again.
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareTls } from './certs.ts';

async function folder(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'converge-sim-certs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The server certificate is signed by the CA handed out, and names 127.0.0.1. */
function assertChain(tls: { caPem: string; certPem: string }): void {
  const ca = new X509Certificate(tls.caPem);
  const server = new X509Certificate(tls.certPem);
  assert.ok(server.verify(ca.publicKey), 'the server certificate is signed by the CA handed out');
  assert.ok(server.checkIP('127.0.0.1'));
}

test('a CA kept in the folder is reused by the next start; keys are private; no temporary file is left', async (t) => {
  const dir = await folder(t);
  const first = await prepareTls(dir, '127.0.0.1');
  const second = await prepareTls(dir, '127.0.0.1');
  assert.equal(second.caPem, first.caPem);
  assert.notEqual(second.certPem, first.certPem);
  assertChain(second);
  assert.equal(await readFile(first.caPath, 'utf8'), first.caPem);
  for (const key of ['ca-key.pem', 'server-key.pem']) assert.equal((await stat(join(dir, key))).mode & 0o777, 0o600, key);
  assert.deepEqual((await readdir(dir)).sort(), ['ca-key.pem', 'ca.pem', 'server-key.pem', 'server.pem']);
});

test('a CA certificate cut short by a kill while it was written: the next start makes a new CA', async (t) => {
  const dir = await folder(t);
  const first = await prepareTls(dir, '127.0.0.1');
  await writeFile(join(dir, 'ca.pem'), first.caPem.slice(0, Math.floor(first.caPem.length / 2)));
  const next = await prepareTls(dir, '127.0.0.1');
  assert.notEqual(next.caPem, first.caPem);
  assertChain(next);
  assert.equal(await readFile(join(dir, 'ca.pem'), 'utf8'), next.caPem);
});

test('a CA key cut short or empty: the next start makes a new CA', async (t) => {
  for (const cut of [(pem: string) => pem.slice(0, 40), () => '']) {
    const dir = await folder(t);
    const first = await prepareTls(dir, '127.0.0.1');
    await writeFile(join(dir, 'ca-key.pem'), cut(await readFile(join(dir, 'ca-key.pem'), 'utf8')));
    const next = await prepareTls(dir, '127.0.0.1');
    assert.notEqual(next.caPem, first.caPem);
    assertChain(next);
  }
});

test('a CA key and certificate of two different CAs (a kill between writing the two): the next start makes a new CA whose server certificate verifies', async (t) => {
  const a = await folder(t);
  const b = await folder(t);
  const first = await prepareTls(a, '127.0.0.1');
  await prepareTls(b, '127.0.0.1');
  await writeFile(join(a, 'ca-key.pem'), await readFile(join(b, 'ca-key.pem')));
  const next = await prepareTls(a, '127.0.0.1');
  assert.notEqual(next.caPem, first.caPem);
  assertChain(next);
});
