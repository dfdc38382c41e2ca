/**
 * Checklist item 11, "security".
 * 1. RBAC: the shipped Roles/ClusterRole (deploy/overlays, rendered by `kubectl kustomize`) have
 *    no wildcard and no dangerous verb; `kubectl auth can-i --list` as the operator's
 *    ServiceAccount matches the checked-in expectation (test/reliability/expectations/*.txt,
 *    namespace mode and cluster mode); and `converge run`, running under exactly that
 *    ServiceAccount through a workload that takes every code path, uses every granted verb
 *    (read from the API server's audit log) except a documented few, and is refused nothing.
 * 2. Pod Security: the operator's pod template is admitted by a namespace enforcing (and warning
 *    at) `restricted` with no warning. (test/integration/deploy/manifests.serial.test.ts applies
 *    the whole install under `restricted`; this adds the warn level and runs in parallel.)
 * 3. A canary token in the vendor Secret never appears in the operator's logs (debug level),
 *    in Events, or in any status — neither raw nor base64 — through success, Unauthorized,
 *    missing credentials and deletion.
 *
 * The ServiceAccount lives in the test namespace (not converge-system, which
 * manifests.serial.test.ts owns), so the can-i output is normalised: the namespace becomes
 * `<namespace>`. `CONVERGE_UPDATE_EXPECTATIONS=1` rewrites the expectation files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, writeFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { SecretKind, ServiceAccountKind, ServiceKind, defineKind } from '@converge/runtime';
import type { KubeClient, KubeObject } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { readAuditLog, auditLogSize } from '@converge/envtest';
import { kubeconfigPath, sleep, eventually } from '../support/operator-harness.ts';
import { serviceAccountKubeConfig } from '../support/service-account.ts';
import { testCluster, withNamespace } from '../support/cluster.ts';
import { reliabilityEnv, reliabilityReport, waitConverged, describe, Churn, random, AUDIT_LOG } from './support/index.ts';

const exec = promisify(execFile);
const EXPECTATIONS = fileURLToPath(new URL('./expectations/', import.meta.url));
const UPDATE = process.env.CONVERGE_UPDATE_EXPECTATIONS === '1';

type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };
type RbacObject = KubeObject & { rules?: Rule[]; roleRef?: unknown; subjects?: unknown[] };
const RoleKind = defineKind<RbacObject>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', namespaced: true });
const RoleBindingKind = defineKind<RbacObject>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true });
const ClusterRoleKind = defineKind<RbacObject>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false });
const ClusterRoleBindingKind = defineKind<RbacObject>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false });

async function kustomize(overlay: string): Promise<RbacObject[]> {
  const { stdout } = await exec('kubectl', ['kustomize', `deploy/overlays/${overlay}`], { maxBuffer: 16 << 20 });
  return parseAllDocuments(stdout).map((d) => d.toJS() as RbacObject);
}

/** A kubeconfig file whose only credential is a token of `ns/sa`. */
async function serviceAccountKubeconfig(client: KubeClient, ns: string, sa: string, dir: string): Promise<string> {
  const path = join(dir, `${sa}.kubeconfig`);
  writeFileSync(path, (await serviceAccountKubeConfig(client, ns, sa)).exportConfig(), { mode: 0o600 });
  return path;
}

/** `kubectl auth can-i --list`, one normalised line per rule (columns cut at the header's positions), sorted. */
async function canIList(ns: string, sa: string, namespace: string): Promise<string> {
  const { stdout } = await exec('kubectl', ['--kubeconfig', kubeconfigPath(), 'auth', 'can-i', '--list', `--as=system:serviceaccount:${ns}:${sa}`, '-n', namespace]);
  const [header, ...lines] = stdout.trimEnd().split('\n');
  const starts = ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs'].map((h) => header!.indexOf(h));
  const cut = (line: string) => starts.map((start, i) => line.slice(start, starts[i + 1] ?? undefined).trim() || '-').join(' | ');
  const rows = lines.map((l) => cut(l).replaceAll(ns, '<namespace>').replaceAll(namespace, '<namespace>'));
  return `${cut(header!)}\n${[...new Set(rows)].sort().join('\n')}\n`;
}

