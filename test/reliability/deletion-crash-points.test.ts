/**
 * Deletion after a crash never leaves a vendor instance behind (issue 12, items 13 and 17):
 * `converge run` is SIGKILLed at a named point of the create (`CONVERGE_FAULTS`), the CR is then
 * deleted, and a restarted operator must release the finalizer only once the vendor has
 * confirmed that no instance exists for the CR:
 * - killed after the vendor create, before the status write (no providerID), and the credentials
 *   Secret deleted before the CR: the deletion waits (`DeletionBlocked`) instead of dropping the
 *   finalizer, and finishes, instance deleted, once the Secret is back;
 * - killed after creating a replacement for an instance deleted at the vendor (the recorded
 *   providerID now names the gone one): the replacement is found by its key and deleted;
 * - killed after the create request was recorded, before it was sent, with the vendor down at
 *   deletion: the record says a create may exist, so the deletion waits for the vendor to confirm;
 * - deleted while the create was in flight (a slow vendor), killed when it answered (the kill
 *   storm's timing around a leaked instance, seed 819129): the instance is found by its key and
 *   deleted;
 * - the same, but the provider removed past its finalizer (the outcome of kube-apiserver's race,
 *   kubernetes#77988, made on purpose): nothing in the cluster points at the instance any more;
 *   the restarted operator's late-create sweep finds the key stored before the create and
 *   deletes it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretKind, isNotFound } from '@converge/runtime';
import { DigitalHumanProviderKind, PROVIDER_FINALIZER } from '../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../packages/operators/src/operators/provider/index.ts';
import { eventually, sleep } from '../support/operator-harness.ts';
import { reliabilityEnv, reliabilityReport, startWitness, diedAt, within } from './support/index.ts';
import type { ReliabilityEnv } from './support/index.ts';

const workersStarted = (l: Record<string, unknown>) => l.msg === 'starting workers';
const key = (env: ReliabilityEnv) => ({ namespace: env.ns, name: 'crash' });
const get = (env: ReliabilityEnv) => env.client.get(DigitalHumanProviderKind, key(env));
const ready = (d: DigitalHumanProvider) => d.status?.conditions?.find((c) => c.type === 'Ready');
const create = (env: ReliabilityEnv) =>
  env.client.create(DigitalHumanProviderKind, { metadata: { name: 'crash', namespace: env.ns }, spec: { endpoint: env.sim.baseUrl, region: 'ap-northeast-1', displayName: 'crash', credentials: { secretRef: { name: 'creds' } } } });
const mine = (env: ReliabilityEnv, uid: string) => env.sim.instances().filter((i) => i.idempotencyKey === uid);

async function waitGone(env: ReliabilityEnv, timeoutMs = 60_000): Promise<void> {
  await eventually(async () => {
    try { await get(env); return false; } catch (err) { return isNotFound(err); }
  }, { what: 'the provider deleted', timeoutMs });
}

/** Starts a replica that dies at `faults`, and waits for it to have died there. */
async function crash(env: ReliabilityEnv, faults: string, trigger: () => Promise<unknown>): Promise<void> {
  const doomed = env.startReplica('doomed', { operators: 'provider', faults });
  await doomed.waitFor(workersStarted);
  await trigger();
  assert.equal(await within(doomed.exited, 60_000, 'still running'), 'SIGKILL', `died by SIGKILL (last lines ${JSON.stringify(doomed.lines.slice(-4))})`);
  assert.equal(diedAt(doomed), faults.split('=')[0]);
}

