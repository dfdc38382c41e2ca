/**
 * Adversarial tests of the webhook's HTTPS server (`webhook-server.ts`) and of what it serves
 * (`ConversionRegistry.review`), through real TLS sockets written to by hand. It searches for:
 *
 * - request bytes delivered in random splits with small delays (some splits inside multi-byte
 *   UTF-8 characters of annotation values), framed by `content-length` or by chunked
 *   transfer-encoding with random chunk sizes, one or two requests pipelined on a connection,
 *   declared as JSON in its spellings (or not declared) or, now and then, as another media type.
 *   Checked (a fast-check property): every JSON answer is 200 with exactly
 *   `registry.review(JSON.parse(body))`, every other one 415 (its body skipped, the next
 *   pipelined request served), in request order, and the client sees no error;
 * - bodies over the limit (the default 32 MiB, and a small `maxBodyBytes`): the client receives
 *   the whole 413 answer and no reset while it is still sending; exactly at the limit is served;
 *   a body declared too large is refused before it is sent; the connection stays usable after;
 * - malformed input: not JSON (400), JSON that is not a review, objects that are null, numbers,
 *   strings, or have a non-string `apiVersion` (a `Failure` review, never a 500), wrong methods
 *   (405), query strings (served), unknown paths (404), a request target that is no URL (400),
 *   handlers that throw or answer what JSON cannot hold (500);
 * - clients that misbehave: disconnect mid-body, never finish the TLS handshake, send headers
 *   and stall, wait on a handler that never answers. Checked: no unhandled rejection, the server
 *   keeps serving, and `start()` settles within 2 s of the abort;
 * - many concurrent requests on a few keep-alive connections: each answer matches its request;
 * - a certificate folder whose key does not match its certificate yet (half-renewed): never
 *   served, and served once the pair matches; a source whose first pair TLS refuses: `start()`
 *   and `listening()` reject (neither hangs).
 *
 * `CONVERGE_WEBHOOK_ADVERSARIAL_RUNS` sets how many chunkings the property tries (default 60).
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { Agent, request } from 'node:https';
import fc from 'fast-check';
import { WebhookServer } from './webhook-server.ts';
import type { WebhookServerOptions } from './webhook-server.ts';
import { toyBoxConversions } from './toy-box.test-support.ts';
import { certDirCertificates, directoryCaStore, selfManagedCertificates } from './certificates.ts';
import type { CertificateSource } from './certificates.ts';

const RUNS = Number.parseInt(process.env.CONVERGE_WEBHOOK_ADVERSARIAL_RUNS ?? '', 10) || 60;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const registry = toyBoxConversions();

interface Served { port: number; ca: string; stop: AbortController; running: Promise<void> }

/** A server with a self-managed CA on 127.0.0.1, serving `registry` at /convert plus `extra` handlers. */
async function serve(t: TestContext, options: Partial<WebhookServerOptions> = {}, extra: Record<string, (body: unknown) => unknown> = {}): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-adv-'));
  const stop = new AbortController();
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir) }), ...options }).serveConversion(registry);
  for (const [path, handler] of Object.entries(extra)) server.handle(path, handler);
  const running = server.start(stop.signal);
  t.after(async () => {
    stop.abort();
    await Promise.race([running.catch(() => undefined), sleep(3_000)]);
    rmSync(dir, { recursive: true, force: true });
  });
  const { port } = (await server.listening())!;
  return { port, ca: readFileSync(join(dir, 'ca.crt'), 'utf8'), stop, running };
}

/** Collects unhandled rejections while the test runs. */
function watchRejections(t: TestContext): unknown[] {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', listener);
  t.after(() => void process.off('unhandledRejection', listener));
  return seen;
}

interface RawResponse { status: number; headers: Record<string, string>; body: string }

/** The complete HTTP/1.1 responses in `buf` (a body without content-length runs to the close). */
function parseResponses(buf: Buffer, closed: boolean): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < buf.length) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const [statusLine = '', ...lines] = buf.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const status = Number(statusLine.split(' ')[1]);
    const length = headers['content-length'];
    if (status === 100) { at = end + 4; continue; }
    if (length === undefined) {
      if (!closed) break;
      out.push({ status, headers, body: buf.subarray(end + 4).toString('utf8') });
      break;
    }
    if (buf.length < end + 4 + Number(length)) break;
    out.push({ status, headers, body: buf.subarray(end + 4, end + 4 + Number(length)).toString('utf8') });
    at = end + 4 + Number(length);
  }
  return out;
}

