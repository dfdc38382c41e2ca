/**
 * The runtime's own kubeconfig loader and credentials (ADR 0025) against the real API server:
 * who the server says we are (SelfSubjectReview) for each way of proving it.
 * - client certificate and key as files, CA as a file, all relative to the kubeconfig;
 * - a token file that is rotated while the client runs (as the kubelet rotates projected
 *   ServiceAccount tokens): the next requests are made as the new token's account;
 * - exec credential plugins (a shell script here): a v1 token cached until its expiry, a
 *   v1beta1 client certificate, a 401 that makes the plugin run again, a failing plugin;
 * - `insecure-skip-tls-verify`, and an unknown CA refused;
 * - `tls-server-name`, and a host name in the server URL;
 * - `proxy-url` through an HTTP CONNECT proxy, and through a SOCKS5 proxy;
 * - a plain `http://` server: `kubectl proxy` (issue 18, item 4);
 * - impersonation with names outside ASCII (sent as UTF-8, as kubectl sends them).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ApiError, KubeClient, KubeConfig, NamespaceKind, ServiceAccountKind, loadKubeConfig } from '@converge/runtime';
import { kubeconfigPath, testClient, testNamespace } from '../../support/operator-harness.ts';

const admin = loadKubeConfig(kubeconfigPath());
const adminCluster = admin.getCurrentCluster()!;
const adminUser = admin.getCurrentUser()!;
const caPem = adminCluster.caData ? Buffer.from(adminCluster.caData, 'base64').toString() : readFileSync(adminCluster.caFile!, 'utf8');
const certPem = adminUser.certData ? Buffer.from(adminUser.certData, 'base64').toString() : readFileSync(adminUser.certFile!, 'utf8');
const keyPem = adminUser.keyData ? Buffer.from(adminUser.keyData, 'base64').toString() : readFileSync(adminUser.keyFile!, 'utf8');

function tempDir(t: TestContext): string {
  const d = mkdtempSync(join(tmpdir(), 'converge-auth-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** A kubeconfig file with one context; `user` and `cluster` in the file format. */
function writeKubeconfig(path: string, user: Record<string, unknown>, cluster: Record<string, unknown> = { server: adminCluster.server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') }): string {
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  }));
  return path;
}

async function whoami(client: KubeClient): Promise<string> {
  const review = await client.request<{ status: { userInfo: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return review.status.userInfo.username;
}

async function serviceAccountToken(ns: string, name: string): Promise<string> {
  const client = testClient();
  try {
    await client.create(ServiceAccountKind, { metadata: { name, namespace: ns } }).catch(() => undefined);
    const res = await client.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    });
    return res.status.token;
  } finally {
    await client.close();
  }
}

function client(t: TestContext, path: string, options: ConstructorParameters<typeof KubeClient>[0]['credentials'] = {}): KubeClient {
  const c = new KubeClient({ kubeConfig: loadKubeConfig(path), credentials: options, timeoutMs: 10_000 });
  t.after(() => c.close());
  return c;
}

test('client certificate, key and CA as files relative to the kubeconfig', async (t) => {
  const d = tempDir(t);
  writeFileSync(join(d, 'ca.pem'), caPem);
  writeFileSync(join(d, 'admin.crt'), certPem);
  writeFileSync(join(d, 'admin.key'), keyPem);
  const path = writeKubeconfig(join(d, 'config'), { 'client-certificate': 'admin.crt', 'client-key': './admin.key' }, { server: adminCluster.server, 'certificate-authority': 'ca.pem' });
  const c = client(t, path);
  assert.equal(await whoami(c), await whoami(testClient()));
  assert.equal((await c.get(NamespaceKind, { namespace: '', name: 'default' })).metadata.name, 'default');
});

