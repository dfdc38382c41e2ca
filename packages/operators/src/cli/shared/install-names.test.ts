import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { DEPLOY_DIR } from '../commands/manifests.ts';
import { runKubectl } from './kubectl.ts';
import { OPERATOR_NAMESPACE, RBAC_KINDS, isInstallRbac } from './install-names.ts';
import type { ListedRbac } from './install-names.ts';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

test('every RBAC object of every overlay is the install\'s, by its labels and its exact name', { skip: hasKubectl ? false : 'kubectl is not on PATH' }, async () => {
  const overlays = readdirSync(`${DEPLOY_DIR}overlays`);
  assert.ok(overlays.length >= 3, overlays.join(', '));
  const seen = new Set<string>();
  for (const overlay of overlays) {
    const rendered = await runKubectl(['kustomize', `${DEPLOY_DIR}overlays/${overlay}`]);
    assert.equal(rendered.code, 0, rendered.stderr);
    for (const doc of parseAllDocuments(rendered.stdout)) {
      const o = doc.toJS() as ListedRbac | null;
      if (!o?.kind || !(RBAC_KINDS as readonly string[]).includes(o.kind)) continue;
      assert.ok(isInstallRbac(o), `${overlay}: ${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name} is not recognised as the install's`);
      seen.add(`${o.kind}/${o.metadata?.namespace === OPERATOR_NAMESPACE ? OPERATOR_NAMESPACE : o.metadata?.namespace ? 'watched' : ''}/${o.metadata?.name}`);
    }
  }
  assert.ok(seen.has('ClusterRole//converge') && seen.has('Role/watched/converge') && seen.has(`RoleBinding/${OPERATOR_NAMESPACE}/converge-leader-election`), [...seen].join(', '));
});

test('names that only look like the install\'s are not taken: a suffix, a prefix, another namespace, missing labels', () => {
  const labels = { 'app.kubernetes.io/part-of': 'converge', 'app.kubernetes.io/name': 'converge' };
  for (const name of ['converge-staging', 'converge-webhook-staging', 'staging-converge', 'converge-dashboard-viewer']) {
    assert.equal(isInstallRbac({ kind: 'ClusterRole', metadata: { name, labels } }), false, name);
    assert.equal(isInstallRbac({ kind: 'ClusterRoleBinding', metadata: { name, labels } }), false, name);
  }
  assert.equal(isInstallRbac({ kind: 'Role', metadata: { name: 'converge-leader-election', namespace: 'team-a', labels } }), false);
  assert.equal(isInstallRbac({ kind: 'Role', metadata: { name: 'converge-staging', namespace: OPERATOR_NAMESPACE, labels } }), false);
  assert.equal(isInstallRbac({ kind: 'ClusterRole', metadata: { name: 'converge', labels: { 'app.kubernetes.io/part-of': 'converge' } } }), false);
  assert.equal(isInstallRbac({ kind: 'ServiceAccount', metadata: { name: 'converge', labels } }), false);
});
