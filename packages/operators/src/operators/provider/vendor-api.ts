/**
 * What the reconciler needs of the vendor, in its own terms: "not found" is `undefined`, a
 * delete says whether the instance existed, every failure is a `VendorFailure` it can branch on.
 * `createVendorApis` keeps one client per (endpoint, token) and one limiter per endpoint, so
 * every CR pointing at the same vendor shares its rate and concurrency budget. A client no call
 * used for `idleMs` (default 10 minutes: a rotated token's account, a provider deleted) is closed
 * and forgotten with its token; a `VendorApi` still held for it opens a new one on its next call.
 *
 * The vendor's own words (a health message such as "GPU hot", an account's suspension note)
 * come through bounded and redacted (`vendorText`), never with the token. An untrusted vendor
 * certificate fails with a message naming `provider.vendor.caFile`, the setting that fixes it.
 * @module
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createEndpointLimiters } from '@converge/runtime';
import type { Clock } from '@converge/runtime';
import { VendorError, createVendorClient, isVendorError } from './vendor/index.ts';
import { endpointAllowed } from './allowed-endpoints.ts';
import type { VendorCallEvent, VendorClient, VendorErrorKind } from './vendor/index.ts';
import type { InstanceStatePage, VendorAccount, VendorHealth as VendorHealthReport, VendorInstance, VendorLimits, VendorUsage } from './vendor/types.ts';
import type { ProviderConfig } from './provider-config.ts';

export type { VendorInstance, VendorLimits, VendorUsage, VendorAccount, VendorInstanceState, InstanceStatePage } from './vendor/types.ts';
export type VendorHealth = 'healthy' | 'degraded' | 'down';
/** Health with the vendor's own message (bounded, redacted). */
export type VendorHealthDetail = Pick<VendorHealthReport, 'status' | 'message'>;

export interface VendorApi {
  getInstance(id: string, signal: AbortSignal): Promise<VendorInstance | undefined>;
  findByIdempotencyKey(key: string, signal: AbortSignal): Promise<VendorInstance | undefined>;
  createInstance(input: { region: string; displayName?: string }, idempotencyKey: string, signal: AbortSignal): Promise<VendorInstance>;
  updateInstance(id: string, input: { displayName: string }, signal: AbortSignal): Promise<VendorInstance>;
  /** Resolves true when the instance existed, false when it was already gone. */
  deleteInstance(id: string, signal: AbortSignal): Promise<boolean>;
  getHealth(id: string, signal: AbortSignal): Promise<VendorHealth>;
  /** Health and the vendor's message ("GPU hot"), bounded and redacted. */
  health(id: string, signal: AbortSignal): Promise<VendorHealthDetail>;
  getLimits(id: string, signal: AbortSignal): Promise<VendorLimits>;
  /** Sends only the given fields; resolves with the limits now in force. */
  setLimits(id: string, patch: Partial<VendorLimits>, signal: AbortSignal): Promise<VendorLimits>;
  getUsage(id: string, signal: AbortSignal): Promise<VendorUsage>;
  getAccount(signal: AbortSignal): Promise<VendorAccount>;
  /** One page of the account's instances with health, limits and usage. */
  listInstanceStates(page: { pageToken?: string; pageSize?: number }, signal: AbortSignal): Promise<InstanceStatePage>;
}

export interface VendorApis {
  forEndpoint(endpoint: string, token: string): VendorApi;
  /** Vendor calls per operation and outcome, over every client (for tests and metrics). */
  calls(): Record<string, { calls: number; ok: number; failed: Record<string, number> }>;
  /**
   * Closes every client's pooled connections, once the calls in flight have ended (each is bounded
   * by the call timeout); for when the operator has stopped. A client asked for afterwards is new.
   */
  close(): Promise<void>;
  /** Closes the clients no call used for `idleMs` now (calls do it too, at most once a minute). */
  sweepIdle(): void;
  /** Accounts known now (each with its token), their client open or not. */
  knownAccounts(): number;
}

/** A client no call used for this long is closed (and its token forgotten). */
const IDLE_CLIENT_MS = 10 * 60_000;
/** How often idle clients are looked for (on a call), at most. */
const IDLE_SWEEP_MS = 60_000;

type CallCounts = Record<string, { calls: number; ok: number; failed: Record<string, number> }>;

export interface VendorFailure {
  kind: VendorErrorKind | 'Unknown';
  message: string;
  transient: boolean;
  retryAfterMs?: number;
  /** The vendor's `error.code` or a system code, when there was one. */
  code?: string;
  /** The field the vendor blamed (e.g. `region`, `dailyQuota`). */
  field?: string;
  /** Refused here, before any request (the endpoint cannot be used): nothing reached the vendor. */
  local?: boolean;
}

export function asVendorFailure(err: unknown): VendorFailure {
  if (isVendorError(err)) {
    return {
      kind: err.kind,
      message: err.message,
      transient: err.transient,
      ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }),
      ...(err.code === undefined ? {} : { code: err.code }),
      ...(err.field === undefined ? {} : { field: err.field }),
      ...(err.operation === 'createClient' ? { local: true } : {}),
    };
  }
  return { kind: 'Unknown', message: err instanceof Error ? err.message : String(err), transient: true };
}

/**
 * `observe` hears every call's outcome with its endpoint (for `VendorRecovery`); `idleMs`: see the
 * module comment.
 */
