/**
 * `createVendorClient`: typed calls to one vendor endpoint with one token, over HTTPS that
 * verifies the server (system CAs plus an optional extra CA), through a shared endpoint limiter.
 *
 * @module
 */
import { createSecureContext, getCACertificates } from 'node:tls';
import type { SecureContext } from 'node:tls';
import { Agent, request } from 'undici';
import { EndpointPausedError, type EndpointLimiter } from '@converge/runtime';
import { DEFAULT_UNTRUSTED_HINT, VendorError, vendorErrorFromException, vendorErrorFromResponse, type VendorErrorKind } from './errors.ts';
import {
  VENDOR_OPERATION_NAMES,
  type CreateInstanceInput,
  type CreateInstanceResult,
  type DeleteInstanceResult,
  type InstanceStatePage,
  type UnreadableInstanceState,
  type UpdateInstanceInput,
  type VendorAccount,
  type VendorHealth,
  type VendorInstance,
  type VendorInstanceState,
  type VendorLimits,
  type VendorOperationName,
  type VendorUsage,
} from './types.ts';
import { vendorText } from './vendor-text.ts';
import { LIMIT_FIELDS, readLimits, readUsage } from './reports.ts';
import { readAnswer, type Answer } from './read-answer.ts';

/** What the client needs from a limiter; the runtime's `EndpointLimiter` is one. */
export type VendorLimiter = Pick<EndpointLimiter, 'schedule' | 'honourRetryAfter' | 'pausedForMs' | 'maxPauseMs'>;

/** One finished call, for metrics. `outcome` is 'ok', a `VendorErrorKind`, or 'Aborted' (the caller's signal). */
export interface VendorCallEvent {
  operation: VendorOperationName;
  outcome: 'ok' | VendorErrorKind | 'Aborted';
  /** HTTP status; 0 when there was no answer. */
  status: number;
  /** From the call's start, limiter wait included. */
  durationMs: number;
}

export interface VendorOperationCounts {
  calls: number;
  ok: number;
  /** Failed calls by outcome. */
  failed: Partial<Record<VendorErrorKind | 'Aborted', number>>;
}

export type VendorCallCounts = Record<VendorOperationName, VendorOperationCounts>;

export interface VendorClientOptions {
  /** Base URL, `https://…` (a path prefix is kept: `https://h/api` → `https://h/api/v1/instances`). */
  endpoint: string;
  /** Bearer token. Never logged, never put in an error. */
  token: string;
  /** Extra trusted CA certificate(s), PEM. Added to the system and bundled CAs, never replacing them. */
  ca?: string | Buffer;
  /** Shared per endpoint (e.g. `createEndpointLimiters(...).get(endpoint)`). */
  limiter: VendorLimiter;
  /** Deadline for one HTTP exchange (send → whole body), measured after the limiter admits it. */
  timeoutMs: number;
  /**
   * Bound on one answer's body, in bytes; default 16 MiB (16 777 216). The largest answer the
   * contract has, a `listInstanceStates` page of 1000 instances (the most a page may hold), is
   * well under 1 MiB with everyday names and a few MiB with the longest the contract allows.
   * Checked against Content-Length before reading, and against the bytes received while
   * reading: an answer over it, whatever its status, is not read further (its connection is
   * closed) and the call fails with `Server` (transient): `answer larger than N bytes`.
   */
  maxResponseBytes?: number;
  /**
   * When the endpoint is paused (by a Retry-After) for longer than this, calls fail at once with
   * `RateLimited` (retryAfterMs = the pause left) instead of holding the caller: a call that
   * comes during such a pause, and one waiting for its turn when such a pause begins. Default
   * 2000 ms.
   */
  maxPauseWaitMs?: number;
  /** Called after every call (success or failure). Must not throw. */
  onCall?: (event: VendorCallEvent) => void;
  /**
   * What to do about an untrusted server certificate, put into that error's message instead of
   * Node's generic advice (the operator names its `provider.vendor.caFile` setting).
   */
  untrustedCertificateHint?: string;
}