interface Exchange { responses: RawResponse[]; error?: string }

/**
 * Opens a TLS connection, runs `write` on it while reading, and resolves `lingerMs` after `write`
 * is done and `want` responses arrived (or when the connection closed, or `timeoutMs` passed).
 * `error` is the first socket or write error, if any happened before that.
 */
function exchange(port: number, ca: string, write: (s: TLSSocket) => Promise<void>, want: number, timeoutMs = 8_000, lingerMs = 0): Promise<Exchange> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    let error: string | undefined;
    let written = false;
    let closed = false;
    let done = false;
    const s = tlsConnect({ host: '127.0.0.1', port, ca });
    s.setNoDelay(true);
    const finish = (why?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const responses = parseResponses(Buffer.concat(got), closed);
      s.destroy();
      resolve({ responses, ...(error ?? why ? { error: error ?? why } : {}) });
    };
    const check = () => {
      if (closed) finish();
      else if (written && parseResponses(Buffer.concat(got), false).length >= want) {
        if (lingerMs > 0) setTimeout(finish, lingerMs);
        else finish();
      }
    };
    const timer = setTimeout(() => finish(`timed out after ${timeoutMs} ms (written: ${written}, ${parseResponses(Buffer.concat(got), false).length} responses)`), timeoutMs);
    s.on('data', (d: Buffer) => { got.push(d); check(); });
    s.on('error', (e: NodeJS.ErrnoException) => { error ??= `${e.code ?? 'error'}: ${e.message}`; });
    s.on('close', () => { closed = true; check(); });
    s.once('secureConnect', () => write(s).then(
      () => { written = true; check(); },
      (e: Error) => { error ??= `while writing: ${e.message}`; written = true; check(); },
    ));
  });
}

/** Writes `pieces` in order, honouring back-pressure, sleeping `delays[i]` ms after piece i. */
async function writeAll(s: TLSSocket, pieces: Iterable<Buffer>, delays: readonly number[] = []): Promise<void> {
  let i = 0;
  for (const piece of pieces) {
    if (s.destroyed) throw new Error('the connection was closed');
    if (!s.write(piece)) {
      await new Promise<void>((r) => {
        const go = () => { s.off('drain', go); s.off('close', go); r(); };
        s.on('drain', go).on('close', go);
      });
    }
    const delay = delays[i++] ?? 0;
    if (delay > 0) await sleep(delay);
  }
  if (s.destroyed) throw new Error('the connection was closed');
}

/** A request head; a header whose value is `undefined` is left out. */
const head = (path: string, headers: Record<string, string | number | undefined>, method = 'POST') =>
  `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;

/** One request with a content-length body. */
const withLength = (path: string, body: Buffer | string, extra: Record<string, string | number | undefined> = {}) =>
  Buffer.concat([Buffer.from(head(path, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extra })), Buffer.from(body)]);

/** One request with a chunked body, cut at `cuts` (byte offsets into the body). */
function chunked(path: string, body: Buffer, cuts: number[], upperHex = false, contentType: string | undefined = 'application/json'): Buffer {
  const bounds = [...new Set([0, ...cuts.filter((c) => c > 0 && c < body.length), body.length])].sort((a, b) => a - b);
  const parts: Buffer[] = [Buffer.from(head(path, { 'content-type': contentType, 'transfer-encoding': 'chunked' }))];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const piece = body.subarray(bounds[i], bounds[i + 1]);
    const size = piece.length.toString(16);
    parts.push(Buffer.from(`${upperHex ? size.toUpperCase() : size}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** Offsets of UTF-8 continuation bytes: cutting there splits a character. */
const insideCharacters = (bytes: Buffer) => [...bytes.keys()].filter((i) => (bytes[i]! & 0xc0) === 0x80);

const reviewBody = (uid: string, desiredAPIVersion: string, objects: unknown[]) =>
  JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects } });

const boxArb = fc.record({
  version: fc.constantFrom('v1', 'v2', 'v3'),
  name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
  size: fc.integer({ min: 0, max: 20 }),
  note: fc.string({ unit: 'binary', maxLength: 12 }),
  annotations: fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ unit: 'grapheme', maxLength: 10 }), { maxKeys: 3 }),
}).map(({ version, name, size, note, annotations }) => ({
  apiVersion: `toys.example.com/${version}`,
  kind: 'Box',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, annotations: { ...annotations, 'toys.example.com/note': `é€😀${note}` } },
  spec: version === 'v1' ? { size } : { dimensions: { size } },
}));
const objectArb = fc.oneof({ weight: 8, arbitrary: boxArb }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 7, 'box') });

