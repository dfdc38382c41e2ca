/**
 * The metrics authorizer's decisions and cache (`metrics-auth.ts`) with a scripted review client
 * and a fake clock, and the metrics server behind an authorizer. The same against the real API
 * server (TokenReview, SubjectAccessReview, RBAC, an API server failing):
 * test/integration/runtime/metrics-auth.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Registry, Counter } from 'prom-client';
import { FakeClock } from '../clock/index.ts';
import { createLogger } from '../logging/index.ts';
import { bearerToken, createMetricsServer, kubernetesAuthorizer, type AuthorizationVerdict, type MetricsAuthorizer, type ReviewClient } from './index.ts';

type User = { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
type Call = { path: string; body: any };

/**
 * A review client: tokens in `users` authenticate as that user; `allow` says which (user, path)
 * pairs a SubjectAccessReview allows. `fail` makes the next calls throw; `hold` keeps them (all,
 * or those whose body it matches) unanswered until their signal aborts (or `release()`).
 */
function reviews(users: Record<string, User>, allow: (user: string, path: string) => boolean) {
  const calls: Call[] = [];
  let fail: ((path: string) => unknown) | undefined;
  let hold: boolean | ((body: any) => boolean) = false;
  const held: (() => void)[] = [];
  const client: ReviewClient = {
    async request<R>(method: string, path: string, opts: { body?: unknown; signal?: AbortSignal }): Promise<R> {
      assert.equal(method, 'POST');
      calls.push({ path, body: opts.body });
      if (hold === true || (typeof hold === 'function' && hold(opts.body))) {
        await new Promise<void>((resolve, reject) => {
          held.push(resolve);
          opts.signal?.addEventListener('abort', () => reject(opts.signal!.reason), { once: true });
        });
      }
      if (fail) {
        const answer = fail(path);
        if (answer instanceof Error) throw answer;
        return answer as R;
      }
      const body = opts.body as any;
      if (path.endsWith('/tokenreviews')) {
        const user = users[body.spec.token];
        return (user ? { status: { authenticated: true, user } } : { status: { authenticated: false, error: 'invalid bearer token' } }) as R;
      }
      if (path.endsWith('/subjectaccessreviews')) {
        const ok = allow(body.spec.user, body.spec.nonResourceAttributes.path);
        return { status: ok ? { allowed: true } : { allowed: false, reason: 'no RBAC policy matched' } } as R;
      }
      throw new Error(`unexpected ${path}`);
    },
  };
  return {
    client,
    calls,
    count: (kind: 'tokenreviews' | 'subjectaccessreviews') => calls.filter((c) => c.path.endsWith(`/${kind}`)).length,
    failWith: (f: ((path: string) => unknown) | undefined) => void (fail = f),
    hold: (on: boolean | ((body: any) => boolean)) => void (hold = on),
    release: () => held.splice(0).forEach((r) => r()),
  };
}

const PROM: User = { username: 'system:serviceaccount:monitoring:prometheus', uid: 'u-1', groups: ['system:serviceaccounts', 'system:authenticated'], extra: { 'authentication.kubernetes.io/pod-name': ['prometheus-0'] } };
const OTHER: User = { username: 'system:serviceaccount:apps:web' };
const mayRead = (user: string, path: string) => user === PROM.username && (path === '/metrics' || path === '/debug/unconverged');

function logs(): { log: ReturnType<typeof createLogger>; text: () => string } {
  let text = '';
  const destination = new Writable({ write: (chunk, _enc, done) => void ((text += String(chunk)), done()) });
  return { log: createLogger({ level: 'trace', destination }), text: () => text };
}

describe('bearerToken', () => {
  it('reads `Bearer <token>` (any case, surrounding blanks) and nothing else', () => {
    assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
    assert.equal(bearerToken('bearer  abc'), 'abc');
    assert.equal(bearerToken('  BEARER\tabc  '), 'abc');
    for (const bad of [undefined, '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a b', 'Bearerabc', 'Token abc']) assert.equal(bearerToken(bad), undefined, String(bad));
  });
});