export interface CallOptions {
  /** Aborting rejects with `signal.reason` (not a VendorError), whether waiting in the limiter or in flight. */
  signal?: AbortSignal;
}

export interface VendorClient {
  /** The endpoint as given (normalised: no trailing slash). */
  readonly endpoint: string;
  /**
   * POST /v1/instances with `Idempotency-Key`. Safe to repeat with the same key: the vendor
   * returns the existing live instance (`replayed: true`) instead of creating a second one.
   */
  createInstance(input: CreateInstanceInput, idempotencyKey: string, opts?: CallOptions): Promise<CreateInstanceResult>;
  /** GET /v1/instances/{id}. Throws `VendorError` kind `NotFound` when it does not exist. */
  getInstance(id: string, opts?: CallOptions): Promise<VendorInstance>;
  /** GET /v1/instances?idempotencyKey=… → the live instance created with that key, or undefined. */
  findByIdempotencyKey(idempotencyKey: string, opts?: CallOptions): Promise<VendorInstance | undefined>;
  /** PATCH /v1/instances/{id} with the mutable fields only. */
  updateInstance(id: string, patch: UpdateInstanceInput, opts?: CallOptions): Promise<VendorInstance>;
  /** DELETE /v1/instances/{id}. A 404 is success with `alreadyGone: true`. */
  deleteInstance(id: string, opts?: CallOptions): Promise<DeleteInstanceResult>;
  /** GET /v1/instances/{id}/health. The vendor's message is bounded and redacted (`vendorText`). */
  getHealth(id: string, opts?: CallOptions): Promise<VendorHealth>;
  /** GET /v1/instances/{id}/limits. */
  getLimits(id: string, opts?: CallOptions): Promise<VendorLimits>;
  /** PATCH /v1/instances/{id}/limits with only the given fields; answers the limits now in force. */
  setLimits(id: string, patch: Partial<VendorLimits>, opts?: CallOptions): Promise<VendorLimits>;
  /** GET /v1/instances/{id}/usage. */
  getUsage(id: string, opts?: CallOptions): Promise<VendorUsage>;
  /** GET /v1/account: the state of the account this token belongs to (answered while suspended too). */
  getAccount(opts?: CallOptions): Promise<VendorAccount>;
  /**
   * One page of GET /v1/instances?view=full: every live instance of the account with its health,
   * limits and usage. One call per page (pass `nextPageToken` on); `pageSize` default 200.
   * Read item by item: an item outside the contract is left out of `items` and listed in
   * `unreadable` (with its id, key and instance where those could be read); the page fails only
   * when the page itself cannot be read.
   */
  listInstanceStates(page?: { pageToken?: string; pageSize?: number }, opts?: CallOptions): Promise<InstanceStatePage>;
  /** Counts of this client's calls, by operation. A copy. */
  calls(): VendorCallCounts;
  /** Closes pooled connections. Calls after close fail. */
  close(): Promise<void>;
}

const emptyCounts = (): VendorCallCounts =>
  Object.fromEntries(VENDOR_OPERATION_NAMES.map((op) => [op, { calls: 0, ok: 0, failed: {} }])) as unknown as VendorCallCounts;