const EXPECTATION_HEADER = (file: string, what: string) => [
  `# ${file}: ${what}`,
  '# for the RBAC shipped in deploy/ (checked by test/reliability/security.test.ts). Rows from the',
  "# cluster's default roles (discovery, self-reviews) are part of what the ServiceAccount can do.",
  '# Regenerate after an intended RBAC change: CONVERGE_UPDATE_EXPECTATIONS=1 npm test -- test/reliability/security',
].join('\n');

function compareExpectation(file: string, what: string, actual: string): { matches: boolean; diff: string } {
  const path = join(EXPECTATIONS, file);
  if (UPDATE || !existsSync(path)) {
    const missing = !existsSync(path);
    mkdirSync(EXPECTATIONS, { recursive: true });
    writeFileSync(path, `${EXPECTATION_HEADER(file, what)}\n${actual}`);
    if (missing && !UPDATE) return { matches: false, diff: `${file} did not exist; it was written now: review it and commit it` };
  }
  const lines = (text: string) => new Set(text.trim().split('\n').filter((l) => !l.startsWith('#')));
  const want = lines(readFileSync(path, 'utf8'));
  const have = lines(actual);
  const diff = [...[...want].filter((l) => !have.has(l)).map((l) => `- ${l}`), ...[...have].filter((l) => !want.has(l)).map((l) => `+ ${l}`)].join('\n');
  return { matches: diff === '', diff };
}

/**
 * Granted but legitimately never seen in the audit log of one run, and why. Besides these, `get`
 * on a resource that is also granted `list` is not required to show up: the operator reads from
 * its cache (list + watch), and `get` grants nothing `list` does not. Everything else the Roles
 * grant must show up ("only the verbs used").
 */
const NOT_SEEN_IN_AUDIT: Record<string, string> = {
  'update platform.example.io/microservices/finalizers': 'an authorization check of the OwnerReferencesPermissionEnforcement admission (blockOwnerDeletion on children), not a request',
  'patch events.k8s.io/events': 'sent only when an Event repeats within its series window',
};

/** What the first test measured, for the "only the verbs used" test after it. */
let unusedGrants: string[] | undefined;

