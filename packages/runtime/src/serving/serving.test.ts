import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { Registry, Counter } from 'prom-client';
import { createProbeServer, createMetricsServer, parseBindAddress, ListenError, type EndpointServer } from './index.ts';

async function running<T extends EndpointServer>(server: T, fn: (base: string) => Promise<void>): Promise<void> {
  const ac = new AbortController();
  const done = server.start(ac.signal);
  try {
    const addr = await server.listening();
    assert.ok(addr);
    await fn(`http://127.0.0.1:${addr.port}`);
  } finally {
    ac.abort();
    await done;
  }
}

async function get(url: string): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

/** One request with a raw request target (fetch would normalize it); resolves with the status code. */
function rawGet(port: number, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* busy */ }
}

describe('parseBindAddress', () => {
  it('parses the forms controller-runtime accepts', () => {
    assert.deepEqual(parseBindAddress('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseBindAddress(':8081'), { host: undefined, port: 8081 });
    assert.deepEqual(parseBindAddress('[::1]:9'), { host: '::1', port: 9 });
    assert.deepEqual(parseBindAddress('localhost:0'), { host: 'localhost', port: 0 });
    assert.equal(parseBindAddress('0'), undefined);
    assert.equal(parseBindAddress(''), undefined);
    assert.throws(() => parseBindAddress('8080'), RangeError);
    assert.throws(() => parseBindAddress('host:99999'), RangeError);
  });
});

describe('probe server', () => {
  it('readyz fails until its checks pass; verbose and exclude; single checks', async () => {
    let synced = false;
    const server = createProbeServer({
      address: '127.0.0.1:0',
      checks: { 'informers-synced': () => synced || { ok: false, message: 'Pod not synced' } },
    });
    server.addReadyCheck('watches-healthy', () => {
      throw new Error('watch of Pod quiet for 301 s');
    });
    await running(server, async (base) => {
      let r = await get(`${base}/readyz`);
      assert.equal(r.status, 500);
      assert.equal(r.body, '[-]informers-synced failed: reason withheld\n[-]watches-healthy failed: reason withheld\nreadyz check failed\n');
      r = await get(`${base}/readyz?verbose`);
      assert.match(r.body, /\[-\]informers-synced failed: Pod not synced/);
      assert.match(r.body, /\[-\]watches-healthy failed: watch of Pod quiet for 301 s/);
      synced = true;
      r = await get(`${base}/readyz?exclude=watches-healthy`);
      assert.deepEqual([r.status, r.body], [200, 'ok']);
      r = await get(`${base}/readyz/informers-synced`);
      assert.deepEqual([r.status, r.body], [200, 'ok\n']);
      r = await get(`${base}/readyz/watches-healthy`);
      assert.equal(r.status, 500);
      r = await get(`${base}/readyz/nope`);
      assert.equal(r.status, 404);
      r = await get(`${base}/healthz?verbose`);
      assert.deepEqual([r.status, r.body], [200, '[+]eventloop ok\nhealthz check passed\n']);
      const post = await fetch(`${base}/healthz`, { method: 'POST' });
      assert.equal(post.status, 405);
      await post.body?.cancel();
    });
  });

  it('an origin-form target is a path (//host/healthz is no probe), and a target that is no URL is a 400', async () => {
    const server = createProbeServer({ address: '127.0.0.1:0' });
    await running(server, async (base) => {
      const port = Number(new URL(base).port);
      assert.equal(await rawGet(port, '/healthz'), 200);
      assert.equal(await rawGet(port, '//evil.example/healthz'), 404);
      assert.equal(await rawGet(port, 'http://[/'), 400);
    });
  });

  it('a check that never settles fails by timeout', async () => {
    const server = createProbeServer({ address: '127.0.0.1:0', checkTimeoutMs: 50, checks: { hang: () => new Promise(() => {}) } });
    const [report] = await server.ready();
    assert.deepEqual(report, { name: 'hang', ok: false, message: 'timed out after 50 ms' });
  });

  it('healthz fails after the event loop was blocked, and recovers', async () => {
    // A block is remembered for one to two windows. The window is long next to the scheduling
    // delays of a loaded machine: with 200 ms windows, a probe answered more than 200 ms after
    // the block (CI, two cores, other suites running) found it already forgotten.
    const server = createProbeServer({ address: '127.0.0.1:0', eventLoop: { thresholdMs: 300, windowMs: 1_000, resolutionMs: 10 } });
    await running(server, async (base) => {
      assert.equal((await get(`${base}/healthz`)).status, 200);
      await new Promise((r) => setTimeout(r, 30));
      blockFor(700);
      await new Promise((r) => setTimeout(r, 20)); // let the histogram record the late tick
      const r = await get(`${base}/healthz?verbose`);
      assert.equal(r.status, 500, r.body);
      assert.match(r.body, /\[-\]eventloop failed: event loop blocked for \d+ ms \(threshold 300 ms\)/);
      assert.equal((await get(`${base}/livez`)).status, 500);
      await new Promise((r) => setTimeout(r, 2_100)); // two windows later
      assert.equal((await get(`${base}/healthz`)).status, 200);
    });
  });

  it('rejects duplicate or malformed check names', () => {
    const server = createProbeServer({ address: '0', checks: { a: () => true } });
    assert.throws(() => server.addReadyCheck('a', () => true));
    assert.throws(() => server.addReadyCheck('Bad Name', () => true), RangeError);
    assert.throws(() => server.addHealthCheck('eventloop', () => true));
  });
});

describe('metrics server', () => {
  it('serves the registry and debug providers', async () => {
    const registry = new Registry();
    const c = new Counter({ name: 'test_things_total', help: 'things', registers: [registry] });
    const server = createMetricsServer({
      address: '127.0.0.1:0',
      registry,
      debug: { unconverged: (p) => ({ limit: Number(p.get('limit') ?? 10), items: [{ key: 'ns/a', ageSeconds: 3 }] }) },
    });
    server.addDebug('boom', () => {
      throw new Error('provider failed');
    });
    server.addDebug('nothing-to-say', () => undefined);
    await running(server, async (base) => {
      c.inc(3);
      let r = await get(`${base}/metrics`);
      assert.equal(r.status, 200);
      assert.match(r.body, /^test_things_total 3$/m);
      assert.equal(r.type, registry.contentType);
      c.inc();
      assert.match((await get(`${base}/metrics`)).body, /^test_things_total 4$/m);
      r = await get(`${base}/debug/unconverged?limit=5`);
      assert.deepEqual(JSON.parse(r.body), { limit: 5, items: [{ key: 'ns/a', ageSeconds: 3 }] });
      assert.match(r.type ?? '', /application\/json/);
      assert.deepEqual(JSON.parse((await get(`${base}/debug`)).body), { endpoints: ['/debug/unconverged', '/debug/boom', '/debug/nothing-to-say'] });
      r = await get(`${base}/debug/nothing-to-say`);
      assert.deepEqual([r.status, JSON.parse(r.body)], [200, null], 'a provider with nothing to say: JSON null, not the text undefined');
      r = await get(`${base}/debug/boom`);
      assert.deepEqual([r.status, JSON.parse(r.body)], [500, { error: 'provider failed' }]);
      assert.equal((await get(`${base}/nothing`)).status, 404);
    });
  });

  it('address 0 disables: start waits for the signal, nothing listens', async () => {
    const server = createMetricsServer({ address: '0', registry: new Registry() });
    const ac = new AbortController();
    let settled = false;
    const done = server.start(ac.signal).then(() => (settled = true));
    assert.equal(await server.listening(), undefined);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(settled, false);
    ac.abort();
    await done;
  });

  it('stop closes the socket even with a keep-alive connection open; a busy port rejects', async () => {
    const server = createMetricsServer({ address: '127.0.0.1:0', registry: new Registry() });
    const ac = new AbortController();
    const done = server.start(ac.signal);
    const addr = (await server.listening())!;
    await (await fetch(`http://127.0.0.1:${addr.port}/metrics`)).text(); // leaves a keep-alive connection
    const busy = createProbeServer({ address: `127.0.0.1:${addr.port}` });
    await assert.rejects(busy.start(new AbortController().signal), (err: unknown) =>
      err instanceof ListenError && err.server === 'probe' && err.code === 'EADDRINUSE' && err.address === `127.0.0.1:${addr.port}` &&
      err.message === `probe server cannot listen on 127.0.0.1:${addr.port}: the address is already in use (EADDRINUSE)`);
    await assert.rejects(busy.listening(), /EADDRINUSE/);
    ac.abort();
    await done;
    // The port is free again.
    await new Promise<void>((resolve, reject) => {
      const s = createServer().once('error', reject).listen(addr.port, '127.0.0.1', () => s.close(() => resolve()));
    });
  });
});
