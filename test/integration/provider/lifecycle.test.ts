/**
 * DigitalHumanProvider on the local control plane against the vendor simulator: exactly one
 * instance, Ready with providerID; no-op touches cost no vendor write; failures and recovery
 * are reported per generation; deletion cleans up (also when the instance vanished first, and
 * after a vendor outage); health flips show in Ready; the token never reaches a log line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { isNotFound } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { eventually, kubeconfigPath, sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, waitFor, isReady, ready, instancesOf } from './support.ts';

const execFileAsync = promisify(execFile);

test('apply → one instance, Ready, providerID; no-op touches make no vendor writes; printer columns', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'one', env.sim.baseUrl));
  const dhp = await waitFor(env.client, env.ns, 'one', isReady, 'Ready');
  assert.equal(ready(dhp)?.reason, 'ProviderReady');
  const instances = instancesOf(env.sim, dhp);
  assert.equal(instances.length, 1);
  assert.equal(dhp.status?.providerID, instances[0]!.id);
  assert.ok(dhp.metadata.finalizers?.includes('dhp.example.com/provider-cleanup'));
  assert.equal(instances[0]!.displayName, 'Presenter one');

  const writesBefore = env.sim.stats().writes;
  for (let i = 0; i < 3; i++) {
    await env.client.patch(DigitalHumanProviderKind, { namespace: env.ns, name: 'one' }, { type: 'merge', body: { metadata: { annotations: { touch: String(i) } } } });
    await sleep(700);
  }
  await sleep(1_500); // and a couple of health checks
  assert.equal(env.sim.stats().writes - writesBefore, 0, 'no vendor write calls');
  assert.equal(instancesOf(env.sim, dhp).length, 1);

  const { stdout } = await execFileAsync('kubectl', ['--kubeconfig', kubeconfigPath(), '-n', env.ns, 'get', 'dhp']);
  assert.match(stdout.split('\n')[0]!, /NAME\s+REGION\s+READY\s+QUOTA LEFT\s+LIMITED BY\s+AGE/);
  assert.match(stdout, /one\s+ap-northeast-1\s+True\s+10000\s+\d+s/, "nothing limits it: the column is empty");
  const wide = (await execFileAsync('kubectl', ['--kubeconfig', kubeconfigPath(), '-n', env.ns, 'get', 'dhp', '-o', 'wide'])).stdout;
  assert.match(wide, new RegExp(`one\\s+.*${instances[0]!.id}\\s+ProviderReady`));

  // A displayName edit is a vendor update of the same instance.
  const live = await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'one' });
  await env.client.replace(DigitalHumanProviderKind, { ...live, spec: { ...live.spec, displayName: 'Renamed' } });
  await waitFor(env.client, env.ns, 'one', (d) => isReady(d) && d.metadata.generation === 2, 'Ready for generation 2');
  assert.equal(instancesOf(env.sim, dhp)[0]!.displayName, 'Renamed');
  assert.ok(!env.logs.some((l) => l.includes(env.token)), 'the token never appears in a log line');
});

test('an unreachable endpoint is EnsureFailed; fixing it converges', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'bad', 'https://127.0.0.1:1'));
  const failed = await waitFor(env.client, env.ns, 'bad', (d) => ready(d)?.reason === 'EnsureFailed', 'EnsureFailed');
  assert.equal(ready(failed)?.status, 'False');
  assert.equal(failed.status?.observedGeneration, failed.metadata.generation);
  await env.client.replace(DigitalHumanProviderKind, { ...failed, spec: { ...failed.spec, endpoint: env.sim.baseUrl } });
  const fixed = await waitFor(env.client, env.ns, 'bad', isReady, 'Ready after the fix', 60_000);
  assert.equal(fixed.metadata.generation, 2);
  assert.equal(instancesOf(env.sim, fixed).length, 1);
});

test('missing credentials wait for the Secret', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'nocreds', env.sim.baseUrl, { credentials: { secretRef: { name: 'later' } } }));
  await waitFor(env.client, env.ns, 'nocreds', (d) => ready(d)?.reason === 'CredentialsMissing', 'CredentialsMissing');
  const { SecretKind } = await import('@converge/runtime');
  await env.client.create(SecretKind, { metadata: { name: 'later', namespace: env.ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: env.token } });
  await waitFor(env.client, env.ns, 'nocreds', isReady, 'Ready once the Secret exists');
});

test('health flips show in Ready within the health interval, and back', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'flip', env.sim.baseUrl));
  const dhp = await waitFor(env.client, env.ns, 'flip', isReady, 'Ready');
  env.sim.setHealth(dhp.status!.providerID!, 'down', 'GPU lost');
  const down = await waitFor(env.client, env.ns, 'flip', (d) => ready(d)?.reason === 'ProviderUnhealthy', 'ProviderUnhealthy', 10_000);
  assert.equal(ready(down)?.status, 'False');
  env.sim.setHealth(dhp.status!.providerID!, 'healthy');
  await waitFor(env.client, env.ns, 'flip', (d) => ready(d)?.reason === 'ProviderReady', 'ProviderReady again', 10_000);
});

test('deletion: instance gone, CR gone; also when the instance vanished first and across a vendor outage', { timeout: 180_000 }, async (t) => {
  const env = await setupProviders(t);
  const gone = async (name: string) => eventually(async () => {
    try { await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name }); return false; } catch (err) { return isNotFound(err); }
  }, { timeoutMs: 60_000, what: `${name} deleted` });
  for (const name of ['plain', 'vanished', 'outage']) await env.client.create(DigitalHumanProviderKind, provider(env.ns, name, env.sim.baseUrl));
  const plain = await waitFor(env.client, env.ns, 'plain', isReady, 'plain Ready');
  const vanished = await waitFor(env.client, env.ns, 'vanished', isReady, 'vanished Ready');
  const outage = await waitFor(env.client, env.ns, 'outage', isReady, 'outage Ready');

  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'plain' });
  await gone('plain');
  assert.equal(instancesOf(env.sim, plain).length, 0, 'instance deleted');

  env.sim.deleteInstance(vanished.status!.providerID!);
  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'vanished' });
  await gone('vanished');

  env.sim.patchFaults({ outage: { mode: 'status', status: 503 } });
  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'outage' });
  const blocked = await waitFor(env.client, env.ns, 'outage', (d) => ready(d)?.reason === 'DeletionBlocked', 'DeletionBlocked');
  assert.ok(blocked.metadata.finalizers?.includes('dhp.example.com/provider-cleanup'), 'the finalizer holds while the vendor is down');
  await sleep(2_000);
  assert.equal(instancesOf(env.sim, outage).length, 1);
  env.sim.clearFaults();
  await gone('outage');
  assert.equal(instancesOf(env.sim, outage).length, 0, 'cleanup finished by itself after the outage');
});
