/**
 * Ownership before any write: a same-named object owned by someone else, or by nobody, is never
 * modified (OwnershipConflict) unless it is handed over by annotation; a CR deleted and
 * recreated with the same name never touches the old CR's children while they are collected.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind, ServiceKind } from '@converge/runtime';
import type { Service, Deployment } from '@converge/runtime';
import { MicroserviceKind, HANDOVER_ANNOTATION } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, getDeployment, getService, waitReady, condition } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';
const foreignService = (ns: string, name: string, annotations: Record<string, string> = {}): Service => ({
  metadata: { name, namespace: ns, labels: { owner: 'someone-else' }, annotations },
  spec: { selector: { legacy: 'yes' }, ports: [{ port: 1234, targetPort: 1234 }] },
});

test('an unowned same-named Service is an OwnershipConflict: untouched, and no Deployment created', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const svc = await client.create(ServiceKind, foreignService(ns, 'taken'));
  await client.create(MicroserviceKind, microservice(ns, 'taken', IMAGE, 8080));
  const op = await startOperator(t, ns);
  const failed = await eventually(async () => {
    const ms = await getMs(client, ns, 'taken');
    return ms.status?.phase === 'Failed' ? ms : undefined;
  }, { what: 'Failed' });
  assert.equal(failed.status?.reason, 'OwnershipConflict');
  assert.equal(condition(failed, 'Ready')?.reason, 'OwnershipConflict');
  assert.equal(condition(failed, 'Stalled')?.status, 'True');
  assert.equal(failed.status?.managedResources, undefined);
  assert.match(failed.status?.message ?? '', /Service .*taken/);
  await sleep(1_500);
  const after = (await getService(client, ns, 'taken'))!;
  assert.equal(after.metadata.resourceVersion, svc.metadata.resourceVersion, 'the Service was not modified');
  assert.equal(await getDeployment(client, ns, 'taken'), undefined, 'the Deployment was not created');
  assert.ok(op.events.some((e) => e.type === 'Warning' && e.reason === 'OwnershipConflict'));

  // Handover by annotation: adopted, and the CR converges.
  await client.patch(ServiceKind, { namespace: ns, name: 'taken' }, { type: 'merge', body: { metadata: { annotations: { [HANDOVER_ANNOTATION]: 'taken' } } } });
  const ms = await waitReady(client, ns, 'taken');
  const adopted = (await getService(client, ns, 'taken'))!;
  assert.equal(adopted.metadata.uid, svc.metadata.uid, 'adopted, not recreated');
  assert.equal(adopted.metadata.ownerReferences?.find((r) => r.controller)?.uid, ms.metadata.uid);
  assert.deepEqual(adopted.spec?.ports?.map((p) => p.port), [8080]);
  assert.ok(op.events.some((e) => e.reason === 'Adopted'));
});

test('a Deployment controlled by another object is never modified', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const owner = await client.create(ServiceKind, { metadata: { name: 'owner', namespace: ns }, spec: { ports: [{ port: 80 }] } });
  const dep: Deployment = {
    metadata: { name: 'busy', namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'owner', uid: owner.metadata.uid!, controller: true }] },
    spec: { replicas: 1, selector: { matchLabels: { x: 'y' } }, template: { metadata: { labels: { x: 'y' } }, spec: { containers: [{ name: 'c', image: 'example.com/other:1' }] } } },
  };
  const created = await client.create(DeploymentKind, dep);
  await client.create(MicroserviceKind, microservice(ns, 'busy', IMAGE, 8080));
  await startOperator(t, ns);
  await eventually(async () => (await getMs(client, ns, 'busy')).status?.reason === 'OwnershipConflict', { what: 'OwnershipConflict' });
  await sleep(1_000);
  const live = (await getDeployment(client, ns, 'busy'))!;
  assert.equal(live.spec?.template.spec?.containers[0]?.image, 'example.com/other:1');
  assert.equal(live.metadata.generation, created.metadata.generation);
  assert.equal(await getService(client, ns, 'busy'), undefined, 'nothing half-applied: no Service either');
});

test('a Deployment controlled by a Microservice of another API group is an OwnershipConflict, not a predecessor to wait for', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  // An earlier platform's kind of the same name (its group not served here: garbage collection
  // cannot resolve the owner and leaves the Deployment alone, as it would a live owner).
  const dep: Deployment = {
    metadata: { name: 'older', namespace: ns, ownerReferences: [{ apiVersion: 'legacy.example.com/v1', kind: 'Microservice', name: 'older', uid: '6d1c8c43-0000-4000-8000-000000000001', controller: true }] },
    spec: { replicas: 1, selector: { matchLabels: { x: 'y' } }, template: { metadata: { labels: { x: 'y' } }, spec: { containers: [{ name: 'c', image: 'example.com/other:1' }] } } },
  };
  const created = await client.create(DeploymentKind, dep);
  await client.create(MicroserviceKind, microservice(ns, 'older', IMAGE, 8080));
  await startOperator(t, ns);
  const failed = await eventually(async () => {
    const ms = await getMs(client, ns, 'older');
    return ms.status?.reason === 'OwnershipConflict' ? ms : undefined;
  }, { what: 'OwnershipConflict', timeoutMs: 15_000 });
  assert.match(failed.status?.message ?? '', /controlled by Microservice older/);
  const live = (await getDeployment(client, ns, 'older'))!;
  assert.equal(live.metadata.generation, created.metadata.generation, 'not modified');
});

test('a handover whose Deployment the API server refuses adopts neither child: nothing half-applied', { timeout: 150_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const legacy = { tier: 'legacy' };
  await client.create(DeploymentKind, {
    metadata: { name: 'both', namespace: ns, annotations: { [HANDOVER_ANNOTATION]: 'both' } },
    spec: { replicas: 1, selector: { matchLabels: legacy }, template: { metadata: { labels: legacy }, spec: { containers: [{ name: 'app', image: 'example.com/legacy:1' }] } } },
  });
  const svc = await client.create(ServiceKind, { metadata: { name: 'both', namespace: ns, annotations: { [HANDOVER_ANNOTATION]: 'both' } }, spec: { selector: legacy, ports: [{ port: 80, targetPort: 8080 }] } });
  await client.create(MicroserviceKind, microservice(ns, 'both', IMAGE, 8080));
  const op = await startOperator(t, ns);
  const failed = await eventually(async () => {
    const ms = await getMs(client, ns, 'both');
    return ms.status?.phase === 'Failed' ? ms : undefined;
  }, { what: 'phase Failed', timeoutMs: 30_000 });
  assert.equal(failed.status?.reason, 'ApplyRejected');
  assert.match(failed.status?.message ?? '', /spec\.selector/);
  await sleep(1_000);
  const after = (await getService(client, ns, 'both'))!;
  assert.equal(after.metadata.resourceVersion, svc.metadata.resourceVersion, 'the Service was not adopted nor changed');
  assert.deepEqual(after.spec?.selector, legacy);
  assert.equal(after.metadata.ownerReferences, undefined);
  assert.ok(!op.events.some((e) => e.reason === 'Adopted'), 'nothing was adopted');
});

test('a CR recreated with the same name never modifies the old children', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'again', IMAGE, 8080));
  const op = await startOperator(t, ns);
  const first = await waitReady(client, ns, 'again');
  const oldUid = first.metadata.uid!;
  const writtenForOld: string[] = [];
  op.manager.client.observe({
    onWrite: (kind, obj) => {
      if (kind.kind === 'Microservice') return;
      if (obj.metadata.ownerReferences?.some((r) => r.uid === oldUid)) writtenForOld.push(`${kind.kind}/${obj.metadata.name}`);
    },
  });
  // Foreground-free delete: children are collected in the background, while the new CR exists.
  await client.delete(MicroserviceKind, { namespace: ns, name: 'again' });
  await client.create(MicroserviceKind, microservice(ns, 'again', 'ghcr.io/yrw9281/it30-todo-api:0.2.0', 8081));
  const second = await waitReady(client, ns, 'again', 120_000);
  assert.notEqual(second.metadata.uid, oldUid);
  assert.deepEqual(writtenForOld, [], 'no write to a child of the old CR');
  const dep = (await getDeployment(client, ns, 'again'))!;
  assert.equal(dep.metadata.ownerReferences?.[0]?.uid, second.metadata.uid);
  assert.equal(dep.spec?.template.spec?.containers[0]?.image, 'ghcr.io/yrw9281/it30-todo-api:0.2.0');
});
