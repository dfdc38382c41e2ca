import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { parse } from 'yaml';
import { DEFAULT_LIMITS, LIMIT_BOUNDS, LIMIT_NAMES, VENDOR_OPERATIONS, createVendorSimAdmin, startVendorSimulator, type VendorSimulator } from './index.ts';

const TOKEN = 'vendor-token-for-tests';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

function httpFor(sim: VendorSimulator) {
  const dispatcher = new Agent({ connect: { ca: [...rootCertificates, sim.caPem] } });
  const call = async (
    method: string,
    path: string,
    opts: { token?: string | null; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<Answer> => {
    const token = opts.token === undefined ? TOKEN : opts.token;
    const res = await request(`${sim.baseUrl}${path}`, {
      method: method as 'GET',
      dispatcher,
      headers: {
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...opts.headers,
      },
      ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  return Object.assign(call, { close: () => dispatcher.close() });
}

describe('vendor simulator over HTTPS', () => {
  let sim: VendorSimulator;
  let http: ReturnType<typeof httpFor>;
  const create = (key: string, body: unknown = { region: 'eu-west', displayName: 'alice' }) =>
    http('POST', '/v1/instances', { body, headers: { 'idempotency-key': key } });

  before(async () => {
    sim = await startVendorSimulator({ token: TOKEN });
    http = httpFor(sim);
  });
  after(async () => {
    await http.close();
    await sim.stop();
  });
  beforeEach(() => sim.reset({ instances: true }));

  it('serves a certificate that verifies against the CA file only', async () => {
    assert.match(sim.baseUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(await readFile(sim.caPath, 'utf8'), sim.caPem);
    await assert.rejects(request(`${sim.baseUrl}/healthz`), (err: any) => /certificate/i.test(`${err.code} ${err.message}`));
    assert.equal((await http('GET', '/healthz', { token: null })).status, 200);
  });

  it('a request target that is no URL is a 400, and the simulator keeps serving', async () => {
    const { connect } = await import('node:tls');
    const port = Number(new URL(sim.baseUrl).port);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca: sim.caPem }, () => socket.write('GET //[ HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /"code":"InvalidRequest"/);
    assert.equal((await http('GET', '/healthz', { token: null })).status, 200);
  });

  it('rejects a missing or wrong token with 401 and the standard error body', async () => {
    for (const token of [null, 'wrong']) {
      const res = await http('GET', '/v1/instances', { token });
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.equal(res.body.error.code, 'Unauthorized');
      assert.match(res.body.error.requestId, /^req-\d+$/);
    }
    assert.equal(sim.stats().unauthorized, 2);
  });

  it('creates idempotently: the same key returns the same instance, another region is a conflict', async () => {
    const first = await create('uid-1');
    assert.equal(first.status, 201);
    assert.match(first.body.id, /^inst-/);
    assert.equal(first.headers.location, `/v1/instances/${first.body.id}`);
    const replay = await create('uid-1', { region: 'eu-west', displayName: 'renamed' });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.body, first.body);
    const conflict = await create('uid-1', { region: 'us-east' });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'IdempotencyKeyReused');
    const found = await http('GET', '/v1/instances?idempotencyKey=uid-1');
    assert.deepEqual(found.body.items, [first.body]);
    assert.deepEqual((await http('GET', '/v1/instances?idempotencyKey=other')).body.items, []);
    const stats = sim.stats();
    assert.equal(stats.creates, 1);
    assert.equal(stats.createReplays, 1);
    assert.equal(stats.liveInstances, 1);
    assert.equal(stats.requests['POST /v1/instances'], 3);
    assert.equal(stats.writes, 3);
  });

  it('validates bodies: bad region and unknown fields are 400, a region change is 422', async () => {
    assert.equal((await create('k', { region: 'Not A Region' })).body.error.field, 'region');
    assert.equal((await create('k', { region: 'eu', size: 3 })).status, 400);
    assert.equal((await http('POST', '/v1/instances', { body: [1] })).status, 400);
    const { body: inst } = await create('k');
    const renamed = await http('PATCH', `/v1/instances/${inst.id}`, { body: { displayName: 'bob', region: 'eu-west' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.displayName, 'bob');
    assert.equal(renamed.body.region, 'eu-west');
    const moved = await http('PATCH', `/v1/instances/${inst.id}`, { body: { region: 'us-east' } });
    assert.equal(moved.status, 422);
    assert.deepEqual([moved.body.error.code, moved.body.error.field], ['ImmutableField', 'region']);
    assert.equal((await http('PATCH', `/v1/instances/${inst.id}`, { body: { id: 'x' } })).status, 400);
    assert.equal((await http('PUT', `/v1/instances/${inst.id}`, { body: {} })).status, 405);
    assert.equal((await http('GET', '/v2/nothing')).status, 404);
  });

  it('gets, deletes (then 404) and reports health that admin flips', async () => {
    const { body: inst } = await create('k');
    assert.deepEqual((await http('GET', `/v1/instances/${inst.id}`)).body, inst);
    assert.equal((await http('GET', `/v1/instances/${inst.id}/health`)).body.status, 'healthy');
    assert.equal(sim.setHealth(inst.id, 'down', 'maintenance'), true);
    const health = await http('GET', `/v1/instances/${inst.id}/health`);
    assert.deepEqual([health.body.status, health.body.message], ['down', 'maintenance']);
    assert.equal((await http('DELETE', `/v1/instances/${inst.id}`)).status, 204);
    const again = await http('DELETE', `/v1/instances/${inst.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'NotFound');
    assert.equal((await http('GET', `/v1/instances/${inst.id}`)).status, 404);
    assert.equal(sim.setHealth(inst.id, 'healthy'), false);
    assert.equal(sim.stats().deletes, 1);
  });

  it('admin API: auth, faults PUT/PATCH/DELETE with validation, out-of-band delete, health, stats, reset', async () => {
    const admin = (method: string, path: string, body?: unknown) => http(method, path, { token: sim.adminToken, body });
    assert.equal((await http('GET', '/admin/stats')).status, 401, 'the vendor token is not the admin token');
    assert.equal((await http('GET', '/v1/instances', { token: sim.adminToken })).status, 401, 'the admin token is not the vendor token');
    assert.deepEqual((await admin('PUT', '/admin/faults', { latency: { ms: 1 } })).body, { latency: { ms: 1 } });
    assert.deepEqual((await admin('PATCH', '/admin/faults', { latency: null, hang: { ops: ['delete'] } })).body, { hang: { ops: ['delete'] } });
    const invalid = await admin('PATCH', '/admin/faults', { errors: { rate: 7 } });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.error.field, 'errors.rate');
    assert.deepEqual((await admin('DELETE', '/admin/faults')).body, {});
    const { body: inst } = await create('k');
    assert.equal((await admin('GET', '/admin/instances')).body.items[0].health, 'healthy');
    assert.equal((await admin('PUT', `/admin/instances/${inst.id}/health`, { status: 'degraded' })).body.status, 'degraded');
    assert.equal((await admin('PUT', `/admin/instances/${inst.id}/health`, { status: 'sideways' })).status, 400);
    assert.equal((await admin('DELETE', `/admin/instances/${inst.id}`)).status, 204);
    assert.equal((await admin('DELETE', `/admin/instances/${inst.id}`)).status, 404);
    assert.equal((await http('GET', `/v1/instances/${inst.id}`)).status, 404);
    const stats = (await admin('GET', '/admin/stats')).body;
    assert.equal(stats.liveInstances, 0);
    assert.equal(stats.deletes, 0, 'out-of-band deletes are not API deletes');
    const reset = (await admin('POST', '/admin/reset', {})).body;
    assert.deepEqual(reset.requests, {});
  });

  it('admin client drives the same API', async () => {
    const admin = createVendorSimAdmin({ baseUrl: sim.baseUrl, adminToken: sim.adminToken, ca: sim.caPem });
    try {
      const { body: inst } = await create('k');
      assert.deepEqual(await admin.patchFaults({ burst429: { count: 1 } }), { burst429: { count: 1 } });
      assert.equal((await http('GET', '/v1/instances')).status, 429);
      assert.deepEqual(await admin.faults(), { burst429: { count: 0 } });
      assert.equal(await admin.setHealth(inst.id, 'down'), true);
      assert.equal(await admin.setHealth('inst-none', 'down'), false);
      assert.equal((await admin.instances())[0]!.health, 'down');
      assert.equal((await admin.stats()).rateLimited, 1);
      assert.equal(await admin.deleteInstance(inst.id), true);
      assert.equal(await admin.deleteInstance(inst.id), false);
      await assert.rejects(admin.setFaults({ errors: { rate: -1 } }), /HTTP 400/);
      assert.equal((await admin.reset()).rateLimited, 0);
    } finally {
      await admin.close();
    }
  });

  it('429: bursts and the rate limit answer with Retry-After and are counted', async () => {
    sim.patchFaults({ burst429: { count: 2, retryAfterSeconds: 3, ops: ['list'] } });
    const limited = await http('GET', '/v1/instances');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '3');
    assert.equal(limited.body.error.code, 'RateLimited');
    assert.equal((await http('GET', '/v1/instances/inst-x')).status, 404, 'scoped to list');
    assert.equal((await http('GET', '/v1/instances')).status, 429);
    assert.equal((await http('GET', '/v1/instances')).status, 200);
    sim.setFaults({ rateLimit: { requestsPerSecond: 1, burst: 2 } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await http('GET', '/v1/instances')).status);
    assert.deepEqual(statuses, [200, 200, 429, 429]);
    assert.equal(sim.stats().rateLimited, 4);
  });

  it('a share of 5xx answers, latency and outages (status and reset)', async () => {
    sim.setFaults({ errors: { rate: 0.5, status: 503 } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await http('GET', '/v1/instances')).status);
    assert.deepEqual(statuses, [200, 503, 200, 503]);
    sim.setFaults({ errors: { rate: 1, status: 400, ops: ['create'] } });
    const refused = await create('refused');
    assert.deepEqual([refused.status, refused.body.error.code], [400, 'InvalidRequest'], 'a 4xx share is the vendor refusing the request');
    sim.setFaults({ latency: { ms: 150 } });
    const t0 = performance.now();
    await http('GET', '/v1/instances');
    assert.ok(performance.now() - t0 >= 140);
    sim.setFaults({ outage: {} });
    const down = await http('GET', '/v1/instances', { token: null });
    assert.deepEqual([down.status, down.body.error.code], [503, 'ServiceUnavailable']);
    sim.setFaults({ outage: { mode: 'reset' } });
    await assert.rejects(http('GET', '/v1/instances'), (err: any) => /socket|closed|reset/i.test(`${err.code} ${err.message}`));
    assert.equal((await http('GET', '/healthz', { token: null })).status, 200, 'never faulted');
    assert.equal((await http('GET', '/admin/faults', { token: sim.adminToken })).status, 200, 'admin never faulted');
    assert.equal(sim.stats().injected.outages, 2);
  });

  it('a slow create is applied after its delay, even when the client gave up', async () => {
    sim.setFaults({ slowCreates: { ms: 300 } });
    const aborted = http('POST', '/v1/instances', { body: { region: 'eu' }, headers: { 'idempotency-key': 'late' }, signal: AbortSignal.timeout(100) });
    await assert.rejects(aborted);
    assert.equal((await http('GET', '/v1/instances?idempotencyKey=late')).body.items.length, 0, 'not there while the vendor works on it');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await http('GET', '/v1/instances?idempotencyKey=late')).body.items.length, 1, 'there once the vendor finished');
    sim.clearFaults();
  });

  it('a health status outside the contract is sent for the instances named, in the health answer and the full listing', async () => {
    const a = (await create('unknown-health-a')).body.id;
    const b = (await create('unknown-health-b')).body.id;
    sim.setFaults({ unknownHealth: { status: 'maintenance', ids: [a] } });
    assert.equal((await http('GET', `/v1/instances/${a}/health`)).body.status, 'maintenance');
    assert.equal((await http('GET', `/v1/instances/${b}/health`)).body.status, 'healthy');
    const listed = (await http('GET', '/v1/instances?view=full&pageSize=1000')).body.items;
    assert.equal(listed.find((i: any) => i.id === a).health.status, 'maintenance');
    assert.equal(listed.find((i: any) => i.id === b).health.status, 'healthy');
    sim.clearFaults();
    assert.equal((await http('GET', `/v1/instances/${a}/health`)).body.status, 'healthy');
  });

  it('hanging requests wait until the fault is cleared, then complete', async () => {
    sim.setFaults({ hang: { ops: ['create'] } });
    const pending = create('hung');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sim.stats().creates, 0);
    assert.equal((await http('GET', '/v1/instances')).status, 200, 'other ops are not held');
    sim.patchFaults({ hang: null });
    assert.equal((await pending).status, 201);
    // A client that gives up while held is dropped: nothing is created for it.
    sim.setFaults({ hang: {} });
    const aborted = http('POST', '/v1/instances', { body: { region: 'eu' }, headers: { 'idempotency-key': 'gone' }, signal: AbortSignal.timeout(100) });
    await assert.rejects(aborted);
    await new Promise((r) => setTimeout(r, 50)); // let the server see the connection close
    sim.clearFaults();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sim.instances().filter((i) => i.idempotencyKey === 'gone').length, 0);
  });

  it('"create succeeds, response lost": the instance exists, the client sees a dead connection', async () => {
    sim.setFaults({ loseCreateResponses: { count: 1 } });
    await assert.rejects(create('lost'));
    const found = await http('GET', '/v1/instances?idempotencyKey=lost');
    assert.equal(found.body.items.length, 1);
    const retry = await create('lost');
    assert.equal(retry.status, 200, 'the retry with the same key replays');
    assert.equal(retry.body.id, found.body.items[0].id);
    assert.equal(sim.stats().creates, 1);
    assert.equal(sim.stats().injected.lostResponses, 1);
  });

  it('every /v1 route and admin route it serves is in openapi.yaml', async () => {
    const doc = parse(await readFile(new URL('./openapi.yaml', import.meta.url), 'utf8'));
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const expected of [
      'POST /v1/instances',
      'GET /v1/instances',
      'GET /v1/instances/{id}',
      'PATCH /v1/instances/{id}',
      'DELETE /v1/instances/{id}',
      'GET /v1/instances/{id}/health',
      'GET /healthz',
      'GET /admin/faults',
      'PUT /admin/faults',
      'PATCH /admin/faults',
      'DELETE /admin/faults',
      'GET /admin/stats',
      'POST /admin/reset',
      'GET /admin/instances',
      'DELETE /admin/instances/{id}',
      'PUT /admin/instances/{id}/health',
      'GET /v1/account',
      'GET /v1/instances/{id}/limits',
      'PATCH /v1/instances/{id}/limits',
      'GET /v1/instances/{id}/usage',
      'POST /v1/instances/{id}/calls',
      'PATCH /admin/instances/{id}/limits',
      'POST /admin/instances/{id}/consume',
      'POST /admin/instances/{id}/throttle',
      'DELETE /admin/instances/{id}/throttle',
      'GET /admin/accounts',
      'PUT /admin/accounts/{accountId}',
      'GET /admin/quota-day',
      'POST /admin/quota-day/advance',
    ]) {
      assert.ok(ops.includes(expected), expected);
    }
    assert.equal(ops.length, 29);
    // The operations faults can be scoped to are the ones the server knows.
    assert.deepEqual(doc.components.schemas.Operation.enum, [...VENDOR_OPERATIONS]);
    // The limit bounds of the contract are the ones the server enforces.
    for (const name of LIMIT_NAMES) {
      const field = doc.components.schemas.Limits.properties[name];
      assert.deepEqual([field.minimum, field.maximum], [...LIMIT_BOUNDS[name]], name);
      assert.deepEqual(doc.components.schemas.LimitsPatch.properties[name], { type: 'integer', minimum: LIMIT_BOUNDS[name][0], maximum: LIMIT_BOUNDS[name][1] });
    }
    // The fault schema lists exactly the faults the server accepts.
    assert.deepEqual(Object.keys(doc.components.schemas.Faults.properties).sort(), ['burst429', 'errors', 'hang', 'latency', 'loseCreateResponses', 'outage', 'rateLimit', 'slowCreates', 'unknownHealth']);
  });
});

describe('vendor simulator: accounts, limits and metering', () => {
  const OTHER = 'token-of-account-b';
  let sim: VendorSimulator;
  let http: ReturnType<typeof httpFor>;
  const create = (key: string, token = TOKEN) => http('POST', '/v1/instances', { token, body: { region: 'eu-west' }, headers: { 'idempotency-key': key } });

  before(async () => {
    sim = await startVendorSimulator({ token: TOKEN, accounts: [{ id: 'b', token: OTHER }], usageWindowSeconds: 2 });
    http = httpFor(sim);
  });
  after(async () => {
    await http.close();
    await sim.stop();
  });
  beforeEach(() => sim.reset({ instances: true }));

  it('limits: vendor defaults, a merge patch validated per field, a console change behind the client', async () => {
    const { body: inst } = await create('k');
    const path = `/v1/instances/${inst.id}/limits`;
    assert.deepEqual((await http('GET', path)).body, DEFAULT_LIMITS);
    const set = await http('PATCH', path, { body: { dailyQuota: 500, requestsPerMinute: 60 } });
    assert.deepEqual(set.body, { maxConcurrency: 10, requestsPerMinute: 60, dailyQuota: 500 });
    for (const [body, field] of [[{ dailyQuota: 0 }, 'dailyQuota'], [{ maxConcurrency: 99_999 }, 'maxConcurrency'], [{ requestsPerMinute: 'lots' }, 'requestsPerMinute'], [{ burst: 2 }, 'burst']] as const) {
      const bad = await http('PATCH', path, { body });
      assert.deepEqual([bad.status, bad.body.error.code, bad.body.error.field], [400, 'InvalidRequest', field], JSON.stringify(body));
      assert.match(bad.body.error.message, new RegExp(field));
    }
    assert.deepEqual(sim.setLimits(inst.id, { dailyQuota: 42 }), { maxConcurrency: 10, requestsPerMinute: 60, dailyQuota: 42 });
    assert.equal((await http('GET', path)).body.dailyQuota, 42, 'the console change shows through /v1');
    assert.equal(sim.setLimits('inst-none', { dailyQuota: 1 }), undefined);
    assert.equal(sim.stats().requests['PATCH /v1/instances/{id}/limits'], 5);
    assert.equal(sim.stats().writes, 6, 'one create and five limit patches');
  });

  it('billable calls: accepted, then throttled over the minute (429 InstanceThrottled), then refused over the quota (429 QuotaExhausted)', async () => {
    const { body: inst } = await create('k');
    sim.setLimits(inst.id, { requestsPerMinute: 2, dailyQuota: 3 });
    const call = () => http('POST', `/v1/instances/${inst.id}/calls`);
    assert.equal((await call()).status, 200);
    const second = await call();
    assert.deepEqual([second.status, second.body.callsToday, second.body.quotaRemaining], [200, 2, 1]);
    const throttled = await call();
    assert.deepEqual([throttled.status, throttled.body.error.code], [429, 'InstanceThrottled']);
    assert.ok(Number(throttled.headers['retry-after']) >= 1 && Number(throttled.headers['retry-after']) <= 60);
    const usage = (await http('GET', `/v1/instances/${inst.id}/usage`)).body;
    assert.deepEqual([usage.id, usage.callsToday, usage.throttledRequests, usage.throttleWindowSeconds], [inst.id, 2, 1, 2]);
    // The quota: lift the minute limit, use the last call, and the next is refused until the reset.
    sim.setLimits(inst.id, { requestsPerMinute: 100 });
    assert.equal((await call()).status, 200);
    const refused = await call();
    assert.deepEqual([refused.status, refused.body.error.code], [429, 'QuotaExhausted']);
    assert.match(refused.body.error.message, /daily quota of 3 calls; it resets at \d{4}-/);
    const untilReset = (Date.parse(usage.quotaResetAt) - Date.now()) / 1000;
    assert.ok(Math.abs(Number(refused.headers['retry-after']) - untilReset) < 5, `Retry-After ${refused.headers['retry-after']} ≈ ${untilReset}`);
    assert.deepEqual(sim.stats().metering, { accepted: 3, throttled: 1, refused: 1, suspended: 0 });
    assert.equal(sim.stats().writes, 1, 'billable calls are not management writes');
    // A new quota day: calls go through again.
    const day = sim.quotaDay().day;
    assert.equal(sim.advanceQuotaDay().day, day + 1);
    assert.equal((await call()).status, 200);
    assert.equal(sim.usage(inst.id)!.callsToday, 1);
  });

  it('consume and throttle drive usage in bulk, deterministically; throttling clears by itself or at once', async () => {
    const { body: inst } = await create('k');
    sim.setLimits(inst.id, { requestsPerMinute: 1_000, dailyQuota: 1_500 });
    const first = sim.consume(inst.id, 1_200)!;
    assert.deepEqual([first.accepted, first.throttled, first.refused, first.usage.throttledRequests], [1_000, 200, 0, 200]);
    assert.equal(sim.throttle(inst.id, 5)!.throttledRequests, 205);
    assert.equal(sim.clearThrottle(inst.id)!.throttledRequests, 0);
    sim.throttle(inst.id, 3);
    await new Promise((r) => setTimeout(r, 2_100));
    assert.equal(sim.usage(inst.id)!.throttledRequests, 0, 'out of the 2 s window');
    assert.equal(sim.consume('inst-none', 1), undefined);
  });

  it('a suspended account reads and deletes, but cannot create, update, change limits or make calls; resumed, it can', async () => {
    const { body: inst } = await create('k');
    const suspended = sim.suspendAccount(undefined, 'invoice 2024-11 unpaid')!;
    assert.deepEqual([suspended.state, suspended.reason], ['suspended', 'NonPayment']);
    const account = (await http('GET', '/v1/account')).body;
    assert.deepEqual([account.id, account.state, account.reason, account.message], ['default', 'suspended', 'NonPayment', 'invoice 2024-11 unpaid']);
    for (const [method, path, body] of [
      ['POST', '/v1/instances', { region: 'eu-west' }],
      ['PATCH', `/v1/instances/${inst.id}`, { displayName: 'x' }],
      ['PATCH', `/v1/instances/${inst.id}/limits`, { dailyQuota: 5 }],
      ['POST', `/v1/instances/${inst.id}/calls`, undefined],
    ] as const) {
      const res = await http(method, path, { body });
      assert.deepEqual([res.status, res.body.error.code], [403, 'AccountSuspended'], `${method} ${path}`);
      assert.match(res.body.error.message, /account default is suspended \(NonPayment\): invoice 2024-11 unpaid/);
    }
    assert.equal(sim.consume(inst.id, 4)!.suspended, 4);
    for (const path of [`/v1/instances/${inst.id}`, `/v1/instances/${inst.id}/health`, `/v1/instances/${inst.id}/usage`, `/v1/instances/${inst.id}/limits`, '/v1/instances?view=full']) {
      assert.equal((await http('GET', path)).status, 200, path);
    }
    assert.equal(sim.stats().metering.suspended, 5);
    assert.equal(sim.resumeAccount()!.state, 'active');
    assert.equal((await http('POST', `/v1/instances/${inst.id}/calls`)).status, 200);
    sim.suspendAccount();
    assert.equal((await http('DELETE', `/v1/instances/${inst.id}`)).status, 204, 'deletion works while suspended');
  });

  it('accounts are isolated: another token sees none of these instances, and keys are per account', async () => {
    const { body: mine } = await create('same-key');
    const { body: theirs, status } = await create('same-key', OTHER);
    assert.equal(status, 201, 'the same key in another account is another instance');
    assert.notEqual(theirs.id, mine.id);
    assert.equal((await http('GET', `/v1/instances/${mine.id}`, { token: OTHER })).status, 404);
    assert.equal((await http('DELETE', `/v1/instances/${mine.id}`, { token: OTHER })).status, 404);
    assert.deepEqual((await http('GET', '/v1/instances', { token: OTHER })).body.items.map((i: { id: string }) => i.id), [theirs.id]);
    sim.suspendAccount('b');
    assert.equal((await http('POST', `/v1/instances/${mine.id}/calls`)).status, 200, 'only account b is suspended');
    assert.equal((await http('GET', '/v1/account', { token: OTHER })).body.state, 'suspended');
    assert.deepEqual(sim.instances().map((i) => i.account).sort(), ['b', 'default']);
  });

  it('view=full lists health, limits and usage, in pages that cover every instance exactly once', async () => {
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push((await create(`k${i}`)).body.id as string);
    sim.setHealth(ids[0]!, 'degraded', 'GPU hot');
    sim.consume(ids[1]!, 3);
    const seen: any[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const res = await http('GET', `/v1/instances?view=full&pageSize=3${token ? `&pageToken=${token}` : ''}`);
      assert.equal(res.status, 200);
      seen.push(...res.body.items);
      token = res.body.nextPageToken;
      pages++;
    } while (token);
    assert.equal(pages, 3);
    assert.deepEqual(seen.map((i) => i.id), [...ids].sort());
    const byId = new Map(seen.map((i) => [i.id, i]));
    assert.deepEqual([byId.get(ids[0])!.health.status, byId.get(ids[0])!.health.message], ['degraded', 'GPU hot']);
    assert.equal(byId.get(ids[1])!.usage.callsToday, 3);
    assert.deepEqual(byId.get(ids[2])!.limits, DEFAULT_LIMITS);
    assert.equal((await http('GET', '/v1/instances')).body.items[0].health, undefined, 'the basic view has no state');
    assert.equal((await http('GET', '/v1/instances?pageSize=0')).body.error.field, 'pageSize');
    assert.equal((await http('GET', '/v1/instances?pageToken=bogus')).body.error.field, 'pageToken');
    assert.equal((await http('GET', '/v1/instances?view=huge')).body.error.field, 'view');
    assert.equal(sim.stats().requests['GET /v1/instances'], 7, 'three pages, one basic list, three refused');
  });

  it('the admin client drives accounts, limits, usage and the quota day over HTTP', async () => {
    const admin = createVendorSimAdmin({ baseUrl: sim.baseUrl, adminToken: sim.adminToken, ca: sim.caPem });
    try {
      const { body: inst } = await create('k');
      assert.equal((await admin.setLimits(inst.id, { dailyQuota: 2 }))!.dailyQuota, 2);
      await assert.rejects(admin.setLimits(inst.id, { dailyQuota: -1 }), /HTTP 400: dailyQuota must be an integer from 1/);
      assert.equal(await admin.setLimits('inst-none', { dailyQuota: 2 }), undefined);
      const consumed = (await admin.consume(inst.id, 3))!;
      assert.deepEqual([consumed.accepted, consumed.refused, consumed.usage.quotaRemaining], [2, 1, 0]);
      assert.equal((await admin.throttle(inst.id, 4))!.throttledRequests, 4);
      assert.equal((await admin.clearThrottle(inst.id))!.throttledRequests, 0);
      assert.equal((await admin.setAccountState('b', { state: 'suspended', reason: 'PolicyViolation' }))!.reason, 'PolicyViolation');
      assert.equal(await admin.setAccountState('nobody', { state: 'active' }), undefined);
      await assert.rejects(admin.setAccountState('b', { state: 'gone' as never }), /HTTP 400: state must be one of active, suspended/);
      assert.deepEqual((await admin.accounts()).map((a) => [a.id, a.state]), [['default', 'active'], ['b', 'suspended']]);
      const day = await admin.quotaDay();
      const next = await admin.advanceQuotaDay();
      assert.equal(next.day, day.day + 1);
      assert.ok(Math.abs(Date.parse(next.quotaResetAt) - Date.now() - 86_400_000) < 5_000);
      assert.equal((await admin.instances())[0]!.usage.callsToday, 0);
      assert.deepEqual((await admin.instances())[0]!.limits, { ...DEFAULT_LIMITS, dailyQuota: 2 });
      await admin.reset();
      assert.ok((await admin.accounts()).every((a) => a.state === 'active'), 'a reset resumes every account');
    } finally {
      await admin.close();
    }
  });
});

describe('vendor simulator restart', () => {
  it('keeps instances and CA across a restart on the same port', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vendor-sim-restart-'));
    try {
      const stateFile = join(dir, 'state.json');
      const first = await startVendorSimulator({ token: TOKEN, stateFile });
      const http1 = httpFor(first);
      const { body: inst } = await http1('POST', '/v1/instances', { body: { region: 'eu' }, headers: { 'idempotency-key': 'k' } });
      first.setHealth(inst.id, 'degraded');
      await http1.close();
      await first.stop();
      await first.stop(); // idempotent

      const second = await startVendorSimulator({ token: TOKEN, stateFile, port: first.port });
      assert.equal(second.baseUrl, first.baseUrl);
      assert.equal(second.caPem, first.caPem, 'the CA next to the state file is reused');
      const http2 = httpFor(first); // trusts the first CA
      try {
        assert.deepEqual((await http2('GET', `/v1/instances/${inst.id}`)).body, inst);
        assert.equal((await http2('GET', `/v1/instances/${inst.id}/health`)).body.status, 'degraded');
        assert.equal((await http2('POST', '/v1/instances', { body: { region: 'eu' }, headers: { 'idempotency-key': 'k' } })).status, 200);
      } finally {
        await http2.close();
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('removes its own temporary folder on stop, but never a given one', async () => {
    const sim = await startVendorSimulator({ token: TOKEN });
    await sim.stop();
    await assert.rejects(readFile(sim.caPath));
    const dir = await mkdtemp(join(tmpdir(), 'vendor-sim-dir-'));
    const kept = await startVendorSimulator({ token: TOKEN, dir });
    await kept.stop();
    assert.ok((await readFile(kept.caPath, 'utf8')).includes('BEGIN CERTIFICATE'));
    await rm(dir, { recursive: true, force: true });
  });
});
