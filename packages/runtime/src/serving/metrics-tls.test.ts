/**
 * The metrics server over HTTPS (`createMetricsServer({ certificates })`, through
 * `http-endpoint.ts`), on 127.0.0.1 with real TLS clients:
 * - a certificate from a folder (`certDirCertificates`): served over TLS 1.2+, verified against
 *   its CA; the server's other promises hold over TLS (CONNECT and POST 405, a body drained, HEAD);
 * - plain HTTP on the port gets no HTTP answer and the connection is closed;
 * - a new pair written to the folder is served to new connections, same port, no restart; a
 *   pair TLS refuses is thrown back to the source and the old certificate stays served;
 * - a source that never gives a certificate: nothing is bound (the port refuses connections),
 *   `listening()` waits, and the abort settles `start` and stops the source; one that fails
 *   first makes `start` reject; a busy port is a `ListenError`, and the source is stopped;
 * - `stop` closes a keep-alive TLS connection and a TCP connection that never handshakes;
 * - an authorizer still decides every request over TLS (401 with `WWW-Authenticate`, 200);
 * - `memoryCaStore` with `selfManagedCertificates`: a certificate for the hosts asked, from one
 *   CA per store.
 */
import { describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as netConnect, createServer as createNetServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { request } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { Counter, Registry } from 'prom-client';
import { certDirCertificates, memoryCaStore, selfManagedCertificates } from '../webhook/certificates.ts';
import type { CaStore, CertificateSource, ServingCertificate } from '../webhook/certificates.ts';
import { createMetricsServer, ListenError, type MetricsAuthorizer, type MetricsServer } from './index.ts';
import { within } from '../clock/settles-within.test-support.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A serving certificate for `hosts` from the CA of `store` (made there if it has none). */
async function issue(store: CaStore, hosts = ['127.0.0.1']): Promise<ServingCertificate> {
  const stop = new AbortController();
  const got = Promise.withResolvers<ServingCertificate>();
  const running = selfManagedCertificates({ store, hosts }).start(stop.signal, (cert) => got.resolve(cert));
  const cert = await got.promise;
  stop.abort();
  await running;
  return cert;
}

function certFolder(t: TestContext): { dir: string; write: (cert: ServingCertificate) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'converge-metrics-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    write: (cert) => {
      writeFileSync(join(dir, 'tls.crt'), cert.certPem);
      writeFileSync(join(dir, 'tls.key'), cert.keyPem);
    },
  };
}

/** Starts `server`; `stop()` aborts it and waits (at most 2 s) for `start` to settle. */
function run(t: TestContext, server: MetricsServer): { running: Promise<void>; stop: () => Promise<void> } {
  const ac = new AbortController();
  const running = server.start(ac.signal);
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= (async () => {
    ac.abort();
    await within(running, 2_000, 'metrics server stop');
  })());
  t.after(() => stop().catch(() => undefined));
  return { running, stop };
}

interface Answer { status: number; body: string; headers: Record<string, string | string[] | undefined>; fingerprint: string; protocol: string | null }

/** One HTTPS request on a fresh connection. `ca` verified (for 127.0.0.1); without it, not verified. */
function httpsRequest(port: number, path: string, options: { ca?: string; method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port, path, method: options.method ?? 'GET', agent: false, headers: options.headers ?? {},
      ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
    }, (res) => {
      const socket = res.socket as unknown as { getPeerCertificate(): { fingerprint256: string }; getProtocol(): string | null };
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      const protocol = socket.getProtocol();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers, fingerprint, protocol }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const fingerprintOf = (cert: ServingCertificate) => new X509Certificate(cert.certPem).fingerprint256;

/** What a raw TCP client gets back for `bytes` before the server closes (at most 2 s). */
function rawExchange(port: number, bytes: string): Promise<{ received: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = netConnect(port, '127.0.0.1', () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ received: Buffer.concat(chunks), closed: false });
    }, 2_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received: Buffer.concat(chunks), closed: true });
    });
  });
}