// Impersonation headers carry names as UTF-8 bytes, as kubectl (Go) sends them. Node writes a
// header string as Latin-1: "jürgen" arrived as the byte 0xFC, a name the API server could not
// match with the same user anywhere else, and "開発" could not be sent at all.
test('impersonation of users, groups and extras with names outside ASCII: the API server sees them as kubectl sends them', async (t) => {
  const d = tempDir(t);
  const user = {
    'client-certificate-data': Buffer.from(certPem).toString('base64'),
    'client-key-data': Buffer.from(keyPem).toString('base64'),
    as: 'jürgen',
    'as-groups': ['開発', 'team-ä'],
    'as-user-extra': { 'scopes.example.com/ünit': ['ä', 'plain'] },
  };
  const c = client(t, writeKubeconfig(join(d, 'config'), user));
  const review = await c.request<{ status: { userInfo: { username: string; groups?: string[]; extra?: Record<string, string[]> } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
  );
  assert.equal(review.status.userInfo.username, 'jürgen');
  assert.deepEqual(review.status.userInfo.groups?.filter((g) => g !== 'system:authenticated'), ['開発', 'team-ä']);
  assert.deepEqual(review.status.userInfo.extra, { 'scopes.example.com/ünit': ['ä', 'plain'] });
  // A request without a body carries the same bytes (Node writes a header block with a string
  // body in that body's encoding, without one as Latin-1): the refusal names the same user.
  await assert.rejects(c.get(NamespaceKind, { namespace: '', name: 'default' }), (e: unknown) => e instanceof ApiError && e.code === 403 && e.message.includes('User "jürgen" cannot get resource "namespaces"'));
});

test('a rotated token file: the next requests are made with the new token', async (t) => {
  const ns = await testNamespace(t, testClient(), 'auth-rotate');
  const [first, second] = [await serviceAccountToken(ns, 'first'), await serviceAccountToken(ns, 'second')];
  const d = tempDir(t);
  const tokenFile = join(d, 'token');
  writeFileSync(tokenFile, first);
  const c = client(t, writeKubeconfig(join(d, 'config'), { tokenFile: 'token' }), { tokenFileCheckMs: 0 });
  assert.equal(await whoami(c), `system:serviceaccount:${ns}:first`);
  writeFileSync(join(d, 'token.new'), second);
  renameSync(join(d, 'token.new'), tokenFile);
  assert.equal(await whoami(c), `system:serviceaccount:${ns}:second`);
});

/** A plugin script printing the ExecCredential in `out`, counting its runs. */
function execPlugin(d: string): { script: string; print(status: Record<string, unknown>, apiVersion?: string): void; runs(): number } {
  const script = join(d, 'plugin.sh');
  writeFileSync(script, `#!/bin/sh\necho x >> "${d}/runs"\nif [ -f "${d}/fail" ]; then echo "login required" >&2; exit 1; fi\ncat "${d}/out"\n`);
  chmodSync(script, 0o755);
  return {
    script,
    print: (status, apiVersion = 'client.authentication.k8s.io/v1') => writeFileSync(join(d, 'out'), JSON.stringify({ apiVersion, kind: 'ExecCredential', status })),
    runs: () => readFileSync(join(d, 'runs'), 'utf8').trim().split('\n').length,
  };
}

test('exec plugin (v1): a token cached until it expires; a 401 runs the plugin again; a failing plugin is an Unauthorized error', async (t) => {
  const ns = await testNamespace(t, testClient(), 'auth-exec');
  const token = await serviceAccountToken(ns, 'plugin');
  const d = tempDir(t);
  const plugin = execPlugin(d);
  plugin.print({ token, expirationTimestamp: new Date(Date.now() + 3_600_000).toISOString() });
  const path = writeKubeconfig(join(d, 'config'), { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './plugin.sh', interactiveMode: 'Never' } });
  const c = client(t, path);
  assert.equal(await whoami(c), `system:serviceaccount:${ns}:plugin`);
  assert.equal(await whoami(c), `system:serviceaccount:${ns}:plugin`);
  assert.equal(plugin.runs(), 1, 'cached until expirationTimestamp');

  // A token the server refuses, with no expiry: one 401, then the plugin runs again.
  const bad = client(t, path);
  plugin.print({ token: 'not-a-valid-token' });
  await assert.rejects(whoami(bad), (e: unknown) => e instanceof ApiError && e.reason === 'Unauthorized' && e.code === 401);
  plugin.print({ token });
  assert.equal(await whoami(bad), `system:serviceaccount:${ns}:plugin`);
  assert.equal(plugin.runs(), 3);

  writeFileSync(join(d, 'fail'), '');
  const failing = client(t, path);
  await assert.rejects(whoami(failing), (e: unknown) =>
    e instanceof ApiError && e.reason === 'Unauthorized' && e.code === 0 && /no credentials: exec credential plugin ".*plugin\.sh" failed \(exit 1\): login required/.test(e.message));
});

test('exec plugin (v1beta1) returning a client certificate', async (t) => {
  const d = tempDir(t);
  const plugin = execPlugin(d);
  plugin.print({ clientCertificateData: certPem, clientKeyData: keyPem }, 'client.authentication.k8s.io/v1beta1');
  const c = client(t, writeKubeconfig(join(d, 'config'), { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: join(d, 'plugin.sh') } }));
  assert.equal(await whoami(c), await whoami(testClient()));
});

