/**
 * Where a vendor instance lives is recorded, and an instance is never left behind by an edit of
 * `spec.endpoint`: with two vendor simulators (two endpoints), moving a provider that has an
 * instance is refused by the API server with a message saying why and what to do, and the
 * instance stays the only one; the way the message shows (delete, create anew) leaves exactly
 * one instance, at the new endpoint. An endpoint that never got a create can still be fixed in
 * place (test 'an unreachable endpoint is EnsureFailed; fixing it converges' in lifecycle.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, isNotFound } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { startVendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, waitFor, isReady, instancesOf } from './support.ts';

test('changing the endpoint of a provider with an instance is refused; the instance stays the only one', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  // A second vendor endpoint, same token, trusted through the same CA.
  const other = await startVendorSimulator({ token: env.token, dir: env.sim.dir });
  t.after(() => other.stop());
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'mover', env.sim.baseUrl));
  const ready = await waitFor(env.client, env.ns, 'mover', isReady, 'Ready at the first endpoint');
  assert.equal(instancesOf(env.sim, ready).length, 1);

  const refused = await env.client
    .patch(DigitalHumanProviderKind, { namespace: env.ns, name: 'mover' }, { type: 'merge', body: { spec: { endpoint: other.baseUrl } } })
    .then(() => undefined, (err: unknown) => err);
  if (!(refused instanceof ApiError)) {
    // Accepted: show what it costs before failing.
    await sleep(3_000);
    assert.fail(`the edit was accepted: ${instancesOf(env.sim, ready).length} instance(s) left at the first endpoint, ${other.instances().length} created at the second`);
  }
  assert.equal(refused.reason, 'Invalid', `the edit is refused: ${String(refused)}`);
  assert.equal(ready.status?.instanceEndpoint, env.sim.baseUrl, 'where the instance lives is recorded');
  assert.match(refused.message, /spec\.endpoint cannot change while a vendor instance may live at/);
  assert.ok(refused.message.includes(env.sim.baseUrl) && refused.message.includes(ready.status!.providerID!), refused.message);
  assert.match(refused.message, /Delete this DigitalHumanProvider .* and create a new one for/);
  await sleep(2_000); // several health checks
  assert.equal(instancesOf(env.sim, ready).length, 1, 'still exactly one instance, at the first endpoint');
  assert.equal(other.instances().length, 0, 'nothing at the second endpoint');
  assert.equal((await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'mover' })).spec.endpoint, env.sim.baseUrl);

  // What the message says: delete (the instance goes with it), create anew at the new endpoint.
  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'mover' });
  await eventually(async () => {
    try { await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'mover' }); return false; } catch (err) { return isNotFound(err); }
  }, { what: 'deleted', timeoutMs: 30_000 });
  assert.equal(env.sim.instances().length, 0, 'the instance was deleted at the first endpoint');
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'mover', other.baseUrl));
  const moved = await waitFor(env.client, env.ns, 'mover', isReady, 'Ready at the second endpoint');
  assert.equal(moved.status?.instanceEndpoint, other.baseUrl);
  assert.equal(other.instances().length, 1);
  assert.equal(env.sim.instances().length, 0, 'exactly one vendor instance in all');
});

test('an edit that leaves the endpoint alone is still accepted', { timeout: 60_000 }, async (t) => {
  const env = await setupProviders(t);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'edit', env.sim.baseUrl));
  await waitFor(env.client, env.ns, 'edit', isReady, 'Ready');
  await env.client.patch(DigitalHumanProviderKind, { namespace: env.ns, name: 'edit' }, { type: 'merge', body: { spec: { displayName: 'Renamed' } } });
  const renamed = await waitFor(env.client, env.ns, 'edit', (d) => isReady(d) && d.metadata.generation === 2, 'Ready for generation 2');
  assert.equal(instancesOf(env.sim, renamed)[0]?.displayName, 'Renamed');
});
