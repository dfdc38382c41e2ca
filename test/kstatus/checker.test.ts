/**
 * The kstatus checker itself: the real library's rules come through (generation not observed,
 * `Reconciling`, `Stalled`, a Deployment short of replicas, a List expanded, a deleted object),
 * so a test that reads "Current" from it reads kstatus's verdict, not a default.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureKstatusChecker, kstatusOf } from './kstatus.ts';

const base = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', generation: 3 } };
const withStatus = (status: unknown) => ({ ...base, status });

test('the checker builds (cached after the first time)', { timeout: 600_000 }, async () => {
  await ensureKstatusChecker((m) => console.log(`kstatus: ${m}`));
});

test('kstatus rules through the real library', { timeout: 600_000 }, async () => {
  const cases: Array<[string, unknown, string]> = [
    ['generation not observed', withStatus({ observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] }), 'InProgress'],
    ['Reconciling True', withStatus({ observedGeneration: 3, conditions: [{ type: 'Reconciling', status: 'True', reason: 'X' }] }), 'InProgress'],
    ['Stalled True', withStatus({ observedGeneration: 3, conditions: [{ type: 'Stalled', status: 'True', reason: 'Y', message: 'stuck' }] }), 'Failed'],
    ['Ready True', withStatus({ observedGeneration: 3, conditions: [{ type: 'Ready', status: 'True' }] }), 'Current'],
    ['Ready False', withStatus({ observedGeneration: 3, conditions: [{ type: 'Ready', status: 'False', reason: 'Z' }] }), 'InProgress'],
    ['being deleted', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, 'Terminating'],
    ['a Deployment short of replicas', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, replicas: 1 } }, 'InProgress'],
  ];
  const results = await kstatusOf(cases.map(([, obj]) => obj));
  assert.equal(results.length, cases.length);
  cases.forEach(([what, , want], i) => assert.equal(results[i]?.status, want, `${what}: ${JSON.stringify(results[i])}`));
  assert.equal(results[2]?.message, 'stuck');

  const list = await kstatusOf([{ apiVersion: 'v1', kind: 'List', items: [withStatus({ observedGeneration: 3 }), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }] }]);
  assert.deepEqual(list.map((r) => [r.kind, r.status]), [['Widget', 'Current'], ['ConfigMap', 'Current']]);
});

test('input that is not JSON is an error, not a status', { timeout: 600_000 }, async () => {
  await assert.rejects(kstatusOf(['{' as unknown]), /kstatus checker failed/);
});
