/**
 * The install manifests on a real API server: `converge manifests --apply` in namespace mode and
 * cluster mode, the operator pods admitted under the restricted Pod Security profile, and the
 * ServiceAccount's rights checked with `kubectl auth can-i` (what it needs, and nothing more);
 * and an install that would be refused in part writes nothing at all (a watched namespace that
 * does not exist, a user who may not create everything).
 * Serial: it owns the cluster-wide names converge-system and ClusterRole converge while it runs.
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { namespaceGone, testCluster, withNamespace } from '../../support/cluster.ts';
import { testClient } from '../../support/operator-harness.ts';
import { serviceAccountKubeConfig } from '../../support/service-account.ts';
import { renderManifests, run as manifests } from '../../../packages/operators/src/cli/commands/manifests.ts';
import type { RenderOptions } from '../../../packages/operators/src/cli/commands/manifests.ts';
import { runKubectl, type CommandIO } from '../../../packages/operators/src/cli/shared/kubectl.ts';
import { usePublishedCrds } from '../../support/suite-webhook.ts';
import { ledgerShardNames } from '../../../packages/operators/src/operators/provider/late-create-ledger-shards.ts';

const SA = 'system:serviceaccount:converge-system:converge';

function capture(): CommandIO & { out: string; err: string } {
  const io = { out: '', err: '', env: process.env, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

async function canI(kubeconfig: string, args: string[], as = SA): Promise<boolean> {
  const result = await runKubectl(['--kubeconfig', kubeconfig, 'auth', 'can-i', `--as=${as}`, ...args]);
  const answer = result.stdout.trim();
  if (answer !== 'yes' && answer !== 'no') throw new Error(`kubectl auth can-i ${args.join(' ')}: ${result.stderr}`);
  return answer === 'yes';
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** `kind ns/name → resourceVersion` of every object of the manifests that exists now. */
async function installed(kubeconfig: string, options: RenderOptions): Promise<Record<string, string>> {
  const got = await runKubectl(['--kubeconfig', kubeconfig, 'get', '-f', '-', '--ignore-not-found', '-o', 'json'], { input: await renderManifests(options) });
  assert.equal(got.code, 0, got.stderr);
  type Found = { kind: string; metadata: { name: string; namespace?: string; resourceVersion: string } };
  const body = JSON.parse(got.stdout || '{"kind":"List","items":[]}') as Found & { items?: Found[] };
  const items = body.kind === 'List' ? body.items ?? [] : [body]; // one object found: kubectl prints it bare
  return Object.fromEntries(items.map((o) => [`${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`, o.metadata.resourceVersion]));
}

const cleanUpInstall = async () => {
  const cluster = await testCluster();
  await cluster.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/converge');
  await cluster.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge');
  await cluster.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/converge-metrics-auth');
  await cluster.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge-metrics-auth');
  await cluster.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge-metrics-reader');
  await namespaceGone('converge-system');
};