/** A time or other text field of an answer: strings as sent, numbers and booleans written out, anything else ''. */
function textField(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

/** Trusted roots: Node's defaults (bundled + NODE_EXTRA_CA_CERTS), the OS store, and `extra`. */
function trustedCas(extra: string | Buffer | undefined): string[] {
  const set = new Set([...getCACertificates('default'), ...getCACertificates('system')]);
  if (extra !== undefined) set.add(extra.toString());
  return [...set];
}

/**
 * The secure context trusting `trustedCas(extra)`, made once per CA text and shared by every
 * client: building one parses a few hundred CA certificates (≈ 20–30 ms of blocking CPU and
 * ≈ 1.2 MiB of memory each), and an operator opens a client per (endpoint, token) — per team in a
 * multi-tenant cluster — all with the same CA. Sharing a context between agents is safe. At most
 * `SECURE_CONTEXTS` texts are kept (the oldest dropped first).
 */
export function secureContextFor(extra: string | Buffer | undefined): SecureContext {
  const key = extra === undefined ? '' : `ca:${extra.toString()}`;
  const known = secureContexts.get(key);
  if (known) return known;
  const made = createSecureContext({ ca: trustedCas(extra) });
  secureContexts.set(key, made);
  if (secureContexts.size > SECURE_CONTEXTS) secureContexts.delete(secureContexts.keys().next().value!);
  return made;
}
const SECURE_CONTEXTS = 8;
const secureContexts = new Map<string, SecureContext>();

/**
 * Creates a client. Throws `VendorError` kind `Invalid` (operation `createClient`) when the
 * endpoint is not an https URL, `timeoutMs` is not positive or `maxResponseBytes` is not a
 * positive integer. Create one client per (endpoint, token, CA) and reuse it: it pools connections.
 */
export function createVendorClient(options: VendorClientOptions): VendorClient {
  let base: URL;
  try {
    base = new URL(options.endpoint);
  } catch {
    throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'vendor endpoint is not a URL' });
  }
  if (base.protocol !== 'https:') {
    throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: `vendor endpoint must use https, not ${base.protocol.replace(':', '')}` });
  }
  if (base.username || base.password) {
    throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'vendor endpoint must not carry credentials' });
  }
  // `new URL('https://h/p#').hash` is '' although the URL has a fragment: judge the text.
  if (base.href.includes('?') || base.href.includes('#')) {
    throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'vendor endpoint must not carry a query or a fragment' });
  }
  if (!(options.timeoutMs > 0)) throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'timeoutMs must be > 0' });
  const maxResponseBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
  if (!(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0)) {
    throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'maxResponseBytes must be a positive integer' });
  }
  if (!options.token) throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'vendor token is empty' });

  const endpoint = base.href.replace(/\/+$/, '');
  const { token, limiter, timeoutMs } = options;
  const maxPauseWaitMs = options.maxPauseWaitMs ?? 2000;
  if (!(maxPauseWaitMs >= 0)) throw new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'maxPauseWaitMs must be >= 0' });
  const untrustedHint = options.untrustedCertificateHint ?? DEFAULT_UNTRUSTED_HINT;
  // One secure context for every connection (and every client with the same CA): parsing
  // ~hundreds of CA certificates per TLS handshake would otherwise cost milliseconds each.
  const secureContext = secureContextFor(options.ca);
  const dispatcher = new Agent({
    connect: { secureContext, rejectUnauthorized: true },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const counts = emptyCounts();

  const record = (operation: VendorOperationName, outcome: VendorCallEvent['outcome'], status: number, started: number): void => {
    const c = counts[operation];
    c.calls++;
    if (outcome === 'ok') c.ok++;
    else c.failed[outcome] = (c.failed[outcome] ?? 0) + 1;
    try {
      options.onCall?.({ operation, outcome, status, durationMs: performance.now() - started });
    } catch {
      // a metrics callback must never break a call
    }
  };

  /** One HTTP exchange through the limiter. Resolves with any answer; rejects with VendorError or the caller's abort reason. */
  async function exchange(operation: VendorOperationName, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, opts: CallOptions, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Answer> {
    const answer = await limiter.schedule(async () => {
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new Error('vendor call deadline')), timeoutMs);
      const signal = opts.signal ? AbortSignal.any([opts.signal, deadline.signal]) : deadline.signal;
      try {
        const res = await request(`${endpoint}${path}`, {
          method,
          dispatcher,
          signal,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
            ...extraHeaders,
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        // Pauses the endpoint (when the answer asks) before this permit goes to the next caller.
        return await readAnswer(res, limiter, maxResponseBytes, token);
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        throw vendorErrorFromException(operation, err, deadline.signal.aborted, timeoutMs, token, untrustedHint);
      } finally {
        clearTimeout(timer);
      }
    }, opts.signal, { maxPauseWaitMs }).catch((err: unknown) => {
      // Paused for longer than a caller waits, when it came or while it waited for its turn.
      if (!(err instanceof EndpointPausedError)) throw err;
      throw new VendorError({ kind: 'RateLimited', operation, message: `vendor ${operation}: endpoint paused by Retry-After for ${err.pausedForMs} ms more`, retryAfterMs: err.pausedForMs });
    });
    return answer;
  }

  /**
   * Runs one operation: counts it, maps failures. `accept` lists the statuses that are not
   * failures; any other is one (below 400 too: errors.ts). An answer over the bound fails first.
   */
  async function call<T>(
    operation: VendorOperationName,
    opts: CallOptions | undefined,
    run: () => Promise<Answer>,
    accept: readonly number[],
    read: (answer: Answer) => T,
  ): Promise<T> {
    const started = performance.now();
    try {
      const answer = await run();
      if (answer.tooLarge) {
        throw new VendorError({
          kind: 'Server',
          operation,
          status: answer.status,
          message: `vendor ${operation}: answer larger than ${maxResponseBytes} bytes`,
          ...(answer.requestId ? { requestId: answer.requestId } : {}),
          ...(answer.retryAfterMs !== undefined ? { retryAfterMs: answer.retryAfterMs } : {}),
        });
      }
      if (!accept.includes(answer.status)) {
        throw vendorErrorFromResponse(operation, answer.status, answer.text, { retryAfterMs: answer.retryAfterMs, requestId: answer.requestId, secret: token });
      }
      let result: T;
      try {
        result = read(answer);
      } catch (err) {
        // A reader that trips over an answer of an unforeseen shape: still a malformed answer.
        throw err instanceof VendorError ? err : malformed(operation, answer, 'unreadable answer');
      }
      record(operation, 'ok', answer.status, started);
      return result;
    } catch (err) {
      if (err instanceof VendorError) record(operation, err.kind, err.status, started);
      else if (opts?.signal?.aborted) record(operation, 'Aborted', 0, started);
      throw err;
    }
  }

  function json(operation: VendorOperationName, answer: Answer): unknown {
    try {
      return JSON.parse(answer.text);
    } catch {
      throw malformed(operation, answer, 'body is not JSON');
    }
  }

  function malformed(operation: VendorOperationName, answer: Answer, why: string): VendorError {
    return new VendorError({
      kind: 'Server',
      operation,
      status: answer.status,
      message: `vendor ${operation}: malformed answer (HTTP ${answer.status}): ${why}`,
      ...(answer.requestId ? { requestId: answer.requestId } : {}),
    });
  }

  function instanceFrom(operation: VendorOperationName, answer: Answer, value: unknown = json(operation, answer)): VendorInstance {
    const v = value as Partial<VendorInstance> | null;
    if (!v || typeof v.id !== 'string' || v.id === '' || typeof v.region !== 'string') throw malformed(operation, answer, 'not an instance');
    return {
      id: v.id,
      region: v.region,
      displayName: typeof v.displayName === 'string' ? v.displayName : '',
      idempotencyKey: typeof v.idempotencyKey === 'string' ? v.idempotencyKey : null,
      createdAt: textField(v.createdAt),
      updatedAt: textField(v.updatedAt),
    };
  }

  function healthFrom(operation: VendorOperationName, answer: Answer, value: unknown, id: string): VendorHealth {
    const v = value as Partial<VendorHealth> | null;
    if (!v || (v.status !== 'healthy' && v.status !== 'degraded' && v.status !== 'down')) throw malformed(operation, answer, 'unknown health status');
    const message = typeof v.message === 'string' ? vendorText(v.message, token) : '';
    return { id: typeof v.id === 'string' ? v.id : id, status: v.status, ...(message ? { message } : {}), checkedAt: textField(v.checkedAt) };
  }

  function limitsFrom(operation: VendorOperationName, answer: Answer, value: unknown): VendorLimits {
    const limits = readLimits(value);
    if (!limits) throw malformed(operation, answer, 'not a set of limits');
    return limits;
  }

  function usageFrom(operation: VendorOperationName, answer: Answer, value: unknown): VendorUsage {
    const usage = readUsage(value);
    if (!usage) throw malformed(operation, answer, 'not a usage report');
    return usage;
  }

  const idPath = (operation: VendorOperationName, id: string): string => {
    if (!id) throw new VendorError({ kind: 'Invalid', operation, message: `vendor ${operation}: instance id is empty` });
    return `/v1/instances/${encodeURIComponent(id)}`;
  };

  return {
    endpoint,
    createInstance(input, idempotencyKey, opts = {}) {
      const body = { region: input.region, ...(input.displayName === undefined ? {} : { displayName: input.displayName }) };
      return call(
        'createInstance',
        opts,
        () => exchange('createInstance', 'POST', '/v1/instances', opts, body, { 'idempotency-key': idempotencyKey }),
        [200, 201],
        (a) => ({ instance: instanceFrom('createInstance', a), replayed: a.status === 200 }),
      );
    },
    getInstance(id, opts = {}) {
      return call('getInstance', opts, () => exchange('getInstance', 'GET', idPath('getInstance', id), opts), [200], (a) => instanceFrom('getInstance', a));
    },
    findByIdempotencyKey(idempotencyKey, opts = {}) {
      const path = `/v1/instances?idempotencyKey=${encodeURIComponent(idempotencyKey)}`;
      return call('findByIdempotencyKey', opts, () => exchange('findByIdempotencyKey', 'GET', path, opts), [200], (a) => {
        const items = (json('findByIdempotencyKey', a) as { items?: unknown } | null)?.items;
        if (!Array.isArray(items)) throw malformed('findByIdempotencyKey', a, 'no items list');
        // The vendor filters by key; more than one live instance per key cannot happen by contract.
        // The key is checked all the same: a list the vendor did not filter (a gateway that drops
        // the query, an API version that ignores it) would otherwise hand another instance to a
        // caller that deletes or adopts it. Instances listed, none with this key: refused (Server),
        // never taken for "none" either — the listing says nothing about this key.
        const listed = items.map((item) => instanceFrom('findByIdempotencyKey', a, item));
        const mine = listed.find((i) => i.idempotencyKey === idempotencyKey);
        if (mine || listed.length === 0) return mine;
        throw malformed('findByIdempotencyKey', a, `listed ${listed.length} instance(s), none with the idempotency key asked for: the vendor did not filter by it`);
      });
    },
    updateInstance(id, patch, opts = {}) {
      const body = patch.displayName === undefined ? {} : { displayName: patch.displayName };
      return call('updateInstance', opts, () => exchange('updateInstance', 'PATCH', idPath('updateInstance', id), opts, body), [200], (a) => instanceFrom('updateInstance', a));
    },
    deleteInstance(id, opts = {}) {
      return call('deleteInstance', opts, () => exchange('deleteInstance', 'DELETE', idPath('deleteInstance', id), opts), [200, 202, 204, 404], (a) => ({ alreadyGone: a.status === 404 }));
    },
    getHealth(id, opts = {}) {
      return call('getHealth', opts, () => exchange('getHealth', 'GET', `${idPath('getHealth', id)}/health`, opts), [200], (a) => healthFrom('getHealth', a, json('getHealth', a), id));
    },
    getLimits(id, opts = {}) {
      return call('getLimits', opts, () => exchange('getLimits', 'GET', `${idPath('getLimits', id)}/limits`, opts), [200], (a) => limitsFrom('getLimits', a, json('getLimits', a)));
    },
    setLimits(id, patch, opts = {}) {
      const body = Object.fromEntries(LIMIT_FIELDS.filter((k) => patch[k] !== undefined).map((k) => [k, patch[k]]));
      return call('setLimits', opts, () => exchange('setLimits', 'PATCH', `${idPath('setLimits', id)}/limits`, opts, body), [200], (a) => limitsFrom('setLimits', a, json('setLimits', a)));
    },
    getUsage(id, opts = {}) {
      return call('getUsage', opts, () => exchange('getUsage', 'GET', `${idPath('getUsage', id)}/usage`, opts), [200], (a) => usageFrom('getUsage', a, json('getUsage', a)));
    },
    getAccount(opts = {}) {
      return call('getAccount', opts, () => exchange('getAccount', 'GET', '/v1/account', opts), [200], (a) => {
        const v = json('getAccount', a) as Partial<VendorAccount> | null;
        if (!v || typeof v.id !== 'string' || (v.state !== 'active' && v.state !== 'suspended')) throw malformed('getAccount', a, 'not an account');
        return {
          id: v.id,
          state: v.state,
          ...(typeof v.reason === 'string' && v.reason !== '' ? { reason: vendorText(v.reason, token, 64) } : {}),
          ...(typeof v.message === 'string' && vendorText(v.message, token) !== '' ? { message: vendorText(v.message, token) } : {}),
          since: textField(v.since),
        };
      });
    },
    listInstanceStates(page = {}, opts = {}) {
      const size = page.pageSize ?? 200;
      const path = `/v1/instances?view=full&pageSize=${size}${page.pageToken ? `&pageToken=${encodeURIComponent(page.pageToken)}` : ''}`;
      return call('listInstanceStates', opts, () => exchange('listInstanceStates', 'GET', path, opts), [200], (a) => {
        const v = json('listInstanceStates', a) as { items?: unknown; nextPageToken?: unknown } | null;
        if (!v || !Array.isArray(v.items)) throw malformed('listInstanceStates', a, 'no items list');
        // Item by item: one instance outside the contract must not hide the others (every
        // provider of the account would fall back to its own calls, the late-create listing would
        // fail every key). What could not be read is said, with what of it could.
        const items: VendorInstanceState[] = [];
        const unreadable: UnreadableInstanceState[] = [];
        for (const item of v.items as unknown[]) {
          const i = item as { id?: unknown; idempotencyKey?: unknown; health?: unknown; limits?: unknown; usage?: unknown } | null;
          let instance: VendorInstance | undefined;
          try {
            instance = instanceFrom('listInstanceStates', a, i);
            items.push({
              instance,
              health: healthFrom('listInstanceStates', a, i?.health, instance.id),
              limits: limitsFrom('listInstanceStates', a, i?.limits),
              usage: usageFrom('listInstanceStates', a, i?.usage),
            });
          } catch (err) {
            if (!(err instanceof VendorError)) throw err;
            const isObject = typeof i === 'object' && i !== null && !Array.isArray(i);
            unreadable.push({
              ...(isObject && typeof i.id === 'string' && i.id !== '' ? { id: i.id } : {}),
              ...(isObject ? { idempotencyKey: typeof i.idempotencyKey === 'string' ? i.idempotencyKey : null } : {}),
              ...(instance ? { instance } : {}),
              problem: err.message.replace(/^vendor listInstanceStates: malformed answer \(HTTP \d+\): /, ''),
            });
          }
        }
        return {
          items,
          ...(unreadable.length ? { unreadable } : {}),
          ...(typeof v.nextPageToken === 'string' && v.nextPageToken !== '' ? { nextPageToken: v.nextPageToken } : {}),
        };
      });
    },
    calls: () => structuredClone(counts),
    close: () => dispatcher.close(),
  };
}
