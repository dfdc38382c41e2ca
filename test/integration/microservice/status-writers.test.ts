/**
 * Status is shared with other writers: a condition type another controller adds to a
 * Microservice is never dropped by the operator's status writes, also when it arrives while a
 * reconcile is under way (the operator computed its conditions before, and writes after). The
 * race is provoked deterministically: the reconcile is held at a fault point until the other
 * writer's condition is in the operator's cache.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toRfc3339 } from '@converge/runtime';
import type { Condition } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, waitReady, condition } from './support.ts';
import type { OperatorUnderTest } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';
const AUDIT = 'audit.example.com/Approved';

test("another writer's condition survives a status write computed before it arrived", { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const key = { namespace: ns, name: 'shared' };
  let op: OperatorUnderTest | undefined;
  let held = false;
  const faultPoint = async (point: string): Promise<void> => {
    // After both children are created, before the ResourcesApplied status write: the
    // reconcile holds the Microservice it read (and wrote Accepted to) before the audit below.
    if (point !== 'microservice:after-apply-service' || held) return;
    held = true;
    const live = await getMs(client, ns, 'shared');
    const audit: Condition = { type: AUDIT, status: 'True', reason: 'Approved', message: 'approved by the audit controller', observedGeneration: live.metadata.generation ?? 0, lastTransitionTime: toRfc3339(new Date()) };
    await client.patch(MicroserviceKind, key, {
      type: 'merge',
      body: { metadata: { resourceVersion: live.metadata.resourceVersion }, status: { conditions: [...(live.status?.conditions ?? []), audit] } },
    }, { subresource: 'status' });
    await eventually(() => {
      const cached = op!.manager.cache.get(MicroserviceKind, key) as Microservice | undefined;
      return cached?.status?.conditions?.some((c) => c.type === AUDIT);
    }, { what: "the audit condition in the operator's cache" });
  };
  await client.create(MicroserviceKind, microservice(ns, 'shared', IMAGE, 8080));
  op = await startOperator(t, ns, { faultPoint });
  const ready = await waitReady(client, ns, 'shared');
  assert.ok(held, 'the reconcile was held at the fault point');
  assert.equal(ready.status?.phase, 'ResourcesApplied');
  assert.equal(condition(ready, AUDIT)?.status, 'True', `the audit condition survived: ${JSON.stringify(ready.status?.conditions?.map((c) => c.type))}`);
  assert.equal(condition(ready, AUDIT)?.message, 'approved by the audit controller');
});
