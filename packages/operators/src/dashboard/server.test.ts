import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import type { KubeObject, WatchHealth } from '@converge/runtime';
import { judgeCluster } from './cluster-state.ts';
import type { WatchMemory } from './cluster-state.ts';
import { isLoopbackHost, parseListen, tokenFor, ListenError } from './listen.ts';
import { checkAccess, tokensEqual, TOKEN_COOKIE } from './security.ts';
import { conditionTransitions, appendTimeline } from './timeline.ts';
import { itemKey, microserviceItem, providerItem, quotaOf, unconvergedSince } from './items.ts';
import { DashboardModel } from './model.ts';
import { objectDetail } from './detail.ts';
import type { ClusterSource } from './cluster-source.ts';
import { renderDesiredState, defaultPlatformDefaults } from '../operators/microservice/index.ts';
import type { Microservice } from '../operators/microservice/api/index.ts';
import type { DigitalHumanProvider } from '../operators/provider/api/index.ts';
import type { ObjectDetail, ServerEvent } from './shared/types.ts';

const h = (over: Partial<WatchHealth>): WatchHealth => ({ kind: 'Microservice', namespace: '', state: 'watching', synced: true, healthy: true, lastProgressAt: 0, lastProgressAgeMs: 0, restarts: 0, relists: 1, consecutiveFailures: 0, ...over });

test('a cluster is unreachable after two failures in a row, and up again once a reconnected watch stays open', () => {
  const mem = new Map<string, WatchMemory>();
  assert.equal(judgeCluster([h({ synced: false, state: 'listing' })], mem, 0).state, 'connecting');
  assert.equal(judgeCluster([h({})], mem, 100).state, 'reachable');
  assert.equal(judgeCluster([h({ state: 'backoff', consecutiveFailures: 1, restarts: 1, lastError: 'ECONNRESET' })], mem, 200).state, 'reachable', 'one dropped connection is not an outage');
  const down = judgeCluster([h({ state: 'backoff', consecutiveFailures: 2, restarts: 2, lastError: 'connect ECONNREFUSED' })], mem, 400);
  assert.equal(down.state, 'unreachable');
  assert.match(down.error ?? '', /ECONNREFUSED/);
  // Reconnected, idle (no event yet, so still counted as failing): up only after staying open 1 s.
  assert.equal(judgeCluster([h({ state: 'watching', consecutiveFailures: 5, restarts: 5, healthy: false })], mem, 1000).state, 'unreachable');
  assert.equal(judgeCluster([h({ state: 'watching', consecutiveFailures: 5, restarts: 5, healthy: false })], mem, 1900).state, 'unreachable');
  assert.equal(judgeCluster([h({ state: 'watching', consecutiveFailures: 5, restarts: 5, healthy: false })], mem, 2100).state, 'reachable');
  // A new restart resets the clock.
  assert.equal(judgeCluster([h({ state: 'watching', consecutiveFailures: 6, restarts: 6, healthy: false })], mem, 2200).state, 'unreachable');
});

test('a missing CRD or forbidden kind is a warning, not an unreachable cluster', () => {
  const j = judgeCluster([h({}), h({ kind: 'DigitalHumanProvider', synced: false, state: 'backoff', consecutiveFailures: 4, lastError: 'the server could not find the requested resource', lastErrorReason: 'NotFound' })], new Map(), 0);
  assert.equal(j.state, 'reachable');
  assert.deepEqual(j.warnings, ['DigitalHumanProvider: the server could not find the requested resource']);
});

test('a kind refused after it listed is named unreadable; a cluster where every kind is refused and none ever listed is not reachable', () => {
  const forbidden = { state: 'backoff' as const, consecutiveFailures: 3, restarts: 3, healthy: false, lastError: 'digitalhumanproviders.dhp.example.com is forbidden', lastErrorReason: 'Forbidden' };
  const later = judgeCluster([h({}), h({ kind: 'DigitalHumanProvider', ...forbidden })], new Map(), 0);
  assert.equal(later.state, 'reachable', 'the other kinds still show');
  assert.deepEqual(later.unreadable, ['DigitalHumanProvider']);
  const never = judgeCluster([h({ synced: false, ...forbidden }), h({ kind: 'DigitalHumanProvider', synced: false, ...forbidden })], new Map(), 0);
  assert.equal(never.state, 'unreachable', 'nothing could ever be read: the identity has no access (a ClusterRole without its binding)');
  assert.match(never.error ?? '', /no kind could be read: .*forbidden/);
  assert.deepEqual(never.unreadable, ['DigitalHumanProvider', 'Microservice']);
  const healthy = judgeCluster([h({}), h({ kind: 'DigitalHumanProvider' })], new Map(), 0);
  assert.deepEqual(healthy.unreadable, []);
});

