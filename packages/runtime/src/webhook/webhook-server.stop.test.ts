/**
 * The webhook server's `start` settles only once the work it began has ended: a certificate
 * source still issuing when the server stops (or fails to bind) is stopped and waited for, and a
 * pair it hands over after that is neither served nor logged. `converge dev` closes its log file
 * after the operators' `start` settles; a log line after that crashed it ("write after end").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { WebhookServer } from './webhook-server.ts';
import { ApiError } from '../client/index.ts';
import { createLogger } from '../logging/index.ts';
import { directoryCaStore, ensureSelfManagedCa, selfManagedCertificates } from './certificates.ts';
import type { CaStore, CertificateSource, ServingCertificate } from './certificates.ts';
import { within } from '../clock/settles-within.test-support.ts';

/** A source whose first pair is issued when the test says; records when its `start` returned. */
function heldSource(): { source: CertificateSource; issue(cert: ServingCertificate): void; events: string[] } {
  const events: string[] = [];
  const issued = Promise.withResolvers<ServingCertificate>();
  return {
    events,
    issue: (cert) => issued.resolve(cert),
    source: {
      async start(signal, onCertificate) {
        const cert = await issued.promise; // issuing takes a while and does not look at the signal
        onCertificate(cert);
        events.push(`source returned (signal ${signal.aborted ? 'aborted' : 'live'})`);
      },
    },
  };
}

/** A logger whose lines are kept, to see what was logged after `start` settled. */
function recordingLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
  return { log, lines };
}

const NOT_A_PAIR: ServingCertificate = { certPem: 'not a certificate', keyPem: 'not a key', notAfter: Date.now() + 3_600_000 };

test('stopped while its certificate source is still issuing, start settles after the source returns, and the late pair is not logged', async () => {
  const held = heldSource();
  const { log, lines } = recordingLog();
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: held.source, log });
  const stop = new AbortController();
  const started = server.start(stop.signal).then(() => held.events.push('start settled'));
  server.listening().catch(() => undefined);
  await new Promise((r) => setTimeout(r, 20));
  stop.abort();
  await new Promise((r) => setTimeout(r, 20));
  held.issue(NOT_A_PAIR);
  await started;
  assert.deepEqual(held.events, ['source returned (signal aborted)', 'start settled']);
  const before = lines.length;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(lines.length, before, 'nothing logged after start settled');
  assert.ok(!lines.some((l) => l.includes('certificate loaded')), `a pair handed over after the stop is not taken: ${lines.join('')}`);
  assert.equal(server.ready().ok, false);
});

/** A source that hands over `first` and then watches for renewals until told to stop, recording when it returned. */
function watchingSource(first: () => Promise<ServingCertificate>, events: string[]): CertificateSource {
  return {
    async start(signal, onCertificate) {
      onCertificate(await first());
      await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
      await new Promise((r) => setTimeout(r, 20)); // a source takes a moment to wind down
      events.push('source returned');
    },
  };
}

test('failing to bind its address, or to use the first pair, start stops its certificate source and waits for it before rejecting', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-stop-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A real pair, from a self-managed source's first hand-over.
  const pair = await new Promise<ServingCertificate>((resolve) => {
    const done = new AbortController();
    void selfManagedCertificates({ store: directoryCaStore(dir) }).start(done.signal, (cert) => {
      done.abort();
      resolve(cert);
    });
  });
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  t.after(() => taken.close());
  const port = (taken.address() as AddressInfo).port;
  const stop = new AbortController();
  t.after(() => stop.abort());
  for (const [what, bindAddress, first, error] of [
    ['a taken address', `127.0.0.1:${port}`, pair, /EADDRINUSE/],
    ['a first pair TLS refuses', '127.0.0.1:0', NOT_A_PAIR, /./],
  ] as const) {
    const events: string[] = [];
    const server = new WebhookServer({ bindAddress, certificates: watchingSource(async () => first, events) });
    server.listening().catch(() => undefined);
    await assert.rejects(server.start(stop.signal).finally(() => events.push('start settled')), error, what);
    assert.deepEqual(events, ['source returned', 'start settled'], what);
  }
});

test('started with a signal already aborted, start settles and listening() rejects', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-aborted-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir) }) });
  const listening = server.listening();
  listening.catch(() => undefined);
  await within(server.start(AbortSignal.abort()), 2_000, 'start');
  await assert.rejects(listening);
});