test('killed after the vendor create, Secret deleted before the CR: the deletion waits for credentials, then deletes the instance', { timeout: 180_000 }, async (t) => {
  const fig = reliabilityReport(t, 2, 'Deletion after a crash: no providerID, no credentials');
  const env = await reliabilityEnv(t, 'rel-del', { resyncSeconds: 30, healthIntervalSeconds: 30 });
  const witness = await startWitness(env.client, env.ns, env.sim);
  t.after(() => witness.stop());
  await crash(env, 'provider:after-create=kill', () => create(env));
  const crashed = await get(env);
  const uid = crashed.metadata.uid!;
  assert.equal(crashed.status?.providerID, undefined, 'providerID not recorded');
  assert.equal(mine(env, uid).length, 1, 'the instance exists');

  await env.client.delete(SecretKind, { namespace: env.ns, name: 'creds' });
  await env.client.delete(DigitalHumanProviderKind, key(env));
  const restarted = env.startReplica('restarted', { operators: 'provider' });
  await restarted.waitFor(workersStarted);
  const blocked = await eventually(async () => {
    const d = await get(env).catch(() => undefined);
    if (!d) throw new Error('the finalizer was released although an instance exists under the CR key');
    return ready(d)?.reason === 'DeletionBlocked' ? d : undefined;
  }, { what: 'DeletionBlocked', timeoutMs: 30_000 });
  assert.ok(blocked.metadata.finalizers?.includes(PROVIDER_FINALIZER));
  assert.match(ready(blocked)!.message, /Secret creds/);
  await sleep(1_000);
  assert.equal(mine(env, uid).length, 1, 'still there: nothing was skipped');

  const restoredAt = Date.now();
  await env.client.create(SecretKind, { metadata: { name: 'creds', namespace: env.ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: env.token } });
  await waitGone(env);
  fig.ms('Secret restored to deletion finished', Date.now() - restoredAt);
  fig.orphans('orphaned vendor instances', mine(env, uid).length);
  fig.duplicates('duplicate vendor instances', witness.duplicateInstances());
  assert.equal(mine(env, uid).length, 0, 'the instance created before the crash was deleted');
  restarted.kill('SIGTERM');
  assert.equal(await restarted.exited, 0);
});

test('killed after creating a replacement (providerID names the gone instance): the replacement is found by key and deleted', { timeout: 180_000 }, async (t) => {
  const fig = reliabilityReport(t, 2, 'Deletion after a crash: stale providerID');
  const env = await reliabilityEnv(t, 'rel-del', { resyncSeconds: 30, healthIntervalSeconds: 1 });
  // The first create succeeds; the second (the replacement) is the last thing this replica does.
  await crash(env, 'provider:after-create=kill@2', async () => {
    await create(env);
    const live = await eventually(async () => {
      const d = await get(env);
      return ready(d)?.status === 'True' ? d : undefined;
    }, { what: 'Ready', timeoutMs: 30_000 });
    env.sim.deleteInstance(live.status!.providerID!); // deleted behind the operator's back
  });
  const crashed = await get(env);
  const uid = crashed.metadata.uid!;
  const replacement = mine(env, uid);
  assert.equal(replacement.length, 1, 'a replacement exists');
  assert.notEqual(replacement[0]!.id, crashed.status?.providerID, 'status still names the gone instance');

  await env.client.delete(DigitalHumanProviderKind, key(env));
  const restarted = env.startReplica('restarted', { operators: 'provider' });
  await waitGone(env);
  fig.orphans('orphaned vendor instances', mine(env, uid).length);
  assert.deepEqual(mine(env, uid).map((i) => i.id), [], 'the replacement was deleted');
  restarted.kill('SIGTERM');
  assert.equal(await restarted.exited, 0);
});

test('killed after the create request was recorded, before it was sent; vendor down at deletion: waits for the vendor to confirm', { timeout: 180_000 }, async (t) => {
  const fig = reliabilityReport(t, 2, 'Deletion after a crash: create recorded, never sent');
  const env = await reliabilityEnv(t, 'rel-del', { resyncSeconds: 30, healthIntervalSeconds: 30 });
  await crash(env, 'provider:before-create=kill', () => create(env));
  const crashed = await get(env);
  assert.equal(crashed.status?.instanceEndpoint, env.sim.baseUrl, 'the create request was recorded first');
  assert.ok(crashed.status?.createRequestedAt);
  assert.equal(env.sim.stats().creates, 0, 'and never sent');

  env.sim.patchFaults({ outage: { mode: 'status', status: 503 } });
  await env.client.delete(DigitalHumanProviderKind, key(env));
  const restarted = env.startReplica('restarted', { operators: 'provider' });
  await eventually(async () => ready(await get(env))?.reason === 'DeletionBlocked', { what: 'DeletionBlocked while the vendor is down', timeoutMs: 30_000 });
  await sleep(2_000);
  assert.ok((await get(env)).metadata.finalizers?.includes(PROVIDER_FINALIZER), 'the finalizer stays until the vendor confirms');
  const backAt = Date.now();
  env.sim.clearFaults();
  await waitGone(env);
  fig.ms('vendor back to deletion finished', Date.now() - backAt);
  fig.orphans('orphaned vendor instances', env.sim.instances().length);
  assert.equal(env.sim.stats().creates, 0);
  restarted.kill('SIGTERM');
  assert.equal(await restarted.exited, 0);
});

