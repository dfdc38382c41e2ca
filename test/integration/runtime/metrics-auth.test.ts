/**
 * The metrics endpoints behind the API server's authentication and RBAC (`metricsAuth:
 * 'kubernetes'`, ADR 0041) on the real control plane: real ServiceAccount tokens (TokenRequest),
 * real TokenReviews and SubjectAccessReviews, real RBAC bindings.
 * - A manager with `metricsAuth: 'kubernetes'`: no token → 401; a token the API server does not
 *   authenticate → 401; a ServiceAccount without the rights → 403; bound (as a user, or through
 *   its groups) to a ClusterRole granting get on the nonResourceURLs → 200 with the metrics and
 *   `/debug/unconverged`; the probe server answers the kubelet without a token.
 * - The cache, counted through the client's observer: one TokenReview and one SubjectAccessReview
 *   per token and path within the TTL, however many scrapes; a refusal cached for 30 s, then
 *   asked again (a binding made meanwhile lets the same token in).
 * - Fail closed: the authorizer's API server behind the fault proxy answering 500 or 504 to a
 *   review, or holding it past the review deadline, or gone; and an operator account without
 *   the rights to create reviews → 503, never 200, for a token that is allowed. The same account
 *   given the shipped rules (create on both reviews) → 200.
 * - Over HTTPS (`metricsSecureServing`, as the shipped Deployment's `--metrics-secure`): the token
 *   crosses TLS; 401 without one or with one the API server does not authenticate, 200 for one
 *   RBAC allows; the manager's self-signed certificate (not verified by the client), and a
 *   certificate from a folder (`metricsCertDir`) verified against its CA. Plain HTTP on the port
 *   gets no answer.
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry, Counter } from 'prom-client';
import { KubeClient, ServiceAccountKind, createMetricsServer, kubernetesAuthorizer, loadKubeConfig, memoryCaStore, selfManagedCertificates } from '@converge/runtime';
import type { MetricsAuthorizer, ServingCertificate } from '@converge/runtime';
import { eventually, kubeconfigPath, sleep, startManager, testClient, testLogger, testNamespace } from '../../support/operator-harness.ts';
import { startFaultProxy } from '../../support/fault-proxy.ts';
import { serviceAccountKubeConfig } from '../../support/service-account.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** A fresh token (TokenRequest, 1 h) of `ns/sa`, creating the ServiceAccount when needed. */
async function tokenOf(admin: KubeClient, ns: string, sa: string): Promise<string> {
  await admin.create(ServiceAccountKind, { metadata: { name: sa, namespace: ns } }).catch(() => undefined);
  const res = await admin.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return res.status.token;
}

/** A ClusterRole with `rules` and a binding of it to `subjects`; both deleted when the test ends. */
async function clusterRoleFor(t: TestContext, admin: KubeClient, name: string, rules: unknown[], subjects: unknown[]): Promise<void> {
  t.after(async () => {
    await admin.request('DELETE', `${RBAC}/clusterrolebindings/${name}`).catch(() => undefined);
    await admin.request('DELETE', `${RBAC}/clusterroles/${name}`).catch(() => undefined);
  });
  await admin.request('POST', `${RBAC}/clusterroles`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules } });
  await admin.request('POST', `${RBAC}/clusterrolebindings`, {
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects },
  });
}

/** Waits until RBAC lets `user` (with `groups`) get `path`, asked directly (not through the authorizer, whose refusals are cached). */
async function rbacAllows(admin: KubeClient, user: string, groups: string[], path: string): Promise<void> {
  await eventually(async () => {
    const sar = await admin.request<{ status: { allowed: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { nonResourceAttributes: { path, verb: 'get' }, user, groups } },
    });
    return sar.status.allowed;
  }, { what: `RBAC to allow ${user} get ${path}`, timeoutMs: 20_000 });
}

const READ_METRICS = [{ nonResourceURLs: ['/metrics', '/debug/unconverged'], verbs: ['get'] }];

async function scrape(base: string, path: string, token?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${base}${path}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.text() };
}

