import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { Registry } from 'prom-client';
import { WebhookServer } from './webhook-server.ts';
import { ConversionRegistry } from './conversion.ts';
import { toyBoxConversions } from './toy-box.test-support.ts';
import { certDirCertificates, directoryCaStore, ensureSelfManagedCa, selfManagedCertificates } from './certificates.ts';
import type { CertificateSource } from './certificates.ts';
import type { KubeObject } from '../objects/index.ts';
import { FakeClock } from '../clock/index.ts';
import { X509Certificate } from 'node:crypto';

interface Answer { status: number; body: string; fingerprint: string; contentType?: string }

function post(port: number, path: string, ca: string, body: string, method = 'POST', contentType: string | undefined = 'application/json'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, ca, headers: contentType === undefined ? {} : { 'content-type': contentType }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), contentType: res.headers['content-type'], fingerprint: (res.socket as unknown as { getPeerCertificate(): { fingerprint256: string } }).getPeerCertificate().fingerprint256 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const registry = toyBoxConversions();

/** A webhook server on 127.0.0.1 with a self-managed CA in a temporary folder, stopped after the test. */
async function served(t: TestContext, configure: (server: WebhookServer) => WebhookServer, options: { registry?: Registry } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(dir, { recursive: true, force: true }); });
  const server = configure(new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir) }), ...options }));
  const running = server.start(stop.signal);
  const { port } = (await server.listening())!;
  return { port, ca: readFileSync(join(dir, 'ca.crt'), 'utf8'), stop: async () => { stop.abort(); await running; } };
}

test('serves conversion over HTTPS with a self-managed CA shared through its folder; metrics count every object', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(dir, { recursive: true, force: true }); });
  const metrics = new Registry();
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir) }), registry: metrics }).serveConversion(registry);
  assert.equal(server.ready().ok, false);
  const running = server.start(stop.signal);
  const { port } = (await server.listening())!;
  assert.equal(server.ready().ok, true);
  const ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  assert.equal(server.caPem(), ca, 'the CA in the folder signs the serving certificate');

  const review = (desiredAPIVersion: string, objects: unknown[]) => JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'abc', desiredAPIVersion, objects } });
  const box = { apiVersion: 'toys.example.com/v1', kind: 'Box', metadata: { name: 'b', namespace: 'n', uid: 'u1' }, spec: { size: 3 } };
  const ok = await post(port, '/convert', ca, review('toys.example.com/v2', [box]));
  assert.equal(ok.status, 200);
  const parsed = JSON.parse(ok.body) as { response: { uid: string; result: { status: string }; convertedObjects: { spec: unknown; apiVersion: string }[] } };
  assert.equal(parsed.response.uid, 'abc');
  assert.equal(parsed.response.result.status, 'Success');
  assert.deepEqual(parsed.response.convertedObjects[0], { ...box, apiVersion: 'toys.example.com/v2', spec: { dimensions: { size: 3 } } });

  const unlucky = { ...box, apiVersion: 'toys.example.com/v2', spec: { dimensions: { size: 13 } } };
  const failed = JSON.parse((await post(port, '/convert', ca, review('toys.example.com/v1', [unlucky]))).body) as { response: { result: { status: string; message: string } } };
  assert.equal(failed.response.result.status, 'Failure');
  assert.match(failed.response.result.message, /Box n\/b: toys.example.com\/v2 → toys.example.com\/v1 failed: 13 is unlucky/);

  assert.equal((await post(port, '/convert', ca, '{', 'POST')).status, 400);
  assert.equal((await post(port, '/convert', ca, '', 'GET')).status, 405);
  assert.equal((await post(port, '/nothing', ca, '{}')).status, 404);

  const text = await metrics.metrics();
  assert.match(text, /converge_webhook_conversions_total\{kind="Box",from="v1",to="v2",result="success"\} 1/);
  assert.match(text, /converge_webhook_conversions_total\{kind="Box",from="v2",to="v1",result="failure"\} 1/);
  assert.match(text, /converge_webhook_requests_total\{path="\/convert",code="200"\} 2/);

  // A second server on the same folder reuses the CA (replicas share one caBundle).
  const other = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir) }) }).serveConversion(registry);
  const otherRunning = other.start(stop.signal);
  const otherPort = (await other.listening())!.port;
  assert.equal((await post(otherPort, '/convert', ca, review('toys.example.com/v2', [box]))).status, 200);
  stop.abort();
  await Promise.all([running, otherRunning]);
  assert.equal(server.ready().ok, false);
});

