/**
 * What the reconciler needs of the vendor, in its own terms: "not found" is `undefined`, a
 * delete says whether the instance existed, every failure is a `VendorFailure` it can branch on.
 * `createVendorApis` keeps one client per (endpoint, token) and one limiter per endpoint, so
 * every CR pointing at the same vendor shares its rate and concurrency budget.
 * @module
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createEndpointLimiters } from '@converge/runtime';
import type { Clock } from '@converge/runtime';
import { createVendorClient, isVendorError } from './vendor/index.ts';
import type { VendorCallEvent, VendorClient, VendorErrorKind } from './vendor/index.ts';
import type { VendorInstance } from './vendor/types.ts';
import type { ProviderConfig } from './provider-config.ts';

export type { VendorInstance } from './vendor/types.ts';
export type VendorHealth = 'healthy' | 'degraded' | 'down';

export interface VendorApi {
  getInstance(id: string, signal: AbortSignal): Promise<VendorInstance | undefined>;
  findByIdempotencyKey(key: string, signal: AbortSignal): Promise<VendorInstance | undefined>;
  createInstance(input: { region: string; displayName?: string }, idempotencyKey: string, signal: AbortSignal): Promise<VendorInstance>;
  updateInstance(id: string, input: { displayName: string }, signal: AbortSignal): Promise<VendorInstance>;
  /** Resolves true when the instance existed, false when it was already gone. */
  deleteInstance(id: string, signal: AbortSignal): Promise<boolean>;
  getHealth(id: string, signal: AbortSignal): Promise<VendorHealth>;
}

export interface VendorApis {
  forEndpoint(endpoint: string, token: string): VendorApi;
  /** Vendor calls per operation and outcome, over every client (for tests and metrics). */
  calls(): Record<string, { calls: number; ok: number; failed: Record<string, number> }>;
}

export interface VendorFailure {
  kind: VendorErrorKind | 'Unknown';
  message: string;
  transient: boolean;
  retryAfterMs?: number;
}

export function asVendorFailure(err: unknown): VendorFailure {
  if (isVendorError(err)) {
    return { kind: err.kind, message: err.message, transient: err.transient, ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }) };
  }
  return { kind: 'Unknown', message: err instanceof Error ? err.message : String(err), transient: true };
}

/** `observe` hears every call's outcome with its endpoint (for `VendorRecovery`). */
export function createVendorApis(config: ProviderConfig, clock: Clock, observe?: (endpoint: string, event: VendorCallEvent) => void): VendorApis {
  const v = config.vendor;
  const ca = v.caFile ? readFileSync(v.caFile) : undefined;
  const limiters = createEndpointLimiters({ ratePerSecond: v.requestsPerSecond, burst: v.burst, maxConcurrency: v.maxConcurrency, clock });
  const clients = new Map<string, { client: VendorClient; api: VendorApi }>();
  return {
    forEndpoint(endpoint, token) {
      const id = `${endpoint}#${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;
      let entry = clients.get(id);
      if (!entry) {
        const client = createVendorClient({
          endpoint,
          token,
          ...(ca ? { ca } : {}),
          limiter: limiters.get(endpoint),
          timeoutMs: v.timeoutMs,
          ...(observe ? { onCall: (event: VendorCallEvent) => observe(endpoint, event) } : {}),
        });
        entry = { client, api: adapt(client) };
        clients.set(id, entry);
      }
      return entry.api;
    },
    calls() {
      const total: Record<string, { calls: number; ok: number; failed: Record<string, number> }> = {};
      for (const { client } of clients.values()) {
        for (const [op, c] of Object.entries(client.calls())) {
          const t = (total[op] ??= { calls: 0, ok: 0, failed: {} });
          t.calls += c.calls;
          t.ok += c.ok;
          for (const [k, n] of Object.entries(c.failed)) t.failed[k] = (t.failed[k] ?? 0) + (n as number);
        }
      }
      return total;
    },
  };
}

function adapt(client: VendorClient): VendorApi {
  return {
    async getInstance(id, signal) {
      try {
        return await client.getInstance(id, { signal });
      } catch (err) {
        if (isVendorError(err, 'NotFound')) return undefined;
        throw err;
      }
    },
    findByIdempotencyKey: (key, signal) => client.findByIdempotencyKey(key, { signal }),
    createInstance: async (input, key, signal) => (await client.createInstance(input, key, { signal })).instance,
    updateInstance: (id, input, signal) => client.updateInstance(id, input, { signal }),
    deleteInstance: async (id, signal) => !(await client.deleteInstance(id, { signal })).alreadyGone,
    getHealth: async (id, signal) => (await client.getHealth(id, { signal })).status,
  };
}