test('a manager with metricsAuth kubernetes: 401, 403, 200 by RBAC; one review pair per token and path within the TTL', { timeout: 150_000 }, async (t) => {
  const admin = testClient();
  t.after(() => admin.close());
  const ns = await testNamespace(t, admin, 'metrics-auth');
  const grouped = await testNamespace(t, admin, 'metrics-auth-g');
  const { manager } = await startManager(t, { metricsAuth: 'kubernetes', metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0' });
  const [metricsAddr, probeAddr] = await manager.serverAddresses();
  const base = `http://${metricsAddr}`;
  const reviews = { token: 0, access: 0 };
  manager.client.observe({
    onRequest: (info) => {
      if (info.resource === 'tokenreviews') reviews.token++;
      if (info.resource === 'subjectaccessreviews') reviews.access++;
    },
  });
  const counted = () => ({ ...reviews });

  // The kubelet's probes carry no token: the probe server is not behind the authorizer.
  assert.equal((await fetch(`http://${probeAddr}/healthz`)).status, 200);

  // No token, or not a bearer one: 401, and the API server is not asked.
  assert.equal((await scrape(base, '/metrics')).status, 401);
  assert.equal((await fetch(`${base}/metrics`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } })).status, 401);
  assert.deepEqual(counted(), { token: 0, access: 0 });

  // Tokens the API server does not authenticate: 401 after one TokenReview each.
  const forged = `${(await tokenOf(admin, ns, 'scraper')).slice(0, -8)}AAAAAAAA`;
  for (const bad of ['not-a-token', forged]) assert.equal((await scrape(base, '/metrics', bad)).status, 401, bad.slice(0, 12));
  assert.deepEqual(counted(), { token: 2, access: 0 });

  // A ServiceAccount without the rights: 403 on both paths.
  const scraperUser = `system:serviceaccount:${ns}:scraper`;
  const denied = await tokenOf(admin, ns, 'scraper');
  const forbidden = await scrape(base, '/metrics', denied);
  const deniedAt = performance.now();
  assert.equal(forbidden.status, 403);
  assert.match(forbidden.body, new RegExp(scraperUser));
  assert.doesNotMatch(forbidden.body, /controller_runtime|rest_client/);
  assert.equal((await scrape(base, '/debug/unconverged', denied)).status, 403);
  assert.deepEqual(counted(), { token: 4, access: 2 });

  // Bound to a ClusterRole granting get on the two paths: a token of it reads both.
  await clusterRoleFor(t, admin, `converge-test-metrics-reader-${ns}`, READ_METRICS, [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }]);
  await rbacAllows(admin, scraperUser, [], '/metrics');
  // The first token's 403 is cached (30 s): still refused, although RBAC now allows it (checked
  // only while surely within the 30 s, so that a slow run does not fail for nothing).
  if (performance.now() - deniedAt < 20_000) assert.equal((await scrape(base, '/metrics', denied)).status, 403, 'a cached refusal');
  else t.diagnostic('the cached refusal was not checked: binding took over 20 s');
  const before = counted();
  const allowed = await tokenOf(admin, ns, 'scraper');
  const metrics = await scrape(base, '/metrics', allowed);
  assert.equal(metrics.status, 200);
  assert.match(metrics.body, /^rest_client_requests_total\{/m);
  const unconverged = await scrape(base, '/debug/unconverged', allowed);
  assert.equal(unconverged.status, 200);
  assert.deepEqual(JSON.parse(unconverged.body), {});
  assert.equal((await scrape(base, '/debug', allowed)).status, 403, 'a path the role does not name');
  assert.deepEqual(counted(), { token: before.token + 3, access: before.access + 3 });

  // A Prometheus scraping: no more reviews within the TTL, whatever the number of scrapes.
  const cached = counted();
  for (let i = 0; i < 10; i++) {
    assert.equal((await scrape(base, '/metrics', allowed)).status, 200);
    assert.equal((await scrape(base, '/debug/unconverged?limit=5', allowed)).status, 200);
  }
  // Concurrent first scrapes of a new token share one pair of reviews.
  const concurrent = await tokenOf(admin, ns, 'scraper');
  const statuses = await Promise.all(Array.from({ length: 8 }, () => scrape(base, '/metrics', concurrent).then((r) => r.status)));
  assert.deepEqual(statuses, Array(8).fill(200));
  assert.deepEqual(counted(), { token: cached.token + 1, access: cached.access + 1 }, 'one pair for the new token, none for the cached ones');

  // An invalid token is still 401 (the scraper's rights are no one else's).
  assert.equal((await scrape(base, '/metrics', 'still-not-a-token')).status, 401);

  // Through its groups: a binding to the group of another namespace's ServiceAccounts (the
  // SubjectAccessReview carries the groups the TokenReview returned).
  await clusterRoleFor(t, admin, `converge-test-metrics-group-${grouped}`, READ_METRICS, [{ kind: 'Group', name: `system:serviceaccounts:${grouped}`, apiGroup: 'rbac.authorization.k8s.io' }]);
  await rbacAllows(admin, `system:serviceaccount:${grouped}:any`, ['system:serviceaccounts', `system:serviceaccounts:${grouped}`, 'system:authenticated'], '/metrics');
  assert.equal((await scrape(base, '/metrics', await tokenOf(admin, grouped, 'prometheus'))).status, 200);

  // The first token's refusal expires: it is asked again once, and let in.
  const waiting = counted();
  await eventually(async () => (await scrape(base, '/metrics', denied)).status === 200, { what: 'the cached refusal to expire', timeoutMs: 45_000, intervalMs: 2_000 });
  assert.deepEqual(counted(), { token: waiting.token + 1, access: waiting.access + 1 }, 'asked again once, when the refusal expired');
});

