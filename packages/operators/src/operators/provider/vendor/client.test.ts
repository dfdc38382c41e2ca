/**
 * Examples of the vendor client against a raw TLS server on 127.0.0.1 that answers each request
 * with bytes the test writes (the adversarial search of the same client is in
 * `client.adversarial.test.ts`): what a status the operation does not accept becomes, and the
 * bound on an answer's size (`maxResponseBytes`).
 *
 * @module
 */
import { describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';
import { createEndpointLimiters, systemClock, type Clock } from '@converge/runtime';
import { prepareTls } from '../../../vendor-sim/certs.ts';
import { createVendorClient, secureContextFor, type VendorCallEvent, type VendorClient, type VendorClientOptions } from './client.ts';
import { VendorError } from './errors.ts';

const TOKEN = 'tok-client-example-7c1d';
const INSTANCE = JSON.stringify({ id: 'i-1', region: 'eu-west-1', displayName: 'x', idempotencyKey: null, createdAt: 't', updatedAt: 't' });

interface Request {
  method: string;
  target: string;
}

/** Answers request n (0-based) with `answer(request, socket, n)`; counts requests and closed connections. */
async function rawServer(t: TestContext, answer: (req: Request, socket: TLSSocket, n: number) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'converge-vendor-client-'));
  const tls = await prepareTls(dir, '127.0.0.1');
  const requests: Request[] = [];
  const sockets = new Set<TLSSocket>();
  let closed = 0;
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => (sockets.delete(socket), closed++));
    let buf = '';
    socket.setEncoding('latin1').on('data', (d: string) => {
      buf += d;
      // The client's requests are small: headers, then a body of content-length bytes.
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const head = buf.slice(0, end);
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        const [method = '', target = ''] = head.split(' ');
        requests.push({ method, target });
        answer({ method, target }, socket, requests.length - 1);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });
  const { port } = server.address() as { port: number };
  return { endpoint: `https://127.0.0.1:${port}`, ca: tls.caPem, requests, closedConnections: () => closed };
}

function newClient(t: TestContext, server: { endpoint: string; ca: string }, over: Partial<VendorClientOptions> = {}) {
  const events: VendorCallEvent[] = [];
  const limiter = createEndpointLimiters({ ratePerSecond: 1000, burst: 100, maxConcurrency: 1 }).get(server.endpoint);
  const client: VendorClient = createVendorClient({ endpoint: server.endpoint, token: TOKEN, ca: server.ca, limiter, timeoutMs: 2000, onCall: (e) => void events.push(e), ...over });
  t.after(() => client.close());
  return { client, events, limiter };
}

const reply = (status: number, headers: string[], body = '') =>
  `HTTP/1.1 ${status} X\r\n${[...headers, ...(status === 204 || status === 304 ? [] : [`content-length: ${Buffer.byteLength(body)}`])].map((h) => `${h}\r\n`).join('')}\r\n${body}`;

async function rejection(p: Promise<unknown>): Promise<VendorError> {
  const err = await p.then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof VendorError, String(err));
  return err;
}

describe('vendor client: a status the operation does not accept, below 400', () => {
  it('a redirect is not followed and is a transient Server error, not Invalid', async (t) => {
    const server = await rawServer(t, (req, socket) => {
      socket.write(req.target === '/elsewhere' ? reply(200, ['content-type: application/json'], INSTANCE) : reply(302, ['location: /elsewhere', 'x-request-id: r-302'], '<a href="/elsewhere">moved</a>'));
    });
    const { client, events } = newClient(t, server);
    const err = await rejection(client.getInstance('i-1'));
    assert.deepEqual(
      { kind: err.kind, transient: err.transient, status: err.status, message: err.message, requestId: err.requestId },
      { kind: 'Server', transient: true, status: 302, message: 'vendor getInstance: unexpected answer (HTTP 302)', requestId: 'r-302' },
    );
    assert.deepEqual(server.requests.map((r) => r.target), ['/v1/instances/i-1'], 'one request: the redirect is not followed');
    assert.deepEqual(events.map((e) => [e.operation, e.outcome, e.status]), [['getInstance', 'Server', 302]]);
  });

  it('307 to a create, 204 or 201 to a get, 201 to an update, 299, 305: Server whatever the body says', async (t) => {
    const answers = [
      reply(307, ['location: https://other.example/v1/instances']),
      reply(204, []),
      reply(201, ['content-type: application/json'], INSTANCE),
      reply(201, ['content-type: application/json'], INSTANCE),
      reply(299, ['content-type: application/json'], JSON.stringify({ error: { code: 'AccountSuspended', message: 'not an error answer' } })),
      reply(305, [], JSON.stringify({ error: { code: 'InvalidRequest', message: 'use proxy' } })),
    ];
    const server = await rawServer(t, (_req, socket, n) => socket.write(answers[n]!));
    const { client } = newClient(t, server);
    const calls: [() => Promise<unknown>, string, number][] = [
      [() => client.createInstance({ region: 'eu' }, 'k-1'), 'createInstance', 307],
      [() => client.getInstance('i-1'), 'getInstance', 204],
      [() => client.getInstance('i-1'), 'getInstance', 201],
      [() => client.updateInstance('i-1', { displayName: 'y' }), 'updateInstance', 201],
      [() => client.getAccount(), 'getAccount', 299],
      [() => client.getHealth('i-1'), 'getHealth', 305],
    ];
    for (const [run, operation, status] of calls) {
      const err = await rejection(run());
      assert.deepEqual([err.kind, err.transient, err.status, err.message, err.code], ['Server', true, status, `vendor ${operation}: unexpected answer (HTTP ${status})`, undefined]);
    }
  });

  it('4xx and 5xx keep their kinds', async (t) => {
    const answers = [reply(400, [], '{"error":{"code":"InvalidRequest","message":"bad"}}'), reply(409, [], 'conflict'), reply(503, [], 'down')];
    const server = await rawServer(t, (_req, socket, n) => socket.write(answers[n]!));
    const { client } = newClient(t, server);
    assert.equal((await rejection(client.getInstance('i-1'))).kind, 'Invalid');
    assert.equal((await rejection(client.getInstance('i-1'))).kind, 'Invalid');
    assert.equal((await rejection(client.getInstance('i-1'))).kind, 'Server');
  });
});