test('a body of another media type is refused with 415; a handler answer is always JSON, and one that cannot be sent is a 500 naming the path', async (t) => {
  const { port, ca, stop } = await served(t, (server) => server
    .handle('/echo', (body) => body)
    .handle('/nothing', () => undefined)
    .handle('/text', () => 'plain words')
    .handle('/cycle', () => { const o: Record<string, unknown> = {}; o.self = o; return o; }));

  for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON ;charset=UTF-8', undefined]) {
    assert.equal((await post(port, '/echo', ca, '{"a":1}', 'POST', type)).status, 200, String(type));
  }
  for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/jsonx']) {
    const refused = await post(port, '/echo', ca, '{"a":1}', 'POST', type);
    assert.equal(refused.status, 415, type);
    assert.match(refused.body, /application\/json/);
  }

  const nothing = await post(port, '/nothing', ca, '{}');
  assert.equal(nothing.status, 500);
  assert.match(nothing.body, /handler at \/nothing gave no answer/);
  const text = await post(port, '/text', ca, '{}');
  assert.equal(text.status, 200);
  assert.equal(text.contentType, 'application/json');
  assert.equal(JSON.parse(text.body), 'plain words');
  const cycle = await post(port, '/cycle', ca, '{}');
  assert.equal(cycle.status, 500);
  assert.match(cycle.body, /handler at \/cycle gave an answer that is not JSON/);
  await stop();
});

test('conversion metrics are labelled only with kinds and versions the registry serves: requests cannot grow them without bound', async (t) => {
  const metrics = new Registry();
  const { port, ca, stop } = await served(t, (server) => server.serveConversion(registry), { registry: metrics });
  const review = (desiredAPIVersion: unknown, objects: unknown[]) => JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u', desiredAPIVersion, objects } });
  const box = { apiVersion: 'toys.example.com/v1', kind: 'Box', metadata: { name: 'b', namespace: 'n', uid: 'u1' }, spec: { size: 3 } };
  assert.equal((await post(port, '/convert', ca, review('toys.example.com/v2', [box]))).status, 200);
  for (let i = 0; i < 40; i++) {
    const odd = [
      { ...box, kind: `Kind${i}` },
      { ...box, apiVersion: `toys.example.com/v${100 + i}` },
      { ...box, kind: { nested: i } },
      { ...box, kind: 'x'.repeat(10_000 + i) },
    ][i % 4];
    await post(port, '/convert', ca, review(i % 2 ? `toys.example.com/v${200 + i}` : 'toys.example.com/v2', [odd]));
  }
  const text = await metrics.metrics();
  const series = text.split('\n').filter((l) => l.startsWith('converge_webhook_conversions_total{'));
  assert.ok(series.length <= 4, `conversion series: ${series.length}\n${series.slice(0, 6).join('\n')}`);
  assert.ok(series.some((l) => l.includes('kind="Box",from="v1",to="v2",result="success"')), series.join('\n'));
  assert.ok(series.every((l) => /kind="(Box|other)",from="(v1|v2|v3|other)",to="(v1|v2|v3|other)"/.test(l)), series.join('\n'));
  assert.ok(text.length < 20_000, `metrics text of ${text.length} characters`);
  await stop();
});