test('deleted while its create is in flight, killed when the create answers: the instance is found by key and deleted', { timeout: 180_000 }, async (t) => {
  const fig = reliabilityReport(t, 2, 'Deletion after a crash: deleted while the create was in flight');
  const env = await reliabilityEnv(t, 'rel-del', { resyncSeconds: 30, healthIntervalSeconds: 30 });
  // The vendor answers a create after 1.5 s (within the 2 s call timeout); the CR is deleted meanwhile.
  env.sim.patchFaults({ latency: { ms: 1_500, ops: ['create'] } });
  await crash(env, 'provider:after-create=kill', async () => {
    await create(env);
    await eventually(async () => (await get(env)).status?.createRequestedAt !== undefined, { what: 'the create request recorded', timeoutMs: 30_000, intervalMs: 20 });
    await env.client.delete(DigitalHumanProviderKind, key(env));
  });
  const crashed = await get(env);
  const uid = crashed.metadata.uid!;
  assert.ok(crashed.metadata.deletionTimestamp, 'deleted before the create answered');
  assert.equal(crashed.status?.providerID, undefined, 'providerID not recorded');
  assert.equal(mine(env, uid).length, 1, 'the instance exists');

  env.sim.clearFaults();
  const restarted = env.startReplica('restarted', { operators: 'provider' });
  await waitGone(env);
  fig.orphans('orphaned vendor instances', mine(env, uid).length);
  assert.equal(mine(env, uid).length, 0, 'the instance created while its CR was being deleted was deleted');
  restarted.kill('SIGTERM');
  assert.equal(await restarted.exited, 0);
});

test('removed past its finalizer while its create is in flight (kubernetes#77988), killed when the create answers: the next operator sweeps the key stored before the create', { timeout: 180_000 }, async (t) => {
  const fig = reliabilityReport(t, 2, 'Deletion after a crash: removed past its finalizer while the create was in flight');
  const env = await reliabilityEnv(t, 'rel-del', { resyncSeconds: 30, healthIntervalSeconds: 30 });
  env.sim.patchFaults({ latency: { ms: 1_500, ops: ['create'] } });
  let uid = '';
  await crash(env, 'provider:after-create=kill', async () => {
    uid = (await create(env)).metadata.uid!;
    await eventually(async () => (await get(env)).status?.createRequestedAt !== undefined, { what: 'the create request recorded', timeoutMs: 30_000, intervalMs: 20 });
    await env.client.patch(DigitalHumanProviderKind, key(env), { type: 'merge', body: { metadata: { finalizers: null } } });
    await env.client.delete(DigitalHumanProviderKind, key(env));
    await waitGone(env, 5_000);
  });
  assert.equal(mine(env, uid).length, 1, 'the instance exists, and no provider points at it');

  env.sim.clearFaults();
  const startedAt = Date.now();
  const restarted = env.startReplica('restarted', { operators: 'provider' });
  await eventually(() => mine(env, uid).length === 0, { what: 'the instance of the removed provider deleted', timeoutMs: 60_000 });
  fig.ms('restart to the instance deleted', Date.now() - startedAt);
  fig.orphans('orphaned vendor instances', mine(env, uid).length);
  assert.ok(restarted.lines.some((l) => String(l.msg).includes('kubernetes#77988') && l.idempotencyKey === uid), 'the log says what happened');
  restarted.kill('SIGTERM');
  assert.equal(await restarted.exited, 0);
});