test('a failure is a kind warning by what the API server answered, not by words in its text', () => {
  const failing = (lastError: string, lastErrorReason?: string) =>
    judgeCluster([h({ state: 'backoff', consecutiveFailures: 3, restarts: 3, healthy: false, lastError, ...(lastErrorReason ? { lastErrorReason } : {}) })], new Map(), 0);
  // The server ending every watch at once, or a network error, whatever numbers or words it holds.
  for (const text of ['very short watch: the server ended it after 403 ms with nothing delivered', 'connect ECONNREFUSED 10.0.0.1:404', 'certificate not found in the trust store (self-signed)']) {
    assert.equal(failing(text).state, 'unreachable', text);
  }
  // The API server's own answers about one kind.
  assert.equal(failing('the API server does not serve Microservice (platform.example.io/v1): CustomResourceDefinition …', 'NotFound').state, 'reachable');
  assert.equal(failing('microservices.platform.example.io is forbidden: User "x" cannot watch resource', 'Forbidden').state, 'reachable');
  assert.equal(failing('Unauthorized', 'Unauthorized').state, 'unreachable', 'credentials refused: the whole cluster');
});

test('--listen: loopback needs no token, anything else does', async () => {
  assert.deepEqual(parseListen('127.0.0.1:7070'), { host: '127.0.0.1', port: 7070, loopback: true });
  assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0, loopback: true });
  assert.deepEqual(parseListen(':7070'), { host: '', port: 7070, loopback: false });
  assert.equal(parseListen('localhost:1').loopback, true);
  assert.equal(parseListen('0.0.0.0:1').loopback, false);
  assert.equal(parseListen('10.1.2.3:1').loopback, false);
  assert.equal(isLoopbackHost('127.8.9.1'), true);
  assert.equal(isLoopbackHost('::ffff:127.0.0.1'), true);
  assert.equal(isLoopbackHost('127.example.com'), false);
  for (const bad of ['7070', 'host', 'a:99999', '[nope]:1']) assert.throws(() => parseListen(bad), ListenError, bad);
  assert.equal(await tokenFor(parseListen('127.0.0.1:1'), undefined), undefined);
  await assert.rejects(tokenFor(parseListen('0.0.0.0:1'), undefined), /refusing to listen/);
  await assert.rejects(tokenFor(parseListen('0.0.0.0:1'), '/nonexistent/token'), /cannot read --token-file/);
});

