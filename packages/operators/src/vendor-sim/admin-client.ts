/**
 * A small client for the simulator's /admin endpoint, for tests that drive a simulator running
 * in another process (`npx converge vendor-sim`). In-process tests can call the same operations
 * on the `VendorSimulator` object directly.
 *
 * @module
 */
import { Agent, request } from 'undici';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { Faults, FaultsPatch } from './faults.ts';
import type { Account, AccountState } from './accounts.ts';
import type { Limits } from './metering.ts';
import type { AdminInstance, ConsumeResult, QuotaDay, ResetOptions, Usage } from './types.ts';
import type { SimStats } from './stats.ts';
import type { HealthStatus } from './store.ts';

export interface VendorSimAdminOptions {
  /** The simulator's base URL, e.g. `https://127.0.0.1:8443`. */
  baseUrl: string;
  adminToken: string;
  /** PEM of the simulator's CA (the file at its `caPath`). */
  ca: string | Buffer;
}

export interface VendorSimAdmin {
  faults(): Promise<Faults>;
  setFaults(faults: Faults): Promise<Faults>;
  patchFaults(patch: FaultsPatch): Promise<Faults>;
  clearFaults(): Promise<Faults>;
  stats(): Promise<SimStats>;
  reset(options?: ResetOptions): Promise<SimStats>;
  instances(): Promise<AdminInstance[]>;
  /** False when there was no such instance. */
  deleteInstance(id: string): Promise<boolean>;
  /** False when there is no such instance. */
  setHealth(id: string, status: HealthStatus, message?: string): Promise<boolean>;
  /** A console change of limits; undefined when there is no such instance. */
  setLimits(id: string, patch: Partial<Limits>): Promise<Limits | undefined>;
  /** Makes `calls` billable calls at once; undefined when there is no such instance. */
  consume(id: string, calls: number): Promise<ConsumeResult | undefined>;
  throttle(id: string, requests: number): Promise<Usage | undefined>;
  clearThrottle(id: string): Promise<Usage | undefined>;
  accounts(): Promise<Account[]>;
  /** Undefined when there is no such account. */
  setAccountState(id: string, change: { state: AccountState; reason?: string; message?: string }): Promise<Account | undefined>;
  quotaDay(): Promise<QuotaDay>;
  advanceQuotaDay(): Promise<QuotaDay>;
  close(): Promise<void>;
}

/** Every method throws an `Error` with the admin answer's message on a non-2xx answer (except the 404s documented above). */
export function createVendorSimAdmin(options: VendorSimAdminOptions): VendorSimAdmin {
  const base = options.baseUrl.replace(/\/+$/, '');
  const dispatcher = new Agent({ connect: { secureContext: createSecureContext({ ca: [...rootCertificates, options.ca.toString()] }) } });
  const call = async <T>(method: string, path: string, body?: unknown, allow404 = false): Promise<T | undefined> => {
    const res = await request(`${base}${path}`, {
      method: method as 'GET',
      dispatcher,
      headers: { authorization: `Bearer ${options.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    if (res.statusCode === 404 && allow404) return undefined;
    if (res.statusCode >= 300) {
      let message = text;
      try {
        message = (JSON.parse(text) as { error: { message: string } }).error.message;
      } catch {}
      throw new Error(`vendor-sim admin ${method} ${path}: HTTP ${res.statusCode}: ${message}`);
    }
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  return {
    faults: async () => (await call<Faults>('GET', '/admin/faults'))!,
    setFaults: async (faults) => (await call<Faults>('PUT', '/admin/faults', faults))!,
    patchFaults: async (patch) => (await call<Faults>('PATCH', '/admin/faults', patch))!,
    clearFaults: async () => (await call<Faults>('DELETE', '/admin/faults'))!,
    stats: async () => (await call<SimStats>('GET', '/admin/stats'))!,
    reset: async (opts = {}) => (await call<SimStats>('POST', '/admin/reset', opts))!,
    instances: async () => (await call<{ items: AdminInstance[] }>('GET', '/admin/instances'))!.items,
    deleteInstance: async (id) => {
      const path = `/admin/instances/${encodeURIComponent(id)}`;
      const res = await request(`${base}${path}`, { method: 'DELETE', dispatcher, headers: { authorization: `Bearer ${options.adminToken}` } });
      await res.body.dump();
      if (res.statusCode === 404) return false;
      if (res.statusCode >= 300) throw new Error(`vendor-sim admin DELETE ${path}: HTTP ${res.statusCode}`);
      return true;
    },
    setHealth: async (id, status, message) =>
      (await call('PUT', `/admin/instances/${encodeURIComponent(id)}/health`, message === undefined ? { status } : { status, message }, true)) !== undefined,
    setLimits: (id, patch) => call<Limits>('PATCH', `/admin/instances/${encodeURIComponent(id)}/limits`, patch, true),
    consume: (id, calls) => call<ConsumeResult>('POST', `/admin/instances/${encodeURIComponent(id)}/consume`, { calls }, true),
    throttle: (id, requests) => call<Usage>('POST', `/admin/instances/${encodeURIComponent(id)}/throttle`, { requests }, true),
    clearThrottle: (id) => call<Usage>('DELETE', `/admin/instances/${encodeURIComponent(id)}/throttle`, undefined, true),
    accounts: async () => (await call<{ items: Account[] }>('GET', '/admin/accounts'))!.items,
    setAccountState: (id, change) => call<Account>('PUT', `/admin/accounts/${encodeURIComponent(id)}`, change, true),
    quotaDay: async () => (await call<QuotaDay>('GET', '/admin/quota-day'))!,
    advanceQuotaDay: async () => (await call<QuotaDay>('POST', '/admin/quota-day/advance'))!,
    close: () => dispatcher.close(),
  };
}