test('fail closed: reviews answered 500 or 504, held past the deadline, or not answered at all; an operator without the rights to review → 503, never 200', { timeout: 120_000 }, async (t) => {
  const admin = testClient();
  t.after(() => admin.close());
  const ns = await testNamespace(t, admin, 'metrics-auth-faults');
  await clusterRoleFor(t, admin, `converge-test-metrics-reader-${ns}`, READ_METRICS, [{ kind: 'ServiceAccount', name: 'prometheus', namespace: ns }]);
  const token = await tokenOf(admin, ns, 'prometheus');
  await rbacAllows(admin, `system:serviceaccount:${ns}:prometheus`, [], '/metrics');

  const registry = new Registry();
  new Counter({ name: 'converge_test_scrapes_total', help: 'x', registers: [registry] }).inc();
  /** A metrics server behind `authorize`, stopped when the test ends. */
  const serve = async (authorize: MetricsAuthorizer): Promise<string> => {
    const server = createMetricsServer({ address: '127.0.0.1:0', registry, authorize });
    const stop = new AbortController();
    const done = server.start(stop.signal);
    t.after(async () => {
      stop.abort();
      await done;
    });
    return `http://127.0.0.1:${(await server.listening())!.port}`;
  };

  // The API server behind the fault proxy. allowTtlMs 0: every scrape is reviewed again, so that
  // each fault meets a fresh pair of reviews (an allowed outcome cached earlier would hide it).
  const proxy = await startFaultProxy({ kubeconfigPath: kubeconfigPath() });
  t.after(() => proxy.close());
  const client = new KubeClient({ kubeConfig: loadKubeConfig(proxy.kubeconfigPath), qps: 0 });
  t.after(() => client.close());
  const base = await serve(kubernetesAuthorizer({ client, log: testLogger(), allowTtlMs: 0, reviewTimeoutMs: 1_000 }));
  assert.equal((await scrape(base, '/metrics', token)).status, 200, 'allowed while the API server answers');

  for (const [review, status] of [['tokenreviews', 500], ['tokenreviews', 504], ['subjectaccessreviews', 500], ['subjectaccessreviews', 504]] as const) {
    const release = proxy.inject({ match: { method: 'POST', path: new RegExp(`/${review}$`) }, answer: { status }, times: 1 });
    const refused = await scrape(base, '/metrics', token);
    release();
    assert.equal(refused.status, 503, `${review} answered ${status}`);
    assert.doesNotMatch(refused.body, /converge_test_scrapes_total/);
    assert.equal((await scrape(base, '/metrics', token)).status, 200, `not cached: allowed again after the ${status}`);
  }

  // Held: no answer within the review deadline (1 s here, 10 s by default).
  proxy.setFaults({ latencyMs: [3_000, 3_000] });
  const held = await scrape(base, '/debug/unconverged', token);
  assert.equal(held.status, 503);
  proxy.setFaults({ latencyMs: [0, 0] });
  await sleep(2_500); // the held review leaves the proxy before it closes
  // The API server gone (connection refused).
  await proxy.close();
  assert.equal((await scrape(base, '/metrics', token)).status, 503);

  // An operator account without create on the reviews (the RBAC of the shipped manifests
  // missing): the API server refuses the TokenReview (403), so the scraper gets 503, not 200.
  const operatorClient = new KubeClient({ kubeConfig: await serviceAccountKubeConfig(admin, ns, await createdServiceAccount(admin, ns, 'operator')), qps: 0 });
  t.after(() => operatorClient.close());
  const noRights = await serve(kubernetesAuthorizer({ client: operatorClient, log: testLogger() }));
  assert.equal((await scrape(noRights, '/metrics', token)).status, 503);
  // Given the rules of deploy/base/metrics-auth-rbac.yaml's converge-metrics-auth, it works.
  await clusterRoleFor(t, admin, `converge-test-metrics-auth-${ns}`, [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ], [{ kind: 'ServiceAccount', name: 'operator', namespace: ns }]);
  await eventually(async () => (await scrape(noRights, '/metrics', token)).status === 200, { what: 'the operator account allowed to review', timeoutMs: 20_000, intervalMs: 250 });
});