test('a cert-manager style folder is served, and a renewed certificate is picked up without a restart', async (t) => {
  const caDir = mkdtempSync(join(tmpdir(), 'converge-webhook-ca-'));
  const certDir = mkdtempSync(join(tmpdir(), 'converge-webhook-certs-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(caDir, { recursive: true, force: true }); rmSync(certDir, { recursive: true, force: true }); });
  // Issue two certificates from one CA, as cert-manager would on renewal.
  const issued: { certPem: string; keyPem: string }[] = [];
  const issuer = selfManagedCertificates({ store: directoryCaStore(caDir), validityMs: 90_000 });
  const issuing = new AbortController();
  await new Promise<void>((resolve) => void issuer.start(issuing.signal, (c) => { issued.push(c); issuing.abort(); resolve(); }));
  const second = new AbortController();
  await new Promise<void>((resolve) => void issuer.start(second.signal, (c) => { issued.push(c); second.abort(); resolve(); }));
  const ca = readFileSync(join(caDir, 'ca.crt'), 'utf8');

  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: certDirCertificates(certDir, { pollMs: 50 }) }).serveConversion(registry);
  const running = server.start(stop.signal);
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(server.ready().ok, false, 'no certificate yet: not ready, not listening');
  writeFileSync(join(certDir, 'tls.crt'), issued[0]!.certPem);
  writeFileSync(join(certDir, 'tls.key'), issued[0]!.keyPem);
  const { port } = (await server.listening())!;
  const body = JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'x', desiredAPIVersion: 'toys.example.com/v2', objects: [] } });
  const first = await post(port, '/convert', ca, body);
  writeFileSync(join(certDir, 'tls.key'), issued[1]!.keyPem);
  writeFileSync(join(certDir, 'tls.crt'), issued[1]!.certPem);
  let renewed = first;
  for (let i = 0; i < 100 && renewed.fingerprint === first.fingerprint; i++) {
    await new Promise((r) => setTimeout(r, 50));
    renewed = await post(port, '/convert', ca, body);
  }
  assert.notEqual(renewed.fingerprint, first.fingerprint, 'the renewed certificate is served');
  assert.equal(renewed.status, 200);
  assert.ok(existsSync(join(certDir, 'tls.crt')));
  stop.abort();
  await running;
});

// Found by cert-rotation.adversarial.test.ts: a tls.crt holding a chain (cert-manager writes the
// leaf, then its CA), written in place and read with the leaf whole and the next block cut, was
// served: cut inside the next block's BEGIN line, OpenSSL ignored that block and the leaf went out
// alone (a client needing the intermediate failed its handshake); cut further on, OpenSSL refused
// the chain, and a server starting on it rejected instead of waiting for the rest.
/**
 * An empty cert folder, a serving pair issued by a CA of its own, and the chain cert-manager would
 * write (the leaf, then its CA); the folders go after the test, `stop` aborts then.
 */
