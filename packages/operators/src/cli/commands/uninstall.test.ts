/**
 * `converge uninstall`: the checks as a pure function (`planUninstall`), and the command over a
 * scripted `kubectl` on PATH (every output shape kubectl prints, the order of the deletions, the
 * checks run again before the CRDs go). `test/integration/deploy/uninstall.serial.test.ts` runs it
 * on the control plane.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planUninstall, run } from './uninstall.ts';
import type { InstallFacts } from './uninstall.ts';
import type { CommandIO } from '../shared/kubectl.ts';
import { watchedNamespaces } from '../shared/install-facts.ts';
import { encodeEntry } from '../../operators/provider/late-create-ledger.ts';
import { homeShard, ledgerShardNames } from '../../operators/provider/late-create-ledger-shards.ts';

const NONE = { names: [], deleting: 0 };
const NOTHING_LEFT: InstallFacts = {
  operator: true, serving: true, providers: NONE, microservices: 0, ledgerKeys: 0, otherServiceAccounts: [],
  storedVersions: { 'microservices.platform.example.io': ['v1'], 'digitalhumanproviders.dhp.example.com': ['v1'] },
};
const KEEP = { crds: false, force: false };
const CRDS = { crds: true, force: false };

test('nothing left behind: allowed, with or without the CRDs', () => {
  assert.deepEqual(planUninstall(NOTHING_LEFT, KEEP), { refusals: [], warnings: [] });
  assert.deepEqual(planUninstall({ ...NOTHING_LEFT, providersAnywhere: NONE }, CRDS), { refusals: [], warnings: [] });
});

test('a provider where the operator watches: refused, naming it and the cleanup for those namespaces only; --force lets the operator go', () => {
  const facts = { ...NOTHING_LEFT, watched: ['team-a', 'team-b'], providers: { names: ['team-a/dhp-1'], deleting: 0 } };
  const [refusal] = planUninstall(facts, KEEP).refusals;
  assert.match(refusal!, /^1 DigitalHumanProvider exists where the operator watches: team-a\/dhp-1\. Only the running operator deletes/);
  assert.match(refusal!, /kubectl delete digitalhumanproviders\.dhp\.example\.com --all -n team-a; kubectl delete digitalhumanproviders\.dhp\.example\.com --all -n team-b\)/);
  assert.doesNotMatch(refusal!, /--all-namespaces/, 'another team\'s providers are not this install\'s to delete');
  const forced = planUninstall(facts, { crds: false, force: true });
  assert.deepEqual(forced.refusals, []);
  assert.equal(forced.warnings.length, 1);
  // Cluster mode: every namespace.
  assert.match(planUninstall({ ...facts, watched: undefined }, KEEP).refusals[0]!, /--all --all-namespaces\)/);
  // No operator, but the install's RBAC still lets one act there: refused, saying to install it again.
  assert.match(planUninstall({ ...facts, operator: false }, KEEP).refusals[0]!, /no operator runs now; install it again \(converge manifests --apply\), delete them/);
  // Neither an operator nor its RBAC (a run cut short after both went): nothing left to strand.
  assert.deepEqual(planUninstall({ ...facts, operator: false, serving: false }, KEEP).refusals, []);
});

test('many providers: five named, the rest counted; those being deleted are said', () => {
  const names = Array.from({ length: 8 }, (_, i) => `ns/p-${i}`);
  const [refusal] = planUninstall({ ...NOTHING_LEFT, providers: { names, deleting: 8 } }, KEEP).refusals;
  assert.match(refusal!, /^8 DigitalHumanProviders exist \(8 being deleted: wait for them\): ns\/p-0, ns\/p-1, ns\/p-2, ns\/p-3, ns\/p-4, and 3 more\./);
});

test('--crds: a provider in any namespace refuses it, --force or not (the CRD would stay Terminating)', () => {
  const facts = { ...NOTHING_LEFT, watched: ['team-a'], providersAnywhere: { names: ['team-b/other'], deleting: 0 } };
  assert.deepEqual(planUninstall(facts, KEEP).refusals, [], 'not where the operator watches: not its to strand');
  for (const force of [false, true]) {
    const [refusal] = planUninstall(facts, { crds: true, force }).refusals;
    assert.match(refusal!, /^1 DigitalHumanProvider exists in the cluster: team-b\/other\. The CRDs cannot go before them/);
  }
});

test('a key in the late-create ledger: refused with the window\'s end; --force goes ahead', () => {
  const facts = { ...NOTHING_LEFT, ledgerKeys: 2, ledgerUntil: '2026-12-07T10:00:00.000Z' };
  const [refusal] = planUninstall(facts, KEEP).refusals;
  assert.match(refusal!, /still looks for 2 vendor creates that may land late \(its window ends 2026-12-07T10:00:00.000Z/);
  assert.match(refusal!, /converge_vendor_late_create_keys is 0/);
  assert.deepEqual(planUninstall(facts, { crds: false, force: true }).refusals, []);
  assert.match(planUninstall({ ...NOTHING_LEFT, ledgerKeys: 1 }, KEEP).refusals[0]!, /1 vendor create that may land late: /);
});

test('--crds while Microservices exist: refused (their workloads would go); --force deletes them', () => {
  const facts = { ...NOTHING_LEFT, microservices: 3 };
  assert.deepEqual(planUninstall(facts, KEEP).refusals, [], 'kept CRDs keep the Microservices');
  assert.match(planUninstall(facts, CRDS).refusals[0]!, /^3 Microservices exist: deleting the CRDs deletes them and, by garbage collection, their Deployments and Services/);
  assert.deepEqual(planUninstall(facts, { crds: true, force: true }).refusals, []);
});

test('an older stored version: kept CRDs could not be read (refused, --force passes); deleted CRDs would stay Terminating (refused, always)', () => {
  const facts = { ...NOTHING_LEFT, storedVersions: { 'microservices.platform.example.io': ['v1alpha1', 'v1'] } };
  assert.match(planUninstall(facts, KEEP).refusals[0]!, /^microservices\.platform\.example\.io may still store objects as v1alpha1 .* cannot be read as v1\. Run converge migrate-storage/);
  assert.deepEqual(planUninstall(facts, { crds: false, force: true }).refusals, []);
  for (const force of [false, true]) assert.match(planUninstall(facts, { crds: true, force }).refusals[0]!, /the CRD would stay Terminating\. Run converge migrate-storage/);
});

test('ServiceAccounts in converge-system the install did not make: a warning naming them, not a refusal', () => {
  const plan = planUninstall({ ...NOTHING_LEFT, otherServiceAccounts: ['converge-dashboard'] }, KEEP);
  assert.deepEqual(plan.refusals, []);
  assert.match(plan.warnings[0]!, /namespace converge-system also holds ServiceAccount converge-dashboard, not made by the install/);
});

test('the watched namespaces are read from the operator\'s flags, as converge run reads them; none: every namespace', () => {
  const deployment = (args: string[]) => ({ spec: { template: { spec: { containers: [{ name: 'sidecar', args: ['--namespace=nope'] }, { name: 'operator', args }] } } } });
  assert.deepEqual(watchedNamespaces(deployment(['run', '--leader-elect', '--namespace=team-a', '--namespace', 'team-b', '--namespace=team-a'])), ['team-a', 'team-b']);
  assert.equal(watchedNamespaces(deployment(['run', '--leader-elect'])), undefined);
  assert.equal(watchedNamespaces({}), undefined);
});

// ---------------------------------------------------------------------------------------------
// The command over a scripted kubectl

/** What the scripted kubectl serves; `later` replaces fields once the operator Deployment was deleted. */
interface Cluster {
  crds?: object[];
  deployment?: object;
  providers?: Array<{ metadata: { name: string; namespace: string; deletionTimestamp?: string } }>;
  microservices?: object[];
  configmaps?: Array<{ metadata: { name: string }; data: Record<string, string> }>;
  serviceaccounts?: object[];
  pods?: object[];
  rbac?: object[];
  later?: Partial<Omit<Cluster, 'later'>>;
}

