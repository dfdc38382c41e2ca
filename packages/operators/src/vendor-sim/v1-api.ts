/**
 * The simulator's /v1 API (the vendor's side of `openapi.yaml`): routing, the fault stages in
 * their documented order, authentication to an account, and the operations themselves.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Accounts } from './accounts.ts';
import type { FaultState, VendorOperation } from './faults.ts';
import { HttpFailure, bearerToken, onlyFields, readJson } from './http.ts';
import { LimitValidationError, parseLimitsPatch, type Metering, type UsageReport } from './metering.ts';
import { bump, type Counters } from './stats.ts';
import { publicInstance, type InstanceStore, type StoredInstance } from './store.ts';

const REGION = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_PAGE_SIZE = 1000;

/** What the /v1 handler works on; `counters()` is read per request (a reset replaces them). */
export interface SimState {
  store: InstanceStore;
  faults: FaultState;
  accounts: Accounts;
  metering: Metering;
  counters(): Counters;
}

/** Per-request I/O the server provides. */
export interface V1Exchange {
  req: IncomingMessage;
  url: URL;
  send(status: number, body: unknown, headers?: Record<string, string>): void;
  /** Holds the request while the `hang` fault applies; false when the client went away. */
  park(op: VendorOperation): Promise<boolean>;
  /** Waits `ms`; false when the client went away. */
  delay(ms: number): Promise<boolean>;
}

interface Route {
  op: VendorOperation;
  template: string;
  id?: string;
}

function matchV1(method: string, path: string): Route | 'method-not-allowed' | undefined {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] !== 'v1') return undefined;
  if (parts[1] === 'account' && parts.length === 2) return method === 'GET' ? { op: 'account', template: '/v1/account' } : 'method-not-allowed';
  if (parts[1] !== 'instances') return undefined;
  if (parts.length === 2) {
    if (method === 'POST') return { op: 'create', template: '/v1/instances' };
    if (method === 'GET') return { op: 'list', template: '/v1/instances' };
    return 'method-not-allowed';
  }
  const id = decodeURIComponent(parts[2]!);
  if (parts.length === 3) {
    const template = '/v1/instances/{id}';
    if (method === 'GET') return { op: 'get', template, id };
    if (method === 'PATCH') return { op: 'update', template, id };
    if (method === 'DELETE') return { op: 'delete', template, id };
    return 'method-not-allowed';
  }
  if (parts.length !== 4) return undefined;
  const template = `/v1/instances/{id}/${parts[3]}`;
  switch (parts[3]) {
    case 'health':
      return method === 'GET' ? { op: 'health', template, id } : 'method-not-allowed';
    case 'limits':
      if (method === 'GET') return { op: 'getLimits', template, id };
      if (method === 'PATCH') return { op: 'setLimits', template, id };
      return 'method-not-allowed';
    case 'usage':
      return method === 'GET' ? { op: 'usage', template, id } : 'method-not-allowed';
    case 'calls':
      return method === 'POST' ? { op: 'call', template, id } : 'method-not-allowed';
    default:
      return undefined;
  }
}

function checkDisplayName(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  // Characters as JSON Schema's maxLength counts them (code points), not UTF-16 units.
  if (typeof v !== 'string' || [...v].length > 256) throw new HttpFailure(400, 'InvalidRequest', 'displayName must be a string of at most 256 characters', 'displayName');
  return v;
}

function checkRegion(v: unknown): string {
  if (typeof v !== 'string' || !REGION.test(v)) {
    throw new HttpFailure(400, 'InvalidRequest', 'region must be lower-case letters, digits and dashes (1-63)', 'region');
  }
  return v;
}

/** Validated limits patch, or 400 naming the field. */
export function limitsPatchOr400(body: unknown): ReturnType<typeof parseLimitsPatch> {
  try {
    return parseLimitsPatch(body);
  } catch (err) {
    if (err instanceof LimitValidationError) throw new HttpFailure(400, 'InvalidRequest', err.message, err.field);
    throw err;
  }
}

export const usageOf = (state: SimState, instance: StoredInstance): UsageReport & { id: string } => ({
  id: instance.id,
  ...state.metering.meter(instance.id).report(instance.limits),
});

/** `status`: a status outside the contract the `unknownHealth` fault sends instead of the instance's own. */
export const healthOf = (instance: StoredInstance, checkedAt: string, status?: string) => ({
  id: instance.id,
  status: status ?? instance.health,
  ...(instance.healthMessage ? { message: instance.healthMessage } : {}),
  checkedAt,
});