export function createVendorApis(
  config: ProviderConfig,
  clock: Clock,
  observe?: (endpoint: string, event: VendorCallEvent) => void,
  options: { idleMs?: number } = {},
): VendorApis {
  const v = config.vendor;
  const ca = v.caFile ? readFileSync(v.caFile) : undefined;
  const untrustedCertificateHint = untrustedHint(v.caFile);
  const limiters = createEndpointLimiters({ ratePerSecond: v.requestsPerSecond, burst: v.burst, maxConcurrency: v.maxConcurrency, clock });
  const idleMs = options.idleMs ?? IDLE_CLIENT_MS;
  /** Per account: its API (kept while the client is: it holds the token) and, while open, its client. */
  const accounts = new Map<string, { api: VendorApi; client?: VendorClient; lastUsed: number }>();
  /** Clients closing (their calls still count), and the calls of those closed. */
  const closing = new Map<VendorClient, Promise<void>>();
  const retired: CallCounts = {};
  let lastSweep = clock.monotonic();

  const retire = (client: VendorClient): void => {
    const done = client
      .close()
      .catch(() => undefined) // closing twice, or a pool already gone: nothing left to close
      .finally(() => {
        addCalls(retired, client.calls());
        closing.delete(client);
      });
    closing.set(client, done);
  };
  const sweep = (now: number, force = false): void => {
    if (!force && now - lastSweep < Math.min(idleMs, IDLE_SWEEP_MS)) return;
    lastSweep = now;
    for (const [id, account] of accounts) {
      if (now - account.lastUsed < idleMs) continue;
      accounts.delete(id);
      if (account.client) retire(account.client);
    }
  };
  const open = (endpoint: string, token: string): VendorClient => {
    // The one place every vendor call passes: no token goes to an endpoint the configuration does
    // not allow, whichever path asks (a reconcile, a deletion, the account watches, the sweep).
    if (!endpointAllowed(v.allowedEndpoints, endpoint)) {
      throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: `vendor endpoint ${endpoint} is not among provider.vendor.allowedEndpoints` });
    }
    return createVendorClient({
      endpoint,
      token,
      ...(ca ? { ca } : {}),
      limiter: limiters.get(endpoint),
      timeoutMs: v.timeoutMs,
      untrustedCertificateHint,
      ...(observe ? { onCall: (event: VendorCallEvent) => observe(endpoint, event) } : {}),
    });
  };
  /** The account's client for a call now, opened (again) if it has none. */
  const clientFor = (id: string, endpoint: string, token: string, api: VendorApi): VendorClient => {
    const now = clock.monotonic();
    sweep(now);
    let account = accounts.get(id);
    if (!account) accounts.set(id, (account = { api, lastUsed: now }));
    account.lastUsed = now;
    return (account.client ??= open(endpoint, token));
  };
  return {
    forEndpoint(endpoint, token) {
      const id = accountId(endpoint, token);
      const known = accounts.get(id);
      if (known) return known.api;
      const api = adapt(() => clientFor(id, endpoint, token, api));
      accounts.set(id, { api, lastUsed: clock.monotonic() });
      return api;
    },
    calls() {
      const total: CallCounts = {};
      addCalls(total, retired);
      for (const client of closing.keys()) addCalls(total, client.calls());
      for (const { client } of accounts.values()) if (client) addCalls(total, client.calls());
      return total;
    },
    async close() {
      for (const { client } of accounts.values()) if (client) retire(client);
      accounts.clear();
      await Promise.all(closing.values());
    },
    sweepIdle() {
      sweep(clock.monotonic(), true);
    },
    knownAccounts() {
      return accounts.size;
    },
  };
}

function addCalls(total: CallCounts, more: CallCounts): void {
  for (const [op, c] of Object.entries(more)) {
    const t = (total[op] ??= { calls: 0, ok: 0, failed: {} });
    t.calls += c.calls;
    t.ok += c.ok;
    for (const [k, n] of Object.entries(c.failed)) t.failed[k] = (t.failed[k] ?? 0) + (n as number);
  }
}

/** One vendor account: an endpoint and a token, the token hashed (it is never kept as a key or logged). */
export function accountId(endpoint: string, token: string): string {
  return `${endpoint}#${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;
}

/** What to do about a vendor certificate no trusted CA signed (issue 18 item 5). */
export function untrustedHint(caFile: string | undefined): string {
  return caFile
    ? `provider.vendor.caFile (${caFile}) does not hold the CA that signed it; point provider.vendor.caFile at that CA's PEM file (the system CAs stay trusted)`
    : "set provider.vendor.caFile in the operator's configuration to the PEM file of the CA that signed it (the system CAs stay trusted)";
}

/** The reconciler's terms over the client `client()` gives for each call. */
/** Every method is async: a client that cannot be opened (a refused endpoint) rejects, never throws. */
function adapt(client: () => VendorClient): VendorApi {
  return {
    async getInstance(id, signal) {
      try {
        return await client().getInstance(id, { signal });
      } catch (err) {
        if (isVendorError(err, 'NotFound')) return undefined;
        throw err;
      }
    },
    findByIdempotencyKey: async (key, signal) => client().findByIdempotencyKey(key, { signal }),
    createInstance: async (input, key, signal) => (await client().createInstance(input, key, { signal })).instance,
    updateInstance: async (id, input, signal) => client().updateInstance(id, input, { signal }),
    deleteInstance: async (id, signal) => !(await client().deleteInstance(id, { signal })).alreadyGone,
    getHealth: async (id, signal) => (await client().getHealth(id, { signal })).status,
    health: async (id, signal) => {
      const { status, message } = await client().getHealth(id, { signal });
      return message === undefined ? { status } : { status, message };
    },
    getLimits: async (id, signal) => client().getLimits(id, { signal }),
    setLimits: async (id, patch, signal) => client().setLimits(id, patch, { signal }),
    getUsage: async (id, signal) => client().getUsage(id, { signal }),
    getAccount: async (signal) => client().getAccount({ signal }),
    listInstanceStates: async (page, signal) => client().listInstanceStates(page, { signal }),
  };
}
