/**
 * A change the vendor refuses, or fails to take, is `SpecApplied`'s: Ready and `status.usable`
 * keep describing the instance, which is observed all along. Before, a refused limits change (a
 * 4xx on setLimits) made a serving instance `Ready=False/VendorRejected`, usable=false, and froze
 * its observation for `rejectedRetrySeconds`: the instance going down or its account suspended
 * went unseen for 10 minutes; a 503 on the same write made it `EnsureFailed`, unusable too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../../packages/operators/src/operators/provider/index.ts';
import { sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, ready, waitFor, isReady, instancesOf } from './support.ts';
import type { ProviderEnv } from './support.ts';

const FAST = { provider: { observeIntervalSeconds: 1, usageRefreshSeconds: 2 } };
const cond = (d: DigitalHumanProvider, type: string) => d.status?.conditions?.find((c) => c.type === type);
const at = (d: DigitalHumanProvider, type: string) => {
  const c = cond(d, type);
  return c ? `${c.status}/${c.reason}@${c.observedGeneration}` : 'absent';
};
const limitWrites = (env: ProviderEnv) => env.sim.stats().requests['PATCH /v1/instances/{id}/limits'] ?? 0;
const setQuota = (env: ProviderEnv, name: string, dailyQuota: number) =>
  env.client.patch(DigitalHumanProviderKind, { namespace: env.ns, name }, { type: 'merge', body: { spec: { limits: { dailyQuota } } } });

test('a refused limits change leaves a serving instance Ready and usable, says so in SpecApplied (Stalled), and the instance stays observed', { timeout: 180_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'p', env.sim.baseUrl, { limits: { dailyQuota: 100 } }));
  const live = await waitFor(env.client, env.ns, 'p', (d) => isReady(d) && at(d, 'SpecApplied') === 'True/Applied@1', 'Ready with its limits applied');
  const id = live.status!.providerID!;

  env.sim.setFaults({ errors: { rate: 1, status: 422, ops: ['setLimits'] } });
  await setQuota(env, 'p', 200);
  const refused = await waitFor(env.client, env.ns, 'p', (d) => at(d, 'SpecApplied') === 'False/VendorRejected@2', 'SpecApplied=False/VendorRejected for generation 2');
  assert.equal(at(refused, 'Ready'), 'True/ProviderReady@2', 'the instance serves: Ready describes it');
  assert.equal(refused.status?.usable, true);
  assert.equal(refused.status?.limitedBy, undefined);
  assert.equal(at(refused, 'Stalled'), 'True/VendorRejected@2', 'kstatus: Failed for this generation');
  assert.equal(at(refused, 'Reconciling'), 'False/VendorRejected@2');
  assert.match(cond(refused, 'SpecApplied')!.message, /the vendor refused the limits of generation 2: .*422.*keeps serving as it was/);
  assert.equal(refused.status?.limits?.dailyQuota, 100, 'status.limits is what is in force');

  // Observed meanwhile: the instance going down, then its account suspended, are seen within seconds.
  const writes = limitWrites(env);
  env.sim.setHealth(id, 'down', 'GPU on fire');
  const down = await waitFor(env.client, env.ns, 'p', (d) => ready(d)?.reason === 'ProviderUnhealthy', 'ProviderUnhealthy seen while the change waits', 15_000);
  assert.equal(down.status?.usable, false);
  assert.match(ready(down)?.message ?? '', /GPU on fire/);
  assert.equal(at(down, 'SpecApplied'), 'False/VendorRejected@2', 'the refusal stays said');
  env.sim.setHealth(id, 'healthy');
  env.sim.suspendAccount(undefined, 'unpaid', 'NonPayment');
  await waitFor(env.client, env.ns, 'p', (d) => cond(d, 'AccountSuspended')?.status === 'True' && ready(d)?.reason === 'AccountSuspended', 'AccountSuspended seen while the change waits', 15_000);
  env.sim.resumeAccount();
  await waitFor(env.client, env.ns, 'p', (d) => at(d, 'Ready') === 'True/ProviderReady@2' && d.status?.usable === true, 'usable again once resumed', 15_000);
  assert.equal(limitWrites(env), writes, 'the refused write is not sent again while the spec is unchanged');

  // A spec the vendor accepts is applied at once.
  env.sim.clearFaults();
  await setQuota(env, 'p', 150);
  const applied = await waitFor(env.client, env.ns, 'p', (d) => isReady(d) && at(d, 'SpecApplied') === 'True/Applied@3', 'generation 3 applied');
  assert.equal(at(applied, 'Stalled'), 'False/NotStalled@3');
  assert.equal(env.sim.instances().find((i) => i.id === id)?.limits.dailyQuota, 150);
  assert.equal(instancesOf(env.sim, applied).length, 1);
});

test('a write that fails transiently (503) is ApplyFailed and retried: the instance stays Ready and usable', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'q', env.sim.baseUrl));
  await waitFor(env.client, env.ns, 'q', isReady, 'Ready');
  env.sim.setFaults({ errors: { rate: 1, status: 503, ops: ['setLimits'] } });
  await setQuota(env, 'q', 500);
  const failing = await waitFor(env.client, env.ns, 'q', (d) => at(d, 'SpecApplied') === 'False/ApplyFailed@2', 'ApplyFailed');
  assert.equal(at(failing, 'Ready'), 'True/ProviderReady@2');
  assert.equal(failing.status?.usable, true);
  assert.equal(at(failing, 'Reconciling'), 'True/ApplyFailed@2', 'kstatus: InProgress');
  assert.equal(at(failing, 'Stalled'), 'False/NotStalled@2');
  const before = limitWrites(env);
  await sleep(3_000);
  assert.ok(limitWrites(env) > before, 'retried by itself');
  env.sim.clearFaults();
  await waitFor(env.client, env.ns, 'q', (d) => isReady(d) && at(d, 'SpecApplied') === 'True/Applied@2', 'applied once the vendor takes it', 60_000);
});
