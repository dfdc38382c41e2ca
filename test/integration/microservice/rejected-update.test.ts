/**
 * An update the API server refuses as invalid (422, e.g. an immutable field) is a permanent,
 * explained failure: a handed-over Deployment whose `spec.selector` differs from the one the
 * operator needs can never be updated in place. The Microservice says `Failed` with the stable
 * reason `ApplyRejected`, names the field and what to do, emits a Warning Event, and stops
 * sending the refused write, also while the Deployment's status changes; once the user removes the
 * obstacle it converges.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind } from '@converge/runtime';
import type { Deployment } from '@converge/runtime';
import { MicroserviceKind, HANDOVER_ANNOTATION } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, getDeployment, waitReady, condition, deploymentPolicy } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

test('a handover the API server refuses (immutable selector) is Failed/ApplyRejected, explained, not retried', { timeout: 150_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const legacy: Deployment = {
    metadata: { name: 'legacy', namespace: ns, annotations: { [HANDOVER_ANNOTATION]: 'legacy' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { tier: 'legacy' } },
      template: { metadata: { labels: { tier: 'legacy' } }, spec: { containers: [{ name: 'app', image: 'example.com/legacy:1' }] } },
    },
  };
  const before = await client.create(DeploymentKind, legacy);
  await client.create(MicroserviceKind, microservice(ns, 'legacy', IMAGE, 8080));
  const op = await startOperator(t, ns, { resyncPeriodMs: 500 });

  const failed = await eventually(async () => {
    const ms = await getMs(client, ns, 'legacy');
    return ms.status?.phase === 'Failed' ? ms : undefined;
  }, { what: 'phase Failed', timeoutMs: 30_000 });
  assert.equal(failed.status?.reason, 'ApplyRejected');
  assert.match(failed.status?.message ?? '', /Deployment .*legacy/);
  assert.match(failed.status?.message ?? '', /spec\.selector/);
  assert.match(failed.status?.message ?? '', /immutable/);
  assert.match(failed.status?.message ?? '', /delete Deployment legacy/);
  assert.equal(condition(failed, 'Ready')?.reason, 'ApplyRejected');
  assert.equal(condition(failed, 'Stalled')?.status, 'True');
  assert.equal(condition(failed, 'Progressing')?.status, 'False');
  // The Event follows the status write's answer, which the operator may get after this test sees
  // the status (the fault proxy delays the operator's side).
  await eventually(() => op.events.some((e) => e.type === 'Warning' && e.reason === 'ApplyRejected' && /spec\.selector/.test(e.note ?? '')), { what: 'the ApplyRejected Warning Event', timeoutMs: 10_000 });

  // Not an endless retry: with a periodic check every 0.5 s, the refused update is not sent again.
  const updates = () => op.writeLog.filter((w) => w.resource === 'deployments').length;
  const sent = updates();
  // Nor when only the Deployment's status moves (kube-controller-manager's, or anyone's): a new
  // resourceVersion without a spec change makes the same write no more acceptable.
  for (let i = 0; i < 3; i++) {
    await client.patch(DeploymentKind, { namespace: ns, name: 'legacy' }, { type: 'merge', body: { status: { conditions: [{ type: 'Example', status: 'True', reason: `Step${i}`, message: 'a status-only change', lastUpdateTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }] } } }, { subresource: 'status' });
    await sleep(700);
  }
  await sleep(3_000);
  assert.equal(updates(), sent, `no further Deployment writes: ${JSON.stringify(op.writeLog)}`);
  const untouched = (await getDeployment(client, ns, 'legacy'))!;
  assert.equal(untouched.metadata.generation, before.metadata.generation, 'the Deployment spec was not modified');
  assert.equal(untouched.metadata.ownerReferences, undefined, 'not adopted: nothing half-applied');
  assert.equal(op.events.filter((e) => e.reason === 'ApplyRejected').length, 1, 'one Warning Event, not one per check');

  // What the message says to do works: delete the Deployment, the operator creates its own.
  await client.delete(DeploymentKind, { namespace: ns, name: 'legacy' });
  const ready = await waitReady(client, ns, 'legacy');
  const dep = (await getDeployment(client, ns, 'legacy'))!;
  assert.notEqual(dep.metadata.uid, before.metadata.uid);
  assert.equal(dep.metadata.ownerReferences?.[0]?.uid, ready.metadata.uid);
});

test('a create refused by a cluster admission policy (422) is sent again later: the policy can change while the Microservice does not', { timeout: 150_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const policy = await deploymentPolicy(t, client, ns, `freeze-deployments-${ns}`, { validate: 'false', message: 'Deployments are frozen in this namespace' }, IMAGE);

  const op = await startOperator(t, ns, { resyncPeriodMs: 500, refusalRetryMs: 3_000 });
  await client.create(MicroserviceKind, microservice(ns, 'frozen', IMAGE, 8080));
  const failed = await eventually(async () => {
    const ms = await getMs(client, ns, 'frozen');
    return ms.status?.reason === 'ApplyRejected' ? ms : undefined;
  }, { what: 'Failed/ApplyRejected', timeoutMs: 30_000 });
  assert.match(failed.status?.message ?? '', /frozen in this namespace/);

  // The cluster's administrator lifts the freeze; nothing about the Microservice changes.
  await policy.lift();
  const applied = await eventually(async () => {
    const ms = await getMs(client, ns, 'frozen');
    return ms.status?.phase === 'ResourcesApplied' ? ms : undefined;
  }, { what: 'ResourcesApplied once the refused create is sent again', timeoutMs: 30_000 });
  assert.equal(applied.status?.reason, undefined);
  assert.ok(await getDeployment(client, ns, 'frozen'));
  // Sent again on a slow beat, not on every periodic check (every 0.5 s here).
  const creates = op.writeLog.filter((w) => w.verb === 'create' && w.resource === 'deployments').length;
  assert.ok(creates <= 12, `${creates} Deployment creates`);
});