const FAKE_KUBECTL = `#!/usr/bin/env node
const fs = require('node:fs');
const args = process.argv.slice(2).filter((a) => !/^--(kubeconfig|context|request-timeout)=/.test(a));
fs.appendFileSync(process.env.FAKE_LOG, JSON.stringify(args) + '\\n');
const log = fs.readFileSync(process.env.FAKE_LOG, 'utf8');
let state = JSON.parse(fs.readFileSync(process.env.FAKE_STATE, 'utf8'));
if (log.includes('["delete","deployment"')) state = { ...state, deployment: undefined, pods: [], ...state.later };
const list = (items) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
const named = (items, names) => {
  const found = items.filter((o) => names.includes(o.metadata.name));
  return found.length === 0 ? '' : found.length === 1 ? JSON.stringify(found[0]) : list(found);
};
const [verb, resource, ...rest] = args;
const names = rest.filter((a, i) => !a.startsWith('-') && !['-n', '-l', '-o'].includes(rest[i - 1]));
const ns = rest.includes('-n') ? rest[rest.indexOf('-n') + 1] : undefined;
if (verb === 'delete') {
  process.stdout.write(resource + ' "' + names[0] + '" deleted\\n');
  process.exit(0);
}
if (verb !== 'get') process.exit(3);
const out = {
  customresourcedefinitions: () => named(state.crds ?? [], names),
  deployment: () => (state.deployment ? JSON.stringify(state.deployment) : ''),
  'digitalhumanproviders.dhp.example.com': () => list((state.providers ?? []).filter((p) => !ns || p.metadata.namespace === ns)),
  'microservices.platform.example.io': () => list(state.microservices ?? []),
  configmaps: () => named(state.configmaps ?? [], names),
  serviceaccounts: () => list(state.serviceaccounts ?? []),
  pods: () => list(state.pods ?? []),
  'clusterroles,clusterrolebindings,roles,rolebindings': () => list(state.rbac ?? []),
  'clusterroles,roles': () => list((state.rbac ?? []).filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')),
}[resource];
if (!out) process.exit(4);
process.stdout.write(out());
`;