/** The 403 a suspended account gets for anything but reads and deletes. */
function refuseIfSuspended(state: SimState, account: string): void {
  const a = state.accounts.get(account);
  if (a?.state !== 'suspended') return;
  throw new HttpFailure(403, 'AccountSuspended', `account ${a.id} is suspended (${a.reason})${a.message ? `: ${a.message}` : ''}; reads and deletes still work`);
}

const seconds = (ms: number): string => String(Math.max(1, Math.ceil(ms / 1000)));

function pageOf(items: StoredInstance[], url: URL): { page: StoredInstance[]; next?: string } {
  const sizeText = url.searchParams.get('pageSize');
  const token = url.searchParams.get('pageToken');
  const sorted = items.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let after: string | undefined;
  if (token !== null) {
    after = Buffer.from(token, 'base64url').toString('utf8');
    if (token === '' || !after.startsWith('after:')) throw new HttpFailure(400, 'InvalidRequest', 'pageToken is not one this server gave', 'pageToken');
    after = after.slice('after:'.length);
  }
  const from = after === undefined ? sorted : sorted.filter((i) => i.id > after!);
  if (sizeText === null) return { page: from };
  const size = Number(sizeText);
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) throw new HttpFailure(400, 'InvalidRequest', `pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`, 'pageSize');
  const page = from.slice(0, size);
  return from.length > size ? { page, next: Buffer.from(`after:${page.at(-1)!.id}`).toString('base64url') } : { page };
}

