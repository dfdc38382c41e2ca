/**
 * The simulator's /admin API: the HTTP face of the `VendorSimulator` methods (faults, stats,
 * reset, out-of-band instance changes, accounts, metering, the quota day), so a test in another
 * process drives exactly what an in-process test calls. Never faulted, never counted as /v1.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { AccountValidationError } from './accounts.ts';
import { FaultValidationError, type Faults, type FaultsPatch } from './faults.ts';
import { HttpFailure, onlyFields, positiveInteger, readBody, readJson } from './http.ts';
import { LimitValidationError } from './metering.ts';
import type { ResetOptions, VendorSimulator } from './types.ts';
import type { HealthStatus } from './store.ts';
import { HEALTH_STATUSES } from './store.ts';

const MAX_CALLS = 1_000_000_000;

/** Maps the simulator's validation errors to 400s naming the field. */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof FaultValidationError || err instanceof LimitValidationError || err instanceof AccountValidationError) {
      throw new HttpFailure(400, 'InvalidRequest', err.message, err.field);
    }
    throw err;
  }
}

const orNotFound = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new HttpFailure(404, 'NotFound', `${what} not found`);
  return value;
};

/** Handles one /admin request (the admin token already checked); throws `HttpFailure` for failures. */
export async function handleAdmin(
  sim: VendorSimulator,
  req: IncomingMessage,
  url: URL,
  send: (status: number, body: unknown) => void,
): Promise<void> {
  const method = req.method ?? 'GET';
  const parts = url.pathname.split('/').filter(Boolean).slice(1); // after "admin"
  const path = parts.join('/');
  if (path === 'faults') {
    if (method === 'GET') return send(200, sim.faults());
    if (method === 'PUT') {
      const body = await readJson(req);
      return send(200, guard(() => sim.setFaults(body as Faults)));
    }
    if (method === 'PATCH') {
      const body = await readJson(req);
      return send(200, guard(() => sim.patchFaults(body as FaultsPatch)));
    }
    if (method === 'DELETE') return send(200, sim.clearFaults());
  } else if (path === 'stats' && method === 'GET') {
    return send(200, sim.stats());
  } else if (path === 'reset' && method === 'POST') {
    const text = await readBody(req);
    let body: ResetOptions = {};
    try {
      body = text.trim() === '' ? {} : (JSON.parse(text) as ResetOptions);
    } catch {
      throw new HttpFailure(400, 'InvalidRequest', 'body is not valid JSON');
    }
    return send(200, sim.reset(body));
  } else if (path === 'instances' && method === 'GET') {
    return send(200, { items: sim.instances() });
  } else if (path === 'accounts' && method === 'GET') {
    return send(200, { items: sim.accounts() });
  } else if (parts[0] === 'accounts' && parts.length === 2 && method === 'PUT') {
    const id = decodeURIComponent(parts[1]!);
    const body = await readJson(req);
    onlyFields(body, ['state', 'reason', 'message']);
    return send(200, orNotFound(guard(() => sim.setAccountState(id, body as never)), `account ${id}`));
  } else if (path === 'quota-day' && method === 'GET') {
    return send(200, sim.quotaDay());
  } else if (path === 'quota-day/advance' && method === 'POST') {
    return send(200, sim.advanceQuotaDay());
  } else if (parts[0] === 'instances' && parts.length >= 2) {
    const id = decodeURIComponent(parts[1]!);
    const what = `instance ${id}`;
    const sub = parts.slice(2).join('/');
    if (sub === '' && method === 'DELETE') {
      if (!sim.deleteInstance(id)) throw new HttpFailure(404, 'NotFound', `${what} not found`);
      return send(204, undefined);
    }
    if (sub === 'health' && method === 'PUT') {
      const body = await readJson(req);
      const status = body.status as HealthStatus;
      if (!HEALTH_STATUSES.includes(status)) throw new HttpFailure(400, 'InvalidRequest', `status must be one of ${HEALTH_STATUSES.join(', ')}`, 'status');
      if (body.message !== undefined && typeof body.message !== 'string') throw new HttpFailure(400, 'InvalidRequest', 'message must be a string', 'message');
      if (!sim.setHealth(id, status, body.message as string | undefined)) throw new HttpFailure(404, 'NotFound', `${what} not found`);
      const instance = sim.instances().find((i) => i.id === id)!;
      return send(200, { id, status: instance.health, ...(instance.healthMessage ? { message: instance.healthMessage } : {}), checkedAt: new Date().toISOString() });
    }
    if (sub === 'limits' && method === 'PATCH') {
      const body = await readJson(req);
      return send(200, orNotFound(guard(() => sim.setLimits(id, body)), what));
    }
    if (sub === 'consume' && method === 'POST') {
      const body = await readJson(req);
      onlyFields(body, ['calls']);
      return send(200, orNotFound(sim.consume(id, positiveInteger(body, 'calls', MAX_CALLS)), what));
    }
    if (sub === 'throttle' && method === 'POST') {
      const body = await readJson(req);
      onlyFields(body, ['requests']);
      return send(200, orNotFound(sim.throttle(id, positiveInteger(body, 'requests', MAX_CALLS)), what));
    }
    if (sub === 'throttle' && method === 'DELETE') return send(200, orNotFound(sim.clearThrottle(id), what));
  }
  throw new HttpFailure(404, 'NotFound', `no admin route ${method} ${url.pathname}`);
}