test('RBAC: no wildcards, `kubectl auth can-i --list` matches the expectation, the operator under its ServiceAccount is refused nothing', { timeout: 240_000 }, async (t) => {
  const fig = reliabilityReport(t, 11, 'Security: least-privilege RBAC');
  const cluster = await testCluster();
  const env = await reliabilityEnv(t, 'rel-rbac', { resyncSeconds: 2, healthIntervalSeconds: 2 });
  const { client, ns } = env;
  const dir = mkdtempSync(join(tmpdir(), 'converge-rel-rbac-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  // 1. The shipped rules: no wildcards, nothing dangerous.
  const namespaceMode = await kustomize('namespace-mode');
  const clusterMode = await kustomize('cluster-mode');
  const roles = [...namespaceMode, ...clusterMode].filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole');
  const offending: string[] = [];
  for (const role of roles) {
    for (const rule of role.rules ?? []) {
      const all = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs, ...(rule.resourceNames ?? [])];
      if (all.some((x) => x.includes('*'))) offending.push(`${role.kind} ${role.metadata.name}: wildcard in ${JSON.stringify(rule)}`);
      // Non-resource URLs only for the scrapers' role (ADR 0041), and only get on the two metrics paths.
      const metricsReader = role.kind === 'ClusterRole' && role.metadata.name === 'converge-metrics-reader' && rule.verbs.length === 1 && rule.verbs[0] === 'get' &&
        JSON.stringify([...(rule.nonResourceURLs ?? [])].sort()) === JSON.stringify(['/debug/unconverged', '/metrics']);
      if (rule.nonResourceURLs?.length && !metricsReader) offending.push(`${role.kind} ${role.metadata.name}: nonResourceURLs`);
      for (const v of ['escalate', 'bind', 'impersonate', 'deletecollection']) if (rule.verbs.includes(v)) offending.push(`${role.kind} ${role.metadata.name}: verb ${v}`);
      // The one Secret it may write is its own webhook CA, by name (never create, never another).
      const ownCa = rule.resourceNames?.length === 1 && rule.resourceNames[0] === 'converge-webhook-ca' && rule.verbs.every((v) => v === 'get' || v === 'update');
      if (rule.resources?.includes('secrets') && !ownCa && rule.verbs.some((v) => !['get', 'list', 'watch'].includes(v))) offending.push(`${role.kind} ${role.metadata.name}: writes Secrets`);
    }
  }
  fig.count('Roles/ClusterRoles checked', roles.length);
  fig.count('wildcards or dangerous verbs', offending.length);
  assert.deepEqual(offending, []);

  // 2. The namespace-mode Role and the leader-election Role, bound to a ServiceAccount here.
  const role = namespaceMode.find((o) => o.kind === 'Role' && o.metadata.name === 'converge')!;
  const leRole = namespaceMode.find((o) => o.kind === 'Role' && o.metadata.name === 'converge-leader-election')!;
  // The operator's own state in its namespace (the late-create ledger, ADR 0037).
  const stateRole = namespaceMode.find((o) => o.kind === 'Role' && o.metadata.name === 'converge-operator-state')!;
  const clusterRole = clusterMode.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'converge')!;
  assert.ok(role && leRole && stateRole && clusterRole, 'the overlays ship the Roles');
  assert.deepEqual(clusterRole.rules, role.rules, 'namespace mode and cluster mode grant the same rules');
  await client.create(ServiceAccountKind, { metadata: { name: 'converge', namespace: ns } });
  for (const r of [role, leRole, stateRole]) {
    await client.create(RoleKind, { metadata: { name: r.metadata.name, namespace: ns }, rules: r.rules });
    await client.create(RoleBindingKind, {
      metadata: { name: r.metadata.name, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: r.metadata.name },
      subjects: [{ kind: 'ServiceAccount', name: 'converge', namespace: ns }],
    });
  }
  // Cluster mode: the ClusterRole (under a name of this test's own) bound to a second ServiceAccount.
  const crName = `converge-reliability-${randomBytes(3).toString('hex')}`;
  await client.create(ServiceAccountKind, { metadata: { name: 'converge-cluster', namespace: ns } });
  await client.create(ClusterRoleKind, { metadata: { name: crName }, rules: clusterRole.rules });
  await client.create(ClusterRoleBindingKind, {
    metadata: { name: crName },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: crName },
    subjects: [{ kind: 'ServiceAccount', name: 'converge-cluster', namespace: ns }],
  });
  t.after(async () => {
    await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${crName}`);
    await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${crName}`);
  });
  const other = await withNamespace(t, 'rel-rbac-other');

  const nsList = await eventually(async () => { const l = await canIList(ns, 'converge', ns); return l.includes('microservices.platform.example.io') ? l : undefined; }, { what: 'RBAC effective' });
  const nsElsewhere = await canIList(ns, 'converge', other);
  const clusterList = await eventually(async () => { const l = await canIList(ns, 'converge-cluster', other); return l.includes('microservices.platform.example.io') ? l : undefined; }, { what: 'ClusterRole effective' });
  const a = compareExpectation('rbac-can-i-namespace-mode.txt', 'namespace mode (Role converge + converge-leader-election + converge-operator-state), `kubectl auth can-i --list` as the ServiceAccount in its watched namespace', nsList);
  const b = compareExpectation('rbac-can-i-namespace-mode-other-namespace.txt', 'namespace mode, `kubectl auth can-i --list` as the ServiceAccount in a namespace it does not watch (nothing of ours)', nsElsewhere);
  const c = compareExpectation('rbac-can-i-cluster-mode.txt', 'cluster mode (ClusterRole converge), `kubectl auth can-i --list` as the ServiceAccount in any namespace', clusterList);
  fig.count('can-i rules (namespace mode, watched namespace)', nsList.trim().split('\n').length - 1);
  fig.count('can-i rules (namespace mode, another namespace)', nsElsewhere.trim().split('\n').length - 1);
  fig.count('can-i rules (cluster mode)', clusterList.trim().split('\n').length - 1);
  fig.count('differences from the checked-in expectations', [a, b, c].filter((x) => !x.matches).length);
  assert.ok(a.matches, `namespace mode differs from expectations/rbac-can-i-namespace-mode.txt:\n${a.diff}`);
  assert.ok(b.matches, `namespace mode (other namespace) differs:\n${b.diff}`);
  assert.ok(c.matches, `cluster mode differs from expectations/rbac-can-i-cluster-mode.txt:\n${c.diff}`);

  // 3. The operator under exactly these rights, through every code path; the audit log says what it used.
  const kubeconfig = await serviceAccountKubeconfig(client, ns, 'converge', dir);
  const auditFrom = AUDIT_LOG ? await auditLogSize(AUDIT_LOG) : 0;
  const op = env.startReplica('as-serviceaccount', { kubeconfig, args: ['--leader-elect', '--leader-election-namespace', ns] });
  const churn = new Churn({ client, ns, rng: random.seeded(11), endpoint: env.sim.baseUrl });
  await churn.createMicroservice('ms-a');
  await churn.createProvider('dhp-a');
  let state = await waitConverged(client, ns, env.sim, { ...churn.expect, timeoutMs: 90_000 });
  assert.ok(state.converged, describe(state));
  await client.patch(MicroserviceKind, { namespace: ns, name: 'ms-a' }, { type: 'merge', body: { spec: { container: { port: 9090 } } } }); // Deployment and Service update
  churn.expect.microservices.set('ms-a', { container: { ...churn.expect.microservices.get('ms-a')!.container, port: 9090 } });
  state = await waitConverged(client, ns, env.sim, { ...churn.expect, timeoutMs: 90_000 });
  assert.ok(state.converged, describe(state));
  await client.delete(ServiceKind, { namespace: ns, name: 'ms-a' }); // Service re-created
  await churn.updateProvider('dhp-a');
  await client.create(SecretKind, { metadata: { name: 'late', namespace: ns }, stringData: { other: 'x' } });
  await churn.createProvider('dhp-b');
  await churn.deleteProvider('dhp-a'); // finalizer removal
  await churn.deleteMicroservice('ms-a');
  await churn.createMicroservice('ms-b');
  state = await waitConverged(client, ns, env.sim, { ...churn.expect, timeoutMs: 90_000 });
  assert.ok(state.converged, describe(state));
  await churn.deleteProvider('dhp-b'); // a second released key: the ledger ConfigMap updated, not created
  state = await waitConverged(client, ns, env.sim, { ...churn.expect, timeoutMs: 90_000 });
  assert.ok(state.converged, describe(state));
  await sleep(3_000); // periodic checks, lease renewals
  op.kill('SIGTERM'); // graceful: releases the lease (an update)
  assert.equal(await op.exited, 0);

  if (!AUDIT_LOG) {
    fig.note('no audit log: the used-verbs comparison was skipped');
    return;
  }
  const events = await readAuditLog(AUDIT_LOG, { fromOffset: auditFrom, username: `system:serviceaccount:${ns}:converge` });
  const refused = events.filter((e) => e.responseStatus?.code === 403);
  const used = new Set(events.map((e) => `${e.verb} ${e.objectRef?.apiGroup ? `${e.objectRef.apiGroup}/` : ''}${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`));
  const granted = new Set<string>();
  for (const r of [role, leRole, stateRole]) {
    for (const rule of r.rules ?? []) for (const g of rule.apiGroups ?? []) for (const res of rule.resources ?? []) for (const v of rule.verbs) granted.add(`${v} ${g ? `${g}/` : ''}${res}`);
  }
  const readable = (g: string) => g.startsWith('get ') && granted.has(g.replace(/^get /, 'list ').replace(/\/status$/, ''));
  const unused = [...granted].filter((g) => !used.has(g) && !NOT_SEEN_IN_AUDIT[g] && !readable(g)).sort();
  unusedGrants = unused;
  const usedNotGranted = [...used].filter((u) => !granted.has(u) && !u.startsWith('create authorization.k8s.io/selfsubject')).sort();
  fig.count('requests of the operator (as its ServiceAccount)', events.length);
  fig.count('requests refused (403)', refused.length);
  fig.count('granted verbs', granted.size);
  fig.count('granted verbs used', [...granted].filter((g) => used.has(g)).length);
  fig.text('granted verbs not used (beyond the documented ones)', unused.join(', ') || 'none');
  assert.deepEqual(refused.map((e) => `${e.verb} ${e.objectRef?.resource}`), [], 'nothing was refused');
  assert.deepEqual(usedNotGranted, [], 'nothing outside the grants');
});

