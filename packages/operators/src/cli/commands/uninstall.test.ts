import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planUninstall, run, watchedNamespaces } from './uninstall.ts';
import type { UninstallFacts } from './uninstall.ts';
import type { CommandIO } from '../shared/kubectl.ts';
import { isInstallRbac } from '../shared/install-names.ts';

const NOTHING_LEFT: UninstallFacts = { providers: [], providersDeleting: 0, microservices: 0, ledgerKeys: 0, storedVersions: { 'microservices.platform.example.io': ['v1'], 'digitalhumanproviders.dhp.example.com': ['v1'] } };
const KEEP = { crds: false, force: false };
const CRDS = { crds: true, force: false };

function capture(): CommandIO & { out: string; err: string } {
  const io = { out: '', err: '', env: process.env, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

test('nothing left behind: allowed, with or without the CRDs', () => {
  assert.deepEqual(planUninstall(NOTHING_LEFT, KEEP), { refusals: [], warnings: [] });
  assert.deepEqual(planUninstall({ ...NOTHING_LEFT, storedVersions: {} }, CRDS), { refusals: [], warnings: [] });
});

test('a provider left: refused, naming it and what to do; --force lets the operator go but never the CRDs', () => {
  const facts = { ...NOTHING_LEFT, providers: ['team-a/dhp-1'] };
  const refused = planUninstall(facts, KEEP);
  assert.equal(refused.refusals.length, 1);
  assert.match(refused.refusals[0]!, /1 DigitalHumanProvider exists: team-a\/dhp-1\. Only the running operator deletes/);
  assert.match(refused.refusals[0]!, /kubectl delete digitalhumanproviders\.dhp\.example\.com --all --all-namespaces/);
  const forced = planUninstall(facts, { crds: false, force: true });
  assert.deepEqual(forced.refusals, []);
  assert.equal(forced.warnings.length, 1);
  const withCrds = planUninstall(facts, { crds: true, force: true });
  assert.equal(withCrds.refusals.length, 1, 'a CRD deleted with objects that keep a finalizer stays Terminating');
  assert.match(withCrds.refusals[0]!, /stays Terminating/);
});

test('many providers: five named, the rest counted; those being deleted are said', () => {
  const providers = Array.from({ length: 8 }, (_, i) => `ns/p-${i}`);
  const [refusal] = planUninstall({ ...NOTHING_LEFT, providers, providersDeleting: 8 }, KEEP).refusals;
  assert.match(refusal!, /8 DigitalHumanProviders exist \(8 being deleted: wait for them\): ns\/p-0, ns\/p-1, ns\/p-2, ns\/p-3, ns\/p-4, and 3 more\./);
});

test('a key in the late-create ledger: refused with the window\'s end; --force goes ahead', () => {
  const facts = { ...NOTHING_LEFT, ledgerKeys: 2, ledgerUntil: '2026-12-07T10:00:00.000Z' };
  const [refusal] = planUninstall(facts, KEEP).refusals;
  assert.match(refusal!, /still looks for 2 vendor creates that may land late \(its window ends 2026-12-07T10:00:00.000Z/);
  assert.match(refusal!, /converge_vendor_late_create_keys is 0/);
  assert.deepEqual(planUninstall(facts, { crds: false, force: true }).refusals, []);
  // Entries that cannot be read count too (the gauge counts them), without a window's end.
  assert.match(planUninstall({ ...NOTHING_LEFT, ledgerKeys: 1 }, KEEP).refusals[0]!, /1 vendor create that may land late: /);
});

test('--crds while Microservices exist: refused (their workloads would go); --force deletes them', () => {
  const facts = { ...NOTHING_LEFT, microservices: 3 };
  assert.deepEqual(planUninstall(facts, KEEP).refusals, [], 'kept CRDs keep the Microservices');
  assert.match(planUninstall(facts, CRDS).refusals[0]!, /3 Microservices exist: deleting the CRDs deletes them and, by garbage collection, their Deployments and Services/);
  assert.deepEqual(planUninstall(facts, { crds: true, force: true }).refusals, []);
});

test('kept CRDs that still store an older version: refused (no conversion webhook after), unless --crds or --force', () => {
  const facts = { ...NOTHING_LEFT, storedVersions: { 'microservices.platform.example.io': ['v1alpha1', 'v1'] } };
  assert.match(planUninstall(facts, KEEP).refusals[0]!, /microservices\.platform\.example\.io may still store objects as v1alpha1 .* converge migrate-storage/);
  assert.deepEqual(planUninstall(facts, CRDS).refusals, []);
  assert.deepEqual(planUninstall(facts, { crds: false, force: true }).refusals, []);
});

test('every refusal at once, each said', () => {
  const facts: UninstallFacts = { providers: ['a/b'], providersDeleting: 0, microservices: 1, ledgerKeys: 1, storedVersions: { x: ['v1alpha1'] } };
  assert.equal(planUninstall(facts, KEEP).refusals.length, 3);
  assert.equal(planUninstall(facts, CRDS).refusals.length, 3);
});

test('the install\'s RBAC: both labels and a name the overlays give; another install or a person\'s binding is not', () => {
  const labels = { 'app.kubernetes.io/part-of': 'converge', 'app.kubernetes.io/name': 'converge' };
  assert.equal(isInstallRbac({ kind: 'ClusterRole', metadata: { name: 'converge', labels } }), true);
  assert.equal(isInstallRbac({ kind: 'ClusterRoleBinding', metadata: { name: 'converge-webhook', labels } }), true);
  assert.equal(isInstallRbac({ kind: 'Role', metadata: { name: 'converge', namespace: 'team-a', labels } }), true);
  assert.equal(isInstallRbac({ kind: 'Role', metadata: { name: 'converge-operator-state', namespace: 'converge-system', labels } }), true);
  assert.equal(isInstallRbac({ kind: 'Role', metadata: { name: 'converge-operator-state', namespace: 'team-a', labels } }), false);
  assert.equal(isInstallRbac({ kind: 'ClusterRole', metadata: { name: 'staging-converge', labels } }), false);
  assert.equal(isInstallRbac({ kind: 'ClusterRoleBinding', metadata: { name: 'converge-metrics-reader-prometheus' } }), false);
  assert.equal(isInstallRbac({ kind: 'ClusterRole', metadata: { name: 'converge', labels: { 'app.kubernetes.io/part-of': 'converge' } } }), false);
});

test('usage: --help prints the checks; an unknown flag is a usage error; a cluster that cannot be read deletes nothing', async () => {
  const help = capture();
  assert.equal(await run(['--help'], help), 0);
  assert.match(help.out, /^Usage: converge uninstall/);
  assert.match(help.out, /refused with nothing deleted while/);
  const bad = capture();
  assert.equal(await run(['--purge'], bad), 2);
  assert.equal(bad.out, '');
  const unreachable = capture();
  assert.equal(await run(['--kubeconfig', '/nonexistent/kubeconfig'], unreachable), 1);
  assert.match(unreachable.err, /converge uninstall: .*nothing was deleted/s);
});

test('the watched namespaces are read from the operator\'s flags, as converge run reads them; none: every namespace', () => {
  const deployment = (args: string[]) => ({ spec: { template: { spec: { containers: [{ name: 'sidecar', args: ['--namespace=nope'] }, { name: 'operator', args }] } } } });
  assert.deepEqual(watchedNamespaces(deployment(['run', '--leader-elect', '--namespace=team-a', '--namespace', 'team-b', '--namespace=team-a'])), ['team-a', 'team-b']);
  assert.equal(watchedNamespaces(deployment(['run', '--leader-elect'])), undefined);
  assert.equal(watchedNamespaces({}), undefined);
  const [refusal] = planUninstall({ ...NOTHING_LEFT, watched: ['team-a'], providers: ['team-a/p'] }, KEEP).refusals;
  assert.match(refusal!, /1 DigitalHumanProvider exists in the watched namespaces: team-a\/p\./);
});