describe('vendor client: the bound on an answer (maxResponseBytes)', () => {
  it('a Content-Length over the default 16 MiB fails at once as Server, without waiting for the body', async (t) => {
    // The body never comes: without the up-front check the call would wait for its timeout.
    const server = await rawServer(t, (_req, socket) => socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${16 * 1024 * 1024 + 1}\r\n\r\n{"items":[`));
    const { client, events } = newClient(t, server, { timeoutMs: 5000 });
    const started = performance.now();
    const err = await rejection(client.listInstanceStates());
    assert.deepEqual(
      { kind: err.kind, transient: err.transient, status: err.status, message: err.message },
      { kind: 'Server', transient: true, status: 200, message: 'vendor listInstanceStates: answer larger than 16777216 bytes' },
    );
    assert.ok(performance.now() - started < 2000, `took ${Math.round(performance.now() - started)} ms`);
    assert.deepEqual(events.map((e) => [e.operation, e.outcome, e.status]), [['listInstanceStates', 'Server', 200]]);
  });

  it('an endless chunked body stops being read at the bound: Server, the connection closed, the limiter free', async (t) => {
    let written = 0;
    const server = await rawServer(t, (req, socket) => {
      if (req.target === '/v1/instances/i-2') return void socket.write(reply(200, ['content-type: application/json'], INSTANCE.replace('i-1', 'i-2')));
      socket.write('HTTP/1.1 503 Unavailable\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n');
      // A vendor that never stops talking: chunks for as long as the connection lasts.
      const chunk = `10000\r\n${'<p>x</p>'.repeat(0x10000 / 8)}\r\n`;
      const more = () => {
        while (!socket.destroyed && written < 1024 ** 3) {
          written += 0x10000;
          if (!socket.write(chunk)) return void socket.once('drain', more);
        }
      };
      more();
    });
    const { client, events, limiter } = newClient(t, server, { maxResponseBytes: 100_000 });
    const err = await rejection(client.getInstance('i-1'));
    assert.deepEqual([err.kind, err.transient, err.status, err.message], ['Server', true, 503, 'vendor getInstance: answer larger than 100000 bytes']);
    const deadline = performance.now() + 2000;
    while (server.closedConnections() === 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.closedConnections(), 1, 'the connection is closed');
    const sent = written;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(written, sent, 'the server stopped sending');
    // maxConcurrency 1: a permit kept by the failed call would hold this one.
    assert.equal(limiter.pausedForMs(), 0);
    assert.equal((await client.getInstance('i-2')).id, 'i-2');
    assert.deepEqual(events.map((e) => [e.outcome, e.status]), [['Server', 503], ['ok', 200]]);
    assert.deepEqual(client.calls().getInstance, { calls: 2, ok: 1, failed: { Server: 1 } });
  });

  it('an answer of exactly the bound is read; one byte more is not', async (t) => {
    const body = (n: number) => INSTANCE.padEnd(n, ' ');
    const answers = [reply(200, [], body(4096)), reply(200, [], body(4097)), `HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n${body(4097)}`];
    const server = await rawServer(t, (_req, socket, n) => (socket.write(answers[n]!), n === 2 && socket.end()));
    const { client } = newClient(t, server, { maxResponseBytes: 4096 });
    assert.equal((await client.getInstance('i-1')).id, 'i-1');
    assert.equal((await rejection(client.getInstance('i-1'))).message, 'vendor getInstance: answer larger than 4096 bytes');
    // Without Content-Length (a body that runs to the close): counted while read.
    assert.equal((await rejection(client.getInstance('i-1'))).message, 'vendor getInstance: answer larger than 4096 bytes');
  });

  it("an oversized 503's Retry-After still pauses the endpoint, and the error carries it", async (t) => {
    const server = await rawServer(t, (_req, socket) => socket.write(`HTTP/1.1 503 Unavailable\r\nretry-after: 1\r\nx-request-id: r-1\r\ncontent-length: 5000\r\n\r\n`));
    const { client, limiter } = newClient(t, server, { maxResponseBytes: 4096 });
    const err = await rejection(client.getUsage('i-1'));
    assert.deepEqual([err.kind, err.status, err.retryAfterMs, err.requestId, err.message], ['Server', 503, 1000, 'r-1', 'vendor getUsage: answer larger than 4096 bytes']);
    assert.ok(limiter.pausedForMs() > 900, `paused for ${limiter.pausedForMs()} ms`);
  });

  it('refuses a bound that is not a positive integer', () => {
    for (const maxResponseBytes of [0, -1, 1.5, Number.NaN, Infinity]) {
      assert.throws(
        () => createVendorClient({ endpoint: 'https://127.0.0.1', token: TOKEN, limiter: createEndpointLimiters().get('https://127.0.0.1'), timeoutMs: 1000, maxResponseBytes }),
        (e: unknown) => e instanceof VendorError && e.kind === 'Invalid' && e.message === 'maxResponseBytes must be a positive integer',
      );
    }
  });

  it('refuses a pause wait that is not a number >= 0 (the limiter would refuse every call)', () => {
    for (const maxPauseWaitMs of [-1, Number.NaN]) {
      assert.throws(
        () => createVendorClient({ endpoint: 'https://127.0.0.1', token: TOKEN, limiter: createEndpointLimiters().get('https://127.0.0.1'), timeoutMs: 1000, maxPauseWaitMs }),
        (e: unknown) => e instanceof VendorError && e.kind === 'Invalid' && e.message === 'maxPauseWaitMs must be >= 0',
      );
    }
  });
});

describe('vendor client: the wait a Retry-After asked for', () => {
  it("a 429's Retry-After is reported as asked, however long the limiter's clock took between the pause and the answer", async (t) => {
    // CI's run once reported 998 for a Retry-After of 1 s: the loaded machine's clock moved 2 ms
    // between setting the pause and reading it back. Here every reading of the clock moves 5 ms.
    let at = 0;
    const slow: Clock = { ...systemClock, monotonic: () => (at += 5) };
    const server = await rawServer(t, (_req, socket, n) => socket.write(reply(429, [`retry-after: ${n === 0 ? 1 : 30}`], '{}')));
    const limiter = createEndpointLimiters({ clock: slow }).get(server.endpoint);
    const { client } = newClient(t, server, { limiter });
    const err = await rejection(client.getUsage('i-1'));
    assert.deepEqual([err.kind, err.status, err.retryAfterMs], ['RateLimited', 429, 1000]);
    // A wait beyond the limiter's cap (5 min by default; 2 s here) is reported as the pause it set.
    const capped = await rejection(newClient(t, server, { limiter: createEndpointLimiters({ clock: slow, maxPauseMs: 2_000 }).get(server.endpoint) }).client.getUsage('i-1'));
    assert.ok(capped.retryAfterMs! <= 2_000 && capped.retryAfterMs! > 1_900, `capped: ${capped.retryAfterMs}`);
  });
});

describe('vendor client: the endpoint is a base URL, nothing more', () => {
  it('refuses a query or a fragment (either would cut off the path the client appends, so the caller of the endpoint would choose the whole URL the token goes to)', () => {
    for (const endpoint of ['https://vendor.example/x#', 'https://vendor.example/x#frag', 'https://vendor.example/x?', 'https://vendor.example/x?a=b', 'https://vendor.example?a']) {
      assert.throws(
        () => createVendorClient({ endpoint, token: TOKEN, limiter: createEndpointLimiters().get('https://vendor.example'), timeoutMs: 1000 }),
        (e: unknown) => e instanceof VendorError && e.kind === 'Invalid' && e.operation === 'createClient' && /query or a fragment/.test(e.message),
        endpoint,
      );
    }
    assert.doesNotThrow(() => createVendorClient({ endpoint: 'https://vendor.example/api/', token: TOKEN, limiter: createEndpointLimiters().get('https://vendor.example'), timeoutMs: 1000 }));
  });
});

describe('vendor client: the look-up by idempotency key checks the key', () => {
  const item = (id: string, key: string | null) => ({ id, region: 'eu-west-1', displayName: 'x', idempotencyKey: key, createdAt: 't', updatedAt: 't' });
  it('a list the vendor did not filter (a gateway dropped the query, another API version ignores it) is refused as Server, never taken for this key\'s instance', async (t) => {
    const unfiltered = JSON.stringify({ items: [item('inst-other', 'uid-of-another'), item('inst-third', null)] });
    const server = await rawServer(t, (_req, socket) => socket.write(reply(200, [], unfiltered)));
    const { client } = newClient(t, server);
    const err = await rejection(client.findByIdempotencyKey('uid-mine'));
    assert.equal(err.kind, 'Server');
    assert.match(err.message, /idempotency key/);
  });
  it('the instance with this key is found among others; none listed is none', async (t) => {
    const answers = [JSON.stringify({ items: [item('inst-other', 'uid-of-another'), item('inst-mine', 'uid-mine')] }), JSON.stringify({ items: [] })];
    const server = await rawServer(t, (_req, socket, n) => socket.write(reply(200, [], answers[n]!)));
    const { client } = newClient(t, server);
    assert.equal((await client.findByIdempotencyKey('uid-mine'))?.id, 'inst-mine');
    assert.equal(await client.findByIdempotencyKey('uid-mine'), undefined);
  });
});

describe('vendor client: one secure context per CA, shared by every client', () => {
  it('clients for many tokens with the same CA share one context (each costs ≈ 1.2 MiB and 20–30 ms to build); another CA gets its own', async (t) => {
    const server = await rawServer(t, (_req, socket) => socket.write(reply(200, [], INSTANCE)));
    assert.equal(secureContextFor(server.ca), secureContextFor(server.ca));
    assert.notEqual(secureContextFor(server.ca), secureContextFor(undefined));
    // And the clients still reach a server whose certificate only that CA trusts.
    for (const token of ['team-a', 'team-b']) assert.equal((await newClient(t, server, { token }).client.getInstance('i-1')).id, 'i-1');
  });
});

describe('vendor client: a listing is read item by item', () => {
  const state = (id: string, key: string | null, health: unknown = { status: 'healthy' }) => ({
    id,
    region: 'eu-west-1',
    displayName: 'x',
    idempotencyKey: key,
    createdAt: 't',
    updatedAt: 't',
    health,
    limits: { maxConcurrency: 4, requestsPerMinute: 60, dailyQuota: 1000 },
    usage: { callsToday: 1, dailyQuota: 1000, quotaRemaining: 999, refusedToday: 0, throttledRequests: 0, throttleWindowSeconds: 60, quotaResetAt: '2026-12-08T00:00:00Z', observedAt: '2026-12-07T00:00:00Z' },
  });
  it('an item outside the contract leaves the page\'s other items readable and is listed as unreadable with what of it could be read', async (t) => {
    const page = JSON.stringify({
      items: [
        state('i-good', 'uid-good'),
        state('i-odd-health', 'uid-odd', { status: 'exploded' }), // a health status the contract does not have
        { id: 'i-no-region', idempotencyKey: 'uid-no-region' }, // not an instance: no region
        { idempotencyKey: 7 }, // no id, no key
        null,
        state('i-last', null),
      ],
      nextPageToken: 'p2',
    });
    const server = await rawServer(t, (_req, socket) => socket.write(reply(200, [], page)));
    const { client } = newClient(t, server);
    const got = await client.listInstanceStates();
    assert.deepEqual(got.items.map((i) => i.instance.id), ['i-good', 'i-last']);
    assert.equal(got.nextPageToken, 'p2');
    assert.deepEqual(
      got.unreadable?.map((u) => [u.id, u.idempotencyKey, u.instance?.id, u.problem]),
      [
        ['i-odd-health', 'uid-odd', 'i-odd-health', 'unknown health status'],
        ['i-no-region', 'uid-no-region', undefined, 'not an instance'],
        [undefined, null, undefined, 'not an instance'],
        [undefined, undefined, undefined, 'not an instance'],
      ],
    );
  });
  it('a page whose items are all readable says nothing of unreadable ones', async (t) => {
    const server = await rawServer(t, (_req, socket) => socket.write(reply(200, [], JSON.stringify({ items: [state('i-1', 'k')] }))));
    const { client } = newClient(t, server);
    assert.equal('unreadable' in (await client.listInstanceStates()), false);
  });
});