const requestArb = fc.record({
  uid: fc.string({ unit: 'grapheme', maxLength: 10 }),
  desired: fc.constantFrom('toys.example.com/v1', 'toys.example.com/v2'),
  objects: fc.array(objectArb, { maxLength: 4 }),
  framing: fc.constantFrom('length', 'chunked', 'CHUNKED'),
  path: fc.constantFrom('/convert', '/convert?timeout=30s'),
  chunkCuts: fc.array(fc.nat(), { maxLength: 6 }),
  chunkCutsInChars: fc.array(fc.nat(), { maxLength: 3 }),
  contentType: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<string | undefined>('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', ' application/json ;x=y', undefined) },
    { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json-patch+json', '') },
  ),
});

/** Whether the server takes a request's declared media type as JSON (absent: yes). */
const declaresJson = (contentType: string | undefined) => contentType === undefined || contentType.split(';')[0]!.trim().toLowerCase() === 'application/json';

test('property: any chunking of the request bytes, framed by length or chunked, gets exactly registry.review(body)', async (t) => {
  const { port, ca } = await serve(t);
  await fc.assert(
    fc.asyncProperty(
      fc.array(requestArb, { minLength: 1, maxLength: 2 }),
      fc.array(fc.nat(), { maxLength: 24 }),
      fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
      fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 })), { maxLength: 32 }),
      async (requests, cuts, cutsInChars, delays) => {
        const bodies = requests.map((r) => reviewBody(r.uid, r.desired, r.objects));
        const wire = Buffer.concat(requests.map((r, i) => {
          const body = Buffer.from(bodies[i]!);
          if (r.framing === 'length') return withLength(r.path, body, { 'content-type': r.contentType });
          const inChars = insideCharacters(body);
          const bodyCuts = [...r.chunkCuts.map((c) => c % body.length), ...(inChars.length ? r.chunkCutsInChars.map((c) => inChars[c % inChars.length]!) : [])];
          return chunked(r.path, body, bodyCuts, r.framing === 'CHUNKED', r.contentType);
        }));
        const inChars = insideCharacters(wire);
        const bounds = [...new Set([0, ...cuts.map((c) => c % wire.length), ...(inChars.length ? cutsInChars.map((c) => inChars[c % inChars.length]!) : []), wire.length])].sort((a, b) => a - b);
        const pieces = bounds.slice(1).map((end, i) => wire.subarray(bounds[i], end));
        const got = await exchange(port, ca, (s) => writeAll(s, pieces, delays), requests.length);
        assert.equal(got.error, undefined, `no connection error (${got.responses.length} responses)`);
        assert.equal(got.responses.length, requests.length);
        got.responses.forEach((res, i) => {
          if (!declaresJson(requests[i]!.contentType)) {
            // Refused before its body is read; the body is skipped and the next request served.
            assert.equal(res.status, 415, res.body);
            return;
          }
          assert.equal(res.status, 200, res.body);
          assert.equal(res.headers['content-type'], 'application/json');
          assert.deepEqual(JSON.parse(res.body), registry.review(JSON.parse(bodies[i]!)));
        });
      },
    ),
    { numRuns: RUNS },
  );
});

test('a body over the default 32 MiB limit: the client, still sending, receives the whole 413 and no reset', async (t) => {
  const { port, ca } = await serve(t);
  const total = 40 * 1024 * 1024;
  const piece = Buffer.alloc(256 * 1024, 0x20);
  const got = await exchange(port, ca, (s) => writeAll(s, (function* () {
    yield Buffer.from(head('/convert', { 'content-type': 'application/json', 'content-length': total }));
    for (let sent = 0; sent < total; sent += piece.length) yield piece;
  })()), 1, 20_000, 200);
  assert.equal(got.responses[0]?.status, 413, `a 413 reaches the client (error: ${got.error})`);
  assert.equal(got.responses[0]?.body, 'request body too large\n');
  assert.equal(got.error, undefined, 'the client sends the rest of its body with neither a reset nor a stall');
});

