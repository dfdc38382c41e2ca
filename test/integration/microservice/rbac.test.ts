/**
 * The operators run under their own least-privilege RBAC in single-namespace mode: the Role
 * shipped in deploy/overlays/namespace-mode, bound to a ServiceAccount whose token (from the
 * TokenRequest API) is the operator's only credential. A Microservice converges and no request
 * is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { KubeClient, ServiceAccountKind, defineKind } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { startManager } from '../../support/operator-harness.ts';
import { registerMicroserviceOperator } from '../../../packages/operators/src/operators/microservice/index.ts';
import { setup, waitReady } from './support.ts';
import { serviceAccountKubeConfig } from '../../support/service-account.ts';

const execFileAsync = promisify(execFile);
const RoleKind = defineKind<KubeObject & { rules: unknown[] }>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', namespaced: true });
const RoleBindingKind = defineKind<KubeObject & { roleRef: unknown; subjects: unknown[] }>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true });

test('the operator converges a Microservice with only the namespace-mode Role', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const { stdout } = await execFileAsync('kubectl', ['kustomize', 'deploy/overlays/namespace-mode'], { maxBuffer: 16 << 20 });
  const role = parseAllDocuments(stdout).map((d) => d.toJS() as KubeObject & { rules: unknown[] }).find((o) => (o as { kind?: string }).kind === 'Role' && o.metadata.name === 'converge');
  assert.ok(role, 'the namespace-mode overlay has a Role named converge');
  await client.create(ServiceAccountKind, { metadata: { name: 'converge', namespace: ns } });
  await client.create(RoleKind, { metadata: { name: 'converge', namespace: ns }, rules: role.rules });
  await client.create(RoleBindingKind, {
    metadata: { name: 'converge', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'converge' },
    subjects: [{ kind: 'ServiceAccount', name: 'converge', namespace: ns }],
  });
  const kc = await serviceAccountKubeConfig(client, ns, 'converge');
  const saClient = new KubeClient({ kubeConfig: kc, userAgent: 'converge-operator-rbac-test', qps: 0 });
  const refused: string[] = [];
  saClient.observe({ onRequest: (r) => { if (r.code === 403) refused.push(`${r.verb} ${r.resource}`); } });
  // Anything outside the namespace is refused (least privilege).
  await assert.rejects(saClient.list(MicroserviceKind, {}), /forbidden/i);
  refused.length = 0;
  await startManager(t, {
    client: saClient,
    namespaces: [ns],
    configure: (m) => registerMicroserviceOperator(m, { events: { normal() {}, warning() {} } }),
  });
  await client.create(MicroserviceKind, { metadata: { name: 'rbac', namespace: ns }, spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } } });
  await waitReady(client, ns, 'rbac');
  assert.deepEqual(refused, [], 'no request of the operator was refused');
});