let bin = '';
before(() => {
  bin = mkdtempSync(join(tmpdir(), 'converge-uninstall-'));
  writeFileSync(join(bin, 'kubectl'), FAKE_KUBECTL);
  chmodSync(join(bin, 'kubectl'), 0o755);
});
after(() => rmSync(bin, { recursive: true, force: true }));

let runs = 0;
async function uninstall(cluster: Cluster, argv: string[], path = `${bin}:${process.env.PATH}`) {
  const dir = mkdtempSync(join(bin, `run-${++runs}-`));
  const state = join(dir, 'state.json');
  const log = join(dir, 'log');
  writeFileSync(state, JSON.stringify(cluster));
  writeFileSync(log, '');
  const io = { out: '', err: '', env: { ...process.env, PATH: path, FAKE_STATE: state, FAKE_LOG: log }, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) } satisfies CommandIO & { out: string; err: string };
  const code = await run(argv, io);
  const calls = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);
  return { code, out: io.out, err: io.err, calls, deletes: calls.filter((c) => c[0] === 'delete').map((c) => c.slice(1).filter((a) => !a.startsWith('--')).join(' ')) };
}

const LABELS = { 'app.kubernetes.io/part-of': 'converge', 'app.kubernetes.io/name': 'converge' };
const crd = (name: string, storedVersions = ['v1']) => ({ metadata: { name }, status: { storedVersions } });
const INSTALLED: Cluster = {
  crds: [crd('microservices.platform.example.io'), crd('digitalhumanproviders.dhp.example.com')],
  deployment: { metadata: { name: 'converge', namespace: 'converge-system' }, spec: { template: { spec: { containers: [{ name: 'operator', args: ['run', '--leader-elect', '--namespace=team-a'] }] } } } },
  serviceaccounts: [{ metadata: { name: 'converge' } }, { metadata: { name: 'default' } }],
  rbac: [
    { kind: 'Role', metadata: { name: 'converge', namespace: 'team-a', labels: LABELS } },
    { kind: 'ClusterRole', metadata: { name: 'converge-webhook', labels: LABELS } },
    { kind: 'RoleBinding', metadata: { name: 'converge', namespace: 'team-a', labels: LABELS } },
    { kind: 'ClusterRoleBinding', metadata: { name: 'converge-webhook', labels: LABELS } },
    { kind: 'ClusterRole', metadata: { name: 'converge-staging', labels: LABELS } },
  ],
};

