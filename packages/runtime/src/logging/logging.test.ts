import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError } from '../client/index.ts';
import { createLogger, childLoggerFor, redact, scrubCredentials, serializeError, REDACTED } from './index.ts';

const CANARY = 'canary-5f1c9e0b-do-not-log';

function capture(level = 'trace') {
  const lines: string[] = [];
  const log = createLogger({ level, name: 'test', destination: { write: (s: string) => void lines.push(s) } });
  return { log, lines, text: () => lines.join('') };
}

describe('createLogger', () => {
  it('writes JSON lines with level label, time, msg, logger', () => {
    const { log, lines } = capture('info');
    log.debug('hidden');
    log.info({ a: 1 }, 'hello');
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.level, 'info');
    assert.equal(line.msg, 'hello');
    assert.equal(line.logger, 'test');
    assert.equal(line.a, 1);
    assert.ok(!Number.isNaN(Date.parse(line.time)));
  });

  it('rejects unknown levels', () => {
    assert.throws(() => createLogger({ level: 'verbose' }), RangeError);
    assert.equal(createLogger({ level: 'WARN', destination: { write() {} } }).level, 'warn');
  });

  it('never writes a canary placed in secret-bearing fields', () => {
    const { log, text } = capture();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'ns' },
      data: { password: Buffer.from(CANARY).toString('base64'), plain: CANARY },
      stringData: { key: CANARY },
    };
    const original = structuredClone(secret);
    log.info({ object: secret }, 'read a secret');
    log.info({ items: [secret, { kind: 'Secret', data: { x: CANARY } }] }, 'listed');
    log.info({ headers: { Authorization: `Bearer ${CANARY}`, 'x-api-key': CANARY, cookie: CANARY } }, 'request');
    log.info({ user: { token: CANARY, password: CANARY, 'client-key-data': CANARY, client_secret: CANARY } }, 'kubeconfig');
    log.info({ deep: { a: { b: { c: { apiKey: CANARY, accessToken: CANARY, refresh_token: CANARY } } } } }, 'deep');
    log.child({ token: CANARY, ctx: { authorization: CANARY } }).info('child bindings');
    log.child({ a: 1 }).child({ password: CANARY }).info('grandchild bindings');
    const c = log.child({ b: 2 });
    c.setBindings({ apiKey: CANARY });
    c.info('set bindings');
    childLoggerFor(log, 'c', { namespace: 'n', name: 'x' }, 'r1').warn({ secret }, 'in reconcile');
    assert.ok(!text().includes(CANARY), text());
    assert.ok(!text().includes(Buffer.from(CANARY).toString('base64')));
    assert.ok(text().includes(REDACTED));
    assert.deepEqual(secret, original, 'the logged object is not mutated');
  });

  it('a SecretList as the API server sends it (items without kind) writes no Secret data', () => {
    const { log, text } = capture();
    const list = {
      apiVersion: 'v1',
      kind: 'SecretList',
      metadata: { resourceVersion: '7' },
      items: [
        { metadata: { name: 'db', namespace: 'ns' }, type: 'Opaque', data: { 'db.conf': Buffer.from(CANARY).toString('base64') }, stringData: { k: CANARY } },
        { metadata: { name: 'tls', namespace: 'ns' }, data: { 'tls.key': CANARY }, binaryData: { b: CANARY } },
      ],
    };
    log.info({ list }, 'listed secrets');
    assert.ok(!text().includes(CANARY), text());
    assert.ok(!text().includes(Buffer.from(CANARY).toString('base64')), text());
    assert.ok(text().includes('"name":"db"') && text().includes(REDACTED), 'the items are there, their data redacted');
  });

  it('a first argument pino cannot read (revoked Proxy, throwing trap or getter) is logged as [Unreadable], never thrown', () => {
    const { log, lines } = capture();
    const revocable = Proxy.revocable({ apiKey: CANARY }, {});
    revocable.revoke();
    const trapping = new Proxy({ token: CANARY }, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } });
    const getter = { name: 'ok', password: CANARY, get method(): string { throw new Error('getter'); } };
    for (const hostile of [revocable.proxy, trapping, getter]) {
      assert.doesNotThrow(() => log.info(hostile));
      assert.doesNotThrow(() => log.warn(hostile, 'with a message %s', 'and an argument'));
    }
    assert.equal(lines.length, 6, 'one line per call');
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line));
    assert.ok(!lines.join('').includes(CANARY), 'nothing secret written');
    assert.equal(JSON.parse(lines[5]!).msg, 'with a message and an argument');
    assert.equal(JSON.parse(lines[5]!).value, '[Unreadable]', 'an object that throws when read is [Unreadable], as redaction writes it');
  });

  it('logs errors without request headers or bodies, under any key', () => {
    const { log, lines, text } = capture();
    const inner = Object.assign(new Error('connect ECONNREFUSED'), {
      code: 'ECONNREFUSED',
      options: { headers: { authorization: `Bearer ${CANARY}` } },
      config: { headers: { Authorization: CANARY } },
    });
    const err = new ApiError({ reason: 'Network', code: 0, message: 'network error', cause: inner });
    (err as unknown as { request: unknown }).request = { headers: { authorization: CANARY }, body: CANARY };
    log.error({ err }, 'failed');
    log.error(err, 'failed again');
    log.warn({ error: inner, other: inner }, 'other keys');
    assert.ok(!text().includes(CANARY), text());
    const line = JSON.parse(lines[0]!);
    assert.equal(line.err.type, 'ApiError');
    assert.equal(line.err.reason, 'Network');
    assert.equal(line.err.cause.code, 'ECONNREFUSED');
    assert.match(line.err.stack, /ApiError|network error/);
    assert.equal(JSON.parse(lines[1]!).err.reason, 'Network');
    assert.equal(JSON.parse(lines[2]!).other.message, 'connect ECONNREFUSED');
  });

  it('childLoggerFor carries controller-runtime field names', () => {
    const { log, lines } = capture();
    childLoggerFor(log, 'mirror', { namespace: 'ns', name: 'cm' }, 'abc').info('reconciling');
    const line = JSON.parse(lines[0]!);
    assert.deepEqual([line.controller, line.namespace, line.name, line.reconcileID, line.logger], ['mirror', 'ns', 'cm', 'abc', 'test']);
  });
});