// Found by this suite and fixed: `update digitalhumanproviders/finalizers` was granted, but the
// provider operator creates no dependents with blockOwnerDeletion, so nothing needs it (the
// finalizer itself is added and removed with a patch of the object).
test('only the verbs used: every granted verb shows up in the audit log', (t) => {
  const fig = reliabilityReport(t, 11, 'Security: only the verbs used');
  if (unusedGrants === undefined) {
    fig.note('skipped: the RBAC test above did not get this far (or there is no audit log)');
    return;
  }
  fig.text('granted but never used', unusedGrants.join(', ') || 'none');
  fig.count('surplus grants', unusedGrants.length);
  assert.deepEqual(unusedGrants, [], 'every granted verb is used');
});

test('Pod Security: the operator pod template is admitted under `restricted` (enforce and warn) without a warning', async (t) => {
  const fig = reliabilityReport(t, 11, 'Security: restricted Pod Security');
  const cluster = await testCluster();
  const objects = await kustomize('namespace-mode');
  const deployment = objects.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { metadata?: unknown; spec: unknown } } };
  const ns = await withNamespace(t, 'rel-psa');
  const sa = (deployment.spec.template.spec as { serviceAccountName?: string }).serviceAccountName;
  if (sa) await cluster.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: sa } });
  const labelled = await cluster.request('PATCH', `/api/v1/namespaces/${ns}`, { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest', 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/warn-version': 'latest' } } }, { contentType: 'application/merge-patch+json' });
  assert.equal(labelled.status, 200);
  const pod = await cluster.request('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'converge-operator' }, spec: deployment.spec.template.spec });
  const warnings = [pod.headers.warning ?? []].flat();
  const root = await cluster.request('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root' }, spec: { containers: [{ name: 'c', image: 'busybox:1', securityContext: { runAsUser: 0 } }] } });
  fig.count('operator pod admitted under restricted (201 = yes)', pod.status);
  fig.count('Pod Security warnings', warnings.length);
  fig.count('a root pod in the same namespace (403 = refused)', root.status);
  assert.equal(pod.status, 201, JSON.stringify(pod.body));
  assert.deepEqual(warnings, []);
  assert.equal(root.status, 403, 'the namespace really enforces restricted');
});

