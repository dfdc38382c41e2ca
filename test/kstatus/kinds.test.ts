/**
 * kstatus compatibility, shown with the real kstatus library (sigs.k8s.io/cli-utils, through the
 * checker beside this file) on objects the operators wrote on the local control plane: both kinds
 * publish what kstatus reads (`Reconciling`, `Stalled`, `observedGeneration`), and kstatus says
 * Current when they are converged, InProgress while they work towards it, Failed when progress
 * needs a person (issue 18, item 13).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretKind } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';
import { eventually } from '../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, waitReady } from '../integration/microservice/support.ts';
import { setupProviders, provider, waitFor, isReady } from '../integration/provider/support.ts';
import { observedStatus } from '../../packages/operators/src/operators/provider/status-writer.ts';
import type { DigitalHumanProvider } from '../../packages/operators/src/operators/provider/index.ts';
import { ensureKstatusChecker, kstatusOf } from './kstatus.ts';
import type { KstatusResult } from './kstatus.ts';

type Conditioned = KubeObject & { status?: { conditions?: Array<{ type: string; status: string; reason?: string }> } };
const cond = (o: Conditioned, type: string) => o.status?.conditions?.find((c) => c.type === type);

async function kstatus(o: KubeObject): Promise<KstatusResult> {
  const [result] = await kstatusOf([o]);
  assert.ok(result?.status, `kstatus computed no status: ${JSON.stringify(result)}`);
  return result;
}

/** Waits until `read()` gives an object kstatus calls `want`; returns it with kstatus's answer. */
async function untilKstatus<T extends KubeObject>(want: string, read: () => Promise<T>, what: string, timeoutMs = 120_000): Promise<{ object: T; result: KstatusResult }> {
  let last: KstatusResult | undefined;
  try {
    return await eventually(async () => {
      const object = await read();
      last = await kstatus(object);
      return last.status === want ? { object, result: last } : undefined;
    }, { what, timeoutMs, intervalMs: 250 });
  } catch (err) {
    throw new Error(`${(err as Error).message}; kstatus last said ${JSON.stringify(last)}`);
  }
}

test('the kstatus checker is built', { timeout: 600_000 }, async () => {
  await ensureKstatusChecker((m) => console.log(`kstatus: ${m}`));
});

test('Microservice: Current when Ready, InProgress while its pods are not ready, Failed once the rollout stalls', { timeout: 300_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await startOperator(t, ns, { resyncPeriodMs: 2_000, defaults: { progressDeadlineSeconds: 8 } });

  await client.create(MicroserviceKind, microservice(ns, 'fine', 'ghcr.io/yrw9281/it30-todo-api:0.1.0', 8080));
  const ready = await waitReady(client, ns, 'fine');
  assert.equal((await kstatus(ready)).status, 'Current');
  assert.equal(cond(ready, 'Reconciling')?.status, 'False');
  assert.equal(cond(ready, 'Stalled')?.status, 'False');

  await client.create(MicroserviceKind, microservice(ns, 'broken', 'example.com/app:fail', 8080));
  const rolling = await untilKstatus('InProgress', async () => {
    const ms = await getMs(client, ns, 'broken');
    return ms.status?.observedGeneration === ms.metadata.generation && cond(ms, 'Ready')?.reason === 'RolloutInProgress' ? ms : Promise.reject(new Error('not applied yet'));
  }, 'broken InProgress for its generation');
  assert.equal(cond(rolling.object, 'Reconciling')?.status, 'True', 'kstatus reads Reconciling: it is published');
  assert.equal(cond(rolling.object, 'Reconciling')?.reason, 'RolloutInProgress');

  const failed = await untilKstatus('Failed', () => getMs(client, ns, 'broken'), 'broken Failed (the progress deadline of 8 s passed)');
  assert.equal(cond(failed.object, 'Stalled')?.reason, 'RolloutStalled');
  assert.equal(cond(failed.object, 'Reconciling')?.status, 'False');
  assert.match(failed.result.message ?? '', /rollout stalled/);
});

