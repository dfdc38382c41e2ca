import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Credentials, KubeConfig, KubeConfigError, parseExecCredential } from './index.ts';
import type { ExecConfig, KubeConfigCluster, KubeConfigUser } from './index.ts';

const made: string[] = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'converge-credentials-'));
  made.push(d);
  return d;
}

function config(user: Partial<KubeConfigUser>, cluster: Partial<KubeConfigCluster> = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', ...cluster }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  kc.source = '/test/kubeconfig';
  return kc;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
/** Shaped as a PEM certificate; nothing here parses it. */
const CA_PEM = '-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n';

/**
 * An exec credential plugin as a small shell script: it counts its runs in `runs`, saves the
 * KUBERNETES_EXEC_INFO and FOO it was given, and prints `out` (re-read on every run, so a test
 * can change what the next run prints).
 */
function plugin(d: string): { exec: (apiVersion: string, extra?: Partial<ExecConfig>) => ExecConfig; print: (doc: unknown) => void; runs: () => number; info: () => unknown } {
  const script = join(d, 'plugin.sh');
  writeFileSync(
    script,
    `#!/bin/sh\necho x >> "${d}/runs"\nprintf '%s' "$KUBERNETES_EXEC_INFO" > "${d}/info"\nprintf '%s' "$FOO" > "${d}/foo"\n` +
      `if [ -f "${d}/fail" ]; then echo "plugin says: $(cat "${d}/fail")" >&2; exit 3; fi\ncat "${d}/out"\n`,
  );
  chmodSync(script, 0o755);
  return {
    exec: (apiVersion, extra = {}) => ({ command: script, apiVersion, env: [{ name: 'FOO', value: 'bar' }], ...extra }),
    print: (doc) => writeFileSync(join(d, 'out'), JSON.stringify(doc)),
    runs: () => {
      try {
        return readFileSync(join(d, 'runs'), 'utf8').trim().split('\n').length;
      } catch {
        return 0;
      }
    },
    info: () => JSON.parse(readFileSync(join(d, 'info'), 'utf8')),
  };
}

describe('static credentials', () => {
  it('bearer token, impersonation, basic auth; a token and basic auth together refused, as kubectl', async () => {
    assert.deepEqual(await new Credentials(config({ token: 'abc', impersonateUser: 'jane' })).headers(), { authorization: 'Bearer abc', 'impersonate-user': 'jane' });
    assert.deepEqual(await new Credentials(config({ username: 'a', password: 'b' })).headers(), { authorization: `Basic ${b64('a:b')}` });
    assert.throws(() => new Credentials(config({ token: 'SECRET', username: 'a', password: 'b' })), (e: Error) => /user "u" has both a token and a username\/password.*only one/.test(e.message) && !e.message.includes('SECRET'));
    assert.deepEqual(await new Credentials(config({})).headers(), {});
  });

  it('impersonation as kubectl sends it: the user, each group, the UID and each extra value; groups, UID or extra without a user refused', async () => {
    const headers = await new Credentials(config({ token: 'abc', impersonateUser: 'deploy-bot', impersonateGroups: ['platform-admins', 'system:authenticated'], impersonateUid: '1234', impersonateExtra: { scopes: ['view', 'development'], 'acme.com/project': ['x y'] } })).headers();
    assert.deepEqual(headers, {
      authorization: 'Bearer abc',
      'impersonate-user': 'deploy-bot',
      'impersonate-group': ['platform-admins', 'system:authenticated'],
      'impersonate-uid': '1234',
      'impersonate-extra-scopes': ['view', 'development'],
      'impersonate-extra-acme.com%2Fproject': ['x y'],
    });
    assert.throws(() => new Credentials(config({ token: 'abc', impersonateGroups: ['platform-admins'] })), /impersonat.*groups.*without.*user|without impersonating a user/);
    // Names outside ASCII go as their UTF-8 bytes (Node writes header strings as Latin-1); a
    // control character cannot go at all (the file's test against the API server shows the rest).
    const utf8 = await new Credentials(config({ impersonateUser: 'jürgen', impersonateGroups: ['開発'] })).headers();
    assert.deepEqual(Buffer.from(utf8['impersonate-user'] as string, 'latin1').toString('utf8'), 'jürgen');
    assert.deepEqual((utf8['impersonate-group'] as string[]).map((g) => Buffer.from(g, 'latin1').toString('utf8')), ['開発']);
    assert.throws(() => new Credentials(config({ impersonateUser: 'bot\n' })), /user "u": as holds a line break or another control character/);
    assert.throws(() => new Credentials(config({ impersonateUser: 'bot', impersonateExtra: { k: ['a\rb'] } })), /user "u": as-user-extra holds a line break/);
    // A YAML `token: |` block keeps its last line break: every request would fail as a "network error".
    assert.throws(() => new Credentials(config({ token: 'abc\n' })), (e: Error) => /user "u": token holds a line break or another control character.*"\|-"/.test(e.message) && !e.message.includes('abc'));
    assert.throws(() => new Credentials(config({ tokenFile: '/nonexistent/token', token: 'abc\n' })), /user "u": token holds a line break/, 'also as the fallback of a token file');
  });

  it('a token file wins over a token, which stays the fallback while the file cannot be read (client-go)', async () => {
    const d = dir();
    const file = join(d, 'token');
    writeFileSync(file, 'from-file');
    assert.deepEqual(await new Credentials(config({ token: 'static', tokenFile: file })).headers(), { authorization: 'Bearer from-file' });
    assert.deepEqual(await new Credentials(config({ token: 'static', tokenFile: join(d, 'none') })).headers(), { authorization: 'Bearer static' });
  });

  it('an exec plugin is not run when the user also has basic auth or a client certificate (client-go)', async () => {
    const d = dir();
    const p = plugin(d);
    p.print({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-plugin' } });
    const exec = p.exec('client.authentication.k8s.io/v1');
    assert.deepEqual(await new Credentials(config({ username: 'a', password: 'b', exec })).headers(), { authorization: `Basic ${b64('a:b')}` });
    const withCert = new Credentials(config({ certData: b64('CERT'), keyData: b64('KEY'), exec }));
    assert.deepEqual(await withCert.headers(), {});
    assert.equal((await withCert.tls()).cert, 'CERT');
    assert.equal(withCert.dynamic, false);
    assert.equal(p.runs(), 0);
  });

  it('TLS from data and from files; tls-server-name; insecure-skip-tls-verify', async () => {
    const d = dir();
    writeFileSync(join(d, 'ca.pem'), CA_PEM);
    writeFileSync(join(d, 'c.crt'), 'CERT-PEM');
    writeFileSync(join(d, 'c.key'), 'KEY-PEM');
    const fromFiles = await new Credentials(config({ certFile: join(d, 'c.crt'), keyFile: join(d, 'c.key') }, { caFile: join(d, 'ca.pem'), tlsServerName: 'kubernetes' })).tls();
    assert.deepEqual({ ...fromFiles, id: '' }, { id: '', ca: CA_PEM, cert: 'CERT-PEM', key: 'KEY-PEM', rejectUnauthorized: true, servername: 'kubernetes' });
    const fromData = await new Credentials(config({ certData: b64('C'), keyData: b64('K') }, { caData: b64(CA_PEM) })).tls();
    assert.deepEqual({ ...fromData, id: '' }, { id: '', ca: CA_PEM, cert: 'C', key: 'K', rejectUnauthorized: true });
    const insecure = await new Credentials(config({}, { skipTLSVerify: true })).tls();
    assert.equal(insecure.rejectUnauthorized, false);
  });

  it('refuses what kubectl refuses, naming the file and never the secret', () => {
    assert.throws(() => new Credentials(config({}, { skipTLSVerify: true, caData: b64('A') })), /\/test\/kubeconfig: cluster "c" sets both insecure-skip-tls-verify and a certificate authority/);
    assert.throws(() => new Credentials(config({ certData: b64('C') })), /user "u" has a client certificate without a key/);
    assert.throws(() => new Credentials(config({ certFile: '/nonexistent/c.crt', keyData: b64('K') })), /cannot read the client certificate \/nonexistent\/c\.crt: ENOENT/);
    assert.throws(() => new Credentials(config({ authProvider: { name: 'oidc', config: { 'id-token': 'SECRET' } } })), (e: Error) => /auth-provider "oidc", which is not supported.*exec credential plugin/.test(e.message) && !e.message.includes('SECRET'));
    assert.throws(() => new Credentials(config({}, { server: '' })), /cluster "c" has no server/);
    // A KubeConfig built in code reads its -data as a loaded file does (data-field.ts): a PEM where
    // its base64 belongs would otherwise trust no CA at all.
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    assert.throws(() => new Credentials(config({}, { caData: pem })), (e: Error) => /cluster "c": certificate-authority-data is not base64 \(at input byte 0\)/.test(e.message) && !e.message.includes('MIIB'));
    assert.throws(() => new Credentials(config({ certData: b64('C'), keyData: 'S0V' })), /user "u": client-key-data is not base64 \(at input byte 0\)/);
    // A CA that holds no PEM certificate (a DER file, the key by mistake, base64 of anything else)
    // is taken by Node as a bundle that trusts no server: every request would fail TLS verification.
    const d = dir();
    writeFileSync(join(d, 'ca.der'), Buffer.from([0x30, 0x82, 0x01, 0x0a, 0x02]));
    assert.throws(() => new Credentials(config({}, { caFile: join(d, 'ca.der') })), new RegExp(`cluster "c": the certificate authority ${join(d, 'ca.der').replace(/[.]/g, '\\.')} holds no PEM certificate`));
    assert.throws(() => new Credentials(config({}, { caData: b64('-----BEGIN PRIVATE KEY-----\nSECRET\n') })), (e: Error) => /cluster "c": certificate-authority-data holds no PEM certificate/.test(e.message) && !e.message.includes('SECRET'));
    assert.throws(() => new Credentials(config({}, { server: 'ftp://x' })), /is neither https:\/\/ nor http:\/\//);
    // kubectl refuses a proxy it cannot use; Node's agent ignored it, and requests went around it.
    assert.throws(() => new Credentials(config({}, { proxyUrl: 'ftp://user:SECRET@proxy.example:21' })), (e: Error) => /cluster "c": proxy-url has the scheme "ftp"; use http, https or socks5, as kubectl/.test(e.message) && !e.message.includes('SECRET'));
    assert.throws(() => new Credentials(config({}, { proxyUrl: 'not a url' })), /cluster "c": proxy-url is not a URL/);
    for (const ok of ['http://proxy.example:3128', 'https://u:p@proxy.example', 'socks5://127.0.0.1:1080']) assert.equal(new Credentials(config({}, { proxyUrl: ok })).proxyUrl, ok);
    const kc = config({});
    kc.currentContext = '';
    assert.throws(() => new Credentials(kc), /has no current context/);
    kc.currentContext = 'other';
    assert.throws(() => new Credentials(kc), /the current context "other" is not defined/);
  });

  it('accepts a plain http:// server, as kubectl does (issue 18, item 4)', async () => {
    const c = new Credentials(config({ token: 't' }, { server: 'http://127.0.0.1:8001/' }));
    assert.equal(c.protocol, 'http:');
    assert.equal(c.server, 'http://127.0.0.1:8001');
    assert.deepEqual(await c.headers(), { authorization: 'Bearer t' });
  });
});

describe('token files', () => {
  it('re-reads a rotated token once the check interval has passed, and keeps the last one while the file is briefly gone', async () => {
    const d = dir();
    const file = join(d, 'token');
    writeFileSync(file, 'first\n');
    let now = 0;
    const c = new Credentials(config({ tokenFile: file }), { tokenFileCheckMs: 1000, monotonic: () => now });
    assert.equal(c.dynamic, true);
    assert.deepEqual(await c.headers(), { authorization: 'Bearer first' });
    // The kubelet swaps the file atomically.
    writeFileSync(join(d, 'token.new'), 'second-longer');
    renameSync(join(d, 'token.new'), file);
    now = 500;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer first' }, 'within the interval: the cached token');
    now = 1000;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer second-longer' });
    renameSync(file, join(d, 'moved'));
    now = 2500;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer second-longer' });
  });

  it('a 401 makes the next request read the file at once', async () => {
    const d = dir();
    const file = join(d, 'token');
    writeFileSync(file, 'one');
    const c = new Credentials(config({ tokenFile: file }), { tokenFileCheckMs: 60_000, monotonic: () => 0 });
    assert.deepEqual(await c.headers(), { authorization: 'Bearer one' });
    writeFileSync(file, 'two');
    c.invalidate();
    assert.deepEqual(await c.headers(), { authorization: 'Bearer two' });
    writeFileSync(file, 'three');
    c.invalidate({ authorization: 'Bearer one' });
    assert.deepEqual(await c.headers(), { authorization: 'Bearer two' }, 'a late 401 for a token already replaced reads nothing');
    c.invalidate({ authorization: 'Bearer two' });
    assert.deepEqual(await c.headers(), { authorization: 'Bearer three' });
  });

  it('once a token was read, a file caught mid-write (empty) or unreadable keeps it, as client-go keeps its last token on any read error', async () => {
    const d = dir();
    const file = join(d, 'token');
    writeFileSync(file, 'first');
    let now = 0;
    const c = new Credentials(config({ tokenFile: file }), { tokenFileCheckMs: 1000, monotonic: () => now });
    assert.deepEqual(await c.headers(), { authorization: 'Bearer first' });
    writeFileSync(file, ''); // a writer that truncates, then writes
    now = 1000;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer first' }, 'empty for a moment');
    writeFileSync(file, 'second');
    now = 1001;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer second' }, 'written: read at the next request');
    renameSync(file, join(d, 'moved'));
    mkdirSync(file);
    now = 3000;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer second' }, 'not a file (EISDIR)');
  });

  it('an unreadable or empty token file is an error naming the file', async () => {
    const d = dir();
    await assert.rejects(new Credentials(config({ tokenFile: join(d, 'none') })).headers(), /cannot read token file .*none: ENOENT/);
    writeFileSync(join(d, 'empty'), '\n');
    await assert.rejects(new Credentials(config({ tokenFile: join(d, 'empty') })).headers(), /token file .*empty is empty/);
  });
});

describe('exec credential plugins', () => {
  it('v1: runs the plugin with KUBERNETES_EXEC_INFO and its env, and caches the token until expirationTimestamp', async () => {
    const d = dir();
    const p = plugin(d);
    let now = Date.parse('2030-01-01T00:00:00Z');
    p.print({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'tok-1', expirationTimestamp: '2030-01-01T00:10:00Z' } });
    const c = new Credentials(config({ exec: p.exec('client.authentication.k8s.io/v1', { provideClusterInfo: true, interactiveMode: 'Never' }) }, { caData: b64(CA_PEM) }), { exec: { now: () => now } });
    const [a, b] = await Promise.all([c.headers(), c.headers()]);
    assert.deepEqual(a, { authorization: 'Bearer tok-1' });
    assert.deepEqual(b, a);
    assert.equal(p.runs(), 1, 'concurrent callers share one run');
    assert.deepEqual(p.info(), {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false, cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64(CA_PEM) } },
    });
    assert.equal(readFileSync(join(d, 'foo'), 'utf8'), 'bar', 'exec.env reaches the plugin');
    now += 9 * 60_000;
    await c.headers();
    assert.equal(p.runs(), 1, 'cached until it expires');
    p.print({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'tok-2' } });
    now += 60_000;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer tok-2' });
    assert.equal(p.runs(), 2, 'run again once expired');
    await c.headers();
    assert.equal(p.runs(), 2, 'no expiry: kept …');
    c.invalidate();
    await c.headers();
    assert.equal(p.runs(), 3, '… until a 401 invalidates it');
  });

  it('v1beta1: a client certificate and key, with a new TLS id when the certificate changes', async () => {
    const d = dir();
    const p = plugin(d);
    p.print({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { clientCertificateData: 'CERT-1', clientKeyData: 'KEY-1' } });
    const c = new Credentials(config({ exec: p.exec('client.authentication.k8s.io/v1beta1') }));
    const first = await c.tls();
    assert.equal(first.cert, 'CERT-1');
    assert.equal(first.key, 'KEY-1');
    assert.deepEqual(await c.headers(), {});
    assert.deepEqual(p.info(), { apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', spec: { interactive: false } });
    assert.equal((await c.tls()).id, first.id, 'same certificate, same connections');
    p.print({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { clientCertificateData: 'CERT-2', clientKeyData: 'KEY-2' } });
    c.invalidate();
    const second = await c.tls();
    assert.equal(second.cert, 'CERT-2');
    assert.notEqual(second.id, first.id);
    c.invalidate({ tlsId: first.id });
    assert.equal((await c.tls()).id, second.id, 'a late 401 for the first certificate keeps the second');
    assert.equal(p.runs(), 2);
    c.invalidate({ tlsId: second.id });
    await c.tls();
    assert.equal(p.runs(), 3, 'a 401 for the current certificate runs the plugin');
  });

  it('a static token wins over the plugin (client-go: an Authorization header already set is kept)', async () => {
    const d = dir();
    const p = plugin(d);
    const c = new Credentials(config({ token: 'static', exec: p.exec('client.authentication.k8s.io/v1') }));
    assert.deepEqual(await c.headers(), { authorization: 'Bearer static' });
    assert.equal(p.runs(), 0);
  });

  it('failures say which plugin, why, and what the plugin said on stderr; never what it printed on stdout', async () => {
    const d = dir();
    const p = plugin(d);
    writeFileSync(join(d, 'fail'), 'token expired, run login');
    const failing = new Credentials(config({ exec: p.exec('client.authentication.k8s.io/v1') }));
    await assert.rejects(failing.headers(), /exec credential plugin ".*plugin\.sh" failed \(exit 3\): plugin says: token expired, run login/);

    const missing = new Credentials(config({ exec: { command: 'converge-no-such-plugin', apiVersion: 'client.authentication.k8s.io/v1', installHint: 'install it with `brew install thing`' } }));
    await assert.rejects(missing.headers(), /exec credential plugin "converge-no-such-plugin" was not found: install it with `brew install thing`/);

    assert.throws(() => new Credentials(config({ exec: { command: 'x', apiVersion: 'client.authentication.k8s.io/v1alpha1' } })), /apiVersion "client.authentication.k8s.io\/v1alpha1" is not supported/);
    assert.throws(() => new Credentials(config({ exec: { command: 'x', apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Always' } })), /needs a terminal/);
  });

  it("a failing plugin's stderr is quoted without the credentials it may print (it reaches the dashboard)", async () => {
    const d = dir();
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJTRUNSRVQifQ.c2lnbmF0dXJlLVNFQ1JFVA';
    const run = 'QUtJQVNFQ1JFVEtFWS0wMTIzNDU2Nzg5YWJjZGVmZ2hp';
    const stderr = [
      'refresh failed: refresh_token=rt-SECRET-123 rejected',
      'sent Authorization: Bearer SECRET-bearer-456',
      '{"access_token": "SECRET-at-789", "password":"SECRET-pw", "expires_in": 3600}',
      `client_secret: SECRET-cs token:SECRET-t id token ${jwt} key ${run}`,
      'run `aws sso login --profile prod` and try again',
    ].join('\n');
    writeFileSync(join(d, 'stderr'), stderr);
    const script = join(d, 'plugin.sh');
    writeFileSync(script, `#!/bin/sh\ncat "${d}/stderr" >&2\nif [ -f "${d}/slow" ]; then sleep 5; fi\nexit 4\n`);
    chmodSync(script, 0o755);
    const exec: ExecConfig = { command: script, apiVersion: 'client.authentication.k8s.io/v1' };
    const clean = (e: Error): boolean => {
      for (const secret of ['SECRET', jwt, run]) assert.ok(!e.message.includes(secret), `${secret} in: ${e.message}`);
      // What a person needs to see stays: what failed, the keys, the advice.
      for (const kept of ['failed (exit 4)', 'refresh failed: refresh_token=', 'Authorization: Bearer', '"expires_in": 3600', 'run `aws sso login --profile prod` and try again']) {
        assert.ok(e.message.includes(kept), `${kept} missing from: ${e.message}`);
      }
      return true;
    };
    await assert.rejects(new Credentials(config({ exec })).headers(), clean);
    // The same when it is killed for taking too long.
    writeFileSync(join(d, 'slow'), '');
    await assert.rejects(new Credentials(config({ exec }), { exec: { timeoutMs: 300 } }).headers(), (e: Error) => {
      assert.match(e.message, /did not finish within 300 ms/);
      for (const secret of ['SECRET', jwt, run]) assert.ok(!e.message.includes(secret), `${secret} in: ${e.message}`);
      return true;
    });
  });

  it('checks what the plugin printed', () => {
    const v1 = 'client.authentication.k8s.io/v1';
    const doc = (status: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ apiVersion: v1, kind: 'ExecCredential', status, ...extra });
    assert.throws(() => parseExecCredential('SECRET not json', v1), (e: Error) => /did not print an ExecCredential as JSON/.test(e.message) && !e.message.includes('SECRET'));
    assert.throws(() => parseExecCredential(doc({ token: 't' }, { apiVersion: 'client.authentication.k8s.io/v1beta1' }), v1), /configured for client.authentication.k8s.io\/v1 but printed apiVersion "client.authentication.k8s.io\/v1beta1"/);
    assert.throws(() => parseExecCredential(doc({ token: 't' }, { kind: 'Other' }), v1), /printed kind "Other"/);
    assert.throws(() => parseExecCredential(doc({}), v1), /neither status.token nor status.clientCertificateData/);
    assert.throws(() => parseExecCredential(doc({ token: 'SECRET\n' }), v1), (e: Error) => /printed a status.token that no HTTP header can carry/.test(e.message) && !e.message.includes('SECRET'));
    assert.throws(() => parseExecCredential(doc({ clientCertificateData: 'c' }), v1), /without its key/);
    assert.throws(() => parseExecCredential(doc({ token: 't', expirationTimestamp: 'tomorrow' }), v1), /not an RFC 3339 time/);
    assert.throws(() => parseExecCredential(doc({ token: 't', expirationTimestamp: 5 }), v1), /not an RFC 3339 time/, 'a number is no time (Date.parse would read year 2001)');
    assert.throws(() => parseExecCredential('null', v1), /did not print an ExecCredential object/);
    assert.deepEqual(parseExecCredential(doc({ token: 't', expirationTimestamp: '2030-01-01T00:00:00Z' }), v1), { token: 't', expiresAtMs: Date.parse('2030-01-01T00:00:00Z') });
  });

  it('property: whatever JSON a plugin prints, the answer is a credential or a KubeConfigError that quotes none of it (fast-check)', () => {
    const v1 = 'client.authentication.k8s.io/v1';
    const SECRET = 'SECRET-7f3a';
    const odd = fc.oneof(fc.constantFrom<unknown>(null, true, 0, 1e308, '', SECRET, [], {}, { toString: 1 }, { valueOf: 2, toString: 3 }, [SECRET]), fc.jsonValue({ maxDepth: 2 }));
    const printed = fc.oneof(
      fc.record({
        apiVersion: fc.oneof(fc.constant<unknown>(v1), odd),
        kind: fc.oneof(fc.constant<unknown>('ExecCredential'), odd),
        status: fc.oneof(odd, fc.record({ token: fc.oneof(fc.constant<unknown>(SECRET), odd), clientCertificateData: odd, clientKeyData: odd, expirationTimestamp: fc.oneof(fc.constant<unknown>('2030-01-01T00:00:00Z'), odd) }, { requiredKeys: [] })),
      }, { requiredKeys: [] }),
      odd,
    );
    fc.assert(fc.property(printed, (value) => {
      const stdout = JSON.stringify(value) ?? 'undefined';
      try {
        const c = parseExecCredential(stdout, v1);
        assert.ok(c.token !== undefined || c.clientCertificateData !== undefined);
        assert.ok(typeof c.expiresAtMs === 'number' && !Number.isNaN(c.expiresAtMs));
      } catch (e) {
        assert.ok(e instanceof KubeConfigError, `${e instanceof Error ? e.name : typeof e}: ${String(e)}`);
        assert.ok(!e.message.includes(SECRET), e.message);
      }
    }), { numRuns: 3_000 });
  });
});

describe('token files: changes the file\'s metadata does not show (found by credentials.model.test.ts)', () => {
  // Size, mtime and inode can stay the same when the token changes: on a filesystem with coarse
  // timestamps (1 s; or one kernel tick, before Linux 6.13) two writes within one tick get the same
  // mtime, tokens of one ServiceAccount often have the same length, and ext4 gives a new file the
  // inode number freed a moment before. `utimesSync` gives every write the same mtime, as such a
  // filesystem does. client-go reads the file at every check, and so must we.
  const sameTick = (path: string) => utimesSync(path, 1_700_000_000, 1_700_000_000);

  it('a same-length token rewritten in place within one timestamp tick is read at the next check', async () => {
    const d = dir();
    const file = join(d, 'token');
    writeFileSync(file, 'token-1');
    sameTick(file);
    let now = 0;
    const c = new Credentials(config({ tokenFile: file }), { tokenFileCheckMs: 1000, monotonic: () => now });
    assert.deepEqual(await c.headers(), { authorization: 'Bearer token-1' });
    writeFileSync(file, 'token-2'); // in place: same inode, same size, and (here) same mtime
    sameTick(file);
    now = 1000;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer token-2' });
  });

  it('a same-length token replaced atomically twice within one timestamp tick (the inode number comes back on ext4) is read at the next check', async () => {
    const d = dir();
    const file = join(d, 'token');
    writeFileSync(file, 'token-1');
    sameTick(file);
    let now = 0;
    const c = new Credentials(config({ tokenFile: file }), { tokenFileCheckMs: 1000, monotonic: () => now });
    assert.deepEqual(await c.headers(), { authorization: 'Bearer token-1' });
    for (const token of ['token-2', 'token-3']) {
      writeFileSync(join(d, 'token.new'), token);
      sameTick(join(d, 'token.new'));
      renameSync(join(d, 'token.new'), file);
    }
    now = 1000;
    assert.deepEqual(await c.headers(), { authorization: 'Bearer token-3' });
  });
});
