/**
 * The dashboard's API on the shared control plane, for every endpoint and filter: clusters,
 * overview, the Microservice and provider lists (each filter, sorting, limits, bad values), the
 * upstream's pick (`/providers?region=R&ready=true`, best first), one object with its
 * explanation and timeline, the SSE stream, and the security rules (read-only methods, headers,
 * the Host check, no Secret data, bearer tokens, and refusing a non-loopback listen without a
 * token). Statuses are written directly: the dashboard only reads.
 *
 * The second "cluster" is the same API server reached with a ServiceAccount bound to the
 * ClusterRole in deploy/dashboard/clusterrole.yaml: the dashboard must work with exactly that RBAC.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { KubeClient, SecretKind, ServiceAccountKind, defineKind, loadKubeConfig } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { readAuditLog, WRITE_VERBS } from '@converge/envtest';
import { startDashboard } from '../../../packages/operators/src/dashboard/index.ts';
import type { ClusterView, MicroserviceItem, ObjectDetail, ProviderItem, RunningDashboard } from '../../../packages/operators/src/dashboard/index.ts';
import { kubeconfigPath, testClient, testNamespace, eventually } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';
import { serviceAccountKubeConfig } from '../../support/service-account.ts';
import { createMicroservice, createProvider, releaseProviders, setMicroserviceReady } from '../../support/dashboard-fixtures.ts';
import { getJson, openEvents } from '../../support/dashboard-client.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const ClusterRoleKind = defineKind<KubeObject & { rules: unknown[] }>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false });
const ClusterRoleBindingKind = defineKind<KubeObject & { roleRef: unknown; subjects: unknown[] }>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false });
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const TOKEN_VALUE = 'c2VjcmV0LXZlbmRvci10b2tlbi0xMjM0NQ=='; // base64 of a fake vendor token

test('the dashboard API: every endpoint and filter, the upstream pick, timeline, SSE and security', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'dash-api');
  t.after(() => releaseProviders(client, ns));

  // The read-only ClusterRole from deploy/, bound to a ServiceAccount: the second cluster's identity.
  const role = parseYaml(readFileSync(join(root, 'deploy/dashboard/clusterrole.yaml'), 'utf8')) as KubeObject & { rules: { apiGroups: string[]; verbs: string[]; resources: string[] }[] };
  assert.deepEqual([...new Set(role.rules.flatMap((r) => r.verbs))].sort(), ['get', 'list', 'watch'], 'read-only verbs only');
  assert.ok(!role.rules.some((r) => r.resources.includes('secrets') || r.resources.includes('*')), 'no Secrets, no wildcards');
  await client.apply(ClusterRoleKind, { ...role, apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }, { fieldManager: 'converge-tests', force: true });
  await client.create(ServiceAccountKind, { metadata: { name: 'dashboard', namespace: ns } });
  const binding = `converge-dashboard-${ns}`;
  await client.create(ClusterRoleBindingKind, {
    metadata: { name: binding },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name! },
    subjects: [{ kind: 'ServiceAccount', name: 'dashboard', namespace: ns }],
  });
  t.after(() => client.delete(ClusterRoleBindingKind, { namespace: '', name: binding }).catch(() => undefined));
  const saConfig = await serviceAccountKubeConfig(client, ns, 'dashboard');
  // The API server's RBAC authorizer learns of the new binding from its own informer: until then
  // the ServiceAccount is refused, and a dashboard started in that window shows the viewer
  // `reachable` with a warning for each kind it was refused (until that kind's relist). Started
  // once the ServiceAccount itself is told it may list and watch every kind of the ClusterRole.
  const viewer = new KubeClient({ kubeConfig: saConfig, userAgent: 'converge-test-dashboard-viewer' });
  t.after(() => viewer.close());
  const checks = role.rules.flatMap((r) => r.apiGroups.flatMap((group) => r.resources.flatMap((resource) => ['list', 'watch'].map((verb) => ({ group, resource, verb })))));
  await eventually(async () => {
    for (const attrs of checks) {
      const review = await viewer.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attrs } },
      });
      if (!review.status?.allowed) return false;
    }
    return true;
  }, { what: 'the ClusterRoleBinding effective for the ServiceAccount', timeoutMs: 30_000 });

  // Objects: three Microservices (ready, progressing, failed) and five providers.
  await createMicroservice(client, ns, 'web', { status: 'True', reason: 'Available' });
  const slow = await createMicroservice(client, ns, 'slow', { status: 'False', reason: 'RolloutInProgress', message: '1 of 2 updated' }, 'example.com/slow:2');
  await createMicroservice(client, ns, 'conflict', { status: 'False', reason: 'OwnershipConflict', message: 'Deployment conflict is controlled by someone else' });
  await client.create(SecretKind, { metadata: { name: 'vendor-token', namespace: ns }, data: { token: TOKEN_VALUE } });
  await createProvider(client, ns, 'tokyo-stable', 'ap-northeast-1', { status: 'True', reason: 'ProviderReady', lastTransitionTime: ago(3600) });
  await createProvider(client, ns, 'tokyo-fresh', 'ap-northeast-1', { status: 'True', reason: 'ProviderReady', lastTransitionTime: ago(60) });
  await createProvider(client, ns, 'tokyo-degraded', 'ap-northeast-1', { status: 'True', reason: 'ProviderDegraded', lastTransitionTime: ago(7200) });
  await createProvider(client, ns, 'tokyo-down', 'ap-northeast-1', { status: 'False', reason: 'ProviderUnhealthy', message: 'the vendor reports the instance down' });
  await createProvider(client, ns, 'frankfurt', 'eu-central-1', { status: 'True', reason: 'ProviderReady' });

  const dashboard: RunningDashboard = await startDashboard({
    clusters: [{ name: 'admin', kubeConfig: loadKubeConfig(kubeconfigPath()) }, { name: 'viewer', kubeConfig: saConfig }],
    listen: '127.0.0.1:0',
  });
  t.after(() => dashboard.close());
  const base = dashboard.url;

  // /api/v1/clusters: both reachable (the viewer with exactly the ClusterRole: no warnings).
  const clusters = await eventually(async () => {
    const r = await getJson<{ items: ClusterView[] }>(base, '/api/v1/clusters');
    return r.body.items.every((c) => c.reachable) && r.body.items;
  }, { what: 'both clusters reachable' });
  assert.deepEqual(clusters.map((c) => c.name), ['admin', 'viewer']);
  for (const c of clusters) {
    assert.equal(c.state, 'reachable');
    assert.deepEqual(c.warnings, [], `${c.name}: ${c.warnings.join('; ')}`);
    assert.ok(c.syncedAt && c.lastSync, 'synced, with a last sync time');
    assert.equal(c.server, loadKubeConfig(kubeconfigPath()).getCurrentCluster()!.server);
  }
  const mine = `namespace=${ns}`;
  await eventually(async () => (await getJson<{ total: number }>(base, `/api/v1/providers?${mine}`)).body.total === 10, { what: '5 providers × 2 clusters' });
  await eventually(async () => (await getJson<{ total: number }>(base, `/api/v1/microservices?${mine}`)).body.total === 6, { what: '3 Microservices × 2 clusters' });

  // /api/v1/microservices and its filters.
  const ms = async (q: string) => (await getJson<{ kind: string; total: number; items: MicroserviceItem[] }>(base, `/api/v1/microservices?${mine}&${q}`)).body;
  const names = (items: { cluster: string; name: string }[]) => items.map((i) => `${i.cluster}/${i.name}`);
  const all = await ms('');
  assert.equal(all.kind, 'MicroserviceList');
  assert.deepEqual(names(all.items), ['admin/conflict', 'admin/slow', 'admin/web', 'viewer/conflict', 'viewer/slow', 'viewer/web'], 'sorted by cluster, namespace, name');
  assert.deepEqual(names((await ms('cluster=viewer')).items), ['viewer/conflict', 'viewer/slow', 'viewer/web']);
  assert.deepEqual(names((await ms('cluster=admin&ready=true')).items), ['admin/web']);
  assert.deepEqual(names((await ms('cluster=admin&ready=false')).items), ['admin/conflict', 'admin/slow']);
  assert.deepEqual(names((await ms('cluster=admin&health=failed')).items), ['admin/conflict']);
  assert.deepEqual(names((await ms('cluster=admin&health=progressing,ready')).items), ['admin/slow', 'admin/web']);
  assert.deepEqual(names((await ms('cluster=admin&q=example.com/slow')).items), ['admin/slow'], 'q matches the image');
  assert.deepEqual(names((await ms('cluster=admin&q=OWNERSHIP')).items), ['admin/conflict'], 'q matches the reason, case-insensitively');
  assert.deepEqual(names((await ms('sort=-name&limit=2')).items), ['admin/web', 'viewer/web'], 'sorted by name descending, then cluster; limited');
  assert.equal((await ms('limit=1')).total, 6, 'total counts before the limit');
  assert.deepEqual(names((await ms('kind=ms&cluster=admin&health=ready')).items), ['admin/web']);
  const web = all.items.find((i) => i.name === 'web')!;
  assert.equal(web.health, 'ready');
  assert.equal(web.converged, true);
  assert.equal(web.unconvergedSince, null);
  const conflictRow = all.items.find((i) => i.name === 'conflict')!;
  assert.equal(conflictRow.health, 'failed');
  assert.equal(conflictRow.why, 'OwnershipConflict');
  assert.ok(conflictRow.unconvergedSince, 'unconverged since Ready became False');
  for (const bad of ['ready=maybe', 'health=sad', 'kind=pod', 'sort=colour', 'limit=0']) {
    const r = await getJson<{ error: string; message: string }>(base, `/api/v1/microservices?${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error, 'BadRequest');
    assert.ok(r.body.message.length > 10, r.body.message);
  }

  // /api/v1/providers: the upstream's pick, best first.
  const pick = (await getJson<{ kind: string; total: number; items: ProviderItem[] }>(base, `/api/v1/providers?${mine}&cluster=admin&region=ap-northeast-1&ready=true`)).body;
  assert.equal(pick.kind, 'ProviderList');
  assert.deepEqual(pick.items.map((p) => p.name), ['tokyo-stable', 'tokyo-fresh', 'tokyo-degraded'], 'healthy before degraded; Ready the longest first');
  assert.deepEqual(pick.items.map((p) => p.rank), [1, 2, 3]);
  assert.ok(pick.items.every((p) => p.usable && p.region === 'ap-northeast-1'));
  const best = (await getJson<{ items: ProviderItem[] }>(base, `/api/v1/providers?${mine}&region=ap-northeast-1&usable=true&limit=1`)).body.items;
  assert.deepEqual(best.map((p) => `${p.cluster}/${p.name}`), ['admin/tokyo-stable'], 'limit=1 is the pick (ties across clusters by cluster name)');
  const everyTokyo = (await getJson<{ items: ProviderItem[] }>(base, `/api/v1/providers?${mine}&cluster=admin&region=ap-northeast-1`)).body.items;
  assert.equal(everyTokyo.at(-1)!.name, 'tokyo-down', 'the unusable come last');
  assert.equal(everyTokyo.at(-1)!.usable, false);
  assert.equal(everyTokyo.at(-1)!.health, 'failed');
  assert.equal(everyTokyo.at(-1)!.quota, null, 'no quota figures until providers report them');
  assert.deepEqual((await getJson<{ items: ProviderItem[] }>(base, `/api/v1/providers?${mine}&region=eu-central-1,nowhere`)).body.items.map((p) => p.cluster), ['admin', 'viewer']);
  assert.deepEqual((await getJson<{ items: ProviderItem[] }>(base, `/api/v1/providers?${mine}&cluster=viewer&health=failed`)).body.items.map((p) => p.name), ['tokyo-down']);
  assert.deepEqual((await getJson<{ items: ProviderItem[] }>(base, `/api/v1/providers?${mine}&cluster=viewer&sort=name&q=tokyo-d`)).body.items.map((p) => p.name), ['tokyo-degraded', 'tokyo-down']);
  assert.equal((await getJson(base, '/api/v1/providers?usable=perhaps')).status, 400);

  // /api/v1/overview.
  const overview = (await getJson<{ kind: string; clusters: { cluster: string; kind: string; counts: { total: number } }[]; longestUnconverged: { key: string }[] }>(base, '/api/v1/overview?limit=50')).body;
  assert.equal(overview.kind, 'Overview');
  assert.deepEqual(overview.clusters.map((c) => `${c.cluster}/${c.kind}`), ['admin/Microservice', 'admin/DigitalHumanProvider', 'viewer/Microservice', 'viewer/DigitalHumanProvider']);
  assert.ok(overview.longestUnconverged.some((u) => u.key === `Microservice/admin/${ns}/conflict`));

  // /api/v1/events: the snapshot, then a change as it happens.
  const stream = await openEvents(base);
  t.after(() => stream.close());
  const snapshot = await stream.next((e) => e.type === 'snapshot');
  assert.ok(snapshot.type === 'snapshot' && snapshot.microservices.some((m) => m.key === `Microservice/viewer/${ns}/slow`) && snapshot.clusters.length === 2);
  await setMicroserviceReady(client, slow, { status: 'True', reason: 'Available' });
  const upsert = await stream.next((e) => e.type === 'upsert' && e.item.key === `Microservice/admin/${ns}/slow` && e.item.health === 'ready');
  assert.equal(upsert.type === 'upsert' && upsert.item.why, 'Available');
  const filtered = await openEvents(base, 'cluster=viewer&kind=ms');
  t.after(() => filtered.close());
  await setMicroserviceReady(client, slow, { status: 'False', reason: 'RolloutStalled', message: 'ProgressDeadlineExceeded' });
  await filtered.next((e) => e.type === 'upsert' && e.item.key === `Microservice/viewer/${ns}/slow` && e.item.health === 'failed');
  assert.ok(filtered.events.every((e) => e.type !== 'upsert' || (e.item.cluster === 'viewer' && e.item.kind === 'Microservice')), 'the stream honours cluster and kind');

  // One object: explanation, timeline of the transitions seen, YAML; no Secret data anywhere.
  const detail = await eventually(async () => {
    const r = await getJson<ObjectDetail>(base, `/api/v1/microservices/admin/${ns}/slow`);
    return r.status === 200 && r.body.timeline.filter((e) => e.type === 'Ready').length >= 3 && r.body;
  }, { what: 'three Ready transitions in the timeline' });
  assert.equal(detail.kind, 'ObjectDetail');
  assert.deepEqual(detail.timeline.filter((e) => e.type === 'Ready').map((e) => `${e.from?.reason ?? '-'}→${e.to?.reason}`), ['-→RolloutInProgress', 'RolloutInProgress→Available', 'Available→RolloutStalled']);
  assert.equal(detail.explanation.kind, 'Explanation');
  assert.equal(detail.explanation.converged, false);
  assert.deepEqual(detail.explanation.conditions.map((c) => c.type).sort(), ['Progressing', 'Ready', 'Stalled']);
  assert.deepEqual(detail.explanation.microservice!.children.map((c) => `${c.kind}:${c.ownership}`), ['Deployment:missing', 'Service:missing']);
  assert.match(detail.yaml, /image: example\.com\/slow:2/);
  const provider = await getJson<ObjectDetail>(base, `/api/v1/providers/viewer/${ns}/tokyo-down`);
  assert.equal(provider.status, 200);
  assert.equal(provider.body.explanation.provider!.credentials.secretExists, null, 'the dashboard does not read Secrets');
  for (const path of [`/api/v1/providers/admin/${ns}/tokyo-down`, `/api/v1/providers?${mine}`, '/api/v1/overview']) {
    const text = JSON.stringify((await getJson(base, path)).body);
    assert.ok(!text.includes(TOKEN_VALUE) && !text.includes(Buffer.from(TOKEN_VALUE, 'base64').toString()), `${path} never carries Secret data`);
  }
  assert.equal((await getJson(base, `/api/v1/microservices/admin/${ns}/nope`)).status, 404);
  assert.equal((await getJson(base, `/api/v1/microservices/nowhere/${ns}/web`)).status, 404);
  assert.equal((await getJson(base, `/api/v1/pods/admin/${ns}/web`)).status, 404);

  // Security: read-only methods, headers, the page and its assets, the Host check.
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    const r = await fetch(new URL(`/api/v1/microservices/admin/${ns}/web`, base), { method });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get('allow'), 'GET, HEAD');
  }
  const page = await fetch(base);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<script type="module" src="\/assets\/app\.js">/);
  const csp = page.headers.get('content-security-policy') ?? '';
  for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) assert.ok(csp.includes(directive), directive);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
  for (const asset of ['/assets/app.js', '/assets/app.css', '/api/v1/openapi.yaml']) {
    const r = await fetch(new URL(asset, base));
    assert.equal(r.status, 200, asset);
    assert.ok((await r.text()).length > 500, asset);
    assert.ok(r.headers.get('content-security-policy'));
  }
  const openapi = parseYaml(await (await fetch(new URL('/api/v1/openapi.yaml', base))).text()) as { paths: Record<string, unknown> };
  for (const p of ['/api/v1/clusters', '/api/v1/microservices', '/api/v1/providers', '/api/v1/{kind}/{cluster}/{namespace}/{name}', '/api/v1/events']) assert.ok(openapi.paths[p], `OpenAPI documents ${p}`);
  const rebinding = await rawGet(dashboard.port, '/api/v1/clusters', 'evil.example:80');
  assert.equal(rebinding.status, 421, 'a loopback listen answers only to loopback Host names');
  assert.equal((await rawGet(dashboard.port, '/api/v1/clusters', `localhost:${dashboard.port}`)).status, 200);

  // Read-only towards the cluster too: the API server's audit log shows the dashboard only
  // listing and watching, never writing, never touching Secrets.
  const auditLog = process.env.CONVERGE_TEST_AUDIT_LOG;
  assert.ok(auditLog, 'the shared control plane has an audit log');
  const mineInAudit = (await readAuditLog(auditLog)).filter((e) => e.userAgent?.startsWith('converge-dashboard/'));
  assert.ok(mineInAudit.length >= 12, `the dashboard's requests are in the audit log (${mineInAudit.length})`);
  assert.deepEqual(mineInAudit.filter((e) => WRITE_VERBS.includes(e.verb)), [], 'no write by the dashboard');
  // (Open watches are logged when they end, so only lists may be there yet.)
  assert.ok(mineInAudit.every((e) => ['get', 'list', 'watch'].includes(e.verb)), [...new Set(mineInAudit.map((e) => e.verb))].join(', '));
  assert.ok(!mineInAudit.some((e) => e.objectRef?.resource === 'secrets'), 'no Secret was read');
});

function rawGet(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a non-loopback --listen refuses to start without --token-file; with one, every request needs the token', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-dash-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = kubeconfigPath();

  // The command: exit 1 and a clear message, nothing listening.
  const refused = await new Promise<{ code: number; stderr: string; stdout: string }>((resolve) => {
    execFile(process.execPath, ['packages/operators/src/cli/main.ts', 'dashboard', '--kubeconfig', `test=${kubeconfig}`, '--listen', '0.0.0.0:0'], { cwd: root, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /refusing to listen on 0\.0\.0\.0:0 without --token-file/);
  assert.equal(refused.stdout, '', 'no URL printed');
  await assert.rejects(startDashboard({ clusters: [{ name: 'a', kubeConfig: loadKubeConfig(kubeconfig) }], listen: ':0' }), /without --token-file/);

  // With a token file: 401 without the token, 200 with it; ?token= on the page sets a cookie.
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'too-short\n');
  await assert.rejects(startDashboard({ clusters: [{ name: 'a', kubeConfig: loadKubeConfig(kubeconfig) }], listen: '0.0.0.0:0', tokenFile }), /too short/);
  const token = 'dashboard-test-token-0123456789abcdef';
  writeFileSync(tokenFile, `${token}\n`);
  const dashboard = await startDashboard({ clusters: [{ name: 'a', kubeConfig: loadKubeConfig(kubeconfig) }], listen: '0.0.0.0:0', tokenFile });
  t.after(() => dashboard.close());
  const base = dashboard.url;
  const none = await getJson<{ error: string }>(base, '/api/v1/clusters');
  assert.equal(none.status, 401);
  assert.equal(none.body.error, 'Unauthorized');
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  assert.equal((await getJson(base, '/api/v1/clusters', { authorization: 'Bearer wrong-token-wrong-token' })).status, 401);
  assert.equal((await getJson(base, '/api/v1/clusters', { authorization: `Bearer ${token}` })).status, 200);
  assert.equal((await fetch(base)).status, 401, 'the page too');
  assert.equal((await fetch(new URL('/api/v1/providers?token=' + token, base))).status, 401, 'the API never takes the token from the URL');
  const login = await fetch(new URL(`/?token=${token}#/providers`, base), { redirect: 'manual' });
  assert.equal(login.status, 303);
  assert.equal(login.headers.get('location'), '/');
  const cookie = login.headers.get('set-cookie') ?? '';
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  const withCookie = await fetch(new URL('/api/v1/clusters', base), { headers: { cookie: cookie.split(';')[0]! } });
  assert.equal(withCookie.status, 200);
  const events = await fetch(new URL('/api/v1/events', base), { headers: { cookie: cookie.split(';')[0]! }, signal: AbortSignal.timeout(5_000) });
  assert.equal(events.status, 200, 'the page\'s EventSource is let in by the cookie');
  await events.body?.cancel();
});

// CI failure of 5ff2012: /api/v1/clusters judged the cluster live while the provider rows took
// reachability from the model, which the health timer updates every 200 ms; right after start
// the clusters answered "reachable" and a provider row still said usable=false. With the timer
// slowed to an hour, the rows must still agree with every answer the API gives.
test('provider rows agree with the cluster state the API reports, whatever the health timer does', { timeout: 60_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'dash-agree');
  t.after(() => releaseProviders(client, ns));
  await client.create(SecretKind, { metadata: { name: 'vendor-token', namespace: ns }, data: { token: TOKEN_VALUE } });
  await createProvider(client, ns, 'tokyo', 'ap-northeast-1', { status: 'True', reason: 'ProviderReady' });
  const dashboard = await startDashboard({ clusters: [{ name: 'admin', kubeConfig: loadKubeConfig(kubeconfigPath()) }], listen: '127.0.0.1:0', healthIntervalMs: 3_600_000 });
  t.after(() => dashboard.close());
  const base = dashboard.url;
  const rows = await eventually(async () => {
    const r = (await getJson<{ items: ProviderItem[] }>(base, `/api/v1/providers?namespace=${ns}`)).body.items;
    return r.length === 1 && r;
  }, { what: 'the provider listed' });
  await eventually(async () => (await getJson<{ items: ClusterView[] }>(base, '/api/v1/clusters')).body.items[0]!.reachable, { what: 'the cluster reachable' });
  const [row] = (await getJson<{ items: ProviderItem[] }>(base, `/api/v1/providers?namespace=${ns}`)).body.items;
  assert.equal(row!.usable, true, `the cluster is reachable, so a converged provider is usable (first row: ${JSON.stringify(rows[0]!.usable)})`);
  const events = await openEvents(base);
  t.after(() => events.close());
  const snapshot = await events.next((e) => e.type === 'snapshot');
  assert.ok(snapshot.type === 'snapshot' && snapshot.clusters[0]!.reachable && snapshot.providers.filter((p) => p.namespace === ns).every((p) => p.usable), 'the SSE snapshot agrees with itself');
});