function req(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

test('access: Host check on loopback, bearer header, cookie, and ?token= only on the page', () => {
  const url = (p: string) => new URL(p, 'http://x');
  const token = 'a-token-of-enough-length';
  assert.equal(checkAccess(req({ host: 'evil.example' }), url('/'), { token: undefined, loopbackListen: true }).ok, false);
  assert.equal(checkAccess(req({ host: '127.0.0.1:7070' }), url('/'), { token: undefined, loopbackListen: true }).ok, true);
  assert.equal(checkAccess(req({ host: 'anything' }), url('/'), { token, loopbackListen: false }).ok, false);
  assert.equal(checkAccess(req({ host: 'h', authorization: `Bearer ${token}` }), url('/api/v1/clusters'), { token, loopbackListen: false }).ok, true);
  assert.equal(checkAccess(req({ host: 'h', authorization: 'Bearer nope' }), url('/'), { token, loopbackListen: false }).ok, false);
  assert.equal(checkAccess(req({ host: 'h', cookie: `x=1; ${TOKEN_COOKIE}=${token}` }), url('/api/v1/events'), { token, loopbackListen: false }).ok, true);
  // Behind a proxy that authenticates people itself, the browser (Basic auth) or the proxy
  // (oauth2-proxy passing its own bearer) sends an Authorization header of its own: the cookie
  // still lets the request in; without it, the header alone does not.
  for (const authorization of [`Basic ${Buffer.from('alice:pw').toString('base64')}`, 'Bearer an-id-token-of-the-proxy']) {
    assert.equal(checkAccess(req({ host: 'h', authorization, cookie: `${TOKEN_COOKIE}=${token}` }), url('/api/v1/events'), { token, loopbackListen: false }).ok, true, authorization);
    assert.equal(checkAccess(req({ host: 'h', authorization }), url('/api/v1/events'), { token, loopbackListen: false }).ok, false, authorization);
    // The one-time login through the proxy (its header on that request too) sets the cookie.
    const login = checkAccess(req({ host: 'h', authorization }), url(`/?token=${token}`), { token, loopbackListen: false });
    assert.equal(login.ok, 'redirect', `${authorization}: ${JSON.stringify(login)}`);
    assert.match(login.ok === 'redirect' ? login.cookie ?? '' : '', /HttpOnly/);
  }
  const login = checkAccess(req({ host: 'h' }), url(`/?token=${token}&a=1`), { token, loopbackListen: false });
  assert.equal(login.ok, 'redirect');
  assert.equal(login.ok === 'redirect' && login.location, '/?a=1');
  assert.ok(login.ok === 'redirect' && !/Secure/.test(login.cookie ?? ''), 'plain HTTP on loopback: a Secure cookie would be dropped');
  // Behind a TLS proxy the cookie is Secure: never sent back over plain HTTP (the proxy's
  // http→https redirect would carry the token in clear).
  const overTls = checkAccess(req({ host: 'h', 'x-forwarded-proto': 'https' }), url(`/?token=${token}`), { token, loopbackListen: false });
  assert.match(overTls.ok === 'redirect' ? overTls.cookie ?? '' : '', /; Secure(;|$)/);
  assert.equal(checkAccess(req({ host: 'h' }), url(`/api/v1/clusters?token=${token}`), { token, loopbackListen: false }).ok, false);
  assert.ok(tokensEqual('abc', 'abc') && !tokensEqual('abc', 'abd') && !tokensEqual('abc', 'abcd'));
});

test('access: ?token= on the page is taken out of the address even when the cookie is already set (a bookmarked login link)', () => {
  const url = (p: string) => new URL(p, 'http://x');
  const token = 'a-token-of-enough-length';
  const withCookie = { host: 'h', cookie: `${TOKEN_COOKIE}=${token}` };
  const again = checkAccess(req(withCookie), url(`/?token=${token}&cluster=a`), { token, loopbackListen: false });
  assert.equal(again.ok, 'redirect', 'the token would stay in the address bar and the history');
  assert.equal(again.ok === 'redirect' && again.location, '/?cluster=a');
  // A stale token in the link, a valid cookie: the page, without the stale token in the address.
  const stale = checkAccess(req(withCookie), url('/?token=an-old-token-of-enough-length&cluster=a'), { token, loopbackListen: false });
  assert.equal(stale.ok, 'redirect');
  assert.equal(stale.ok === 'redirect' && stale.location, '/?cluster=a');
  assert.equal(stale.ok === 'redirect' && stale.cookie, undefined, 'the valid cookie is kept, not replaced');
  // Without a valid cookie a wrong token is still refused.
  assert.equal(checkAccess(req({ host: 'h' }), url('/?token=an-old-token-of-enough-length'), { token, loopbackListen: false }).ok, false);
});

const cond = (type: string, status: 'True' | 'False', reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 });

test('timeline: first sight, changes of status or reason, removals; message-only changes are not transitions', () => {
  const first = conditionTransitions(undefined, [cond('Ready', 'False', 'RolloutInProgress')], 't0', 1);
  assert.deepEqual(first.map((e) => [e.type, e.from, e.to?.reason]), [['Ready', null, 'RolloutInProgress']]);
  assert.deepEqual(conditionTransitions([cond('Ready', 'False', 'RolloutInProgress')], [cond('Ready', 'False', 'RolloutInProgress', 'new message')], 't1', 1), []);
  const change = conditionTransitions([cond('Ready', 'False', 'RolloutInProgress'), cond('Stalled', 'False', 'NotStalled')], [cond('Ready', 'True', 'Available')], 't2', 2);
  assert.deepEqual(change.map((e) => `${e.type}:${e.from?.reason}->${e.to?.reason ?? 'removed'}@${e.generation}`), ['Ready:RolloutInProgress->Available@2', 'Stalled:NotStalled->removed@2']);
  const history = appendTimeline([], Array.from({ length: 5 }, (_, i) => ({ ...first[0]!, seenAt: `t${i}` })), 3);
  assert.deepEqual(history.map((e) => e.seenAt), ['t2', 't3', 't4']);
});