async function certFolderAndChain(t: TestContext) {
  const caDir = mkdtempSync(join(tmpdir(), 'converge-webhook-ca-'));
  const certDir = mkdtempSync(join(tmpdir(), 'converge-webhook-certs-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(caDir, { recursive: true, force: true }); rmSync(certDir, { recursive: true, force: true }); });
  const issuing = new AbortController();
  const issued = await new Promise<{ certPem: string; keyPem: string }>((resolve) => void selfManagedCertificates({ store: directoryCaStore(caDir) }).start(issuing.signal, (c) => { issuing.abort(); resolve(c); }));
  const ca = readFileSync(join(caDir, 'ca.crt'), 'utf8');
  return { certDir, stop, issued, ca, chain: `${issued.certPem}${ca}` };
}

test('a tls.crt caught half-written with its chain cut short is retried, never served, and the server waits for the rest', async (t) => {
  const { certDir, stop, issued, ca, chain } = await certFolderAndChain(t);
  const source = certDirCertificates(certDir, { pollMs: 10 });
  const served: string[] = [];
  const recording: CertificateSource = { start: (signal, onCertificate) => source.start(signal, (c) => { served.push(c.certPem); onCertificate(c); }) };
  writeFileSync(join(certDir, 'tls.key'), issued.keyPem);
  writeFileSync(join(certDir, 'tls.crt'), chain.slice(0, issued.certPem.length + '-----BEG'.length));
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: recording }).serveConversion(registry);
  const running = server.start(stop.signal).then(() => 'settled', (e: unknown) => `rejected: ${e instanceof Error ? e.message : String(e)}`);
  await new Promise((r) => setTimeout(r, 150));
  assert.deepEqual(served, [], 'the leaf, cut inside the BEGIN line of its CA: not served');
  writeFileSync(join(certDir, 'tls.crt'), chain.slice(0, issued.certPem.length + 100));
  await new Promise((r) => setTimeout(r, 150));
  assert.deepEqual(served, [], 'cut inside the CA: not served');
  assert.equal(await Promise.race([running, new Promise((r) => setTimeout(r, 0, 'running'))]), 'running', 'start() waits for the rest');
  assert.equal(server.ready().ok, false);
  writeFileSync(join(certDir, 'tls.crt'), chain);
  const { port } = (await server.listening())!;
  assert.deepEqual(served, [chain], 'the whole chain, once');
  assert.equal((await post(port, '/convert', ca, JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'c', desiredAPIVersion: 'toys.example.com/v2', objects: [] } }))).status, 200);
  stop.abort();
  assert.equal(await running, 'settled');
});

test('a tls.crt caught between its two blocks (the leaf whole, its chain still to come) is not served: a new pair goes out once two reads agree', async (t) => {
  const { certDir, stop, issued, chain } = await certFolderAndChain(t);
  const served: string[] = [];
  const running = certDirCertificates(certDir, { pollMs: 10, settleMs: 300 }).start(stop.signal, (c) => void served.push(c.certPem));
  // Written in place, block by block: the leaf, then (20 ms later) the rest of the chain.
  writeFileSync(join(certDir, 'tls.key'), issued.keyPem);
  writeFileSync(join(certDir, 'tls.crt'), issued.certPem);
  await new Promise((r) => setTimeout(r, 20));
  writeFileSync(join(certDir, 'tls.crt'), chain);
  const deadline = Date.now() + 5_000;
  while (served.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(served, [chain], 'only the whole chain, once');
  stop.abort();
  await running;
});

test('self-managed: recheck() (a client refused the certificate) reads the store at once, at most every 5 s', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-recheck-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(dir, { recursive: true, force: true }); });
  const clock = new FakeClock();
  const certs: { caPem?: string }[] = [];
  const source = selfManagedCertificates({ store: directoryCaStore(dir), clock, caCheckMs: 600_000 });
  const running = source.start(stop.signal, (c) => void certs.push(c));
  const realTime = async (what: string, check: () => boolean) => {
    // Key generation and signing run on the real event loop; the fake clock does not move.
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(check(), what);
  };
  const replaceCa = async () => {
    const other = mkdtempSync(join(tmpdir(), 'converge-webhook-recheck-other-'));
    t.after(() => rmSync(other, { recursive: true, force: true }));
    const ca = await ensureSelfManagedCa(directoryCaStore(other));
    rmSync(join(dir, 'ca.crt'));
    rmSync(join(dir, 'ca.key'));
    writeFileSync(join(dir, 'ca.key'), readFileSync(join(other, 'ca.key')));
    writeFileSync(join(dir, 'ca.crt'), ca);
    return ca;
  };
  await realTime('the first certificate', () => certs.length === 1);
  const second = await replaceCa();
  source.recheck!();
  await realTime('followed at the recheck, long before the next scheduled look', () => certs.length === 2);
  assert.equal(certs[1]!.caPem, second);
  // Another refusal within 5 s is not acted on; one after is.
  const third = await replaceCa();
  await clock.advanceAsync(4_000);
  source.recheck!();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(certs.length, 2, 'a recheck within 5 s of the last one waits');
  await clock.advanceAsync(1_000);
  source.recheck!();
  await realTime('followed at a recheck 5 s later', () => certs.length === 3);
  assert.equal(certs[2]!.caPem, third);
  stop.abort();
  await running;
});