async function createdServiceAccount(admin: KubeClient, ns: string, name: string): Promise<string> {
  await admin.create(ServiceAccountKind, { metadata: { name, namespace: ns } });
  return name;
}

/** A GET over HTTPS with `token`; the certificate verified against `ca`, or not verified (a self-signed one) without it. */
function scrapeTls(address: string, path: string, token?: string, ca?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`https://${address}${path}`, {
      agent: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, ...(ca ? { ca } : { rejectUnauthorized: false }),
    }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('over HTTPS: the token crosses TLS; 401 without one or with a bad one, 200 by RBAC; self-signed in memory, or from a cert dir verified against its CA', { timeout: 90_000 }, async (t) => {
  const admin = testClient();
  t.after(() => admin.close());
  const ns = await testNamespace(t, admin, 'metrics-tls');
  await clusterRoleFor(t, admin, `converge-test-metrics-reader-${ns}`, READ_METRICS, [{ kind: 'ServiceAccount', name: 'prometheus', namespace: ns }]);
  const token = await tokenOf(admin, ns, 'prometheus');
  await rbacAllows(admin, `system:serviceaccount:${ns}:prometheus`, [], '/metrics');

  // The manager as the shipped Deployment runs it: --metrics-auth=kubernetes --metrics-secure.
  const { manager } = await startManager(t, { metricsAuth: 'kubernetes', metricsSecureServing: true, metricsBindAddress: '127.0.0.1:0' });
  const [address] = await manager.serverAddresses();
  assert.equal((await scrapeTls(address!, '/metrics')).status, 401);
  assert.equal((await scrapeTls(address!, '/metrics', 'not-a-token')).status, 401);
  const allowed = await scrapeTls(address!, '/metrics', token);
  assert.equal(allowed.status, 200);
  assert.match(allowed.body, /^rest_client_requests_total\{/m);
  await assert.rejects(fetch(`http://${address}/metrics`, { headers: { authorization: `Bearer ${token}` } }), 'plain HTTP gets no answer');
  await assert.rejects(scrapeTls(address!, '/metrics', token, (await issued(memoryCaStore())).caPem!), /self-signed|unable to verify|certificate/i, 'a scraper verifying against a CA it was given refuses the self-signed one');

  // A certificate from a folder (a mounted kubernetes.io/tls Secret), verified against its CA.
  const dir = mkdtempSync(join(tmpdir(), 'converge-metrics-certs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cert = await issued(memoryCaStore());
  writeFileSync(join(dir, 'tls.crt'), cert.certPem);
  writeFileSync(join(dir, 'tls.key'), cert.keyPem);
  const { manager: withDir } = await startManager(t, { metricsAuth: 'kubernetes', metricsSecureServing: true, metricsCertDir: dir, metricsBindAddress: '127.0.0.1:0' });
  const [dirAddress] = await withDir.serverAddresses();
  assert.equal((await scrapeTls(dirAddress!, '/metrics', undefined, cert.caPem!)).status, 401);
  assert.equal((await scrapeTls(dirAddress!, '/debug/unconverged', token, cert.caPem!)).status, 200);
});

/** A serving certificate for 127.0.0.1 from the CA in `store`. */
async function issued(store: ReturnType<typeof memoryCaStore>): Promise<ServingCertificate> {
  const stop = new AbortController();
  const got = Promise.withResolvers<ServingCertificate>();
  const running = selfManagedCertificates({ store, hosts: ['127.0.0.1'] }).start(stop.signal, (c) => got.resolve(c));
  const cert = await got.promise;
  stop.abort();
  await running;
  return cert;
}