test('the deletions, in order: the operator (foreground, waited for), bindings before roles, only the install\'s, the namespace; the CRDs last and only with --crds', async () => {
  const kept = await uninstall(INSTALLED, []);
  assert.equal(kept.code, 0, kept.err);
  assert.deepEqual(kept.deletes, [
    'deployment converge -n converge-system',
    'pods -n converge-system -l app.kubernetes.io/name=converge,app.kubernetes.io/component=operator',
    'rolebindings.rbac.authorization.k8s.io converge -n team-a',
    'clusterrolebindings.rbac.authorization.k8s.io converge-webhook',
    'roles.rbac.authorization.k8s.io converge -n team-a',
    'clusterroles.rbac.authorization.k8s.io converge-webhook',
    'namespace converge-system',
  ]);
  const deployment = kept.calls.find((c) => c[0] === 'delete' && c[1] === 'deployment')!;
  assert.ok(deployment.includes('--cascade=foreground') && deployment.includes('--wait'), deployment.join(' '));
  assert.match(kept.out, /converge uninstalled; the CRDs stay/);

  const all = await uninstall(INSTALLED, ['--crds']);
  assert.equal(all.code, 0, all.err);
  assert.equal(all.deletes.at(-1), 'customresourcedefinitions microservices.platform.example.io digitalhumanproviders.dhp.example.com');
  assert.match(all.out, /converge uninstalled, CRDs included/);
});

test('the dry run reads and plans, and deletes nothing', async () => {
  const dry = await uninstall(INSTALLED, ['--dry-run', '--crds']);
  assert.equal(dry.code, 0, dry.err);
  assert.deepEqual(dry.deletes, []);
  assert.match(dry.out, /^converge uninstall would delete, in order:\n {2}- deployment converge-system\/converge/);
  assert.match(dry.out, /customresourcedefinitions .*after checking again/);
});

test('facts in every shape kubectl prints them: one CRD printed bare, a ledger entry in two shards counted once, providers in an unwatched namespace', async () => {
  const uid = '3f1c2a4e-0000-4000-8000-000000000001';
  const until = '2030-01-01T00:00:00.000Z';
  const value = encodeEntry({ uid, namespace: 'team-a', name: 'gone', endpoint: 'https://vendor.example', secret: { name: 's', key: 'token' }, requestedAt: '2029-12-31T23:45:00.000Z', until });
  const shards = ledgerShardNames();
  const cluster: Cluster = {
    ...INSTALLED,
    crds: [crd('digitalhumanproviders.dhp.example.com')],
    // A move cut short: the entry in shard 0 (where earlier versions wrote) and in its home shard.
    configmaps: [{ metadata: { name: shards[0]! }, data: { [uid]: value } }, { metadata: { name: shards[homeShard(uid)]! }, data: { [uid]: value } }],
    providers: [{ metadata: { name: 'other', namespace: 'team-b' } }],
  };
  const refused = await uninstall(cluster, ['--dry-run']);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /refused: the late-create sweep still looks for 1 vendor create that may land late \(its window ends 2030-01-01T00:00:00.000Z/);
  assert.doesNotMatch(refused.err, /DigitalHumanProvider exists/, 'team-b is not watched: not this operator\'s');
  assert.deepEqual(refused.deletes, []);
  const withCrds = await uninstall({ ...cluster, configmaps: [] }, ['--crds', '--force']);
  assert.equal(withCrds.code, 1);
  assert.match(withCrds.err, /refused: 1 DigitalHumanProvider exists in the cluster: team-b\/other\./);
  assert.deepEqual(withCrds.deletes, []);
});