const ms = (ready: ReturnType<typeof cond> | null, extra: Partial<Microservice['status']> = {}): Microservice => ({
  apiVersion: 'platform.example.io/v1alpha1', kind: 'Microservice',
  metadata: { name: 'web', namespace: 'ns', uid: 'u1', generation: 1, creationTimestamp: '2025-12-01T00:00:00Z' },
  spec: { container: { image: 'img:1', port: 80 } },
  status: { observedGeneration: 1, phase: 'ResourcesApplied', conditions: ready ? [ready] : [], ...extra },
} as unknown as Microservice);

test('items: health, the reason shown, and since when unconverged', () => {
  assert.equal(microserviceItem('c', ms(cond('Ready', 'True', 'Available')), 'seen').health, 'ready');
  assert.equal(microserviceItem('c', ms(cond('Ready', 'False', 'RolloutInProgress')), 'seen').health, 'progressing');
  const conflict = microserviceItem('c', ms(cond('Ready', 'False', 'OwnershipConflict')), 'seen');
  assert.equal(conflict.health, 'failed');
  assert.equal(conflict.unconvergedSince, '2026-01-01T00:00:00Z', "Ready's lastTransitionTime");
  const failed = microserviceItem('c', ms(null, { phase: 'Failed', reason: 'InvalidSpec', message: 'bad image' }), 'seen');
  assert.equal(failed.health, 'failed');
  assert.equal(failed.why, 'InvalidSpec');
  assert.equal(failed.unconvergedSince, '2025-12-01T00:00:00Z', 'no Ready yet: since creation');
  assert.equal(unconvergedSince(false, { status: 'True', reason: 'x', message: '', observedGeneration: 0, current: false, lastTransitionTime: 'old' }, 'c', 'seen'), 'seen', 'a stale True: since the dashboard saw it');
  assert.equal(microserviceItem('c', ms(cond('Ready', 'True', 'Available')), 'seen').key, 'Microservice/c/ns/web');
});

test('items: a Failed Microservice with an empty status.reason or message shows no reason (the fallback), never ""', () => {
  const bare = microserviceItem('c', ms(null, { phase: 'Failed', reason: '', message: '' }), 'seen');
  assert.equal(bare.health, 'failed');
  assert.equal(bare.why, null);
  assert.equal(bare.whyMessage, null);
  const withReady = microserviceItem('c', ms(cond('Ready', 'False', 'ApplyRejected', 'the API server refused it'), { phase: 'Failed', reason: '', message: '' }), 'seen');
  assert.equal(withReady.why, 'ApplyRejected', "Ready's reason, as when status.reason is absent");
  assert.equal(withReady.whyMessage, 'the API server refused it');
  const absent = microserviceItem('c', ms(cond('Ready', 'False', 'ApplyRejected', 'the API server refused it'), { phase: 'Failed' }), 'seen');
  assert.deepEqual([withReady.why, withReady.whyMessage], [absent.why, absent.whyMessage], 'empty reads as absent');
});

test('detail: a field the live child lacks is a difference whose actual is null in the JSON answer, valid against openapi.yaml', async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(parseYaml(readFileSync(new URL('./openapi.yaml', import.meta.url), 'utf8')) as object, 'openapi');
  const validate = ajv.compile({ $ref: 'openapi#/components/schemas/ObjectDetail' });
  const web = ms(cond('Ready', 'True', 'Available'));
  const desired = renderDesiredState(web, defaultPlatformDefaults);
  const deployment = structuredClone(desired.deployment);
  deployment.metadata = { ...deployment.metadata, uid: 'd1' };
  delete deployment.metadata.labels!['app.kubernetes.io/managed-by'];
  const service = structuredClone(desired.service);
  service.metadata = { ...service.metadata, uid: 's1' };
  const objects = [web, deployment, service] as KubeObject[];
  const source = {
    name: 'c',
    cache: {
      store: (kind: { kind: string }) => ({
        get: ({ namespace, name }: { namespace: string; name: string }) => objects.find((o) => o.kind === kind.kind && o.metadata.namespace === namespace && o.metadata.name === name),
        list: () => [],
        byIndex: () => [],
      }),
    },
    view: () => ({ unreadableKinds: [], warnings: [] }),
  } as unknown as ClusterSource;
  const model = new DashboardModel({ now: () => new Date('2026-03-01T00:00:00Z') });
  model.upsert('c', 'Microservice', web);
  const answer = JSON.parse(JSON.stringify(await objectDetail(model, source, 'Microservice', 'ns', 'web'))) as ObjectDetail;
  assert.ok(validate(answer), ajv.errorsText(validate.errors));
  const dep = answer.explanation.microservice!.children[0]!;
  assert.equal(dep.ownership, 'controlled');
  assert.deepEqual(dep.differences, [{ path: 'metadata.labels["app.kubernetes.io/managed-by"]', expected: 'converge', actual: null }]);
});

