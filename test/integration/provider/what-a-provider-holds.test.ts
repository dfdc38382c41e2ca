/**
 * What a provider's key holds in the operator beyond its reconcile — a place among the users of
 * an account's watch, a place among the objects waiting for a vendor endpoint to answer — is
 * held only while the key's latest reconcile took it. Both were kept until the provider left the
 * cache: a provider whose Secret went kept its old account polled every observe interval, with a
 * token nothing named any more; one refused by the vendor after a timeout was counted as waiting
 * for the vendor (`converge_vendor_waiting_objects`) for good, and probed first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretKind } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, ready, waitFor, isReady } from './support.ts';

const FAST = { provider: { observeIntervalSeconds: 1, usageRefreshSeconds: 2 } };

test('a provider whose credentials are gone stops its account being polled', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'orphaned', env.sim.baseUrl));
  await waitFor(env.client, env.ns, 'orphaned', isReady, 'Ready');
  const reads = () => env.sim.stats().requests['GET /v1/account'] ?? 0;
  await eventually(() => reads() >= 2, { timeoutMs: 15_000, what: 'the account watch polling' });

  await env.client.delete(SecretKind, { namespace: env.ns, name: 'creds' });
  await waitFor(env.client, env.ns, 'orphaned', (d) => ready(d)?.reason === 'CredentialsMissing', 'CredentialsMissing');
  await sleep(1_500); // a round already under way may finish
  const after = reads();
  await sleep(4_000); // four observe intervals
  assert.equal(reads() - after, 0, `the account was read ${reads() - after} times in 4 s after the last provider using it lost its credentials`);
});

test('a provider whose token the vendor refuses polls no account', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  await env.client.create(SecretKind, { metadata: { name: 'revoked', namespace: env.ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: 'revoked-at-the-vendor-0123456789' } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'refused', env.sim.baseUrl, { credentials: { secretRef: { name: 'revoked' } } }));
  await waitFor(env.client, env.ns, 'refused', (d) => ready(d)?.reason === 'Unauthorized', 'Unauthorized');
  // The account is read only by its watch (the provider never got as far as observing an instance);
  // the provider's own lookups, on each periodic check, are not the watch's.
  const reads = () => env.sim.stats().requests['GET /v1/account'] ?? 0;
  await sleep(1_500); // a round already under way may finish
  const before = reads();
  await sleep(5_000); // five observe intervals
  assert.equal(reads() - before, 0, `the account was read ${reads() - before} times in 5 s with a token the vendor refuses`);
});

test('a provider refused by the vendor after a timeout no longer counts as waiting for the vendor', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  const waiting = async () => {
    const m = await env.manager().metrics.registry.getSingleMetric('converge_vendor_waiting_objects')!.get();
    return m.values[0]?.value ?? 0;
  };
  env.sim.setFaults({ errors: { rate: 1, status: 503, ops: ['create'] } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'refused', env.sim.baseUrl));
  await waitFor(env.client, env.ns, 'refused', (d) => ready(d)?.reason === 'EnsureFailed', 'EnsureFailed');
  await eventually(async () => (await waiting()) === 1, { timeoutMs: 15_000, what: 'one object waiting for the vendor' });

  env.sim.setFaults({ errors: { rate: 1, status: 400, ops: ['create'] } });
  await waitFor(env.client, env.ns, 'refused', (d) => ready(d)?.reason === 'VendorRejected', 'VendorRejected', 60_000);
  await eventually(async () => (await waiting()) === 0, { timeoutMs: 5_000, what: 'no object waiting for the vendor once it answered with a refusal' });
});

test('a first create held back because its key cannot be stored for the late-create sweep says so in the status, and sends nothing', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, { ...FAST, faults: { split: 0 } });
  assert.ok(env.proxy, 'runs through the fault proxy (CONVERGE_TEST_FAULTS=0 turns it off)');
  // The ledger's ConfigMaps cannot be written: the API server (behind the proxy) answers 500.
  const stops = [
    env.proxy.inject({ match: { method: 'POST', path: new RegExp(`/namespaces/${env.ns}/configmaps$`) }, answer: { status: 500 } }),
    env.proxy.inject({ match: { method: 'PUT', path: new RegExp(`/namespaces/${env.ns}/configmaps/converge-late-creates`) }, answer: { status: 500 } }),
  ];
  t.after(() => stops.forEach((s) => s()));
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'unrecorded', env.sim.baseUrl));
  const held = await waitFor(env.client, env.ns, 'unrecorded', (d) => ready(d)?.reason === 'EnsureFailed', 'EnsureFailed', 20_000);
  assert.match(ready(held)?.message ?? '', /cannot be stored for the late-create sweep yet, so no create is sent/);
  assert.equal(env.sim.instances().length, 0, 'no create sent');
  stops.forEach((s) => s());
  await waitFor(env.client, env.ns, 'unrecorded', isReady, 'Ready once the ledger can be written', 60_000);
});
