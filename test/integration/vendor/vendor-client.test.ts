/**
 * The DigitalHumanProvider vendor client against the REAL vendor simulator (our own HTTPS
 * server, started in-process on 127.0.0.1:0). No Kubernetes involved: these tests pin down the
 * client's contract under each fault the reconciler must survive.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EndpointLimiter, systemClock } from '@converge/runtime';
import {
  VendorError,
  createVendorClient,
  isVendorError,
  type VendorCallEvent,
  type VendorClient,
  type VendorClientOptions,
} from '../../../packages/operators/src/operators/provider/vendor/index.ts';
import { endpointPause } from '../../../packages/operators/src/operators/provider/vendor/index.ts';
import { asVendorFailure, createVendorApis } from '../../../packages/operators/src/operators/provider/vendor-api.ts';
import { defaultProviderConfig } from '../../../packages/operators/src/operators/provider/provider-config.ts';
import { vendorErrorFromResponse } from '../../../packages/operators/src/operators/provider/vendor/errors.ts';
import { startVendorSimulator, type VendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';

const TOKEN = 'tok-0123456789-never-print-me';

const expectVendorError = (kind: VendorError['kind']) => (err: unknown) => {
  assert.ok(err instanceof VendorError, `expected a VendorError, got ${String(err)}`);
  assert.equal(err.kind, kind, err.message);
  assert.ok(!err.message.includes(TOKEN), 'the token never appears in a message');
  return true;
};

describe('vendor client against the simulator', () => {
  let sim: VendorSimulator;
  let client: VendorClient;
  let limiter: EndpointLimiter;
  const events: VendorCallEvent[] = [];
  const clients: VendorClient[] = [];
  const newClient = (overrides: Partial<VendorClientOptions> = {}): VendorClient => {
    const c = createVendorClient({ endpoint: sim.baseUrl, token: TOKEN, ca: sim.caPem, limiter: new EndpointLimiter(), timeoutMs: 2000, ...overrides });
    clients.push(c);
    return c;
  };

  before(async () => {
    sim = await startVendorSimulator({ token: TOKEN });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sim.stop();
  });
  beforeEach(() => {
    sim.reset({ instances: true });
    events.length = 0;
    limiter = new EndpointLimiter();
    client = newClient({ limiter, onCall: (e) => events.push(e) });
  });

  it('creates idempotently: the same key twice is one instance', async () => {
    const first = await client.createInstance({ region: 'eu-west', displayName: 'Alice' }, 'uid-1');
    assert.equal(first.replayed, false);
    assert.match(first.instance.id, /^inst-/);
    assert.deepEqual([first.instance.region, first.instance.displayName, first.instance.idempotencyKey], ['eu-west', 'Alice', 'uid-1']);
    const again = await client.createInstance({ region: 'eu-west', displayName: 'Alice' }, 'uid-1');
    assert.equal(again.replayed, true);
    assert.equal(again.instance.id, first.instance.id);
    assert.deepEqual(await client.getInstance(first.instance.id), first.instance);
    assert.equal(sim.stats().creates, 1);
    assert.equal(sim.stats().liveInstances, 1);
    const conflict = await client.createInstance({ region: 'us-east' }, 'uid-1').catch((e: unknown) => e);
    expectVendorError('Invalid')(conflict);
    assert.equal((conflict as VendorError).code, 'IdempotencyKeyReused');
  });

  it('lost create response: the call fails transiently, findByIdempotencyKey finds the instance, a retry replays', async () => {
    sim.setFaults({ loseCreateResponses: { count: 1 } });
    const err = await client.createInstance({ region: 'eu-west' }, 'uid-lost').catch((e: unknown) => e);
    expectVendorError('Network')(err);
    assert.equal((err as VendorError).transient, true);
    const found = await client.findByIdempotencyKey('uid-lost');
    assert.ok(found, 'the instance exists although its create answer was lost');
    const retry = await client.createInstance({ region: 'eu-west' }, 'uid-lost');
    assert.equal(retry.replayed, true);
    assert.equal(retry.instance.id, found.id);
    assert.equal(await client.findByIdempotencyKey('uid-other'), undefined);
    assert.equal(sim.stats().creates, 1);
  });

  it('delete: 204 then 404 as already gone; an out-of-band delete is already gone too; get is NotFound', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k1');
    assert.deepEqual(await client.deleteInstance(instance.id), { alreadyGone: false });
    assert.deepEqual(await client.deleteInstance(instance.id), { alreadyGone: true });
    const other = (await client.createInstance({ region: 'eu' }, 'k2')).instance;
    assert.equal(sim.deleteInstance(other.id), true);
    assert.deepEqual(await client.deleteInstance(other.id), { alreadyGone: true });
    const missing = await client.getInstance(other.id).catch((e: unknown) => e);
    expectVendorError('NotFound')(missing);
    assert.equal((missing as VendorError).transient, false);
    assert.equal((missing as VendorError).status, 404);
    // The key is free again: the reconciler re-creates after an out-of-band delete.
    const recreated = await client.createInstance({ region: 'eu' }, 'k2');
    assert.equal(recreated.replayed, false);
    assert.notEqual(recreated.instance.id, other.id);
  });

  it('update sends only the mutable field', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k');
    const updated = await client.updateInstance(instance.id, { displayName: 'Bob' });
    assert.deepEqual([updated.displayName, updated.region], ['Bob', 'eu']);
    assert.equal((await client.updateInstance(instance.id, {})).displayName, 'Bob', 'an empty patch changes nothing');
  });

  it('health follows the admin flips', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k');
    assert.equal((await client.getHealth(instance.id)).status, 'healthy');
    sim.setHealth(instance.id, 'down', 'maintenance');
    const down = await client.getHealth(instance.id);
    assert.deepEqual([down.id, down.status, down.message], [instance.id, 'down', 'maintenance']);
    sim.setHealth(instance.id, 'degraded');
    assert.equal((await client.getHealth(instance.id)).status, 'degraded');
    sim.setHealth(instance.id, 'healthy');
    assert.equal((await client.getHealth(instance.id)).status, 'healthy');
  });

  it('a wrong token is Unauthorized, not transient, and never echoed', async () => {
    const wrong = newClient({ token: 'wrong-token' });
    const err = await wrong.findByIdempotencyKey('k').catch((e: unknown) => e);
    expectVendorError('Unauthorized')(err);
    assert.equal((err as VendorError).transient, false);
    assert.ok(!(err as Error).message.includes('wrong-token'));
    assert.ok(!JSON.stringify(err).includes(TOKEN));
  });

  it('429 + Retry-After: the limiter pauses the endpoint and the next call waits for it', async () => {
    sim.setFaults({ burst429: { count: 1, retryAfterSeconds: 1 } });
    const t0 = performance.now();
    const err = await client.findByIdempotencyKey('k').catch((e: unknown) => e);
    expectVendorError('RateLimited')(err);
    assert.equal((err as VendorError).retryAfterMs, 1000);
    assert.equal((err as VendorError).transient, true);
    assert.ok(limiter.pausedForMs() > 800, 'the endpoint is paused');
    assert.equal(await client.findByIdempotencyKey('k'), undefined, 'the next call succeeds…');
    assert.ok(performance.now() - t0 >= 950, '…after the pause');
    assert.equal(sim.stats().rateLimited, 1);
    assert.equal(sim.stats().requests['GET /v1/instances'], 2, 'nothing was sent during the pause');
  });

  it('a pause longer than maxPauseWaitMs fails fast without sending', async () => {
    const impatient = newClient({ limiter, maxPauseWaitMs: 100 });
    sim.setFaults({ burst429: { count: 1, retryAfterSeconds: 30 } });
    await assert.rejects(impatient.getHealth('inst-x'), expectVendorError('RateLimited'));
    const before = sim.stats().requests['GET /v1/instances/{id}/health'];
    const err = await impatient.getHealth('inst-x').catch((e: unknown) => e);
    expectVendorError('RateLimited')(err);
    assert.equal((err as VendorError).status, 0, 'client-side');
    assert.ok((err as VendorError).retryAfterMs! > 25_000);
    assert.equal(sim.stats().requests['GET /v1/instances/{id}/health'], before);
  });

  it('a client-side rate limit matching the vendor limit avoids a 429 storm', async () => {
    sim.setFaults({ rateLimit: { requestsPerSecond: 10, burst: 10 } });
    // Without a limiter: a burst of 60 concurrent calls meets many 429s. (25 were too few on a
    // loaded machine: their TLS handshakes spread the burst over more than half a second, the
    // vendor's bucket refilled meanwhile and only 9 were refused. With 60, at least 10 are refused
    // unless the burst takes more than 4 s to arrive.)
    const unlimited = newClient();
    const raw = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => unlimited.findByIdempotencyKey(`u-${i}`)));
    const storm = raw.filter((r) => r.status === 'rejected').length;
    assert.ok(storm >= 10, `expected a 429 storm without limits, got ${storm}`);
    // With one: the same burst, all succeed.
    await new Promise((r) => setTimeout(r, 1100)); // bucket refills
    sim.reset({ faults: false });
    const polite = newClient({ limiter: new EndpointLimiter({ ratePerSecond: 10, burst: 1, maxConcurrency: 4 }) });
    const t0 = performance.now();
    const results = await Promise.allSettled(Array.from({ length: 25 }, (_, i) => polite.findByIdempotencyKey(`p-${i}`)));
    const failed = results.filter((r) => r.status === 'rejected');
    assert.equal(failed.length, 0, JSON.stringify(failed.slice(0, 2)));
    assert.ok(sim.stats().rateLimited <= 2, `429s sent: ${sim.stats().rateLimited}`);
    assert.ok(performance.now() - t0 >= 2000, 'paced at 10/s');
  });

  it('a share of 5xx answers: exactly that share fails, as transient Server errors', async () => {
    sim.setFaults({ errors: { rate: 0.5, status: 503, ops: ['list'] } });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => client.findByIdempotencyKey('k')));
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as VendorError);
    assert.equal(failures.length, 5);
    for (const f of failures) assert.deepEqual([f.kind, f.status, f.transient, f.code], ['Server', 503, true, 'ServiceUnavailable']);
    assert.equal(client.calls().findByIdempotencyKey.failed.Server, 5);
  });

  it('a hanging request ends as a Timeout after timeoutMs, and the vendor recovers', async () => {
    const quick = newClient({ timeoutMs: 300 });
    sim.setFaults({ hang: {} });
    const t0 = performance.now();
    const err = await quick.getInstance('inst-any').catch((e: unknown) => e);
    const took = performance.now() - t0;
    expectVendorError('Timeout')(err);
    assert.equal((err as VendorError).transient, true);
    // The upper bound only tells a timeout from none (the hang lasts until the test ends); loaded
    // machines stall the event loop for a second at times.
    assert.ok(took >= 280 && took < 5000, `timed out after ${took} ms`);
    sim.clearFaults();
    await assert.rejects(quick.getInstance('inst-any'), expectVendorError('NotFound'));
  });

  it('outages: 503 is Server, a reset connection is Network, an unreachable port is Network', async () => {
    sim.setFaults({ outage: {} });
    await assert.rejects(client.findByIdempotencyKey('k'), expectVendorError('Server'));
    sim.setFaults({ outage: { mode: 'reset' } });
    await assert.rejects(client.findByIdempotencyKey('k'), expectVendorError('Network'));
    const nowhere = await startVendorSimulator({ token: TOKEN });
    const url = nowhere.baseUrl;
    await nowhere.stop();
    const unreachable = newClient({ endpoint: url });
    const err = await unreachable.findByIdempotencyKey('k').catch((e: unknown) => e);
    expectVendorError('Network')(err);
    assert.equal((err as VendorError).code, 'ECONNREFUSED');
  });

  it('TLS is verified: without the CA the call fails; http endpoints are refused at creation', async () => {
    const untrusting = newClient({ ca: undefined as unknown as string });
    const err = await untrusting.findByIdempotencyKey('k').catch((e: unknown) => e);
    expectVendorError('Network')(err);
    assert.match(String((err as VendorError).code), /CERT|SIGNATURE|ISSUER/);
    // Issue 18 item 5: the message says what fixes it, not Node's generic --use-system-ca.
    const hinted = newClient({ ca: undefined as unknown as string, untrustedCertificateHint: 'set provider.vendor.caFile to the PEM file of the CA that signed it' });
    const told = (await hinted.findByIdempotencyKey('k').catch((e: unknown) => e)) as VendorError;
    assert.match(told.message, /not signed by a trusted CA \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\): set provider\.vendor\.caFile/);
    assert.doesNotMatch(told.message, /use-system-ca/);
    assert.throws(() => createVendorClient({ endpoint: sim.baseUrl.replace('https', 'http'), token: TOKEN, limiter, timeoutMs: 1000 }), expectVendorError('Invalid'));
    assert.throws(() => createVendorClient({ endpoint: 'not a url', token: TOKEN, limiter, timeoutMs: 1000 }), expectVendorError('Invalid'));
  });

  it('limits: read, set (only the given fields are sent), and a console change shows through', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k');
    assert.deepEqual(await client.getLimits(instance.id), { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 10_000 });
    assert.deepEqual(await client.setLimits(instance.id, { dailyQuota: 500, maxConcurrency: undefined }), { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 500 });
    sim.setLimits(instance.id, { requestsPerMinute: 7 });
    assert.equal((await client.getLimits(instance.id)).requestsPerMinute, 7);
    const bad = await client.setLimits(instance.id, { dailyQuota: 0 }).catch((e: unknown) => e);
    expectVendorError('Invalid')(bad);
    assert.deepEqual([(bad as VendorError).field, (bad as VendorError).transient], ['dailyQuota', false]);
    assert.match((bad as VendorError).message, /dailyQuota must be an integer from 1 to 1000000000/);
    await assert.rejects(client.getLimits('inst-none'), expectVendorError('NotFound'));
    assert.equal(sim.stats().requests['PATCH /v1/instances/{id}/limits'], 2);
  });

  it('usage and the account: figures as the vendor counts them', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k');
    sim.setLimits(instance.id, { dailyQuota: 100, requestsPerMinute: 50 });
    sim.consume(instance.id, 60);
    const usage = await client.getUsage(instance.id);
    assert.deepEqual([usage.callsToday, usage.dailyQuota, usage.quotaRemaining, usage.throttledRequests, usage.refusedToday], [50, 100, 50, 10, 0]);
    assert.ok(Date.parse(usage.quotaResetAt) > Date.now());
    assert.deepEqual(await client.getAccount(), { ...(await client.getAccount()), id: 'default', state: 'active' });
  });

  it('a suspended account: reads and the account answer, writes are AccountSuspended (not transient), nothing is paused', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k');
    sim.suspendAccount(undefined, `invoice unpaid\nsee console; token ${TOKEN}`);
    const account = await client.getAccount();
    assert.deepEqual([account.state, account.reason, account.message], ['suspended', 'NonPayment', 'invoice unpaid see console; token [redacted]']);
    for (const write of [() => client.setLimits(instance.id, { dailyQuota: 5 }), () => client.updateInstance(instance.id, { displayName: 'x' }), () => client.createInstance({ region: 'eu' }, 'k2')]) {
      const err = await write().catch((e: unknown) => e);
      expectVendorError('AccountSuspended')(err);
      assert.deepEqual([(err as VendorError).status, (err as VendorError).transient, (err as VendorError).code], [403, false, 'AccountSuspended']);
    }
    assert.equal(limiter.pausedForMs(), 0);
    assert.equal((await client.getHealth(instance.id)).status, 'healthy');
    sim.resumeAccount();
    assert.equal((await client.setLimits(instance.id, { dailyQuota: 5 })).dailyQuota, 5);
  });

  it('a 429 about one instance (QuotaExhausted, InstanceThrottled) carries its wait but never pauses the endpoint', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k');
    for (const code of ['QuotaExhausted', 'InstanceThrottled'] as const) {
      sim.setFaults({ burst429: { count: 1, retryAfterSeconds: 3600, code, ops: ['usage'] } });
      const err = await client.getUsage(instance.id).catch((e: unknown) => e);
      expectVendorError(code)(err);
      assert.deepEqual([(err as VendorError).retryAfterMs, (err as VendorError).transient], [3_600_000, true]);
      assert.equal(limiter.pausedForMs(), 0, `${code} pauses nothing`);
      const t0 = performance.now();
      assert.equal((await client.getHealth(instance.id)).status, 'healthy');
      assert.ok(performance.now() - t0 < 5000, 'the next call goes at once (a pause would be an hour)');
    }
    // The vendor's own billable-call answers are classified the same way.
    sim.clearFaults();
    sim.setLimits(instance.id, { dailyQuota: 1 });
    sim.consume(instance.id, 1);
    const raw = await request(`${sim.baseUrl}/v1/instances/${instance.id}/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      dispatcher: new Agent({ connect: { ca: [...rootCertificates, sim.caPem] } }),
    });
    const err = vendorErrorFromResponse('getUsage', raw.statusCode, await raw.body.text());
    assert.equal(err.kind, 'QuotaExhausted');
    assert.equal(endpointPause(raw.statusCode, err.code), undefined);
  });

  it('listInstanceStates: one call per page, every instance once, with health (the vendor\'s words, bounded), limits and usage', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.createInstance({ region: 'eu' }, `k${i}`)).instance.id);
    sim.setHealth(ids[0]!, 'degraded', `GPU hot\n${'!'.repeat(400)}`);
    sim.consume(ids[1]!, 2);
    const seen = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await client.listInstanceStates({ pageSize: 2, ...(pageToken ? { pageToken } : {}) });
      seen.push(...page.items);
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken);
    assert.equal(pages, 3);
    assert.equal(client.calls().listInstanceStates.calls, 3);
    assert.deepEqual(seen.map((s) => s.instance.id), [...ids].sort());
    const degraded = seen.find((s) => s.instance.id === ids[0])!;
    assert.equal(degraded.health.status, 'degraded');
    assert.ok(degraded.health.message!.startsWith('GPU hot !!!') && [...degraded.health.message!].length === 200, degraded.health.message);
    assert.equal(seen.find((s) => s.instance.id === ids[1])!.usage.callsToday, 2);
    assert.equal(seen[0]!.limits.dailyQuota, 10_000);
    assert.equal((await client.getHealth(ids[0]!)).message, degraded.health.message, 'the single call bounds it the same way');
  });

  it("the caller's abort rejects with its reason and is counted as Aborted", async () => {
    sim.setFaults({ hang: {} });
    const ac = new AbortController();
    const pending = client.getInstance('inst-any', { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('shutting down')), 50);
    await assert.rejects(pending, /shutting down/);
    sim.clearFaults();
    assert.equal(client.calls().getInstance.failed.Aborted, 1);
  });

  it('counts calls per operation and reports each one', async () => {
    const { instance } = await client.createInstance({ region: 'eu' }, 'k');
    await client.getInstance(instance.id);
    await client.getHealth(instance.id);
    await client.deleteInstance(instance.id);
    await client.getInstance(instance.id).catch(() => {});
    const calls = client.calls();
    assert.deepEqual(calls.createInstance, { calls: 1, ok: 1, failed: {} });
    assert.deepEqual(calls.getInstance, { calls: 2, ok: 1, failed: { NotFound: 1 } });
    assert.equal(calls.updateInstance.calls, 0);
    assert.deepEqual(
      events.map((e) => `${e.operation}:${e.outcome}:${e.status}`),
      ['createInstance:ok:201', 'getInstance:ok:200', 'getHealth:ok:200', 'deleteInstance:ok:204', 'getInstance:NotFound:404'],
    );
    assert.ok(events.every((e) => e.durationMs >= 0));
  });
});

describe('vendor client across a simulator restart', () => {
  it('loses nothing: the same client finds the same instance after the restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vendor-client-restart-'));
    const stateFile = join(dir, 'state.json');
    let sim = await startVendorSimulator({ token: TOKEN, stateFile });
    const client = createVendorClient({ endpoint: sim.baseUrl, token: TOKEN, ca: sim.caPem, limiter: new EndpointLimiter(), timeoutMs: 2000 });
    try {
      const { instance } = await client.createInstance({ region: 'eu', displayName: 'kept' }, 'uid-restart');
      sim.setHealth(instance.id, 'degraded');
      await client.setLimits(instance.id, { dailyQuota: 1234 });
      await sim.stop();
      sim = await startVendorSimulator({ token: TOKEN, stateFile, port: sim.port });
      assert.deepEqual(await client.getInstance(instance.id), instance);
      assert.equal((await client.findByIdempotencyKey('uid-restart'))?.id, instance.id);
      assert.equal((await client.getHealth(instance.id)).status, 'degraded');
      assert.equal((await client.getLimits(instance.id)).dailyQuota, 1234, 'limits are kept with the instance');
      assert.equal((await client.createInstance({ region: 'eu' }, 'uid-restart')).replayed, true);
      assert.equal(sim.stats().creates, 0, 'no create after the restart');
    } finally {
      await client.close();
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('isVendorError narrows by kind', () => {
    assert.ok(isVendorError(new VendorError({ kind: 'Timeout', operation: 'getHealth', message: 'x' }), 'Timeout'));
  });
});

describe("the operator's vendor API (vendor-api.ts) against the simulator", () => {
  it('issue 18 item 5: an untrusted vendor CA names provider.vendor.caFile, with the file when one is set', async () => {
    const sim = await startVendorSimulator({ token: TOKEN });
    const other = await startVendorSimulator({ token: TOKEN });
    try {
      const signal = AbortSignal.timeout(5000);
      const unset = createVendorApis({ ...defaultProviderConfig, vendor: { ...defaultProviderConfig.vendor, timeoutMs: 2000 } }, systemClock);
      const a = asVendorFailure(await unset.forEndpoint(sim.baseUrl, TOKEN).getHealth('inst-x', signal).catch((e: unknown) => e));
      assert.equal(a.kind, 'Network');
      assert.match(a.message, /not signed by a trusted CA .*set provider\.vendor\.caFile in the operator's configuration to the PEM file of the CA that signed it/);
      assert.doesNotMatch(a.message, /use-system-ca/);
      const wrong = createVendorApis({ ...defaultProviderConfig, vendor: { ...defaultProviderConfig.vendor, timeoutMs: 2000, caFile: other.caPath } }, systemClock);
      const b = asVendorFailure(await wrong.forEndpoint(sim.baseUrl, TOKEN).getHealth('inst-x', signal).catch((e: unknown) => e));
      assert.ok(b.message.includes(`provider.vendor.caFile (${other.caPath}) does not hold the CA that signed it`), b.message);
    } finally {
      await Promise.all([sim.stop(), other.stop()]);
    }
  });

  it("issue 18 item 6: the vendor's health message comes through, bounded and without the token", async () => {
    const sim = await startVendorSimulator({ token: TOKEN });
    try {
      const apis = createVendorApis({ ...defaultProviderConfig, vendor: { ...defaultProviderConfig.vendor, timeoutMs: 2000, caFile: sim.caPath } }, systemClock);
      const api = apis.forEndpoint(sim.baseUrl, TOKEN);
      const signal = AbortSignal.timeout(5000);
      const instance = await api.createInstance({ region: 'eu' }, 'k', signal);
      assert.deepEqual(await api.health(instance.id, signal), { status: 'healthy' });
      sim.setHealth(instance.id, 'degraded', 'GPU hot');
      assert.deepEqual(await api.health(instance.id, signal), { status: 'degraded', message: 'GPU hot' });
      sim.setHealth(instance.id, 'down', `driver crashed\nAuthorization: Bearer ${TOKEN} ${'x'.repeat(500)}`);
      const down = await api.health(instance.id, signal);
      assert.equal(down.status, 'down');
      assert.ok(!down.message!.includes(TOKEN) && !down.message!.includes('\n') && [...down.message!].length <= 200, down.message);
      assert.match(down.message!, /^driver crashed Authorization: Bearer \[redacted\]/);
      assert.deepEqual(await api.setLimits(instance.id, { dailyQuota: 7 }, signal), { maxConcurrency: 10, requestsPerMinute: 600, dailyQuota: 7 });
      assert.equal((await api.getUsage(instance.id, signal)).dailyQuota, 7);
      assert.equal((await api.getAccount(signal)).state, 'active');
      assert.equal((await api.listInstanceStates({}, signal)).items[0]!.health.status, 'down');
      sim.suspendAccount();
      const suspended = asVendorFailure(await api.setLimits(instance.id, { dailyQuota: 8 }, signal).catch((e: unknown) => e));
      assert.deepEqual([suspended.kind, suspended.code, suspended.transient], ['AccountSuspended', 'AccountSuspended', false]);
      assert.equal(apis.calls().setLimits!.failed.AccountSuspended, 1);
    } finally {
      await sim.stop();
    }
  });
});