test('a self-managed CA store read that never answers (an API server behind a partition) does not hold the stop', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-stall-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const real = directoryCaStore(dir);
  let reads = 0;
  // The first read answers; every later one waits until its caller gives up on it.
  const stalling: CaStore = {
    load: (signal) => (++reads === 1 ? real.load(signal) : new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }))),
    saveIfAbsent: (ca, signal) => real.saveIfAbsent(ca, signal),
  };
  await ensureSelfManagedCa(real);
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: stalling, caCheckMs: 50 }) });
  const stop = new AbortController();
  const running = server.start(stop.signal);
  await server.listening();
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(reads >= 2, 'the periodic read is in flight');
  stop.abort();
  await within(running, 1_000, 'start after the stop');
});

test('a CA store that fails its first read (the API server restarting, a 503) is read again with backoff: the webhook starts, the process does not stop', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-transient-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const real = directoryCaStore(dir);
  let loads = 0;
  const flaky: CaStore = {
    load: (signal) => (++loads <= 2 ? Promise.reject(new Error('503 Service Unavailable: the API server is starting')) : real.load(signal)),
    saveIfAbsent: (ca, signal) => real.saveIfAbsent(ca, signal),
  };
  const warnings: string[] = [];
  const server = new WebhookServer({
    bindAddress: '127.0.0.1:0',
    certificates: selfManagedCertificates({ store: flaky, retryMs: 20, log: { warn: (_o: unknown, m: string) => void warnings.push(m) } }),
  });
  const stop = new AbortController();
  const running = server.start(stop.signal);
  running.catch(() => undefined);
  const address = await within(server.listening(), 5_000, 'listening after the store answers again');
  assert.ok(address, 'listening');
  assert.equal(loads, 3, 'read again until it answered');
  assert.equal(warnings.length, 1, `said once, not once per attempt: ${warnings.join(' | ')}`);
  stop.abort();
  await within(running, 2_000, 'start after the stop');
});

test('a CA store the API server refuses (RBAC\'s 403) still fails the start, saying why: retrying would leave the pod running and unready with no end', async () => {
  const refusing: CaStore = {
    load: () => Promise.reject(new ApiError({ reason: 'Forbidden', code: 403, message: 'secrets "converge-webhook-ca" is forbidden' })),
    saveIfAbsent: () => Promise.reject(new Error('not reached')),
  };
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: refusing, retryMs: 20 }) });
  server.listening().catch(() => undefined);
  await assert.rejects(within(server.start(new AbortController().signal), 2_000, 'start'), /forbidden/);
});

/** A TLS connection to the server, with what it received and how it ended. */
async function rawClient(port: number): Promise<{ write(s: string): void; received(): string; ended: Promise<string>; destroy(): void }> {
  const { connect } = await import('node:tls');
  const sock = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  await new Promise((r) => sock.once('secureConnect', r));
  let received = '';
  sock.on('data', (d: Buffer) => (received += d.toString()));
  const ended = new Promise<string>((r) => {
    sock.once('error', (e: NodeJS.ErrnoException) => r(`error ${e.code}`));
    sock.once('close', () => r('close'));
  });
  return { write: (s) => void sock.write(s), received: () => received, ended, destroy: () => sock.destroy() };
}

test('a request in flight when the stop begins is answered (the API server sends a conversion once); idle connections close at once; start settles after', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-drain-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = directoryCaStore(dir);
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store, hosts: ['127.0.0.1'] }) })
    .handle('/echo', (body) => body);
  const abort = new AbortController();
  const running = server.start(abort.signal);
  const { port } = (await server.listening())!;
  const body = JSON.stringify({ hello: 'world' });
  const busy = await rawClient(port);
  const idle = await rawClient(port);
  busy.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
  await new Promise((r) => setTimeout(r, 50));
  abort.abort(); // SIGTERM while the API server is still sending
  await new Promise((r) => setTimeout(r, 20));
  busy.write(body.slice(5));
  assert.equal(await idle.ended, 'close', 'an idle connection is closed at once');
  assert.equal(await busy.ended, 'close');
  assert.match(busy.received(), /^HTTP\/1\.1 200/, `the request in flight got its answer: ${JSON.stringify(busy.received().slice(0, 60))}`);
  assert.match(busy.received(), /connection: close/i, 'and was told the connection closes');
  await running;
});

test('a request that never completes holds the stop for drainMs at most', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-drain-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir), hosts: ['127.0.0.1'] }), drainMs: 300 })
    .handle('/echo', (body) => body);
  const abort = new AbortController();
  const running = server.start(abort.signal);
  const { port } = (await server.listening())!;
  const stuck = await rawClient(port);
  stuck.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
  await new Promise((r) => setTimeout(r, 50));
  const started = performance.now();
  abort.abort();
  await running;
  const took = performance.now() - started;
  assert.ok(took >= 250 && took < 2_000, `${Math.round(took)} ms`);
  assert.equal(await stuck.ended, 'close');
});
