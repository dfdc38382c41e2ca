/**
 * No needless writes: 100 converged Microservices cost zero writes over several periodic
 * checks, counted both by the operator's client and by the API server's audit log.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readAuditLog, auditLogSize } from '@converge/envtest';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, condition } from './support.ts';

test('100 converged CRs make zero writes over several periodic checks', { timeout: 400_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const N = 100;
  for (let i = 0; i < N; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => client.create(MicroserviceKind, microservice(ns, `ms-${i + j}`, 'ghcr.io/yrw9281/it30-todo-api:0.1.0', 8080))));
  }
  const op = await startOperator(t, ns, { resyncPeriodMs: 1_000 });
  await eventually(async () => {
    const list = await client.list(MicroserviceKind, { namespace: ns });
    return list.items.length === N && list.items.every((ms) => condition(ms, 'Ready')?.status === 'True' && ms.status?.observedGeneration === ms.metadata.generation);
  }, { timeoutMs: 300_000, intervalMs: 1_000, what: `${N} Microservices Ready` });
  await sleep(2_000); // let the last status writes settle
  const before = op.writes();
  const auditPath = process.env.CONVERGE_TEST_AUDIT_LOG;
  const auditOffset = auditPath ? await auditLogSize(auditPath) : 0;
  await sleep(5_000); // ≈ 5 periodic checks of every object
  const reconciles = (await op.manager.metrics.registry.getSingleMetric('controller_runtime_reconcile_total')?.get())?.values.reduce((n, v) => n + v.value, 0) ?? 0;
  assert.equal(op.writes() - before, 0, `writes while converged: ${JSON.stringify(op.writeLog.slice(before))}`);
  if (auditPath) {
    const writes = await readAuditLog(auditPath, { fromOffset: auditOffset, writesOnly: true, namespace: ns, userAgent: 'converge-operator' });
    assert.equal(writes.length, 0, 'the API server saw no write from the operator');
  }
  assert.ok(reconciles >= N * 3, `objects were checked periodically (${reconciles} reconciles)`);
});