test('maxBodyBytes: the limit is exact, for content-length and chunked bodies; a too large body is drained and the connection stays usable', async (t) => {
  const max = 64 * 1024;
  let calls = 0;
  const { port, ca } = await serve(t, { maxBodyBytes: max } as Partial<WebhookServerOptions>, { '/count': () => ({ calls: ++calls }) });
  const padded = (n: number) => Buffer.from(`{"n":1}${' '.repeat(n - 7)}`);
  const one = async (wire: Buffer, want = 1) => exchange(port, ca, (s) => writeAll(s, [wire]), want);

  const atLimit = await one(withLength('/count', padded(max)));
  assert.equal(atLimit.responses[0]?.status, 200, 'exactly maxBodyBytes is served');
  const atLimitChunked = await one(chunked('/count', padded(max), [1000, 40_000]));
  assert.equal(atLimitChunked.responses[0]?.status, 200, 'exactly maxBodyBytes, chunked, is served');
  assert.equal(calls, 2);

  const over = await one(withLength('/count', padded(max + 1)));
  assert.equal(over.responses[0]?.status, 413, 'one byte more is refused');
  // Chunked, 5 × the limit, then a second request on the same connection: the rest is drained
  // (never handed to the handler), the 413 arrives, and the next request is answered.
  const drained = await one(Buffer.concat([chunked('/count', padded(5 * max), [max - 1, max + 1, 2 * max]), withLength('/count', '{}')]), 2);
  assert.equal(drained.error, undefined);
  assert.deepEqual(drained.responses.map((r) => r.status), [413, 200], 'a 413, then the next request on the same connection');
  assert.deepEqual(JSON.parse(drained.responses[1]!.body), { calls: 3 });

  // Node's own client streaming 32 × the limit gets the 413 as its response, not an error.
  const streamed = await new Promise<{ status?: number; error?: string }>((resolve) => {
    const size = 32 * max;
    const req = request({ host: '127.0.0.1', port, path: '/count', method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json', 'content-length': size } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `${e.code}: ${e.message}` }));
    void (async () => {
      const piece = Buffer.alloc(16 * 1024, 0x20);
      for (let sent = 0; sent < size && !req.destroyed; sent += piece.length) {
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
  assert.deepEqual(streamed, { status: 413 }, 'a streaming client gets its 413');

  // Declared too large: refused at the headers, before the client sends a byte of it.
  const declared = await exchange(port, ca, (s) => writeAll(s, [Buffer.from(head('/count', { 'content-type': 'application/json', 'content-length': 1024 ** 3 }))]), 1, 3_000);
  assert.equal(declared.responses[0]?.status, 413, `a declared 1 GiB body is refused at once (${declared.error})`);
  assert.equal(calls, 3);
});

test('malformed input: 400 for what is not JSON, a Failure review for what is not a review, never a 500', async (t) => {
  const rejections = watchRejections(t);
  const { port, ca } = await serve(t, {}, {
    '/throws': () => { throw new Error('kaput'); },
    '/throws-string': () => { throw 'just a string'; },
    '/bigint': () => ({ n: 1n }),
  });
  const call = async (wire: Buffer | string) => {
    const got = await exchange(port, ca, (s) => writeAll(s, [Buffer.from(wire)]), 1, 3_000);
    assert.ok(got.responses[0], `an answer to ${JSON.stringify(String(wire).slice(0, 60))} (${got.error})`);
    return got.responses[0];
  };
  for (const body of ['{', '', 'nul', '{"a":1}}', '[1,]']) {
    assert.equal((await call(withLength('/convert', body))).status, 400, `not JSON: ${JSON.stringify(body)}`);
  }
  const notReviews: unknown[] = [5, 'x', null, [], true, {}, { request: null }, { request: { uid: 'u', desiredAPIVersion: 7, objects: [] } }, { request: { uid: 'u', desiredAPIVersion: 'toys.example.com/v2', objects: {} } }];
  const badObjects: unknown[][] = [
    [null], [3], ['box'], [[]], [{}],
    [{ apiVersion: 5, kind: 'Box', metadata: { name: 'a' } }],
    [{ apiVersion: { group: 'toys.example.com' }, kind: 'Box', metadata: { name: 'a' } }],
    [{ apiVersion: ['toys.example.com/v1'], kind: 'Box', metadata: { name: 'a' } }],
    [{ apiVersion: 'toys.example.com/v1', kind: 5, metadata: { name: 'a' } }],
    [{ apiVersion: 'toys.example.com/v1', kind: 'Box', metadata: { name: 'a' }, spec: { size: 1 } }, { apiVersion: 7 }],
  ];
  const cases = [...notReviews.map((r) => JSON.stringify(r)), ...badObjects.map((objects) => reviewBody('u', 'toys.example.com/v2', objects))];
  for (const body of cases) {
    let expected: unknown;
    assert.doesNotThrow(() => { expected = registry.review(JSON.parse(body)); }, `review() never throws: ${body}`);
    const res = await call(withLength('/convert', body));
    assert.equal(res.status, 200, `${body} → ${res.status} ${res.body}`);
    assert.deepEqual(JSON.parse(res.body), expected);
    assert.equal((expected as { response: { result: { status: string } } }).response.result.status, 'Failure', body);
  }
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    assert.equal((await call(head('/convert', { 'content-length': 0 }, method))).status, 405, method);
  }
  const headStatus = await new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/convert', method: 'HEAD', ca, agent: false }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('error', reject);
    req.end();
  });
  assert.equal(headStatus, 405, 'HEAD');
  const ok = reviewBody('q', 'toys.example.com/v2', []);
  assert.equal((await call(withLength('/convert?timeout=30s', ok))).status, 200, 'a query string (the API server sends ?timeout=) is served');
  assert.equal((await call(withLength('https://elsewhere.example/convert', ok))).status, 200, 'an absolute-form target is served by its path');
  for (const path of ['/convert/', '/CONVERT', '/', '/convert%2F', '*']) {
    assert.equal((await call(withLength(path, ok))).status, 404, path);
  }
  assert.equal((await call(withLength('http://[/', ok))).status, 400, 'a request target that is no URL');
  // An origin-form target is a path: `//host/convert` names no other host's /convert.
  for (const path of ['//elsewhere.example/convert', '//[', '//']) assert.equal((await call(withLength(path, ok))).status, 404, path);
  assert.equal((await call(withLength('/convert', ok))).status, 200, 'and the server still serves');
  assert.deepEqual(await call(withLength('/throws', '{}')).then((r) => [r.status, r.body]), [500, 'kaput\n']);
  assert.deepEqual(await call(withLength('/throws-string', '{}')).then((r) => [r.status, r.body]), [500, 'just a string\n']);
  assert.equal((await call(withLength('/bigint', '{}'))).status, 500, 'an answer JSON cannot hold');
  assert.deepEqual(rejections, [], 'no unhandled rejection');
});

test('a client that disconnects mid-body, repeatedly, leaves no unhandled rejection and the server serving', async (t) => {
  const rejections = watchRejections(t);
  const { port, ca } = await serve(t);
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port, ca }, () => {
        s.write(head('/convert', { 'content-type': 'application/json', 'content-length': 1000 }));
        s.write('{"apiVersion":"apiext');
        setTimeout(() => { s.destroy(); resolve(); }, 20);
      });
      s.on('error', () => undefined);
    });
  }
  await sleep(100);
  const got = await exchange(port, ca, (s) => writeAll(s, [withLength('/convert', reviewBody('after', 'toys.example.com/v2', []))]), 1);
  assert.equal(got.responses[0]?.status, 200);
  assert.deepEqual(rejections.map(String), [], 'no unhandled rejection');
});