test('registry: identity and metadata other than labels and annotations come from the input', () => {
  const sneaky = new ConversionRegistry().register({
    group: 'toys.example.com', kind: 'Box', hub: 'v2',
    spokes: [{ version: 'v1', toHub: (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, name: 'renamed', uid: 'other', labels: { a: 'b' } } }), fromHub: (o: KubeObject) => o }],
  });
  const out = sneaky.convert({ apiVersion: 'toys.example.com/v1', kind: 'Box', metadata: { name: 'b', uid: 'u', resourceVersion: '5' } }, 'toys.example.com/v2');
  assert.deepEqual(out.metadata, { name: 'b', uid: 'u', resourceVersion: '5', labels: { a: 'b' } });
  assert.throws(() => sneaky.register({ group: 'toys.example.com', kind: 'Box', hub: 'v2', spokes: [] }), /already registered/);
  assert.throws(() => new ConversionRegistry().register({ group: 'g.io', kind: 'K', hub: 'v1', spokes: [{ version: 'v1', toHub: (o) => o, fromHub: (o) => o }] }), /differ from the hub/);
});

test('a CA folder left with a key and no certificate (a process killed between the two writes) is completed, not a start-up failure for ever', async (t) => {
  const { generateKeyPairSync, createPublicKey, X509Certificate } = await import('node:crypto');
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-orphan-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  writeFileSync(join(dir, 'ca.key'), keyPem, { mode: 0o600 });
  // Two processes start at once on the folder: both get the same, complete CA.
  const [a, b] = await Promise.all([ensureSelfManagedCa(directoryCaStore(dir)), ensureSelfManagedCa(directoryCaStore(dir))]);
  assert.equal(a, b, 'one certificate, shared');
  assert.equal(readFileSync(join(dir, 'ca.crt'), 'utf8'), a);
  const spki = (k: { export(o: { type: 'spki'; format: 'der' }): Buffer }) => k.export({ type: 'spki', format: 'der' }).toString('base64');
  assert.equal(spki(new X509Certificate(a).publicKey), spki(createPublicKey(keyPem)), 'the certificate is for the key in the folder');
  assert.equal(readFileSync(join(dir, 'ca.key'), 'utf8'), keyPem, 'the key is kept');
  // And the webhook serves with it: a client trusting that CA connects.
  const stop = new AbortController();
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir) }) }).serveConversion(registry);
  const running = server.start(stop.signal);
  t.after(async () => { stop.abort(); await running; });
  const { port } = (await server.listening())!;
  const answer = await post(port, '/convert', a, JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u', desiredAPIVersion: 'example.com/v2', objects: [] } }));
  assert.equal(answer.status, 200);
});

test('a CA folder whose key cannot be read as one is refused with what to do, never overwritten', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-badkey-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'ca.key'), '-----BEGIN PRIVATE KEY-----\nMIGH', { mode: 0o600 });
  await assert.rejects(ensureSelfManagedCa(directoryCaStore(dir)), /ca\.key holds no usable key and .*ca\.crt is missing .*remove the folder/);
  assert.equal(readFileSync(join(dir, 'ca.key'), 'utf8'), '-----BEGIN PRIVATE KEY-----\nMIGH', 'left as it was');
  assert.equal(existsSync(join(dir, 'ca.crt')), false);
});