test('DigitalHumanProvider: Current when Ready, InProgress while the vendor is down, Failed when the vendor refuses its token', { timeout: 300_000 }, async (t) => {
  const env = await setupProviders(t);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'fine', env.sim.baseUrl));
  const ready = await waitFor(env.client, env.ns, 'fine', isReady, 'fine Ready', 60_000);
  assert.equal((await kstatus(ready)).status, 'Current');
  assert.equal(cond(ready, 'Reconciling')?.status, 'False');
  assert.equal(cond(ready, 'Stalled')?.status, 'False');

  env.sim.patchFaults({ outage: { mode: 'status', status: 503 } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'waiting', env.sim.baseUrl));
  const waiting = await untilKstatus('InProgress', async () => {
    const d = await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'waiting' });
    return cond(d, 'Ready')?.reason === 'EnsureFailed' ? d : Promise.reject(new Error('no vendor answer yet'));
  }, 'waiting InProgress during the outage', 60_000);
  assert.equal(cond(waiting.object, 'Reconciling')?.status, 'True');
  assert.equal(cond(waiting.object, 'Stalled')?.status, 'False');
  env.sim.clearFaults();
  await untilKstatus('Current', () => env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'waiting' }), 'waiting Current after the outage', 90_000);

  await env.client.create(SecretKind, { metadata: { name: 'wrong', namespace: env.ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: 'not-the-vendor-token' } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'refused', env.sim.baseUrl, { credentials: { secretRef: { name: 'wrong' } } }));
  // The operator may see the provider before the Secret reaches its cache: that first answer is
  // CredentialsMissing, also Failed (a Stalled reason), until the Secret's arrival re-reconciles it.
  const refused = await untilKstatus('Failed', async () => {
    const d = await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'refused' });
    return cond(d, 'Ready')?.reason === 'Unauthorized' ? d : Promise.reject(new Error(`Ready says ${cond(d, 'Ready')?.reason}, not Unauthorized yet`));
  }, 'refused Failed as Unauthorized', 60_000);
  assert.equal(cond(refused.object, 'Ready')?.reason, 'Unauthorized');
  assert.equal(cond(refused.object, 'Stalled')?.status, 'True');
  assert.equal(cond(refused.object, 'Stalled')?.reason, 'Unauthorized');
});

test('DigitalHumanProvider: a change the vendor refused is Failed for its generation while the instance serves (Ready True); one being retried is InProgress', { timeout: 600_000 }, async () => {
  // The status exactly as the operator's status writer makes it from an observation of a healthy instance.
  const dhp = {
    apiVersion: 'dhp.example.com/v1', kind: 'DigitalHumanProvider',
    metadata: { name: 'p', namespace: 'ns', uid: 'u', generation: 2 },
    spec: { endpoint: 'https://vendor.example', region: 'eu', credentials: { secretRef: { name: 's' } }, limits: { dailyQuota: 20_000 } },
  } as DigitalHumanProvider;
  const now = Date.parse('2026-12-06T12:00:00Z');
  const obs = {
    instanceId: 'inst-1', region: 'eu', health: { status: 'healthy' as const },
    account: { id: 'acct', state: 'active' as const, since: '2026-01-01T00:00:00Z' },
    limits: { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 10_000 },
    usage: { callsToday: 1, dailyQuota: 10_000, quotaRemaining: 9_999, refusedToday: 0, throttledRequests: 0, throttleWindowSeconds: 60, quotaResetAt: '2026-12-07T00:00:00.000Z', observedAt: '2026-12-06T12:00:00.000Z' },
  };
  const policy = { quotaPercent: 80, sustainedThrottlingMs: 300_000 };
  const refused = { ...dhp, status: observedStatus(dhp, obs, now, now, policy, { applied: { status: 'False', reason: 'VendorRejected', message: 'the vendor refused the limits of generation 2: dailyQuota above the plan' } }).status };
  const retried = { ...dhp, status: observedStatus(dhp, obs, now, now, policy, { applied: { status: 'False', reason: 'ApplyFailed', message: 'limits failed: HTTP 503; retrying with backoff' } }).status };
  const applied = { ...dhp, status: observedStatus(dhp, obs, now, now, policy, { applied: { status: 'True', reason: 'Applied', message: 'the vendor holds the spec of generation 2' } }).status };
  assert.equal(cond(refused, 'Ready')?.status, 'True');
  assert.equal(refused.status.usable, true);
  const [r, p, a] = await kstatusOf([refused, retried, applied]);
  assert.equal(r?.status, 'Failed', JSON.stringify(r));
  assert.match(r?.message ?? '', /refused the limits/);
  assert.equal(p?.status, 'InProgress', JSON.stringify(p));
  assert.equal(a?.status, 'Current', JSON.stringify(a));
});