test('start() settles within 2 s of the abort with stalled clients: no handshake, idle, headers only, a handler that never answers', async (t) => {
  let entered = 0;
  const { port, ca, stop, running } = await serve(t, {}, { '/hang': () => { entered++; return new Promise(() => undefined); } });
  const opened: { destroy(): void }[] = [];
  t.after(() => opened.forEach((s) => s.destroy()));
  const tcp = netConnect(port, '127.0.0.1');
  tcp.on('error', () => undefined);
  opened.push(tcp);
  const tls = (then: (s: TLSSocket) => void) => new Promise<void>((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, ca }, () => { then(s); resolve(); });
    s.on('error', () => undefined);
    opened.push(s);
  });
  await tls(() => undefined);
  await tls((s) => s.write(`${head('/convert', { 'content-type': 'application/json', 'content-length': 100 })}{"a`));
  await tls((s) => s.write(withLength('/hang', '{}')));
  await sleep(150);
  assert.equal(entered, 1, 'the hanging handler was called');
  const aborted = performance.now();
  stop.abort();
  const settled = await Promise.race([running.then(() => 'settled', (e: unknown) => `rejected: ${String(e)}`), sleep(2_000).then(() => 'still running')]);
  assert.equal(settled, 'settled', `start() settles within 2 s (after ${Math.round(performance.now() - aborted)} ms)`);
});