test('insecure-skip-tls-verify is honoured; a server whose CA is not trusted is refused', async (t) => {
  const d = tempDir(t);
  const user = { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') };
  const insecure = client(t, writeKubeconfig(join(d, 'insecure'), user, { server: adminCluster.server, 'insecure-skip-tls-verify': true }));
  assert.equal((await insecure.get(NamespaceKind, { namespace: '', name: 'default' })).metadata.name, 'default');
  const untrusted = client(t, writeKubeconfig(join(d, 'untrusted'), user, { server: adminCluster.server }));
  await assert.rejects(untrusted.get(NamespaceKind, { namespace: '', name: 'default' }), (e: unknown) => e instanceof ApiError && e.reason === 'Network' && /certificate/i.test(e.message));
});

test('tls-server-name: the certificate is checked against it; a host name in the URL is checked (and sent) as it is', async (t) => {
  const d = tempDir(t);
  const user = { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') };
  const ca = Buffer.from(caPem).toString('base64');
  const server = new URL(adminCluster.server);
  assert.equal(server.hostname, '127.0.0.1', 'the local control plane serves on 127.0.0.1');
  // The serving certificate names localhost, kubernetes, … and 127.0.0.1 (packages/envtest/control-plane/certs.go).
  const named = client(t, writeKubeconfig(join(d, 'named'), user, { server: adminCluster.server, 'certificate-authority-data': ca, 'tls-server-name': 'kubernetes' }));
  assert.equal(await whoami(named), await whoami(testClient()));
  const wrongName = client(t, writeKubeconfig(join(d, 'wrong'), user, { server: adminCluster.server, 'certificate-authority-data': ca, 'tls-server-name': 'elsewhere.example' }));
  await assert.rejects(wrongName.get(NamespaceKind, { namespace: '', name: 'default' }), (e: unknown) => e instanceof ApiError && e.reason === 'Network' && /elsewhere\.example/.test(e.message));
  const byHostName = client(t, writeKubeconfig(join(d, 'localhost'), user, { server: `https://localhost:${server.port}`, 'certificate-authority-data': ca }));
  assert.equal((await byHostName.get(NamespaceKind, { namespace: '', name: 'default' })).metadata.name, 'default');
});

/**
 * A proxy's tunnel: connects to `host:port`, answers the client `reply`, sends the bytes it had
 * already read (`first`) on, then pipes both ways. Either end closing closes the other: a tunnel
 * left half open kept its connection to the API server, and this file's process, alive until the
 * API server's idle timeout.
 */
function tunnel(socket: Duplex, host: string, port: number, reply: string | Buffer, first: Buffer, open: Set<{ destroy(): void }>): void {
  open.add(socket);
  const upstream = connect(port, host, () => {
    socket.write(reply);
    if (first.length) upstream.write(first);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  open.add(upstream);
  upstream.on('close', () => socket.destroy());
  socket.on('close', () => upstream.destroy());
  upstream.on('error', () => socket.destroy());
  socket.on('error', () => upstream.destroy());
}

test('proxy-url: requests go through the HTTP CONNECT proxy', async (t) => {
  const tunnels: string[] = [];
  const open = new Set<{ destroy(): void }>();
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, socket, head) => {
    tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    tunnel(socket, host!, Number(port), 'HTTP/1.1 200 Connection Established\r\n\r\n', head, open);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => {
    for (const s of open) s.destroy();
    proxy.close(() => r());
  }));
  const d = tempDir(t);
  const user = { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') };
  const c = client(t, writeKubeconfig(join(d, 'config'), user, {
    server: adminCluster.server,
    'certificate-authority-data': Buffer.from(caPem).toString('base64'),
    'proxy-url': `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
  }));
  assert.equal((await c.get(NamespaceKind, { namespace: '', name: 'default' })).metadata.name, 'default');
  assert.deepEqual(tunnels, [new URL(adminCluster.server).host]);
});

/**
 * A SOCKS5 proxy (RFC 1928: no authentication, CONNECT only), enough for one client: the targets
 * it was asked for, as `host:port`. Everything it opened is closed by `close`.
 */
async function socks5Proxy(t: TestContext): Promise<{ port: number; targets: string[] }> {
  const targets: string[] = [];
  const open = new Set<{ destroy(): void }>();
  const server = createNetServer((socket) => {
    open.add(socket);
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'piping' = 'greeting';
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      if (stage === 'greeting') {
        if (buffered.length < 2 || buffered.length < 2 + buffered[1]!) return;
        buffered = buffered.subarray(2 + buffered[1]!);
        socket.write(Buffer.from([5, 0])); // version 5, no authentication
        stage = 'request';
      }
      if (stage === 'request') {
        if (buffered.length < 5) return;
        const type = buffered[3]!;
        const hostLength = type === 1 ? 4 : type === 4 ? 16 : 1 + buffered[4]!;
        if (buffered.length < 4 + hostLength + 2) return;
        const hostBytes = buffered.subarray(4, 4 + hostLength);
        const host = type === 1 ? [...hostBytes].join('.') : type === 3 ? hostBytes.subarray(1).toString() : hostBytes.toString('hex').replace(/(.{4})(?!$)/g, '$1:');
        const port = buffered.readUInt16BE(4 + hostLength);
        const rest = buffered.subarray(4 + hostLength + 2);
        targets.push(`${host}:${port}`);
        stage = 'piping';
        socket.off('data', onData);
        tunnel(socket, host, port, Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]), rest, open); // 0: succeeded
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => {
    for (const s of open) s.destroy();
    server.close(() => r());
  }));
  return { port: (server.address() as AddressInfo).port, targets };
}

// kubectl supports socks5 proxies (an `ssh -D` tunnel to a private cluster's bastion is the
// usual one); Node's agent knows only HTTP proxies and sent every request around this one.
test('proxy-url socks5://: requests go through the SOCKS5 proxy, which is asked for the server by name, as kubectl asks', async (t) => {
  const proxy = await socks5Proxy(t);
  const d = tempDir(t);
  const user = { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') };
  const server = new URL(adminCluster.server);
  // By host name: the proxy resolves it (kubectl's SOCKS5 dialer sends the name, not an address).
  const c = client(t, writeKubeconfig(join(d, 'config'), user, {
    server: `https://localhost:${server.port}`,
    'certificate-authority-data': Buffer.from(caPem).toString('base64'),
    'proxy-url': `socks5://127.0.0.1:${proxy.port}`,
  }));
  assert.equal((await c.get(NamespaceKind, { namespace: '', name: 'default' })).metadata.name, 'default');
  assert.equal(await whoami(c), await whoami(testClient()));
  assert.ok(proxy.targets.length >= 1, 'the proxy carried the requests');
  assert.deepEqual([...new Set(proxy.targets)], [`localhost:${server.port}`]);
  // By address: the certificate is checked against the address (the proxied TLS socket knows no host).
  const byAddress = client(t, writeKubeconfig(join(d, 'by-address'), user, {
    server: adminCluster.server,
    'certificate-authority-data': Buffer.from(caPem).toString('base64'),
    'proxy-url': `socks5://127.0.0.1:${proxy.port}`,
  }));
  assert.equal(await whoami(byAddress), await whoami(testClient()));
  assert.deepEqual([...new Set(proxy.targets)], [`localhost:${server.port}`, server.host]);
  // And a name the certificate does not hold is refused through the proxy too.
  const wrongName = client(t, writeKubeconfig(join(d, 'wrong-name'), user, {
    server: adminCluster.server,
    'certificate-authority-data': Buffer.from(caPem).toString('base64'),
    'tls-server-name': 'elsewhere.example',
    'proxy-url': `socks5://127.0.0.1:${proxy.port}`,
  }));
  await assert.rejects(whoami(wrongName), /elsewhere\.example|altnames|Hostname/i);
});

test('a plain http:// server, as kubectl proxy serves (issue 18, item 4)', async (t) => {
  const kubectl = spawn('kubectl', ['proxy', '--port=0', `--kubeconfig=${kubeconfigPath()}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => kubectl.kill());
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    kubectl.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /Starting to serve on ([\d.]+:\d+)/.exec(out);
      if (m) resolve(`http://${m[1]}`);
    });
    kubectl.once('exit', (code) => reject(new Error(`kubectl proxy exited ${code}: ${out}`)));
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'proxy', server: url }], users: [], contexts: [{ name: 'p', cluster: 'proxy', user: '' }], currentContext: 'p' });
  const c = new KubeClient({ kubeConfig: kc });
  t.after(() => c.close());
  assert.equal((await c.get(NamespaceKind, { namespace: '', name: 'default' })).metadata.name, 'default');
  const events: string[] = [];
  const abort = new AbortController();
  const list = await c.list(NamespaceKind, { limit: 1 });
  setTimeout(() => abort.abort(), 1_000).unref();
  await assert.rejects(async () => {
    for await (const e of c.watch(NamespaceKind, { resourceVersion: list.metadata.resourceVersion ?? '' }, abort.signal)) events.push(e.type);
  });
  assert.ok(abort.signal.aborted, 'the watch over plain HTTP ran until aborted');
});
