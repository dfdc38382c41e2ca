/**
 * Checklist item 7, "vendor faults": the DigitalHumanProvider operator against a vendor that
 * answers 30 % of its requests with 5xx throughout, sends three bursts of ten 429s (Retry-After
 * 1 s: at the creates, at the updates, after the outage; the 5xx fall at random, seeded), loses create responses (the instance
 * is made, the answer never arrives), and goes down entirely for
 * 15 s (60 s with CONVERGE_RELIABILITY_LONG=1; first half connection resets, second half 503)
 * while half of the CRs are being deleted. Every CR ends with exactly one instance, deletions
 * are held (DeletionBlocked) during the outage and all finish by themselves after it — with the
 * 30 % 5xx still on — and no instance is left behind. Finally the vendor heals completely and the
 * remaining CRs must all be Ready again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';
import { eventually, sleep } from '../support/operator-harness.ts';
import { reliabilityEnv, reliabilityReport, startWitness, waitConverged, describe, Churn, random, LONG } from './support/index.ts';

const N = 20;
const OUTAGE_MS = LONG ? 60_000 : 15_000;

test(`30 % 5xx, 429 bursts, lost responses and a ${OUTAGE_MS / 1000} s outage during deletions: one instance per CR, every deletion finishes`, { timeout: LONG ? 600_000 : 300_000 }, async (t) => {
  const fig = reliabilityReport(t, 7, 'Vendor faults');
  const env = await reliabilityEnv(t, 'rel-vendor', { healthIntervalSeconds: 2 });
  const witness = await startWitness(env.client, env.ns, env.sim);
  t.after(() => witness.stop());
  env.sim.patchFaults({ errors: { rate: 0.3, spread: 'random', seed: 7 }, loseCreateResponses: { count: 5 }, burst429: { count: 10, retryAfterSeconds: 1 } });
  const op = await env.startInProcess({ operators: ['provider'] });

  const churn = new Churn({ client: env.client, ns: env.ns, rng: random.seeded(7), endpoint: env.sim.baseUrl, microservices: false });
  const startedAt = Date.now();
  for (let i = 0; i < N; i++) await churn.createProvider(`dhp-${i}`);
  const ready = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 180_000 });
  fig.ms(`${N} providers Ready under faults`, Date.now() - startedAt);
  assert.ok(ready.converged, describe(ready));
  env.sim.patchFaults({ burst429: { count: 10, retryAfterSeconds: 1 } }); // a second burst
  for (let i = 0; i < N; i += 2) await churn.updateProvider(`dhp-${i}`);
  const updated = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 180_000 });
  fig.ms('displayName changes applied under faults', updated.tookMs);
  assert.ok(updated.converged, describe(updated));

  // The vendor goes down, and half of the CRs are deleted while it is down.
  env.sim.patchFaults({ outage: { mode: 'reset' } });
  const downAt = Date.now();
  for (let i = 0; i < N; i += 2) await churn.deleteProvider(`dhp-${i}`);
  const blocked = await eventually(async () => {
    const list = await env.client.list(DigitalHumanProviderKind, { namespace: env.ns });
    const terminating = list.items.filter((d) => d.metadata.deletionTimestamp);
    const held = terminating.filter((d) => d.status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'DeletionBlocked');
    return held.length === N / 2 ? held.length : undefined;
  }, { timeoutMs: OUTAGE_MS, intervalMs: 250, what: 'every deletion held as DeletionBlocked' }).catch(() => 0);
  await sleep(Math.max(0, OUTAGE_MS / 2 - (Date.now() - downAt)));
  env.sim.patchFaults({ outage: { mode: 'status', status: 503 } });
  await sleep(Math.max(0, OUTAGE_MS - (Date.now() - downAt)));
  const stillThere = (await env.client.list(DigitalHumanProviderKind, { namespace: env.ns })).items.length;
  // Back, with 5xx still on, a third 429 burst and more lost create responses armed.
  env.sim.patchFaults({ outage: null, burst429: { count: 10, retryAfterSeconds: 1 }, loseCreateResponses: { count: 3 } });
  const backAt = Date.now();

  const deletionsDone = await eventually(async () => {
    const list = await env.client.list(DigitalHumanProviderKind, { namespace: env.ns });
    return list.items.length === N / 2 ? Date.now() : undefined;
  }, { timeoutMs: LONG ? 900_000 : 240_000, intervalMs: 250, what: 'every deletion finished' }).catch(() => undefined);
  // The vendor heals completely: the remaining CRs must all be Ready again.
  env.sim.clearFaults();
  const healedAt = Date.now();
  const result = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: LONG ? 900_000 : 240_000 });
  const allReadyAt = Date.now();
  const stats = env.sim.stats();

  fig.count('5xx injected', stats.injected.errors);
  fig.count('429 sent', stats.rateLimited);
  fig.count('create responses lost', stats.injected.lostResponses);
  fig.count('requests refused by the outage', stats.injected.outages);
  fig.count('vendor creates', stats.creates);
  fig.count('create replays (same Idempotency-Key)', stats.createReplays);
  fig.ms('vendor outage', backAt - downAt);
  fig.count('deletions held as DeletionBlocked during the outage', blocked);
  fig.count('CRs still present when the vendor came back', stillThere);
  fig.ms('vendor back to all deletions finished', deletionsDone === undefined ? -1 : deletionsDone - backAt);
  fig.ms('faults cleared to the remaining CRs Ready', result.converged ? allReadyAt - healedAt : -1);
  fig.duplicates('duplicate vendor instances', witness.duplicateInstances());
  fig.orphans('orphaned vendor instances', result.orphanInstances);
  fig.stuck('stuck Terminating', result.stuckTerminating);
  const total = async (name: string) => (await op.manager.metrics.registry.getSingleMetric(name)?.get())?.values.reduce((n, v) => n + v.value, 0) ?? 0;
  fig.count('reconcile errors retried', await total('controller_runtime_reconcile_errors_total'));
  fig.count('CRs woken because the vendor answered again (probes included)', await total('converge_vendor_recovery_wakes_total'));

  if (deletionsDone !== undefined && deletionsDone - backAt > 2 * OUTAGE_MS) {
    fig.note(
      `deletions finished ${Math.round((deletionsDone - backAt) / 1000)} s after a ${OUTAGE_MS / 1000} s outage: every failed attempt doubles the CR's ` +
        'retry delay (jittered, capped at provider.maxRetryDelaySeconds, 30 s), the 5xx stay on and a 429 burst pauses the endpoint right after the outage',
    );
  }
  assert.ok(result.converged, describe(result));
  assert.equal(blocked, N / 2, 'during the outage every deletion was held with reason DeletionBlocked');
  assert.equal(stillThere, N / 2 + N / 2, 'no deletion finished while the vendor was down');
  assert.ok(deletionsDone !== undefined, 'all deletions finished after recovery');
  assert.equal(witness.duplicateInstances(), 0);
  assert.equal(stats.creates, N, 'exactly one create per CR');
  assert.equal(env.sim.instances().length, N / 2, 'one instance per remaining CR, none left behind');
  assert.ok(stats.injected.errors > 0 && stats.rateLimited > 0 && stats.injected.lostResponses > 0, 'every fault fired');
  await op.stop();
});