/** A port nothing listens on (bound, then freed). */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** A source the test feeds by hand; `handed(cert)` returns what the server's callback threw, if anything. */
function scriptedSource(): CertificateSource & { handed(cert: ServingCertificate): unknown; started: Promise<void>; signal: () => AbortSignal | undefined; returned: () => boolean } {
  let give: ((cert: ServingCertificate) => void) | undefined;
  let signal: AbortSignal | undefined;
  let returned = false;
  const started = Promise.withResolvers<void>();
  return {
    start(s, onCertificate) {
      signal = s;
      give = onCertificate;
      started.resolve();
      return new Promise<void>((resolve) => {
        const end = () => {
          returned = true;
          resolve();
        };
        if (s.aborted) end();
        else s.addEventListener('abort', end, { once: true });
      });
    },
    handed(cert) {
      try {
        give!(cert);
        return undefined;
      } catch (err) {
        return err;
      }
    },
    started: started.promise,
    signal: () => signal,
    returned: () => returned,
  };
}

function registryWith(value: number): Registry {
  const registry = new Registry();
  new Counter({ name: 'converge_test_tls_total', help: 'x', registers: [registry] }).inc(value);
  return registry;
}

describe('metrics server over HTTPS', () => {
  it('serves a certificate from a folder over TLS 1.2+, verified against its CA; 405s, drained bodies and HEAD as over HTTP', async (t) => {
    const store = memoryCaStore();
    const cert = await issue(store);
    const folder = certFolder(t);
    folder.write(cert);
    const server = createMetricsServer({ address: '127.0.0.1:0', registry: registryWith(7), certificates: certDirCertificates(folder.dir, { pollMs: 20, settleMs: 20 }) });
    run(t, server);
    const { port } = (await server.listening())!;
    const ok = await httpsRequest(port, '/metrics', { ca: cert.caPem! });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /^converge_test_tls_total 7$/m);
    assert.equal(ok.fingerprint, fingerprintOf(cert));
    assert.ok(ok.protocol === 'TLSv1.2' || ok.protocol === 'TLSv1.3', String(ok.protocol));
    const post = await httpsRequest(port, '/metrics', { ca: cert.caPem!, method: 'POST', body: 'x'.repeat(100_000), headers: { connection: 'close' } });
    assert.deepEqual([post.status, post.headers.allow], [405, 'GET, HEAD']);
    const head = await httpsRequest(port, '/metrics', { ca: cert.caPem!, method: 'HEAD' });
    assert.deepEqual([head.status, head.body], [200, '']);
    // CONNECT, written by hand over TLS: the 405 every other method gets.
    const connectAnswer = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, ca: cert.caPem! }, () => socket.write('CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8').on('data', (c: string) => (text += c));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(connectAnswer, /^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    // A client that does not trust the CA is refused by its own side (the certificate is not public).
    await assert.rejects(httpsRequest(port, '/metrics', { ca: (await issue(memoryCaStore())).caPem! }), /self-signed|unable to verify|certificate/i);
  });

  it('plain HTTP on the TLS port gets no HTTP answer, and the connection is closed', async (t) => {
    const folder = certFolder(t);
    folder.write(await issue(memoryCaStore()));
    const server = createMetricsServer({ address: '127.0.0.1:0', registry: registryWith(1), certificates: certDirCertificates(folder.dir, { pollMs: 20, settleMs: 20 }) });
    run(t, server);
    const { port } = (await server.listening())!;
    const { received, closed } = await rawExchange(port, 'GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    assert.equal(closed, true, 'the server closes the connection');
    assert.doesNotMatch(received.toString('latin1'), /HTTP\/1\.|converge_test_tls_total/);
  });

  it('a new pair in the folder is served to new connections without a restart (same port, same server)', async (t) => {
    const store = memoryCaStore();
    const [first, second] = [await issue(store), await issue(store)];
    assert.notEqual(fingerprintOf(first), fingerprintOf(second));
    const folder = certFolder(t);
    folder.write(first);
    const server = createMetricsServer({ address: '127.0.0.1:0', registry: registryWith(1), certificates: certDirCertificates(folder.dir, { pollMs: 20, settleMs: 20 }) });
    const { running } = run(t, server);
    const { port } = (await server.listening())!;
    assert.equal((await httpsRequest(port, '/metrics', { ca: first.caPem! })).fingerprint, fingerprintOf(first));
    folder.write(second);
    const until = performance.now() + 5_000;
    let seen = '';
    while (performance.now() < until && seen !== fingerprintOf(second)) {
      const answer = await httpsRequest(port, '/metrics', { ca: first.caPem! });
      assert.equal(answer.status, 200);
      seen = answer.fingerprint;
      if (seen !== fingerprintOf(second)) await sleep(20);
    }
    assert.equal(seen, fingerprintOf(second), 'the renewed certificate is served');
    let settled = false;
    void running.then(() => (settled = true));
    await sleep(10);
    assert.equal(settled, false, 'the server kept running');
  });

  it('a pair TLS refuses is thrown back to the source and the certificate served stays as it was', async (t) => {
    const store = memoryCaStore();
    const [first, second] = [await issue(store), await issue(store)];
    const source = scriptedSource();
    const server = createMetricsServer({ address: '127.0.0.1:0', registry: registryWith(1), certificates: source });
    run(t, server);
    await source.started;
    assert.equal(source.handed(first), undefined);
    const { port } = (await server.listening())!;
    assert.ok(source.handed({ ...second, keyPem: first.keyPem }) instanceof Error, 'a key that does not match: refused');
    assert.equal((await httpsRequest(port, '/metrics', { ca: first.caPem! })).fingerprint, fingerprintOf(first));
    assert.equal(source.handed(second), undefined);
    assert.equal((await httpsRequest(port, '/metrics', { ca: first.caPem! })).fingerprint, fingerprintOf(second));
  });

  it('a source that never gives a certificate: nothing is bound, listening() waits; the abort settles start and stops the source', async (t) => {
    const port = await freePort();
    const source = scriptedSource();
    const server = createMetricsServer({ address: `127.0.0.1:${port}`, registry: registryWith(1), certificates: source });
    let bound: unknown = 'pending';
    void server.listening().then((a) => (bound = a), (err: unknown) => (bound = err));
    const { running, stop } = run(t, server);
    await source.started;
    await sleep(100);
    assert.equal(bound, 'pending');
    assert.equal(await connectionRefused(port), true, 'no plaintext (nor anything) is accepted');
    await stop();
    await running;
    assert.equal(await server.listening(), undefined);
    assert.equal(source.signal()?.aborted, true);
    assert.equal(source.returned(), true, 'start waited for the source');
  });

  it('a source that fails (or returns) before its first certificate makes start and listening() reject', async () => {
    const failing = createMetricsServer({ address: '127.0.0.1:0', registry: new Registry(), certificates: { start: async () => { throw new Error('no such secret'); } } });
    await assert.rejects(failing.start(new AbortController().signal), /no such secret/);
    await assert.rejects(failing.listening(), /no such secret/);
    const quitting = createMetricsServer({ address: '127.0.0.1:0', registry: new Registry(), certificates: { start: async () => undefined } });
    await assert.rejects(quitting.start(new AbortController().signal), /certificate source stopped before it gave a certificate/);
  });

  it('a busy port is a ListenError, and the source is stopped before start rejects', async (t) => {
    const blocker = createNetServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    t.after(() => blocker.close());
    const { port } = blocker.address() as { port: number };
    const source = scriptedSource();
    const server = createMetricsServer({ address: `127.0.0.1:${port}`, registry: new Registry(), certificates: source });
    const running = server.start(new AbortController().signal);
    await source.started;
    source.handed(await issue(memoryCaStore()));
    await assert.rejects(running, (err: unknown) => err instanceof ListenError && err.server === 'metrics' && err.code === 'EADDRINUSE');
    await assert.rejects(server.listening(), ListenError);
    assert.equal(source.returned(), true);
  });

  it('stop closes a keep-alive TLS connection and a TCP connection that never handshakes', async (t) => {
    const cert = await issue(memoryCaStore());
    const source = scriptedSource();
    const server = createMetricsServer({ address: '127.0.0.1:0', registry: registryWith(1), certificates: source });
    const { stop } = run(t, server);
    await source.started;
    source.handed(cert);
    const { port } = (await server.listening())!;
    const idle = netConnect(port, '127.0.0.1');
    idle.on('error', () => {});
    const idleClosed = new Promise<void>((r) => idle.once('close', () => r()));
    const kept = tlsConnect({ host: '127.0.0.1', port, ca: cert.caPem! });
    kept.on('error', () => {});
    const keptClosed = new Promise<void>((r) => kept.once('close', () => r()));
    await new Promise<void>((resolve) => kept.once('secureConnect', () => resolve()));
    kept.write('GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await new Promise<void>((resolve) => kept.once('data', () => resolve()));
    await stop();
    await within(Promise.all([idleClosed, keptClosed]), 2_000, 'connections closed');
  });

  it('an authorizer still decides every request over TLS: 401 with WWW-Authenticate without a token, 200 with one it allows', async (t) => {
    const cert = await issue(memoryCaStore());
    const folder = certFolder(t);
    folder.write(cert);
    const seen: string[] = [];
    const authorize: MetricsAuthorizer = async (req) => {
      seen.push(req.path);
      return req.authorization === 'Bearer good' ? { allowed: true, user: 'scraper' } : { allowed: false, code: 401, message: 'unauthorized' };
    };
    const server = createMetricsServer({ address: '127.0.0.1:0', registry: registryWith(3), authorize, certificates: certDirCertificates(folder.dir, { pollMs: 20, settleMs: 20 }) });
    run(t, server);
    const { port } = (await server.listening())!;
    const refused = await httpsRequest(port, '/metrics', { ca: cert.caPem! });
    assert.deepEqual([refused.status, refused.headers['www-authenticate']], [401, 'Bearer']);
    assert.doesNotMatch(refused.body, /converge_test_tls_total/);
    assert.equal((await httpsRequest(port, '/nothing', { ca: cert.caPem! })).status, 401, 'unknown paths too');
    const allowed = await httpsRequest(port, '/metrics', { ca: cert.caPem!, headers: { authorization: 'Bearer good' } });
    assert.equal(allowed.status, 200);
    assert.match(allowed.body, /^converge_test_tls_total 3$/m);
    assert.deepEqual(seen, ['/metrics', '/nothing', '/metrics']);
  });
});

describe('memoryCaStore', () => {
  it('keeps the first CA saved; selfManagedCertificates from it issues for the hosts asked, all from one CA per store', async () => {
    const store = memoryCaStore();
    assert.equal(await store.load(), undefined);
    const a = await issue(store, ['localhost', '127.0.0.1', '::1', 'pod-0']);
    const b = await issue(store);
    assert.equal(a.caPem, b.caPem, 'one CA per store');
    assert.deepEqual(await store.saveIfAbsent({ certPem: 'other', keyPem: 'other' }), await store.load(), 'the first one stays');
    const san = new X509Certificate(a.certPem).subjectAltName ?? '';
    for (const name of ['DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1', 'DNS:pod-0']) assert.ok(san.includes(name), `${name} in ${san}`);
    assert.ok(new X509Certificate(a.certPem).verify(new X509Certificate(a.caPem!).publicKey));
    assert.notEqual((await issue(memoryCaStore())).caPem, a.caPem, 'another store, another CA');
  });
});