test('detail: a child of a kind the dashboard cannot read now is not said to be missing (nor to be created): the explanation says it cannot tell', async () => {
  const web = ms(cond('Ready', 'True', 'Available'));
  const source = {
    name: 'c',
    cache: { store: (kind: { kind: string }) => ({ get: ({ name }: { name: string }) => (kind.kind === 'Microservice' && name === 'web' ? web : undefined), list: () => [], byIndex: () => [] }) },
    view: () => ({ unreadableKinds: ['Deployment'], warnings: ['Deployment: deployments.apps is forbidden: User "dash" cannot list resource "deployments"'] }),
  } as unknown as ClusterSource;
  const model = new DashboardModel({ now: () => new Date('2026-03-01T00:00:00Z') });
  model.upsert('c', 'Microservice', web);
  const answer = (await objectDetail(model, source, 'Microservice', 'ns', 'web'))!;
  const messages = answer.explanation.findings.map((f) => f.message);
  assert.ok(!messages.some((m) => /^Deployment web does not exist/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => /^Deployment web: not known here: .*cannot list resource "deployments"/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => /^Service web does not exist/.test(m)), 'a readable kind that is missing still is');
});

test('detail: an env value (it may be a password) is hidden in the YAML as explain hides it, in the spec and in a last-applied annotation', async () => {
  const canary = 'hunter2-canary';
  const web = ms(cond('Ready', 'True', 'Available'));
  web.spec = { container: { ...web.spec.container, env: [{ name: 'DB_PASSWORD', value: canary }, { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] } };
  web.metadata.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: web.spec }), 'note.example.com/x': 'kept' };
  const source = {
    name: 'c',
    cache: { store: (kind: { kind: string }) => ({ get: ({ name }: { name: string }) => (kind.kind === 'Microservice' && name === 'web' ? web : undefined), list: () => [], byIndex: () => [] }) },
    view: () => ({ unreadableKinds: [], warnings: [] }),
  } as unknown as ClusterSource;
  const model = new DashboardModel({ now: () => new Date('2026-03-01T00:00:00Z') });
  model.upsert('c', 'Microservice', web);
  const answer = (await objectDetail(model, source, 'Microservice', 'ns', 'web'))!;
  assert.ok(!JSON.stringify(answer).includes(canary), 'the value appears nowhere in the detail');
  assert.match(answer.yaml, /DB_PASSWORD/);
  assert.match(answer.yaml, /\(value hidden\)/);
  assert.match(answer.yaml, /secretKeyRef/, 'a Secret reference is no secret: shown');
  assert.match(answer.yaml, /note\.example\.com\/x: kept/);
  assert.equal(web.spec.container.env?.[0]?.value, canary, 'the cached object is not changed');
});

test('model: an object recreated under its name (a relist reports it as an update) is unconverged since it was seen, not since its predecessor was', () => {
  let now = new Date('2026-03-01T00:00:00Z');
  const model = new DashboardModel({ now: () => now });
  // Ready=True, but for an older generation: the dashboard can only say since when it saw that.
  const stale = (uid: string) => ({ ...ms(cond('Ready', 'True', 'Available')), metadata: { ...ms(null).metadata, uid, generation: 2 } }) as Microservice;
  model.upsert('c', 'Microservice', stale('u1'));
  assert.equal(model.items()[0]!.unconvergedSince, '2026-03-01T00:00:00.000Z');
  now = new Date('2026-03-01T01:00:00Z');
  model.upsert('c', 'Microservice', stale('u2'));
  assert.equal(model.items()[0]!.unconvergedSince, '2026-03-01T01:00:00.000Z');
});

