/**
 * Pods the API server refuses to create (a namespace that enforces the `restricted` Pod Security
 * Standard, a quota on pods, a webhook) leave a Deployment with `ReplicaFailure=True`: the
 * Microservice's Ready message says so, in the API server's words, instead of "rolling out:
 * 0/2 updated" for the whole progress deadline.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NamespaceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, condition } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

test('pods refused at creation (Pod Security "restricted") show in the Ready message while the rollout waits', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.patch(NamespaceKind, { namespace: '', name: ns }, { type: 'merge', body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
  await client.create(MicroserviceKind, microservice(ns, 'locked', IMAGE, 8080));
  await startOperator(t, ns, { statusProgressIntervalMs: 1_000 });
  const ms = await eventually(async () => {
    const m = await getMs(client, ns, 'locked');
    return /pods cannot be created/.test(condition(m, 'Ready')?.message ?? '') ? m : undefined;
  }, { what: 'the Ready message naming the refused pods', timeoutMs: 45_000 });
  assert.equal(condition(ms, 'Ready')?.status, 'False');
  assert.equal(condition(ms, 'Ready')?.reason, 'RolloutInProgress', 'still the rollout: the Deployment controller keeps trying until its deadline');
  assert.match(condition(ms, 'Ready')?.message ?? '', /forbidden: violates PodSecurity "restricted/);
});