test('checked again once the operator stopped: a provider created or a key recorded meanwhile keeps the RBAC and the ledger', async () => {
  const provider = await uninstall({ ...INSTALLED, later: { providers: [{ metadata: { name: 'late', namespace: 'team-a' } }] } }, []);
  assert.equal(provider.code, 1);
  assert.match(provider.err, /the operator is stopped, but meanwhile: 1 DigitalHumanProvider exists where the operator watches: team-a\/late\./);
  assert.match(provider.err, /nothing else was deleted .* install the operator again \(converge manifests --apply\)/);
  assert.deepEqual(provider.deletes.map((d) => d.split(' ')[0]), ['deployment', 'pods']);

  const value = encodeEntry({ uid: 'u-1', namespace: 'team-a', name: 'gone', endpoint: 'https://vendor.example', secret: { name: 's', key: 'token' }, requestedAt: '2029-12-31T23:45:00.000Z', until: '2030-01-01T00:00:00.000Z' });
  const key = await uninstall({ ...INSTALLED, later: { configmaps: [{ metadata: { name: ledgerShardNames()[homeShard('u-1')]! }, data: { 'u-1': value } }] } }, []);
  assert.equal(key.code, 1);
  assert.match(key.err, /meanwhile: the late-create sweep still looks for 1 vendor create .*No operator runs now to look/);
  assert.deepEqual(key.deletes.map((d) => d.split(' ')[0]), ['deployment', 'pods']);
});

test('--crds --force: the CRD checks still run again before the CRDs go', async () => {
  const result = await uninstall({ ...INSTALLED, later: { providers: [{ metadata: { name: 'late', namespace: 'team-b' } }] } }, ['--crds', '--force']);
  assert.equal(result.code, 1);
  assert.match(result.err, /the operator is removed; the CRDs stay: 1 DigitalHumanProvider exists in the cluster: team-b\/late\./);
  assert.ok(result.deletes.includes('namespace converge-system'));
  assert.ok(!result.deletes.some((d) => d.startsWith('customresourcedefinitions')), result.deletes.join('\n'));
});

test('run again after the operator went: refused while the install\'s RBAC still serves its providers; done once that is gone too', async () => {
  const { deployment: _, ...gone } = INSTALLED;
  const providers = [{ metadata: { name: 'p', namespace: 'team-a' } }, { metadata: { name: 'q', namespace: 'team-b' } }];
  const served = await uninstall({ ...gone, providers }, []);
  assert.equal(served.code, 1);
  assert.match(served.err, /refused: 1 DigitalHumanProvider exists where the operator watches: team-a\/p\. .*no operator runs now/);
  const rbacGone = await uninstall({ ...gone, providers, rbac: [] }, []);
  assert.equal(rbacGone.code, 0, rbacGone.err);
  assert.ok(rbacGone.deletes.includes('namespace converge-system'));
});

test('a Deployment deleted with --cascade=orphan: its pods still run, and are the operator', async () => {
  const { deployment: _, ...gone } = INSTALLED;
  const pod = { metadata: { name: 'converge-abc', namespace: 'converge-system' }, spec: { containers: [{ name: 'operator', args: ['run', '--namespace=team-b'] }] } };
  const result = await uninstall({ ...gone, pods: [pod], providers: [{ metadata: { name: 'q', namespace: 'team-b' } }] }, ['--dry-run']);
  assert.equal(result.code, 1);
  assert.match(result.err, /refused: 1 DigitalHumanProvider exists where the operator watches: team-b\/q\. .*delete them first/);
});

test('a ServiceAccount the install did not make in converge-system: named in a warning before it goes', async () => {
  const result = await uninstall({ ...INSTALLED, serviceaccounts: [{ metadata: { name: 'converge' } }, { metadata: { name: 'converge-dashboard' } }] }, []);
  assert.equal(result.code, 0, result.err);
  assert.match(result.err, /^converge uninstall: warning: namespace converge-system also holds ServiceAccount converge-dashboard/);
});

test('usage, no kubectl, a cluster that cannot be read: nothing deleted, and said so', async () => {
  const help = await uninstall(INSTALLED, ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.out, /^Usage: converge uninstall/);
  const bad = await uninstall(INSTALLED, ['--purge']);
  assert.equal(bad.code, 2);
  assert.equal(bad.out, '');
  const noKubectl = await uninstall(INSTALLED, [], '/nonexistent');
  assert.equal(noKubectl.code, 1);
  assert.equal(noKubectl.err, 'converge uninstall: kubectl is not on PATH (this command runs it): install kubectl\nnothing was deleted\n');
  const unreadable = await uninstall({ ...INSTALLED, crds: undefined, microservices: [] }, ['--kubeconfig', '/nonexistent/kubeconfig'], process.env.PATH);
  assert.equal(unreadable.code, 1);
  assert.match(unreadable.err, /^converge uninstall: kubectl could not read the cluster \(exit 1\):.*nothing was deleted\n$/s);
});
