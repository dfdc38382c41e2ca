import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { readText } from './transport.ts';

const asResponse = (r: Readable) => r as unknown as IncomingMessage;

test('readText: a character split between chunks is decoded whole', async () => {
  const bytes = Buffer.from('{"note":"naïve → 日本"}', 'utf8');
  // Every split point, including inside each multi-byte character.
  for (let i = 1; i < bytes.length; i++) {
    const text = await readText(asResponse(Readable.from([bytes.subarray(0, i), bytes.subarray(i)], { objectMode: false })));
    assert.equal(text, '{"note":"naïve → 日本"}', `split at byte ${i}`);
  }
});

test('readText: an empty body is the empty string', async () => {
  assert.equal(await readText(asResponse(Readable.from([], { objectMode: false }))), '');
});

test('readText: a response destroyed before its end rejects (with or without an error)', async () => {
  const cut = new Readable({ read() {} });
  const pending = readText(asResponse(cut));
  cut.push(Buffer.from('{"partial":'));
  cut.destroy();
  await assert.rejects(pending, /ended before its body was complete/);

  const failed = new Readable({ read() {} });
  const pending2 = readText(asResponse(failed));
  failed.push(Buffer.from('{"partial":'));
  failed.destroy(new Error('socket hang up'));
  await assert.rejects(pending2, /socket hang up/);
});

test('readText: a response that failed or ended before it is called rejects at once (no wait for an event that already came)', async () => {
  const failed = new Readable({ read() {} });
  failed.on('error', () => {});
  failed.destroy(new Error('connection reset'));
  await new Promise((r) => setImmediate(r));
  await assert.rejects(readText(asResponse(failed)), /connection reset/);

  const closed = new Readable({ read() {} });
  closed.destroy();
  await new Promise((r) => setImmediate(r));
  await assert.rejects(readText(asResponse(closed)), /ended before its body was complete/);
});

test('a 401 for credentials already replaced runs no exec plugin again (as client-go: only the credential that failed is dropped)', async (t) => {
  const { createServer } = await import('node:http');
  const { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { Credentials, KubeConfig } = await import('../kubeconfig/index.ts');
  const { Transport } = await import('./transport.ts');
  // A plugin that prints tok-1, tok-2, … one per run.
  const d = mkdtempSync(join(tmpdir(), 'converge-transport-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  const script = join(d, 'plugin.sh');
  writeFileSync(script, `#!/bin/sh\necho x >> "${d}/runs"\nn=$(wc -l < "${d}/runs")\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s"}}' $n\n`);
  chmodSync(script, 0o755);
  const runs = () => readFileSync(join(d, 'runs'), 'utf8').trim().split('\n').length;
  // The API server: tok-1 is revoked; /slow answers only when released.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server = createServer((req, res) => {
    const answer = () => res.writeHead(req.headers.authorization === 'Bearer tok-1' ? 401 : 200).end();
    if (req.url === '/slow') void released.then(answer);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as { port: number }).port}` }],
    users: [{ name: 'u', exec: { command: script, apiVersion: 'client.authentication.k8s.io/v1' } }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const transport = new Transport(new Credentials(kc));
  t.after(() => transport.close());
  const send = async (path: string) => {
    const res = await transport.send({ method: 'GET', path, headers: {}, signal: new AbortController().signal });
    res.resume();
    return res.statusCode;
  };
  const slow = send('/slow'); // sent with tok-1, answered late
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await send('/fast'), 401); // tok-1 refused: dropped
  assert.equal(await send('/fast'), 200); // tok-2
  assert.equal(runs(), 2);
  release();
  assert.equal(await slow, 401); // refused tok-1 again, after tok-2 replaced it
  assert.equal(await send('/fast'), 200);
  assert.equal(runs(), 2, 'the late 401 for tok-1 threw away tok-2');
});