describe('redact', () => {
  it('returns clean objects unchanged (same reference) and handles cycles', () => {
    const clean = { a: { b: [1, 2, { c: 'x' }] } };
    assert.equal(redact(clean), clean);
    const cyclic: Record<string, unknown> = { token: CANARY };
    cyclic.self = cyclic;
    const out = redact(cyclic) as Record<string, unknown>;
    assert.equal(out.token, REDACTED);
    assert.equal(out.self, '[Circular]');
  });
  it('leaves ConfigMap data alone', () => {
    const cm = { kind: 'ConfigMap', data: { k: 'visible' } };
    assert.equal(redact(cm), cm);
  });
  it('serializeError handles non-errors and deep cause chains', () => {
    assert.deepEqual(serializeError('boom'), { type: 'string', message: 'boom' });
    let e: Error = new Error('e0');
    for (let i = 1; i < 10; i++) e = new Error(`e${i}`, { cause: e });
    let s: unknown = serializeError(e);
    let depth = 0;
    while (s && typeof s === 'object' && 'cause' in s) {
      s = (s as { cause: unknown }).cause;
      depth++;
    }
    assert.equal(s, '[Truncated]');
    assert.equal(depth, 5);
  });
});

describe('scrubCredentials', () => {
  it('takes keyed values, bearer tokens, JWTs and long base64 runs out of text; keeps the rest', () => {
    const cases: [string, string][] = [
      ['refresh failed: refresh_token=rt-SECRET-123 rejected', 'refresh failed: refresh_token=[redacted] rejected'],
      ['{"access_token": "a b", "expires_in": 3600}', '{"access_token": [redacted], "expires_in": 3600}'],
      ["Password: 'hunter 2'; client-secret=xyz, AWS_SECRET_ACCESS_KEY=wJalr/K7MDENG", 'Password: [redacted]; client-secret=[redacted], AWS_SECRET_ACCESS_KEY=[redacted]'],
      ['Authorization: Basic YTpi and later Bearer abc.def', 'Authorization: Basic [redacted] and later Bearer [redacted]'],
      ['GET /cb?access_token=abc&state=1', 'GET /cb?access_token=[redacted]&state=1'],
      ['id eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln ok', 'id [redacted] ok'],
      ['key QUtJQVNFQ1JFVEtFWS0wMTIzNDU2Nzg5YWJjZGVm== ok', 'key [redacted] ok'],
    ];
    for (const [text, want] of cases) assert.equal(scrubCredentials(text), want);
    // What a person needs stays: paths, object names, hashes, advice.
    const plain = 'exec /usr/local/bin/gke-gcloud-auth-plugin: pod kube-system/coredns-5d78c9869d-abcde, sha 3f786850e387550fdab836ed7e6dc881de23001b; run `aws sso login`';
    assert.equal(scrubCredentials(plain), plain);
  });

  it('property: a value after a credential key never survives, whatever surrounds it; linear on hostile input (fast-check)', () => {
    const key = fc.constantFrom('token', 'refresh_token', 'ACCESS_TOKEN', 'id-token', 'client_secret', 'password', 'passwd', 'apiKey', 'x-api-key', 'aws_secret_access_key', 'clientKeyData', 'Authorization', 'session');
    const sep = fc.constantFrom('=', ': ', ' = ', '":"', '": "', ':');
    const value = fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,40}$/).map((v) => `V4L-${v}`);
    const around = fc.string({ maxLength: 20 }).map((s) => s.replace(/[\w.-]$/, ''));
    fc.assert(
      fc.property(around, key, sep, value, fc.string({ maxLength: 20 }), (before, k, s, v, after) => {
        const text = `${before} ${k}${s}${s.endsWith('"') ? `${v}"` : v}${/^[\s,;"'&]/.test(after) ? after : ` ${after}`}`;
        assert.ok(!scrubCredentials(text).includes(v), text);
      }),
      { numRuns: 300 },
    );
    for (const hostile of ['tokentoken'.repeat(100_000), ('token' + ' '.repeat(1000)).repeat(1000), 'password="'.repeat(100_000), 'eyJa.'.repeat(200_000)]) {
      const started = performance.now();
      scrubCredentials(hostile);
      assert.ok(performance.now() - started < 2_000, `took ${Math.round(performance.now() - started)} ms`);
    }
  });
});