test('a watched namespace that does not exist: nothing is applied; --create-namespace creates it', { timeout: 120_000 }, async (t) => {
  const cluster = await testCluster();
  const kc = cluster.kubeconfigPath;
  const team = `team-x-${randomBytes(3).toString('hex')}`;
  // converge-system stays for the tests below (deleting it takes a while); the last one removes it.
  t.after(async () => void (await cluster.request('DELETE', `/api/v1/namespaces/${team}`)));
  // The manifests hold the published CRDs (conversion through the in-cluster Service); the suite's
  // point theirs at its own webhook URL, which the apply (and its dry run) cannot merge with.
  const admin = testClient();
  t.after(() => admin.close());
  await usePublishedCrds(t, admin);
  const before = await installed(kc, { mode: 'namespace', namespaces: [team] });

  const io = capture();
  assert.equal(await manifests(['--namespace', team, '--apply', '--kubeconfig', kc], io), 1, io.out);
  assert.equal(
    io.err,
    `converge manifests: namespace "${team}" does not exist, so nothing was applied ("${team}" would hold Role, RoleBinding). ` +
      `Create it first (kubectl create namespace ${team}), or add --create-namespace.\n`,
  );
  assert.deepEqual(await installed(kc, { mode: 'namespace', namespaces: [team] }), before, 'nothing was written');

  const created = capture();
  assert.equal(await manifests(['--namespace', team, '--apply', '--create-namespace', '--kubeconfig', kc], created), 0, created.err);
  assert.equal((await cluster.request('GET', `/api/v1/namespaces/${team}`)).status, 200);
  assert.equal((await cluster.request('GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/${team}/roles/converge`)).status, 200);
  assert.match(created.out, new RegExp(`namespace/${team} serverside-applied`));
});

test('a user who may write only part of the install: the dry run refuses it and nothing is written', { timeout: 120_000 }, async (t) => {
  const cluster = await testCluster();
  const kc = cluster.kubeconfigPath;
  const client = testClient();
  const home = await withNamespace(t, 'installer');
  const dir = await mkdtemp(join(tmpdir(), 'converge-installer-'));
  const role = `converge-test-installer-${home}`;
  t.after(async () => {
    await rm(dir, { recursive: true, force: true });
    await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${role}`);
    await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`);
  });
  // The user may read and write namespaces and ConfigMaps, nothing else: the ConfigMap of the
  // install would go through, every other object would be refused.
  assert.ok([200, 201, 409].includes((await cluster.request('POST', '/api/v1/namespaces', { metadata: { name: 'converge-system' } })).status));
  // The operator's configuration of an earlier install (named by a hash of its content).
  const earlier = (await cluster.request('GET', '/api/v1/namespaces/converge-system/configmaps')).body as { items?: { metadata: { name: string } }[] };
  for (const cm of earlier.items ?? []) if (cm.metadata.name.startsWith('converge-config-')) await cluster.request('DELETE', `/api/v1/namespaces/converge-system/configmaps/${cm.metadata.name}`);
  assert.equal((await cluster.request('POST', `/api/v1/namespaces/${home}/serviceaccounts`, { metadata: { name: 'installer' } })).status, 201);
  assert.equal((await cluster.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: role },
    rules: [{ apiGroups: [''], resources: ['namespaces', 'configmaps'], verbs: ['get', 'list', 'create', 'patch', 'update'] }],
  })).status, 201);
  assert.equal((await cluster.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: role },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: home }],
  })).status, 201);
  const saConfig = join(dir, 'installer.kubeconfig');
  await writeFile(saConfig, (await serviceAccountKubeConfig(client, home, 'installer')).exportConfig());
  const before = await installed(kc, { mode: 'cluster' });

  const io = capture();
  assert.equal(await manifests(['--mode', 'cluster', '--apply', '--kubeconfig', saConfig], io), 1, io.out);
  assert.match(io.err, /^converge manifests: the API server refused part of it in a dry run \(kubectl exit 1\); nothing was applied:\n/);
  assert.match(io.err, /forbidden/);
  assert.deepEqual(await installed(kc, { mode: 'cluster' }), before, 'nothing was written');
});

