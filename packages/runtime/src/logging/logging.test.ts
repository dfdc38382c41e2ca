import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/index.ts';
import { createLogger, childLoggerFor, redact, serializeError, REDACTED } from './index.ts';

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