test('a certificate the server cannot use (from any source) leaves the one it serves in place, and what it reports matches what it serves', async (t) => {
  const good = await served(t, (s) => s.serveConversion(registry));
  await good.stop();
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-bad-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(dir, { recursive: true, force: true }); });
  let hand: ((c: { certPem: string; keyPem: string; caPem?: string; notAfter: number }) => void) | undefined;
  const inner = selfManagedCertificates({ store: directoryCaStore(dir) });
  const source: CertificateSource = { start: (signal, onCertificate) => { hand = onCertificate; return inner.start(signal, onCertificate); } };
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: source }).serveConversion(registry);
  const running = server.start(stop.signal);
  const { port } = (await server.listening())!;
  const ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  const before = await post(port, '/convert', ca, '{}');
  const caBefore = server.caPem();
  assert.throws(() => hand!({ certPem: '-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n', keyPem: 'no key', caPem: 'another CA', notAfter: 0 }), 'the source hears that the certificate was refused');
  assert.equal(server.caPem(), caBefore, 'caPem() still names the CA of the certificate served');
  const after = await post(port, '/convert', ca, '{}');
  assert.equal(after.fingerprint, before.fingerprint, 'the same certificate is served');
  assert.equal(server.ready().ok, true);
  stop.abort();
  await running;
});

test('self-managed: a replica follows the CA its store holds now (replaced by another replica or by hand), and puts its CA back when the store lost it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-webhook-follow-'));
  const otherDir = mkdtempSync(join(tmpdir(), 'converge-webhook-other-'));
  const stop = new AbortController();
  t.after(() => { stop.abort(); rmSync(dir, { recursive: true, force: true }); rmSync(otherDir, { recursive: true, force: true }); });
  const clock = new FakeClock();
  const certs: { certPem: string; caPem?: string }[] = [];
  const running = selfManagedCertificates({ store: directoryCaStore(dir), clock, caCheckMs: 1_000 }).start(stop.signal, (c) => void certs.push(c));
  const until = async (what: string, check: () => boolean) => {
    // Key generation and signing run on the real event loop: give them real time too.
    for (let i = 0; i < 200 && !check(); i++) {
      await clock.advanceAsync(100);
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.ok(check(), what);
  };
  const settle = async (ms: number) => {
    for (let i = 0; i < ms / 100; i++) {
      await clock.advanceAsync(100);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await until('the first certificate', () => certs.length === 1);
  const first = certs[0]!;
  assert.equal(first.caPem, readFileSync(join(dir, 'ca.crt'), 'utf8'));

  // Another CA in the store (the Secret deleted, and made again by a replica that started since).
  const otherCa = await ensureSelfManagedCa(directoryCaStore(otherDir));
  rmSync(join(dir, 'ca.crt'));
  rmSync(join(dir, 'ca.key'));
  writeFileSync(join(dir, 'ca.key'), readFileSync(join(otherDir, 'ca.key')));
  writeFileSync(join(dir, 'ca.crt'), otherCa);
  await until('a certificate from the CA the store holds now', () => certs.length === 2);
  assert.equal(certs[1]!.caPem, otherCa);
  assert.ok(new X509Certificate(certs[1]!.certPem).verify(new X509Certificate(otherCa).publicKey), 'signed by that CA');

  // The store lost its CA: this replica's is put back (replicas starting later take it), no new certificate.
  rmSync(join(dir, 'ca.crt'));
  rmSync(join(dir, 'ca.key'));
  await until('the CA put back', () => existsSync(join(dir, 'ca.crt')));
  assert.equal(readFileSync(join(dir, 'ca.crt'), 'utf8'), otherCa);
  await settle(3_000);
  assert.equal(certs.length, 2);

  // A store whose CA cannot be used (garbage) is not followed.
  rmSync(join(dir, 'ca.crt'));
  writeFileSync(join(dir, 'ca.crt'), 'not a certificate');
  await settle(3_000);
  assert.equal(certs.length, 2, 'an unusable CA in the store is not followed');
  stop.abort();
  await running;
});