test('namespace mode, then cluster mode: least-privilege RBAC and a restricted operator', { timeout: 180_000 }, async (t) => {
  const cluster = await testCluster();
  const kc = cluster.kubeconfigPath;
  const watched = await withNamespace(t, 'watched');
  const other = await withNamespace(t, 'other');

  // `converge manifests --apply` installs the published CRDs (conversion through the in-cluster Service).
  const admin = testClient();
  t.after(() => admin.close());
  await usePublishedCrds(t, admin);
  // After hooks run in the order they were added: the suite's CRDs come back (conversions to the
  // suite's webhook) before the install goes. Deleting converge-system while the CRDs named the
  // converge-webhook Service there once hung for six minutes (this control plane has no
  // kube-proxy: conversions sent to that Service never reach a webhook).
  t.after(cleanUpInstall);

  // ---- namespace mode ----
  const io = capture();
  assert.equal(await manifests(['--namespace', watched, '--apply', '--kubeconfig', kc], io), 0, io.err);

  const needed: string[][] = [
    ['get', 'microservices.platform.example.io'],
    ['list', 'microservices.platform.example.io'],
    ['watch', 'microservices.platform.example.io'],
    ['patch', 'microservices.platform.example.io', '--subresource=status'],
    ['update', 'microservices.platform.example.io', '--subresource=finalizers'],
    ['create', 'deployments.apps'],
    ['update', 'deployments.apps'],
    ['watch', 'deployments.apps'],
    ['create', 'services'],
    ['update', 'services'],
    ['list', 'endpointslices.discovery.k8s.io'],
    ['patch', 'digitalhumanproviders.dhp.example.com'],
    ['patch', 'digitalhumanproviders.dhp.example.com', '--subresource=status'],
    ['watch', 'secrets'],
    ['create', 'events.events.k8s.io'],
  ];
  const forbidden: string[][] = [
    ['update', 'microservices.platform.example.io'],
    ['delete', 'microservices.platform.example.io'],
    ['create', 'microservices.platform.example.io'],
    ['delete', 'deployments.apps'],
    ['patch', 'deployments.apps'],
    ['delete', 'services'],
    ['patch', 'services'],
    ['create', 'secrets'],
    ['get', 'pods'],
    ['create', 'events'],
    ['delete', 'digitalhumanproviders.dhp.example.com'],
    ['update', 'digitalhumanproviders.dhp.example.com', '--subresource=finalizers'],
  ];
  for (const args of needed) assert.ok(await canI(kc, [...args, '-n', watched]), `needed in ${watched}: ${args.join(' ')}`);
  for (const args of forbidden) assert.equal(await canI(kc, [...args, '-n', watched]), false, `not needed: ${args.join(' ')}`);
  for (const args of needed) assert.equal(await canI(kc, [...args, '-n', other]), false, `namespace mode reaches ${other}: ${args.join(' ')}`);
  assert.equal(await canI(kc, ['list', 'microservices.platform.example.io', '--all-namespaces']), false);
  for (const verb of ['get', 'create', 'update']) assert.ok(await canI(kc, [verb, 'leases.coordination.k8s.io', '-n', 'converge-system']), verb);
  assert.equal(await canI(kc, ['delete', 'leases.coordination.k8s.io', '-n', 'converge-system']), false);
  assert.equal(await canI(kc, ['get', 'leases.coordination.k8s.io', '-n', watched]), false);
  // The ledger's shards (ADR 0040; the Role lists every one of them, checked by the manifests unit test): the first two and the last.
  const shards = ledgerShardNames();
  for (const name of [shards[0]!, shards[1]!, shards.at(-1)!]) {
    for (const verb of ['get', 'update']) assert.ok(await canI(kc, [verb, `configmaps/${name}`, '-n', 'converge-system']), `${verb} the late-create ledger's ${name}`);
  }
  assert.equal(await canI(kc, ['get', `configmaps/converge-late-creates-${shards.length}`, '-n', 'converge-system']), false, 'no ConfigMap past the last shard');
  assert.equal(await canI(kc, ['get', 'configmaps/converge-config', '-n', 'converge-system']), false, 'no other ConfigMap of its namespace');
  await checkMetricsAuth(t, kc);

  // The operator Deployment passes the restricted Pod Security admission: its pods get created.
  const pods = await eventually('operator pods', async () => {
    const res = await cluster.request('GET', '/api/v1/namespaces/converge-system/pods?labelSelector=app.kubernetes.io%2Fname%3Dconverge');
    return res.body.items?.length >= 1 ? res.body.items : undefined;
  });
  assert.ok(pods.length >= 1);
  const replicaSets = await cluster.request('GET', '/apis/apps/v1/namespaces/converge-system/replicasets');
  for (const rs of replicaSets.body.items) {
    const failure = (rs.status.conditions ?? []).find((c: { type: string }) => c.type === 'ReplicaFailure');
    assert.equal(failure, undefined, JSON.stringify(failure));
  }
  // ... and the admission really enforces the profile there: a root pod is refused.
  const rootPod = await cluster.request('POST', '/api/v1/namespaces/converge-system/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'not-restricted' },
    spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { runAsUser: 0 } }] },
  });
  assert.equal(rootPod.status, 403, JSON.stringify(rootPod.body));
  assert.match(rootPod.body.message, /violates PodSecurity "restricted/);
  const args: string[] = (await cluster.request('GET', '/apis/apps/v1/namespaces/converge-system/deployments/converge')).body.spec.template.spec.containers[0].args;
  assert.ok(args.includes(`--namespace=${watched}`), args.join(' '));

  // ---- cluster mode ----
  const io2 = capture();
  assert.equal(await manifests(['--mode', 'cluster', '--apply', '--kubeconfig', kc], io2), 0, io2.err);
  await eventually('ClusterRoleBinding effective', async () => ((await canI(kc, ['list', 'microservices.platform.example.io', '--all-namespaces'])) ? true : undefined), 10_000);
  for (const args of needed) assert.ok(await canI(kc, [...args, '-n', other]), `cluster mode misses ${other}: ${args.join(' ')}`);
  for (const args of forbidden) assert.equal(await canI(kc, [...args, '-n', other]), false, `not needed: ${args.join(' ')}`);
  assert.equal(await canI(kc, ['list', 'nodes']), false);
  assert.equal(await canI(kc, ['create', 'customresourcedefinitions.apiextensions.k8s.io']), false);
  await checkMetricsAuth(t, kc);

  // ---- back to namespace mode, then another namespace: what the earlier install granted goes ----
  // (the dashboard's ClusterRole, applied on its own, carries part-of=converge too: it stays)
  const hadDashboardRole = (await runKubectl(['--kubeconfig', kc, 'get', 'clusterrole', 'converge-dashboard-viewer', '--ignore-not-found', '-o', 'name'])).stdout.trim() !== '';
  if (!hadDashboardRole) {
    assert.equal((await runKubectl(['--kubeconfig', kc, 'apply', '-f', 'deploy/dashboard/clusterrole.yaml'])).code, 0);
    t.after(async () => void (await runKubectl(['--kubeconfig', kc, 'delete', 'clusterrole', 'converge-dashboard-viewer', '--ignore-not-found'])));
  }
  // Another install made from deploy/ under a name prefix keeps the labels: it is not this one's.
  const decoy = `team-b-converge-${randomBytes(3).toString('hex')}`;
  assert.equal((await runKubectl(['--kubeconfig', kc, 'apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: decoy, labels: { 'app.kubernetes.io/name': 'converge', 'app.kubernetes.io/part-of': 'converge' } }, rules: [] }) })).code, 0);
  t.after(async () => void (await runKubectl(['--kubeconfig', kc, 'delete', 'clusterrole', decoy, '--ignore-not-found'])));
  const io3 = capture();
  assert.equal(await manifests(['--namespace', watched, '--apply', '--kubeconfig', kc], io3), 0, io3.err);
  assert.equal((await runKubectl(['--kubeconfig', kc, 'get', 'clusterrole', decoy, '-o', 'name'])).code, 0, 'another install\'s ClusterRole stays');
  assert.match(io3.out, /clusterrole\.rbac\.authorization\.k8s\.io\/converge deleted: an earlier install's/);
  await eventually('cluster mode\'s rights gone', async () => ((await canI(kc, ['watch', 'secrets', '-n', other])) ? undefined : true), 10_000);
  for (const args of needed) assert.equal(await canI(kc, [...args, '-n', other]), false, `still granted in ${other} after the switch to namespace mode: ${args.join(' ')}`);
  for (const args of needed) assert.ok(await canI(kc, [...args, '-n', watched]), `needed in ${watched}: ${args.join(' ')}`);
  const next = await withNamespace(t, 'next');
  const io4 = capture();
  assert.equal(await manifests(['--namespace', next, '--apply', '--kubeconfig', kc], io4), 0, io4.err);
  await eventually(`${watched} no longer watched`, async () => ((await canI(kc, ['watch', 'secrets', '-n', watched])) ? undefined : true), 10_000);
  for (const args of needed) assert.ok(await canI(kc, [...args, '-n', next]), `needed in ${next}: ${args.join(' ')}`);
  assert.equal((await runKubectl(['--kubeconfig', kc, 'get', 'clusterrole', 'converge-dashboard-viewer', '-o', 'name'])).code, 0, 'the dashboard\'s ClusterRole is not the install\'s');
});

/**
 * `--metrics-auth=kubernetes` (ADR 0041), in either mode: the operator may create the two reviews
 * (cluster-scoped: they have no namespace) and nothing more of their kind, and is no metrics
 * reader itself; a scraper bound to the shipped converge-metrics-reader may get exactly
 * /metrics and /debug/unconverged.
 */
async function checkMetricsAuth(t: TestContext, kc: string): Promise<void> {
  assert.ok(await canI(kc, ['create', 'tokenreviews.authentication.k8s.io']), 'create tokenreviews');
  assert.ok(await canI(kc, ['create', 'subjectaccessreviews.authorization.k8s.io']), 'create subjectaccessreviews');
  assert.equal(await canI(kc, ['create', 'localsubjectaccessreviews.authorization.k8s.io', '-n', 'converge-system']), false);
  assert.equal(await canI(kc, ['get', '/metrics']), false, 'the operator reads no one\'s metrics');
  const cluster = await testCluster();
  const binding = `converge-test-scraper-${randomBytes(3).toString('hex')}`;
  const scraper = `system:serviceaccount:monitoring:${binding}`;
  assert.equal(await canI(kc, ['get', '/metrics'], scraper), false, 'not before the binding');
  assert.equal((await cluster.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: binding },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'converge-metrics-reader' },
    subjects: [{ kind: 'ServiceAccount', name: binding, namespace: 'monitoring' }],
  })).status, 201);
  t.after(async () => void (await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding}`)));
  await eventually('the scraper binding effective', async () => ((await canI(kc, ['get', '/metrics'], scraper)) ? true : undefined), 10_000);
  assert.ok(await canI(kc, ['get', '/debug/unconverged'], scraper));
  assert.equal(await canI(kc, ['get', '/debug'], scraper), false);
  assert.equal(await canI(kc, ['list', 'pods', '-n', 'converge-system'], scraper), false);
  await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding}`);
}