test('quota: read from status.usage and status.limitedBy as the operator writes them, null otherwise', () => {
  const p = (status: Record<string, unknown>) => ({ metadata: { name: 'p', namespace: 'ns', generation: 1, finalizers: ['dhp.example.com/provider-cleanup'] }, spec: { region: 'eu' }, status } as unknown as DigitalHumanProvider);
  assert.deepEqual(quotaOf(p({})), { quota: null, limitingReason: null });
  assert.deepEqual(quotaOf(p({ usage: { callsToday: 7, dailyQuota: 10, quotaRemaining: 3 }, limitedBy: 'RateLimited' })), { quota: { used: 7, limit: 10, left: 3 }, limitingReason: 'RateLimited' });
  assert.deepEqual(quotaOf(p({ usage: { callsToday: 10, dailyQuota: 10 } })).quota, { used: 10, limit: 10, left: 0 });
  const exhausted = providerItem('c', p({ observedGeneration: 1, providerID: 'x', usage: { callsToday: 10, dailyQuota: 10, quotaRemaining: 0 }, conditions: [cond('Ready', 'True', 'ProviderReady')] }), true, 'seen');
  assert.equal(exhausted.converged, true);
  assert.equal(exhausted.usable, false, 'no quota left: not usable');
  assert.equal(providerItem('c', p({ observedGeneration: 1, providerID: 'x', conditions: [cond('Ready', 'True', 'ProviderReady')] }), false, 'seen').usable, false, 'unreachable cluster: not usable');
});

test('a provider whose kind the dashboard can no longer read (RBAC revoked, CRD gone) is not offered as usable', () => {
  const model = new DashboardModel({ now: () => new Date('2026-03-01T00:00:00Z') });
  const view = (unreadableKinds: string[]) => ({ name: 'c', server: 's', state: 'reachable' as const, reachable: true, syncedAt: null, lastSync: null, error: null, warnings: [], unreadableKinds });
  model.setCluster(view([]));
  const p = { metadata: { name: 'p', namespace: 'ns', uid: 'u', generation: 1, finalizers: ['dhp.example.com/provider-cleanup'] }, spec: { region: 'eu' }, status: { observedGeneration: 1, providerID: 'x', conditions: [cond('Ready', 'True', 'ProviderReady')] } } as unknown as DigitalHumanProvider;
  model.upsert('c', 'DigitalHumanProvider', p);
  const usable = () => (model.get(itemKey('DigitalHumanProvider', 'c', 'ns', 'p'))!.item as { usable: boolean }).usable;
  assert.equal(usable(), true);
  model.setCluster(view(['Deployment']));
  assert.equal(usable(), true, 'another kind refused: providers are still seen');
  model.setCluster(view(['DigitalHumanProvider']));
  assert.equal(usable(), false, 'what is shown is what was last seen: not offered to the upstream');
  model.setCluster(view([]));
  assert.equal(usable(), true);
});

test('the model emits only real changes, and re-emits providers when their cluster becomes unreachable', () => {
  const model = new DashboardModel({ now: () => new Date('2026-03-01T00:00:00Z') });
  const events: ServerEvent[] = [];
  model.subscribe((e) => events.push(e));
  const view = (reachable: boolean) => ({ name: 'c', server: 's', state: reachable ? 'reachable' as const : 'unreachable' as const, reachable, syncedAt: null, lastSync: null, error: null, warnings: [] });
  model.setCluster(view(true));
  const p = { metadata: { name: 'p', namespace: 'ns', uid: 'u', generation: 1, finalizers: ['dhp.example.com/provider-cleanup'] }, spec: { region: 'eu' }, status: { observedGeneration: 1, providerID: 'x', conditions: [cond('Ready', 'True', 'ProviderReady')] } } as unknown as DigitalHumanProvider;
  model.upsert('c', 'DigitalHumanProvider', p);
  model.upsert('c', 'DigitalHumanProvider', { ...p, metadata: { ...p.metadata, resourceVersion: '2' } });
  assert.deepEqual(events.map((e) => e.type), ['cluster', 'upsert'], 'an update that changes no row emits nothing');
  model.setCluster(view(false));
  const last = events.at(-1)!;
  assert.ok(last.type === 'upsert' && last.item.kind === 'DigitalHumanProvider' && last.item.usable === false);
  model.remove('c', 'DigitalHumanProvider', p);
  assert.equal(events.at(-1)!.type, 'delete');
  assert.equal(model.size, 0);
});