test('many concurrent requests on a few keep-alive connections: each answer matches its request', async (t) => {
  const { port, ca } = await serve(t);
  const agent = new Agent({ keepAlive: true, maxSockets: 4, ca });
  t.after(() => agent.destroy());
  const post = (body: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/convert', method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
  const bodies = Array.from({ length: 120 }, (_, i) => reviewBody(`uid-${i}`, i % 2 ? 'toys.example.com/v1' : 'toys.example.com/v2', [
    { apiVersion: 'toys.example.com/v1', kind: 'Box', metadata: { name: `b${i}`, annotations: { n: 'ü'.repeat(i) } }, spec: { size: i % 20 } },
  ]));
  const answers = await Promise.all(bodies.map(post));
  answers.forEach((a, i) => {
    assert.equal(a.status, 200);
    assert.deepEqual(JSON.parse(a.body), registry.review(JSON.parse(bodies[i]!)), `answer ${i}`);
  });
});

test('a certificate folder whose key does not match its certificate yet is not served; the matching pair is', async (t) => {
  const caDir = mkdtempSync(join(tmpdir(), 'converge-webhook-adv-ca-'));
  const certDir = mkdtempSync(join(tmpdir(), 'converge-webhook-adv-certs-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(caDir, { recursive: true, force: true }); rmSync(certDir, { recursive: true, force: true }); });
  const issued: { certPem: string; keyPem: string }[] = [];
  for (let i = 0; i < 2; i++) {
    const issuing = new AbortController();
    await new Promise<void>((resolve) => void selfManagedCertificates({ store: directoryCaStore(caDir) }).start(issuing.signal, (c) => { issued.push(c); issuing.abort(); resolve(); }));
  }
  const ca = readFileSync(join(caDir, 'ca.crt'), 'utf8');
  // Half-renewed: the new certificate, the old key.
  writeFileSync(join(certDir, 'tls.crt'), issued[1]!.certPem);
  writeFileSync(join(certDir, 'tls.key'), issued[0]!.keyPem);
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: certDirCertificates(certDir, { pollMs: 20 }) }).serveConversion(registry);
  const running = server.start(stop.signal).then(() => 'settled', (e: unknown) => `rejected: ${e instanceof Error ? e.message : String(e)}`);
  await sleep(150);
  assert.equal(server.ready().ok, false, 'a mismatched pair is not served');
  assert.equal(await Promise.race([running, sleep(0).then(() => 'running')]), 'running', 'start() does not fail on a half-written folder');
  writeFileSync(join(certDir, 'tls.key'), issued[1]!.keyPem);
  const listening = await Promise.race([server.listening().then((a) => a?.port, (e: unknown) => `rejected: ${String(e)}`), sleep(3_000).then(() => 'still pending')]);
  assert.equal(typeof listening, 'number', `listening() once the pair matches: ${listening}`);
  const got = await exchange(listening as number, ca, (s) => writeAll(s, [withLength('/convert', reviewBody('c', 'toys.example.com/v2', []))]), 1);
  assert.equal(got.responses[0]?.status, 200);
  stop.abort();
  assert.equal(await running, 'settled');
});

test('a first certificate that TLS refuses: start() and listening() both reject, neither hangs', async (t) => {
  const caDir = mkdtempSync(join(tmpdir(), 'converge-webhook-adv-ca-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(caDir, { recursive: true, force: true }); });
  const issued: { certPem: string; keyPem: string }[] = [];
  for (let i = 0; i < 2; i++) {
    const issuing = new AbortController();
    await new Promise<void>((resolve) => void selfManagedCertificates({ store: directoryCaStore(caDir) }).start(issuing.signal, (c) => { issued.push(c); issuing.abort(); resolve(); }));
  }
  const mismatched: CertificateSource = { start: async (_signal, onCertificate) => onCertificate({ certPem: issued[0]!.certPem, keyPem: issued[1]!.keyPem, notAfter: Date.now() + 60_000 }) };
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: mismatched }).serveConversion(registry);
  const outcome = (p: Promise<unknown>) => Promise.race([p.then(() => 'resolved', (e: unknown) => `rejected: ${e instanceof Error ? e.message : String(e)}`), sleep(1_000).then(() => 'pending')]);
  const [started, listening] = await Promise.all([outcome(server.start(stop.signal)), outcome(server.listening())]);
  assert.match(started, /^rejected: .*key values mismatch/);
  assert.match(listening, /^rejected: .*key values mismatch/, 'listening() rejects as start() does');
});