/** Handles one /v1 request; throws `HttpFailure` for every failure answer. */
export async function handleV1(state: SimState, x: V1Exchange, requestId: string): Promise<void> {
  const { req, url, send } = x;
  const counters = state.counters();
  const method = req.method ?? 'GET';
  const route = matchV1(method, url.pathname);
  bump(counters.requests, typeof route === 'object' ? `${method} ${route.template}` : 'OTHER');
  if ((method === 'POST' || method === 'PATCH' || method === 'DELETE') && !(typeof route === 'object' && route.op === 'call')) counters.writes++;
  if (route === undefined) throw new HttpFailure(404, 'NotFound', `no route ${method} ${url.pathname}`);
  if (route === 'method-not-allowed') throw new HttpFailure(405, 'InvalidRequest', `method ${method} not allowed on ${url.pathname}`);
  const { op, id } = route;
  const { faults } = state;

  const outage = faults.outage(op);
  if (outage) {
    counters.injected.outages++;
    if (outage.mode === 'reset') {
      req.socket.destroy();
      return;
    }
    throw new HttpFailure(outage.status, 'ServiceUnavailable', 'the vendor is unavailable (simulated outage)');
  }
  if (faults.hangs(op)) {
    counters.injected.hangs++;
    if (!(await x.park(op))) return;
  }
  const latency = faults.latencyMs(op);
  if (latency > 0) {
    counters.injected.delayed++;
    if (!(await x.delay(latency))) return;
  }
  const token = bearerToken(req.headers.authorization);
  const account = token === undefined ? undefined : state.accounts.accountFor(token);
  if (account === undefined) throw new HttpFailure(401, 'Unauthorized', 'missing or invalid bearer token', undefined, { 'www-authenticate': 'Bearer' });
  const burst = faults.takeBurst429(op);
  if (burst) throw new HttpFailure(429, burst.code, burst.code === 'RateLimited' ? 'too many requests' : `simulated ${burst.code}`, undefined, { 'retry-after': String(burst.retryAfterSeconds) });
  const retryAfter = op === 'call' ? undefined : faults.takeRateLimit();
  if (retryAfter !== undefined) throw new HttpFailure(429, 'RateLimited', 'too many requests', undefined, { 'retry-after': String(retryAfter) });
  const errorStatus = faults.error(op);
  if (errorStatus !== undefined) {
    counters.injected.errors++;
    const code = errorStatus < 500 ? 'InvalidRequest' : errorStatus === 503 ? 'ServiceUnavailable' : 'InternalError';
    throw new HttpFailure(errorStatus, code, errorStatus < 500 ? `simulated refusal (${errorStatus}): the vendor does not accept this request` : `simulated failure (${errorStatus})`);
  }

  const { store, metering } = state;
  const found = (): StoredInstance => {
    const instance = store.get(id!, account);
    if (!instance) throw new HttpFailure(404, 'NotFound', `instance ${id} not found`);
    return instance;
  };
  const now = () => new Date(metering.calendar.now()).toISOString();
  switch (op) {
    case 'account':
      return send(200, state.accounts.get(account));
    case 'create': {
      const key = req.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) {
        throw new HttpFailure(400, 'InvalidRequest', 'Idempotency-Key must be 1-255 characters', 'Idempotency-Key');
      }
      const body = await readJson(req);
      onlyFields(body, ['region', 'displayName']);
      const input = { region: checkRegion(body.region), displayName: checkDisplayName(body.displayName) ?? '' };
      refuseIfSuspended(state, account);
      const slow = faults.slowCreateMs();
      if (slow > 0) {
        // Unlike latency, this is not cut short when the client leaves: the create still happens.
        counters.injected.delayed++;
        await new Promise((done) => setTimeout(done, slow));
      }
      const outcome = store.create(input, key, account);
      if (outcome.kind === 'key-conflict') {
        throw new HttpFailure(409, 'IdempotencyKeyReused', `Idempotency-Key already used for an instance in region ${outcome.instance.region}`, 'Idempotency-Key');
      }
      if (outcome.kind === 'created') {
        counters.creates++;
        if (key !== undefined) bump(counters.createsByKey, key);
      } else counters.createReplays++;
      if (faults.takeLostCreate()) {
        counters.injected.lostResponses++;
        req.socket.destroy();
        return;
      }
      const instance = publicInstance(outcome.instance);
      if (outcome.kind === 'created') return send(201, instance, { location: `/v1/instances/${encodeURIComponent(instance.id)}` });
      return send(200, instance, { 'idempotent-replayed': 'true' });
    }
    case 'list': {
      const key = url.searchParams.get('idempotencyKey');
      const view = url.searchParams.get('view') ?? 'basic';
      if (view !== 'basic' && view !== 'full') throw new HttpFailure(400, 'InvalidRequest', 'view must be basic or full', 'view');
      const all = key === null ? store.list(account) : [store.findByKey(key, account)].filter((i) => i !== undefined);
      const { page, next } = pageOf(all, url);
      const at = now();
      const items = view === 'basic' ? page.map(publicInstance) : page.map((i) => ({ ...publicInstance(i), health: healthOf(i, at, faults.healthStatusFor(i.id)), limits: { ...i.limits }, usage: usageOf(state, i) }));
      return send(200, { items, ...(next ? { nextPageToken: next } : {}) });
    }
    case 'get':
      return send(200, publicInstance(found()));
    case 'update': {
      const body = await readJson(req);
      onlyFields(body, ['displayName', 'region']);
      const displayName = checkDisplayName(body.displayName);
      const instance = found();
      if (body.region !== undefined && body.region !== instance.region) throw new HttpFailure(422, 'ImmutableField', 'region is immutable', 'region');
      refuseIfSuspended(state, account);
      return send(200, publicInstance(store.update(instance.id, displayName === undefined ? {} : { displayName })!));
    }
    case 'delete':
      if (!store.get(id!, account) || !store.delete(id!)) throw new HttpFailure(404, 'NotFound', `instance ${id} not found`);
      metering.forget(id!);
      counters.deletes++;
      return send(204, undefined);
    case 'health': {
      const instance = found();
      return send(200, healthOf(instance, now(), faults.healthStatusFor(instance.id)));
    }
    case 'getLimits':
      return send(200, { ...found().limits });
    case 'setLimits': {
      const patch = limitsPatchOr400(await readJson(req));
      const instance = found();
      refuseIfSuspended(state, account);
      return send(200, { ...store.setLimits(instance.id, patch)!.limits });
    }
    case 'usage':
      return send(200, usageOf(state, found()));
    case 'call': {
      const instance = found();
      if (state.accounts.isSuspended(account)) {
        counters.metering.suspended++;
        refuseIfSuspended(state, account);
      }
      const meter = metering.meter(instance.id);
      const outcome = meter.consume(1, instance.limits);
      counters.metering.accepted += outcome.accepted;
      counters.metering.throttled += outcome.throttled;
      counters.metering.refused += outcome.refused;
      if (outcome.refused > 0) {
        const usage = usageOf(state, instance);
        throw new HttpFailure(429, 'QuotaExhausted', `instance ${instance.id} has used its daily quota of ${instance.limits.dailyQuota} calls; it resets at ${usage.quotaResetAt}`, undefined, {
          'retry-after': seconds(Date.parse(usage.quotaResetAt) - metering.calendar.now()),
        });
      }
      if (outcome.throttled > 0) {
        throw new HttpFailure(429, 'InstanceThrottled', `instance ${instance.id} is over its limit of ${instance.limits.requestsPerMinute} calls per minute`, undefined, {
          'retry-after': seconds(meter.msUntilNextMinute()),
        });
      }
      return send(200, usageOf(state, instance));
    }
  }
}