describe('kubernetesAuthorizer', () => {
  it('no token or a malformed header: 401 without asking the API server', async () => {
    const r = reviews({ t1: PROM }, mayRead);
    const authorize = kubernetesAuthorizer({ client: r.client, clock: new FakeClock() });
    for (const authorization of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearer']) {
      const v = await authorize({ authorization, path: '/metrics' });
      assert.equal(v.allowed, false);
      assert.equal(!v.allowed && v.code, 401);
    }
    assert.equal(r.calls.length, 0);
  });

  it('allowed: a TokenReview with the token, then a SubjectAccessReview with the user, groups, uid, extra and the path', async () => {
    const r = reviews({ t1: PROM }, mayRead);
    const authorize = kubernetesAuthorizer({ client: r.client, clock: new FakeClock() });
    assert.deepEqual(await authorize({ authorization: 'Bearer t1', path: '/metrics' }), { allowed: true, user: PROM.username });
    assert.deepEqual(r.calls.map((c) => c.path), ['/apis/authentication.k8s.io/v1/tokenreviews', '/apis/authorization.k8s.io/v1/subjectaccessreviews']);
    assert.deepEqual(r.calls[0]!.body, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 't1' } });
    assert.deepEqual(r.calls[1]!.body, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: PROM.username, groups: PROM.groups, uid: 'u-1', extra: PROM.extra },
    });
  });

  it('a token the review does not authenticate: 401; authenticated but not allowed: 403 naming the user', async () => {
    const r = reviews({ t1: PROM, t2: OTHER }, mayRead);
    const authorize = kubernetesAuthorizer({ client: r.client, clock: new FakeClock() });
    const bad = await authorize({ authorization: 'Bearer nope', path: '/metrics' });
    assert.ok(!bad.allowed && bad.code === 401);
    assert.equal(r.count('subjectaccessreviews'), 0, 'no SubjectAccessReview for a user no one authenticated');
    const other = await authorize({ authorization: 'Bearer t2', path: '/metrics' });
    assert.ok(!other.allowed && other.code === 403);
    assert.match(other.message, /system:serviceaccount:apps:web.*\/metrics/);
    const path = await authorize({ authorization: 'Bearer t1', path: '/debug' });
    assert.ok(!path.allowed && path.code === 403, 'allowed per path, not per user');
  });

  it('caches per token and path: allowed for 60 s, refusals for 30 s, on the monotonic clock', async () => {
    const r = reviews({ t1: PROM, t2: OTHER }, mayRead);
    const clock = new FakeClock();
    const authorize = kubernetesAuthorizer({ client: r.client, clock });
    const ask = (token: string, path = '/metrics') => authorize({ authorization: `Bearer ${token}`, path });
    // A Prometheus scraping every 15 s: one pair of reviews a minute.
    for (let i = 0; i < 4; i++) {
      assert.equal((await ask('t1')).allowed, true);
      clock.advance(15_000 - 1);
    }
    assert.deepEqual([r.count('tokenreviews'), r.count('subjectaccessreviews')], [1, 1]);
    clock.advance(4);
    await ask('t1');
    assert.deepEqual([r.count('tokenreviews'), r.count('subjectaccessreviews')], [2, 2], 'again after 60 s');
    await ask('t1', '/debug/unconverged');
    assert.deepEqual([r.count('tokenreviews'), r.count('subjectaccessreviews')], [3, 3], 'another path is another pair');
    // A wall-clock step changes nothing.
    clock.stepWall(-3_600_000);
    await ask('t1');
    assert.equal(r.count('tokenreviews'), 3);

    await ask('t2');
    await ask('nope');
    const before = r.calls.length;
    clock.advance(29_999);
    await ask('t2');
    await ask('nope');
    assert.equal(r.calls.length, before, 'refusals are reused for 30 s');
    clock.advance(1);
    await ask('t2');
    await ask('nope');
    assert.equal(r.calls.length, before + 3, 'then asked again (a pair for t2, a TokenReview for nope)');
  });

  it('a review that fails: 503, never allowed, not cached; the token is never logged', async () => {
    const r = reviews({ t1: PROM }, mayRead);
    const { log, text } = logs();
    // Every attempt is a new check of a key never allowed: a bucket big enough for all of them.
    const authorize = kubernetesAuthorizer({ client: r.client, clock: new FakeClock(), log, newReviewsBurst: 100 });
    const answers: [string, (path: string) => unknown][] = [
      ['the API server unreachable', () => new Error('connect ECONNREFUSED 10.0.0.1:443')],
      ['an error quoting the token', () => new Error('upstream said: bad body {"spec":{"token":"t1"}}')],
      ['a TokenReview without a status', () => ({})],
      ['not a review at all', () => 'not json'],
      ['authenticated without a username', (p) => (p.endsWith('/tokenreviews') ? { status: { authenticated: true, user: {} } } : { status: { allowed: true } })],
      ['a SubjectAccessReview without allowed', (p) => (p.endsWith('/tokenreviews') ? { status: { authenticated: true, user: PROM } } : { status: { reason: 'x' } })],
      ['a SubjectAccessReview that fails', (p) => (p.endsWith('/tokenreviews') ? { status: { authenticated: true, user: PROM } } : new Error('500 Internal Server Error'))],
    ];
    for (const [what, answer] of answers) {
      r.failWith(answer);
      const before = r.calls.length;
      const v = await authorize({ authorization: 'Bearer t1', path: '/metrics' });
      assert.ok(!v.allowed && v.code === 503, `${what}: ${JSON.stringify(v)}`);
      await authorize({ authorization: 'Bearer t1', path: '/metrics' });
      assert.ok(r.calls.length > before + 1, `${what}: a failure is not cached`);
    }
    r.failWith(undefined);
    assert.equal((await authorize({ authorization: 'Bearer t1', path: '/metrics' })).allowed, true, 'allowed once the API server answers');
    await authorize({ authorization: 'Bearer nope', path: '/metrics' });
    assert.match(text(), /"level":"warn".*the API server did not review its credentials/);
    assert.match(text(), /ECONNREFUSED/);
    assert.ok(!/\bt1\b/.test(text().replaceAll('/metrics', '')), `the token in the logs:\n${text()}`);
    assert.ok(!text().includes('nope'));
  });

  it('a review that does not answer: 503 after reviewTimeoutMs (the request aborted), not before', async () => {
    const r = reviews({ t1: PROM }, mayRead);
    const clock = new FakeClock();
    const authorize = kubernetesAuthorizer({ client: r.client, clock, reviewTimeoutMs: 2_000 });
    r.hold(true);
    let settled = false;
    const pending = authorize({ authorization: 'Bearer t1', path: '/metrics' }).finally(() => (settled = true));
    await clock.advanceAsync(1_999);
    assert.equal(settled, false);
    await clock.advanceAsync(1);
    const verdict: AuthorizationVerdict = await pending;
    assert.ok(!verdict.allowed && verdict.code === 503);
    assert.equal(clock.pendingTimers(), 0, 'no timer left');
  });

  it('concurrent requests of one token and path share one pair of reviews; in flight at most maxInFlight', async () => {
    const r = reviews({ t1: PROM, t2: PROM }, mayRead);
    const authorize = kubernetesAuthorizer({ client: r.client, clock: new FakeClock(), maxInFlight: 1 });
    r.hold(true);
    const same = Array.from({ length: 5 }, () => authorize({ authorization: 'Bearer t1', path: '/metrics' }));
    const other = await authorize({ authorization: 'Bearer t2', path: '/metrics' });
    assert.ok(!other.allowed && other.code === 503, 'over maxInFlight: 503 at once');
    await new Promise((res) => setImmediate(res));
    r.release();
    await new Promise((res) => setImmediate(res));
    r.release();
    for (const v of await Promise.all(same)) assert.equal(v.allowed, true);
    assert.deepEqual([r.count('tokenreviews'), r.count('subjectaccessreviews')], [1, 1]);
  });

  it('a key allowed before is re-checked outside maxInFlight: junk holding every slot cannot starve the scraper', async () => {
    const r = reviews({ prom: PROM }, mayRead);
    const clock = new FakeClock();
    // A bucket big enough that the junk fills all 64 slots; reviews that outlast the TTL.
    const authorize = kubernetesAuthorizer({ client: r.client, clock, reviewTimeoutMs: 120_000, newReviewsBurst: 1_000 });
    const ask = (token: string) => authorize({ authorization: `Bearer ${token}`, path: '/metrics' });
    assert.equal((await ask('prom')).allowed, true);
    r.hold((body) => typeof body?.spec?.token === 'string' && body.spec.token.startsWith('junk-'));
    const junk = Array.from({ length: 64 }, (_, i) => ask(`junk-${i}`));
    assert.equal(r.count('tokenreviews'), 65, '64 TokenReviews hanging');
    clock.advance(60_001);
    const over = await ask('junk-64');
    assert.ok(!over.allowed && over.code === 503, 'an unknown token is still capped');
    assert.equal(r.count('tokenreviews'), 65);
    const scrape = await ask('prom');
    assert.deepEqual(scrape, { allowed: true, user: PROM.username }, `the scraper's entry expired: re-checked, not refused (${JSON.stringify(scrape)})`);
    assert.deepEqual([r.count('tokenreviews'), r.count('subjectaccessreviews')], [66, 2], 'a fresh pair of reviews, not the stale answer');
    r.release();
    for (const v of await Promise.all(junk)) assert.ok(!v.allowed && v.code === 401);
  });

  it('past its TTL an allowed entry is never served: a failed re-check is 503, a revoked token 401', async () => {
    const users: Record<string, User> = { prom: PROM };
    const r = reviews(users, mayRead);
    const clock = new FakeClock();
    const authorize = kubernetesAuthorizer({ client: r.client, clock });
    const ask = () => authorize({ authorization: 'Bearer prom', path: '/metrics' });
    assert.equal((await ask()).allowed, true);
    clock.advance(60_000);
    r.failWith(() => new Error('503 Service Unavailable'));
    const failed = await ask();
    assert.ok(!failed.allowed && failed.code === 503, JSON.stringify(failed));
    r.failWith(undefined);
    delete users.prom;
    const revoked = await ask();
    assert.ok(!revoked.allowed && revoked.code === 401, JSON.stringify(revoked));
    // Once refused, it is no longer a key allowed before: an unknown token again.
    clock.advance(30_000);
    assert.ok(!(await ask()).allowed);
  });

  it('new keys are rate limited (10 at once, then 1 a second): a flood of unknown tokens costs at most the bucket', async () => {
    const r = reviews({ prom: PROM }, mayRead);
    const clock = new FakeClock();
    const { log, text } = logs();
    const authorize = kubernetesAuthorizer({ client: r.client, clock, log });
    const ask = (token: string) => authorize({ authorization: `Bearer ${token}`, path: '/metrics' });
    const flood = async (from: number, n: number) => {
      const verdicts = await Promise.all(Array.from({ length: n }, (_, i) => ask(`junk-${from + i}`)));
      return verdicts.map((v) => (v.allowed ? 200 : v.code));
    };
    assert.equal((await ask('prom')).allowed, true);
    const codes = await flood(0, 500);
    assert.equal(r.count('tokenreviews'), 10, 'the scraper and 9 junk tokens: the burst');
    assert.deepEqual([codes.filter((c) => c === 401).length, codes.filter((c) => c === 503).length], [9, 491]);
    assert.equal(text().match(/"level":"warn"[^\n]*new credentials/g)?.length, 1, 'one warning while the bucket is dry, not one a request');
    // The bucket is empty again when the scraper's entry expires: its re-check is not a new key.
    clock.advance(60_000);
    await flood(1_000, 500);
    assert.equal(r.count('tokenreviews'), 20);
    assert.equal((await ask('prom')).allowed, true);
    assert.deepEqual([r.count('tokenreviews'), r.count('subjectaccessreviews')], [21, 2]);
    // One more new review a second.
    clock.advance(1_000);
    assert.deepEqual(await flood(2_000, 3), [401, 503, 503]);
    assert.equal(r.count('tokenreviews'), 22);
    // Refusals still come from the cache without a token from the bucket.
    assert.equal((await ask('junk-2000')).allowed, false);
    assert.equal(r.count('tokenreviews'), 22);
  });

  it('bounded: at most maxEntries of each; refusals never push out an allowed entry', async () => {
    const users: Record<string, User> = { good: PROM };
    for (let i = 0; i < 50; i++) users[`other-${i}`] = OTHER;
    const r = reviews(users, mayRead);
    const authorize = kubernetesAuthorizer({ client: r.client, clock: new FakeClock(), maxEntries: 4, newReviewsBurst: 1_000 });
    await authorize({ authorization: 'Bearer good', path: '/metrics' });
    for (let i = 0; i < 50; i++) {
      await authorize({ authorization: `Bearer other-${i}`, path: '/metrics' });
      await authorize({ authorization: `Bearer garbage-${i}`, path: '/metrics' });
    }
    const before = r.calls.length;
    assert.equal((await authorize({ authorization: 'Bearer good', path: '/metrics' })).allowed, true);
    assert.equal(r.calls.length, before, 'still cached');
    // The oldest refusals were dropped: asked again.
    await authorize({ authorization: 'Bearer other-0', path: '/metrics' });
    assert.equal(r.calls.length, before + 2);
  });

  it('refuses nonsense options', () => {
    const r = reviews({}, mayRead);
    for (const bad of [{ allowTtlMs: -1 }, { denyTtlMs: Number.NaN }, { maxEntries: Infinity }, { reviewTimeoutMs: '5' as unknown as number }, { newReviewsPerSecond: 0 }, { newReviewsPerSecond: -1 }, { newReviewsBurst: 0 }, { newReviewsBurst: 2.5 }]) {
      assert.throws(() => kubernetesAuthorizer({ client: r.client, ...bad }), RangeError, JSON.stringify(bad));
    }
  });
});