test('a canary token never appears in logs, Events or status', { timeout: 180_000 }, async (t) => {
  const fig = reliabilityReport(t, 11, 'Security: canary Secret never leaks');
  const env = await reliabilityEnv(t, 'rel-canary', { resyncSeconds: 2, healthIntervalSeconds: 1 });
  const wrongToken = `canary-wrong-${randomBytes(16).toString('hex')}`;
  await env.client.create(SecretKind, { metadata: { name: 'wrong', namespace: env.ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: wrongToken } });
  const op = env.startReplica('operator', { args: ['--log-level', 'debug'] });
  const churn = new Churn({ client: env.client, ns: env.ns, rng: random.seeded(12), endpoint: env.sim.baseUrl });
  await churn.createProvider('ok');
  await churn.createMicroservice('ms');
  const spec = (name: string, secret: string, key?: string) => ({ metadata: { name, namespace: env.ns }, spec: { endpoint: env.sim.baseUrl, region: 'ap-northeast-1', credentials: { secretRef: { name: secret, ...(key ? { key } : {}) } } } });
  await env.client.create(DigitalHumanProviderKind, spec('unauthorized', 'wrong'));
  await env.client.create(DigitalHumanProviderKind, spec('no-key', 'creds', 'absent'));
  await env.client.create(DigitalHumanProviderKind, spec('no-secret', 'missing'));
  const reasons = await eventually(async () => {
    const get = async (name: string) => (await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name })).status?.conditions?.find((c) => c.type === 'Ready')?.reason;
    const r = { ok: await get('ok'), unauthorized: await get('unauthorized'), noKey: await get('no-key'), noSecret: await get('no-secret') };
    return r.ok === 'ProviderReady' && r.unauthorized === 'Unauthorized' && r.noKey === 'CredentialsMissing' && r.noSecret === 'CredentialsMissing' ? r : undefined;
  }, { timeoutMs: 60_000, what: 'every credentials path taken' });
  // The wrong Secret is fixed (rotated to the valid token): the Secret watch retries the CR.
  await env.client.patch(SecretKind, { namespace: env.ns, name: 'wrong' }, { type: 'merge', body: { stringData: { token: env.token } } });
  await eventually(async () => (await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'unauthorized' })).status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'ProviderReady', { timeoutMs: 60_000, what: 'rotated Secret picked up' });
  await churn.updateProvider('ok');
  await churn.deleteProvider('ok');
  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'unauthorized' });
  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'no-key' });
  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'no-secret' });
  const state = await waitConverged(env.client, env.ns, env.sim, { microservices: churn.expect.microservices, providers: new Map(), timeoutMs: 60_000 });
  assert.ok(state.converged, describe(state));
  await sleep(2_000);
  op.kill('SIGTERM');
  assert.equal(await op.exited, 0);

  const canaries = [env.token, wrongToken].flatMap((c) => [c, Buffer.from(c).toString('base64')]);
  const logs = op.lines.map((l) => JSON.stringify(l)).join('\n');
  const [eventsV1, eventsCore] = await Promise.all([
    env.client.request<{ items: unknown[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${env.ns}/events`),
    env.client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${env.ns}/events`),
  ]);
  const events = JSON.stringify([...eventsV1.items, ...eventsCore.items]);
  const statuses = JSON.stringify([
    ...(await env.client.list(DigitalHumanProviderKind, { namespace: env.ns })).items.map((d) => d.status),
    ...(await env.client.list(MicroserviceKind, { namespace: env.ns })).items.map((m) => m.status),
  ]);
  const leaks = { logs: canaries.filter((c) => logs.includes(c)).length, events: canaries.filter((c) => events.includes(c)).length, status: canaries.filter((c) => statuses.includes(c)).length };
  fig.count('log lines searched', op.lines.length);
  fig.count('of them at debug level', op.lines.filter((l) => l.level === 20).length);
  fig.count('Events searched', eventsV1.items.length + eventsCore.items.length);
  fig.text('credential paths taken', Object.entries(reasons).map(([k, v]) => `${k}: ${v}`).join(', '));
  fig.count('canary found in logs', leaks.logs);
  fig.count('canary found in Events', leaks.events);
  fig.count('canary found in status', leaks.status);
  assert.ok(op.lines.length > 10, 'the operator logged');
  assert.ok(eventsV1.items.length + eventsCore.items.length > 0, 'Events were recorded');
  assert.deepEqual(leaks, { logs: 0, events: 0, status: 0 });
});
