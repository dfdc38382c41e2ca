/**
 * FleetWatch against the REAL vendor simulator: one account read per round, what it reports as
 * changed, and what a failed round leaves behind. No Kubernetes involved.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointLimiter, systemClock } from '@converge/runtime';
import { FleetWatch, createVendorClient, type FleetChange, type VendorClient } from '../../../packages/operators/src/operators/provider/vendor/index.ts';
import { startVendorSimulator, type VendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';

const TOKEN = 'fleet-token-0123456789';

describe('FleetWatch against the simulator', () => {
  let sim: VendorSimulator;
  let client: VendorClient;
  const ids: string[] = [];

  before(async () => {
    sim = await startVendorSimulator({ token: TOKEN });
    client = createVendorClient({ endpoint: sim.baseUrl, token: TOKEN, ca: sim.caPem, limiter: new EndpointLimiter(), timeoutMs: 2000 });
  });
  after(async () => {
    await client.close();
    await sim.stop();
  });
  beforeEach(async () => {
    sim.reset({ instances: true });
    ids.length = 0;
    for (let i = 0; i < 5; i++) ids.push((await client.createInstance({ region: 'eu' }, `k${i}`)).instance.id);
    sim.reset({ stats: true });
  });

  it('reads the whole account in 1 + pages calls, then reports exactly what changed', async () => {
    sim.setLimits(ids[3]!, { dailyQuota: 3 });
    const watch = new FleetWatch({ client, clock: systemClock, intervalMs: 1000, pageSize: 2 });
    assert.equal(watch.ageMs(), Number.POSITIVE_INFINITY);
    const first = await watch.poll();
    assert.deepEqual(first.changed.sort(), [...ids].sort(), 'everything is new on the first round');
    assert.deepEqual(sim.stats().requests, { 'GET /v1/account': 1, 'GET /v1/instances': 3 });
    assert.equal(watch.stats().instances, 5);
    assert.ok(watch.ageMs() < 10_000, `fresh after a round (${watch.ageMs()} ms)`);

    const none: FleetChange = { accountChanged: false, changed: [], gone: [], usageChanged: [] };
    assert.deepEqual(await watch.poll(), none, 'nothing changed, nothing reported');

    sim.setHealth(ids[0]!, 'degraded', 'GPU hot');
    sim.consume(ids[1]!, 3); // figures only
    sim.setLimits(ids[2]!, { dailyQuota: 2 });
    sim.consume(ids[3]!, 3); // its whole quota: exhausted
    assert.deepEqual(await watch.poll(), { accountChanged: false, changed: [ids[0], ids[2], ids[3]].sort(), gone: [], usageChanged: [ids[1]] });
    assert.equal(watch.instance(ids[0]!)!.health.message, 'GPU hot');
    assert.equal(watch.instance(ids[3]!)!.usage.quotaRemaining, 0);

    sim.suspendAccount(undefined, 'invoice unpaid');
    sim.deleteInstance(ids[4]!);
    const next = await watch.poll();
    assert.deepEqual([next.accountChanged, next.gone], [true, [ids[4]]]);
    assert.equal(watch.snapshot()!.account.state, 'suspended');

    sim.throttle(ids[1]!, 4);
    assert.deepEqual((await watch.poll()).changed, [ids[1]], 'throttling is a state change');
  });

  it('a failed round keeps the previous snapshot, which then ages', async () => {
    const watch = new FleetWatch({ client, clock: systemClock, intervalMs: 1000 });
    await watch.poll();
    sim.setFaults({ outage: { ops: ['list'] } });
    await assert.rejects(watch.poll(), (err: Error) => /503/.test(err.message));
    assert.equal(watch.stats().instances, 5, 'the last complete round is kept');
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(watch.ageMs() >= 50);
    sim.clearFaults();
  });

  it('run() polls on its interval, tells changes once, and stops on abort', async () => {
    const changes: FleetChange[] = [];
    const errors: unknown[] = [];
    const watch = new FleetWatch({ client, clock: systemClock, intervalMs: 100, onChange: (c) => changes.push(c), onError: (e) => errors.push(e) });
    const ac = new AbortController();
    const running = watch.run(ac.signal);
    await new Promise((r) => setTimeout(r, 250));
    sim.setHealth(ids[0]!, 'down');
    await new Promise((r) => setTimeout(r, 250));
    ac.abort();
    await running;
    assert.equal(changes.length, 2, JSON.stringify(changes));
    assert.equal(changes[0]!.changed.length, 5);
    assert.deepEqual(changes[1]!.changed, [ids[0]]);
    assert.equal(errors.length, 0);
    const rounds = watch.stats().rounds;
    assert.ok(rounds >= 4 && rounds <= 7, `rounds ${rounds}`);
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(watch.stats().rounds, rounds, 'no round after the abort');
  });
});

describe('FleetWatch.forget', () => {
  it('an instance written to is not served from a round that started before the write', async () => {
    const sim = await startVendorSimulator({ token: TOKEN });
    const client = createVendorClient({ endpoint: sim.baseUrl, token: TOKEN, ca: sim.caPem, limiter: new EndpointLimiter(), timeoutMs: 2000 });
    try {
      const { instance } = await client.createInstance({ region: 'eu' }, 'k');
      const watch = new FleetWatch({ client, clock: systemClock, intervalMs: 1000 });
      await watch.poll();
      assert.equal(watch.instance(instance.id)?.limits.dailyQuota, 10_000);
      watch.forget(instance.id);
      await client.setLimits(instance.id, { dailyQuota: 7 });
      assert.equal(watch.instance(instance.id), undefined, 'the old view is not served');
      await watch.poll();
      assert.equal(watch.instance(instance.id)?.limits.dailyQuota, 7, 'a later round serves it again');
    } finally {
      await client.close();
      await sim.stop();
    }
  });
});