describe('metrics server behind an authorizer', () => {
  async function serve(authorize: MetricsAuthorizer, fn: (base: string) => Promise<void>): Promise<void> {
    const registry = new Registry();
    new Counter({ name: 'x_total', help: 'x', registers: [registry] }).inc();
    const server = createMetricsServer({ address: '127.0.0.1:0', registry, debug: { unconverged: () => ({ top: [] }) }, authorize });
    const ac = new AbortController();
    const done = server.start(ac.signal);
    try {
      const addr = await server.listening();
      await fn(`http://127.0.0.1:${addr!.port}`);
    } finally {
      ac.abort();
      await done;
    }
  }

  it('serves only what the authorizer allows, on every path; 401 asks for a bearer token', async () => {
    const r = reviews({ t1: PROM, t2: OTHER }, mayRead);
    await serve(kubernetesAuthorizer({ client: r.client, clock: new FakeClock() }), async (base) => {
      const get = async (path: string, token?: string, method = 'GET') => {
        const res = await fetch(`${base}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
        return { status: res.status, body: await res.text(), challenge: res.headers.get('www-authenticate') };
      };
      const none = await get('/metrics');
      assert.equal(none.status, 401);
      assert.equal(none.challenge, 'Bearer');
      assert.doesNotMatch(none.body, /x_total/);
      assert.equal((await get('/metrics', 'nope')).status, 401);
      assert.equal((await get('/metrics', 't2')).status, 403);
      const ok = await get('/metrics', 't1');
      assert.equal(ok.status, 200);
      assert.match(ok.body, /x_total 1/);
      assert.equal((await get('/metrics', 't1', 'HEAD')).status, 200, 'HEAD is checked as get');
      assert.equal((await get('/debug/unconverged?limit=5', 't1')).status, 200, 'the query is not part of the path');
      assert.equal((await get('/debug/unconverged', 't2')).status, 403);
      // Paths it does not serve are refused like the ones it does: no 404 tells them apart.
      assert.equal((await get('/nothing-here')).status, 401);
      assert.equal((await get('/nothing-here', 't1')).status, 403);
      assert.equal((await get('/debug', 't1')).status, 403);
      assert.equal((await get('/debug/../metrics', 't1')).status, 200, 'checked on the path it routes on');
    });
  });

  it('an authorizer that throws or answers nonsense: 503, never the endpoint', async () => {
    const verdicts: unknown[] = [undefined, null, {}, { allowed: 'yes' }, { allowed: false, code: 200, message: 'x' }, { allowed: false, code: 401 }];
    let next: unknown;
    const authorize = (async () => {
      if (next === 'throw') throw new Error('boom');
      return next;
    }) as unknown as MetricsAuthorizer;
    await serve(authorize, async (base) => {
      for (const v of ['throw', ...verdicts]) {
        next = v;
        const res = await fetch(`${base}/metrics`);
        const body = await res.text();
        assert.equal(res.status, v && typeof v === 'object' && (v as { code?: number }).code === 401 ? 401 : 503, JSON.stringify(v));
        assert.doesNotMatch(body, /x_total/);
      }
      next = { allowed: true, user: 'u' };
      assert.equal((await fetch(`${base}/metrics`)).status, 200);
    });
  });
});
