/**
 * A new Microservice deleted while its first reconcile creates the children: the operator makes
 * no live read of a never-applied owner before creating them (issue 17: one request less per new
 * Microservice), so the status write that follows is what finds the owner gone. The children
 * that reconcile created are left to garbage collection (the operator may not delete children:
 * its RBAC grants create and update only), and not created again.
 *
 * Deterministic: both child writes are held at their fault points until the Microservice is
 * deleted and the operator's cache has seen it.
 *
 * The other side of that judgement: a 404 is not always a deletion. kube-apiserver answers 404
 * for a custom resource that exists while its CRD does not serve the version or subresource asked
 * for (an older CRD applied during a rollback, a CRD being re-established), so a Microservice
 * found "gone" that way must be reconciled again: at once when the watch shows a new version of
 * it, and after a live read that finds it otherwise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { NO_FAULTS } from '../../support/fault-proxy.ts';
import { setup, startOperator, microservice, getDeployment, getService, getMs } from './support.ts';
import type { OperatorUnderTest } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

test('children created for a Microservice deleted during its first reconcile are collected, not deleted by the operator, and not created again', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const held = new Set<string>();
  const faultPoint = async (point: string): Promise<void> => {
    if (!point.startsWith('microservice:before-apply-')) return;
    held.add(point);
    await released;
  };
  const op: OperatorUnderTest = await startOperator(t, ns, { faultPoint, faults: false });
  const created = await client.create(MicroserviceKind, microservice(ns, 'brief', IMAGE, 8080));
  await eventually(() => held.size === 2, { what: 'both child writes held' });

  await client.delete(MicroserviceKind, { namespace: ns, name: 'brief' });
  await eventually(() => op.manager.cache.get(MicroserviceKind, { namespace: ns, name: 'brief' }) === undefined, { what: 'the deletion in the operator cache' });
  release();

  const childWrites = (verb: string) => op.writeLog.filter((w) => w.verb === verb && (w.resource === 'deployments' || w.resource === 'services'));
  await eventually(() => childWrites('create').length >= 2, { what: 'both children created (the held writes)', timeoutMs: 30_000 });
  await eventually(async () => {
    const [d, s] = [await getDeployment(client, ns, 'brief'), await getService(client, ns, 'brief')];
    return !d && !s;
  }, { what: 'no child left (garbage collection: their owner UID is gone)', timeoutMs: 60_000 });
  const creates = childWrites('create');
  const deletes = childWrites('delete');
  assert.deepEqual(creates.map((w) => w.resource).sort(), ['deployments', 'services'], 'each child created once (the held writes)');
  assert.deepEqual(deletes, [], 'no delete from the operator: it holds no delete permission on children');
  assert.equal(op.writeLog.filter((w) => w.resource === 'microservices').length, 0, 'no status write to a gone Microservice');
  assert.ok(created.metadata.uid);
  // Nothing comes back: the child delete events re-queue a key the cache no longer has.
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(op.writeLog.filter((w) => w.verb === 'create' && w.resource === 'deployments').length, 1, 'not created again');
});

test('a Microservice whose status write was answered 404 while it exists is reconciled again, not taken for deleted forever', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const op = await startOperator(t, ns, { faults: NO_FAULTS });
  if (!op.proxy) return t.skip('needs the fault proxy (CONVERGE_TEST_FAULTS=0 turns it off)');
  // The first status write of each Microservice meets the 404 of a CRD that briefly serves nothing.
  op.proxy.inject({ match: { method: 'PATCH', path: /\/microservices\/(quiet|edited)\/status$/ }, answer: { status: 404 }, times: 2 });
  await client.create(MicroserviceKind, microservice(ns, 'quiet', IMAGE, 8080));
  await client.create(MicroserviceKind, microservice(ns, 'edited', IMAGE, 8080));
  await eventually(() => (op.proxy!.stats().injected['404'] ?? 0) === 2, { what: 'both first status writes answered 404' });

  // Left alone: a live read finds it there, and it converges.
  await eventually(async () => (await getMs(client, ns, 'quiet')).status?.phase === 'ResourcesApplied', { what: 'quiet: ResourcesApplied after the 404', timeoutMs: 60_000 });
  // Edited: the watch shows a new version of the same object, which is reconciled at once.
  // A merge patch, not a replace of what was read: the operator's status write may land between
  // the read and the write (a 409 on a loaded machine).
  await client.patch(MicroserviceKind, { namespace: ns, name: 'edited' }, { type: 'merge', body: { spec: { container: { port: 9090 } } } });
  await eventually(async () => {
    const ms = await getMs(client, ns, 'edited');
    return ms.status?.phase === 'ResourcesApplied' && ms.status.observedGeneration === ms.metadata.generation;
  }, { what: 'edited: ResourcesApplied for its new generation', timeoutMs: 60_000 });
  assert.equal((await getService(client, ns, 'edited'))?.spec?.ports?.[0]?.port, 9090);
});
