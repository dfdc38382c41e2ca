/**
 * The vendor clients `createVendorApis` keeps, one per account (endpoint and token): an account
 * no call used for its idle time has its client closed and its token forgotten; an API object
 * still held for it opens a new client on its next call, and the call counts stay whole.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@converge/runtime';
import { startVendorSimulator } from '../../vendor-sim/index.ts';
import { createVendorApis } from './vendor-api.ts';
import { defaultProviderConfig } from './provider-config.ts';

const TOKEN = 'tok-idle-0123456789';

/** A simulator and the clients of `createVendorApis` on a FakeClock, idle after 10 minutes; both stopped after the test. */
async function setup(t: TestContext) {
  const sim = await startVendorSimulator({ token: TOKEN });
  t.after(() => sim.stop());
  const clock = new FakeClock();
  const apis = createVendorApis({ ...defaultProviderConfig, vendor: { ...defaultProviderConfig.vendor, timeoutMs: 2_000, caFile: sim.caPath } }, clock, undefined, { idleMs: 600_000 });
  t.after(() => apis.close());
  return { sim, clock, apis, signal: AbortSignal.timeout(10_000) };
}

test('an account idle for idleMs is closed and forgotten; an API held for it opens a new client on its next call', async (t) => {
  const { sim, clock, apis, signal } = await setup(t);
  const held = apis.forEndpoint(sim.baseUrl, TOKEN);
  await held.getAccount(signal);
  assert.equal(apis.knownAccounts(), 1);

  clock.advance(599_999);
  apis.sweepIdle();
  assert.equal(apis.knownAccounts(), 1, 'used within its idle time: kept');
  clock.advance(1);
  apis.sweepIdle();
  assert.equal(apis.knownAccounts(), 0, 'idle: closed, its token no longer held');
  assert.equal(apis.calls().getAccount?.calls, 1, 'its calls still count');

  await held.getAccount(signal);
  assert.equal(apis.knownAccounts(), 1, 'the held API opened a new client');
  assert.equal(apis.calls().getAccount?.calls, 2);
  assert.equal(apis.forEndpoint(sim.baseUrl, TOKEN), held, 'one API per account while it is known');
});

test('calls sweep too, at most once a minute: a rotated token\'s account goes without a sweep of its own', async (t) => {
  const { sim, clock, apis, signal } = await setup(t);
  await apis.forEndpoint(sim.baseUrl, 'tok-before-rotation').getAccount(signal).catch(() => undefined); // refused: the old token
  clock.advance(600_000);
  await apis.forEndpoint(sim.baseUrl, TOKEN).getAccount(signal);
  assert.equal(apis.knownAccounts(), 1, 'only the account in use is known');
});

test('every call to an endpoint provider.vendor.allowedEndpoints does not allow is refused here, before any request (local, Invalid)', async (t) => {
  const sim = await startVendorSimulator({ token: TOKEN });
  t.after(() => sim.stop());
  const apis = createVendorApis({ ...defaultProviderConfig, vendor: { ...defaultProviderConfig.vendor, timeoutMs: 2_000, caFile: sim.caPath, allowedEndpoints: ['https://vendor.allowed.example'] } }, new FakeClock());
  t.after(() => apis.close());
  const before = Object.values(sim.stats().requests).reduce((a, b) => a + b, 0);
  const api = apis.forEndpoint(sim.baseUrl, TOKEN);
  for (const call of [() => api.getAccount(AbortSignal.timeout(5_000)), () => api.findByIdempotencyKey('k', AbortSignal.timeout(5_000)), () => api.deleteInstance('i', AbortSignal.timeout(5_000))]) {
    await assert.rejects(call(), (err: Error & { kind?: string; operation?: string }) => err.kind === 'Invalid' && err.operation === 'createClient' && /allowedEndpoints/.test(err.message));
  }
  assert.equal(Object.values(sim.stats().requests).reduce((a, b) => a + b, 0), before, 'nothing reached the vendor');
});
