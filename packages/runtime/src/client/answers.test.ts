/**
 * What the client makes of answers no API server gives: no answer at all (a server behind a
 * partition that accepts connections and never replies), and a 2xx that is not JSON (a proxy's
 * or a web server's page). Each is an `ApiError` that says what happened and where, within the
 * client's timeout; never `[]`, never a JavaScript TypeError.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '../kubeconfig/index.ts';
import { ConfigMapKind } from '../objects/index.ts';
import { KubeClient } from './client.ts';
import { ApiError } from './errors.ts';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function clientFor(server: string, timeoutMs: number): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return new KubeClient({ kubeConfig: kc, timeoutMs });
}

test('a server that never answers: listAll fails within two timeouts (the page asked for once more, smaller), naming the server and saying it asked twice', async (t) => {
  const server = createServer(() => {}); // accepts, never answers
  const url = await listen(server);
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const client = clientFor(url, 200);
  t.after(() => client.close());
  const started = performance.now();
  const err = await client.listAll(ConfigMapKind, { namespace: 'ns' }).then(() => undefined, (e: unknown) => e);
  const took = performance.now() - started;
  assert.ok(err instanceof ApiError && err.reason === 'Timeout', String(err));
  assert.ok(took < 600, `failed after ${Math.round(took)} ms (timeout 200 ms)`);
  assert.match(err.message, new RegExp(`no answer from ${url.replace(/[.]/g, '\\.')} within 200 ms, twice`));
});

test('a 2xx answer that is not JSON is an error that says so, never an empty list', async (t) => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>Sign in to continue</body></html>');
  });
  const url = await listen(server);
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const client = clientFor(url, 2_000);
  t.after(() => client.close());
  for (const call of [() => client.list(ConfigMapKind, { namespace: 'ns' }), () => client.listAll(ConfigMapKind, { namespace: 'ns' }), () => client.get(ConfigMapKind, { namespace: 'ns', name: 'a' })]) {
    const err = await call().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof ApiError, `rejected with an ApiError, not ${String(err)}`);
    assert.match(err.message, /did not answer as a Kubernetes API server \(200 text\/html\): <html><body>Sign in/);
  }
});

test('an onRequest observer that throws neither fails the request nor keeps the observers after it from hearing of it; raw requests report Kubernetes verbs', async (t) => {
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/api/v1/namespaces/d/configmaps/missing')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'configmaps "missing" not found' }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'd', resourceVersion: '1' } }));
  });
  const url = await listen(server);
  t.after(() => server.close());
  const client = clientFor(url, 2_000);
  t.after(() => client.close());
  const heard: string[] = [];
  client.observe({ onRequest: () => { throw new Error('a span processor that throws'); } });
  client.observe({ onRequest: (i) => void heard.push(`${i.verb} ${i.code}`) });
  assert.equal((await client.get(ConfigMapKind, { namespace: 'd', name: 'x' })).metadata.name, 'x');
  const err = await client.get(ConfigMapKind, { namespace: 'd', name: 'missing' }).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof ApiError && err.code === 404, `the request's own failure, not the observer's: ${String(err)}`);
  await client.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: {} });
  await client.request('GET', '/api/v1/namespaces/d/configmaps/x');
  assert.deepEqual(heard, ['get 200', 'get 404', 'create 200', 'get 200']);
});

test('an exec credential plugin that does not finish holds neither the caller\'s stop nor the request timeout, and is named, not the API server', async (t) => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { loadKubeConfig } = await import('../kubeconfig/index.ts');
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [] }));
  });
  const url = await listen(server);
  t.after(() => server.close());
  const dir = mkdtempSync(join(tmpdir(), 'converge-exec-hang-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${url}"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: sleep, args: ["3"], interactiveMode: Never}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`);
  const stopped = new KubeClient({ kubeConfig: loadKubeConfig(path), timeoutMs: 10_000 });
  t.after(() => stopped.close());
  const abort = new AbortController();
  setTimeout(() => abort.abort(new Error('stopped by the caller')), 100);
  let started = performance.now();
  await assert.rejects(stopped.list(ConfigMapKind, { namespace: 'ns', signal: abort.signal }), /stopped by the caller/);
  assert.ok(performance.now() - started < 1_500, `the caller's stop took ${Math.round(performance.now() - started)} ms`);

  const timed = new KubeClient({ kubeConfig: loadKubeConfig(path), timeoutMs: 300 });
  t.after(() => timed.close());
  started = performance.now();
  const err = await timed.listAll(ConfigMapKind, { namespace: 'ns' }).then(() => undefined, (e: unknown) => e);
  const took = performance.now() - started;
  assert.ok(err instanceof ApiError, String(err));
  assert.match(err.message, /^no credentials within 300 ms: .*exec credential plugin/);
  assert.doesNotMatch(err.message, /no answer from/);
  assert.ok(took < 1_500, `one timeout, not the plugin's run nor a second attempt: ${Math.round(took)} ms`);
  assert.equal(requests, 0, 'nothing was sent');
});

test('listAll: each page may go unanswered once (asked again, smaller); one that does not answer twice fails, and only then is "twice" said', async (t) => {
  let calls = 0;
  const server = createServer((req, res) => {
    calls++;
    const page2 = req.url?.includes('continue=c2') ?? false;
    if (calls === 1 || page2) return; // page 1's first ask, and every ask of page 2: no answer
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1', ...(page2 ? {} : { continue: 'c2' }) }, items: [] }));
  });
  const url = await listen(server);
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const client = clientFor(url, 200);
  t.after(() => client.close());
  const err = await client.listAll(ConfigMapKind, { namespace: 'ns' }).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof ApiError && err.reason === 'Timeout', String(err));
  assert.match(err.message, /, twice/, 'page 2 went unanswered twice');
  assert.equal(calls, 4, 'page 1 twice (one unanswered), page 2 twice (both unanswered)');
});
