/**
 * The provider operator under vendor faults: a lost create response and a crash between the
 * vendor create and the status write both end with exactly one instance; a spec edit made
 * while a reconcile is in flight is never reverted; 50 CRs against a vendor limited to
 * 5 requests/s all become Ready with only a handful of 429s.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { startReplica } from '../../support/operator-process.ts';
import { setupProviders, provider, waitFor, isReady, instancesOf } from './support.ts';

test('a lost create response still yields exactly one instance', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  env.sim.patchFaults({ loseCreateResponses: { count: 1 } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'lost', env.sim.baseUrl));
  const dhp = await waitFor(env.client, env.ns, 'lost', isReady, 'Ready');
  assert.equal(env.sim.stats().injected.lostResponses, 1, 'the fault fired');
  assert.equal(instancesOf(env.sim, dhp).length, 1);
  assert.equal(dhp.status?.providerID, instancesOf(env.sim, dhp)[0]!.id);
});

test('a crash between the vendor create and the status write yields exactly one instance', { timeout: 180_000 }, async (t) => {
  const env = await setupProviders(t, { startOperator: false });
  const dir = mkdtempSync(join(tmpdir(), 'converge-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `provider:\n  healthIntervalSeconds: 1\n  vendor:\n    caFile: ${env.sim.caPath}\n`);
  const args = ['--namespace', env.ns, '--operators', 'provider', '--config', config, '--metrics-bind-address', '0', '--health-probe-bind-address', '0'];
  const first = startReplica('crashing', args, { CONVERGE_FAULTS: 'provider:after-create=kill' });
  t.after(() => first.kill('SIGKILL'));
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'crash', env.sim.baseUrl));
  assert.equal(await first.exited, 'SIGKILL', 'the operator died at the fault point');
  const cr = await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'crash' });
  assert.equal(cr.status?.providerID, undefined, 'the status write never happened');
  assert.equal(instancesOf(env.sim, cr).length, 1, 'the instance was created');
  const second = startReplica('restarted', args);
  t.after(() => second.kill('SIGKILL'));
  const dhp = await waitFor(env.client, env.ns, 'crash', isReady, 'Ready after restart', 60_000);
  assert.equal(instancesOf(env.sim, dhp).length, 1, 'no duplicate instance');
  assert.equal(env.sim.stats().creates, 1);
  second.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});

test('a spec edit made while a reconcile is in flight is never reverted', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  env.sim.patchFaults({ latency: { ms: 1_500 } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'edit', env.sim.baseUrl, { displayName: 'first' }));
  await sleep(500); // the reconcile is now waiting on the slow vendor
  const live = await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'edit' });
  await env.client.replace(DigitalHumanProviderKind, { ...live, spec: { ...live.spec, displayName: 'second' } });
  const dhp = await waitFor(env.client, env.ns, 'edit', (d) => isReady(d) && d.metadata.generation === 2, 'Ready for the edited generation', 60_000);
  assert.equal(dhp.spec.displayName, 'second', 'the user edit survived');
  env.sim.clearFaults();
  await eventually(() => instancesOf(env.sim, dhp)[0]?.displayName === 'second', { what: 'vendor has the edited name' });
  assert.equal(instancesOf(env.sim, dhp).length, 1);
});

test('50 CRs against a vendor limited to 5 requests/s: all Ready, a handful of 429s at most', { timeout: 300_000 }, async (t) => {
  const env = await setupProviders(t, { healthIntervalSeconds: 30, vendor: { requestsPerSecond: 4, burst: 4, maxConcurrency: 4 } });
  env.sim.patchFaults({ rateLimit: { requestsPerSecond: 5, burst: 5 } });
  const N = 50;
  await Promise.all(Array.from({ length: N }, (_, i) => env.client.create(DigitalHumanProviderKind, provider(env.ns, `p-${i}`, env.sim.baseUrl))));
  const started = Date.now();
  await eventually(async () => {
    const list = await env.client.list(DigitalHumanProviderKind, { namespace: env.ns });
    return list.items.length === N && list.items.every(isReady);
  }, { timeoutMs: 240_000, intervalMs: 1_000, what: `${N} providers Ready` });
  const stats = env.sim.stats();
  t.diagnostic(`50 providers Ready in ${Date.now() - started} ms; vendor requests ${Object.values(stats.requests).reduce((a, b) => a + b, 0)}, 429s ${stats.rateLimited}, creates ${stats.creates}`);
  assert.equal(stats.liveInstances, N);
  assert.equal(stats.creates, N, 'one create per CR');
  assert.ok(stats.rateLimited <= 5, `429s received: ${stats.rateLimited}`);
});
