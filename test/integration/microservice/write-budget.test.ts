/**
 * The write budget of issue 17, counted by the operator's own client: on a cold start a
 * Microservice costs at most 4 API writes up to Ready (create Deployment, create Service, the
 * ResourcesApplied status, the Ready status: `Accepted` is not written on its own when the
 * children follow in the same reconcile) and one Event; a spec change costs at most 5 writes,
 * Event included (progress-only status changes are coalesced, at most one per
 * `statusProgressIntervalMs`). The status stays truthful: each generation ends Ready with its
 * own observedGeneration on the status and on every condition.
 *
 * The operator runs with a progress interval longer than the test, so the budget counts the
 * writes of state changes only: with the default (15 s), a rollout that takes longer than that
 * (as one may on a busy machine) has its progress written once more, a write the budget has no
 * room for and that says nothing about the write path. Progress-only changes are still held
 * back, and this shows it: none of them is written here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, condition } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api';
const N = 6;

test('cold start: ≤ 4 writes and 1 Event per Microservice up to Ready; a spec change: ≤ 5 writes, Event included', { timeout: 240_000 }, async (t) => {
  const { client, ns } = await setup(t);
  for (let i = 0; i < N; i++) await client.create(MicroserviceKind, microservice(ns, `wb-${i}`, `${IMAGE}:0.1.0`, 8080));
  const op = await startOperator(t, ns, { statusProgressIntervalMs: 3_600_000 });
  const allReady = (generation: number) => eventually(async () => {
    const list = await client.list(MicroserviceKind, { namespace: ns });
    return list.items.length === N && list.items.every((ms) =>
      ms.metadata.generation === generation && ms.status?.observedGeneration === generation && ms.status.phase === 'ResourcesApplied' &&
      ['Ready', 'Progressing', 'Stalled'].every((c) => condition(ms, c)?.observedGeneration === generation) &&
      condition(ms, 'Ready')?.status === 'True');
  }, { timeoutMs: 150_000, intervalMs: 500, what: `${N} Microservices Ready at generation ${generation}` });

  await allReady(1);
  const cold = [...op.writeLog];
  const byVerb = (log: { verb: string; resource: string }[]) => log.reduce<Record<string, number>>((m, w) => ({ ...m, [`${w.verb} ${w.resource}`]: (m[`${w.verb} ${w.resource}`] ?? 0) + 1 }), {});
  t.diagnostic(`cold start, ${N} Microservices: ${JSON.stringify(byVerb(cold))}; Events ${op.events.length}`);
  assert.equal(cold.filter((w) => w.verb === 'create').length, 2 * N, 'one create per child');
  assert.ok(cold.length <= 4 * N, `at most 4 writes per Microservice, got ${cold.length} for ${N}: ${JSON.stringify(byVerb(cold))}`);
  assert.ok(op.events.length <= N, `at most one Event per Microservice, got ${op.events.length}`);

  const eventsBefore = op.events.length;
  for (let i = 0; i < N; i++) {
    await client.patch(MicroserviceKind, { namespace: ns, name: `wb-${i}` }, { type: 'merge', body: { spec: { container: { image: `${IMAGE}:0.1.1` } } } });
  }
  await allReady(2);
  const change = op.writeLog.slice(cold.length);
  const changeEvents = op.events.length - eventsBefore;
  t.diagnostic(`spec change, ${N} Microservices: ${JSON.stringify(byVerb(change))}; Events ${changeEvents}`);
  assert.equal(change.filter((w) => w.verb === 'update' && w.resource === 'deployments').length, N, 'one Deployment update each');
  assert.ok(change.length + changeEvents <= 5 * N, `at most 5 writes per spec change (Events included), got ${change.length} + ${changeEvents} Events for ${N}`);
});
