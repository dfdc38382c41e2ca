/**
 * The vendor simulator's HTTPS server: wires TLS, state (instances, accounts, metering) and
 * faults together behind `startVendorSimulator`; the /v1 API is `v1-api.ts`, the /admin API is
 * `admin-api.ts`, the simulator's interface is `types.ts`.
 *
 * @module
 */
import { timingSafeEqual, randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { makeOwnFolder } from './own-folder.ts';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { Accounts, DEFAULT_ACCOUNT } from './accounts.ts';
import { handleAdmin } from './admin-api.ts';
import { prepareTls } from './certs.ts';
import { FaultState, FaultValidationError, parseFaults, parseFaultsPatch, type VendorOperation } from './faults.ts';
import { HttpFailure, bearerToken } from './http.ts';
import { Metering, parseLimitsPatch } from './metering.ts';
import { emptyCounters, bump, type Counters, type SimStats } from './stats.ts';
import { HEALTH_STATUSES, InstanceStore, type StoredInstance } from './store.ts';
import type { AdminInstance, QuotaDay, VendorSimulator, VendorSimulatorOptions } from './types.ts';

export type { AdminInstance, ConsumeResult, QuotaDay, ResetOptions, Usage, VendorSimulator, VendorSimulatorOptions } from './types.ts';
import { handleV1, usageOf, type SimState } from './v1-api.ts';

function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Starts the simulator; resolves once it listens. */
export async function startVendorSimulator(options: VendorSimulatorOptions): Promise<VendorSimulator> {
  if (!options.token) throw new Error('vendor-sim: a token is required');
  const host = options.host ?? '127.0.0.1';
  const accounts = new Accounts([{ id: DEFAULT_ACCOUNT, token: options.token }, ...(options.accounts ?? [])]);
  const metering = new Metering(options.usageWindowSeconds === undefined ? {} : { throttleWindowSeconds: options.usageWindowSeconds });
  const stateFile = options.stateFile === undefined ? undefined : resolve(options.stateFile);
  const initialFaults = options.faults ? parseFaults(options.faults) : undefined; // before anything is written
  const ownDir = options.dir === undefined && stateFile === undefined;
  const dir = options.dir !== undefined ? resolve(options.dir) : stateFile ? dirname(stateFile) : await makeOwnFolder();
  /** A start that fails leaves no temporary folder (it holds the CA's and the server's private keys). */
  const discardOwnDir = async (err: unknown): Promise<never> => {
    if (ownDir) await rm(dir, { recursive: true, force: true });
    throw err;
  };
  let tls: Awaited<ReturnType<typeof prepareTls>>;
  let store: InstanceStore;
  try {
    tls = await prepareTls(dir, host);
    store = new InstanceStore(stateFile);
  } catch (err) {
    return discardOwnDir(err);
  }
  const faults = new FaultState();
  if (initialFaults) faults.replace(initialFaults);
  const adminTokenText = options.adminToken ?? randomBytes(16).toString('hex');
  const adminToken = Buffer.from(adminTokenText);
  let counters: Counters = emptyCounters();
  let requestSeq = 0;
  const state: SimState = { store, faults, accounts, metering, counters: () => counters };

  /** Requests held by the `hang` fault; released when it no longer applies to them. */
  const parked = new Set<{ op: VendorOperation; req: IncomingMessage; release: () => void }>();
  const releaseParked = (): void => {
    for (const p of [...parked]) {
      if (!faults.hangs(p.op)) {
        parked.delete(p);
        p.release();
      }
    }
  };

  const stats = (): SimStats => ({ ...structuredClone(counters), liveInstances: store.size });

  const send = (res: ServerResponse, requestId: string, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    if (res.destroyed || res.headersSent) return;
    bump(counters.responses, String(status));
    if (status === 429) counters.rateLimited++;
    if (status === 401) counters.unauthorized++;
    const payload = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, {
      'x-request-id': requestId,
      ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
      ...headers,
    });
    res.end(payload);
  };
  const fail = (res: ServerResponse, requestId: string, f: HttpFailure): void =>
    send(res, requestId, f.status, { error: { code: f.code, message: f.message, ...(f.field ? { field: f.field } : {}), requestId } }, f.headers);

  /** Resolves after `ms`, or early (with false) when the client goes away. */
  const delay = (req: IncomingMessage, ms: number): Promise<boolean> =>
    new Promise((done) => {
      const onClose = (): void => {
        clearTimeout(timer);
        done(false);
      };
      const timer = setTimeout(() => {
        req.socket.off('close', onClose);
        done(!req.socket.destroyed);
      }, ms);
      req.socket.once('close', onClose);
    });

  const park = (req: IncomingMessage, op: VendorOperation): Promise<boolean> =>
    new Promise((done) => {
      const entry = {
        op,
        req,
        release: () => {
          req.socket.off('close', onClose);
          done(!req.socket.destroyed);
        },
      };
      const onClose = (): void => {
        parked.delete(entry);
        done(false);
      };
      parked.add(entry);
      req.socket.once('close', onClose);
    });

  const adminView = (i: StoredInstance): AdminInstance => ({ ...structuredClone(i), usage: usageOf(state, i) });
  const withInstance = <T>(id: string, fn: (i: StoredInstance) => T): T | undefined => {
    const instance = store.get(id);
    return instance === undefined ? undefined : fn(instance);
  };
  const quotaDay = (): QuotaDay => ({ day: metering.calendar.day(), quotaResetAt: new Date(metering.calendar.resetAt()).toISOString() });

  const sim: VendorSimulator = {
    baseUrl: '',
    host,
    port: 0,
    caPath: tls.caPath,
    caPem: tls.caPem,
    dir,
    stateFile,
    adminToken: adminTokenText,
    faults: () => faults.get(),
    setFaults(next) {
      const result = faults.replace(parseFaults(next));
      releaseParked();
      return result;
    },
    patchFaults(patch) {
      const result = faults.patch(parseFaultsPatch(patch));
      releaseParked();
      return result;
    },
    clearFaults() {
      const result = faults.clear();
      releaseParked();
      return result;
    },
    stats,
    reset(opts = {}) {
      if (opts.faults ?? true) sim.clearFaults();
      if (opts.stats ?? true) counters = emptyCounters();
      if (opts.accounts ?? true) accounts.resumeAll();
      if (opts.instances ?? false) {
        store.clear();
        metering.clear();
      }
      return stats();
    },
    instances: () => store.list().map(adminView),
    deleteInstance: (id) => {
      metering.forget(id);
      return store.delete(id);
    },
    setHealth: (id, status, message) => {
      if (!HEALTH_STATUSES.includes(status)) throw new FaultValidationError('status', `must be one of ${HEALTH_STATUSES.join(', ')}`);
      return store.setHealth(id, status, message) !== undefined;
    },
    setLimits: (id, patch) => {
      const valid = parseLimitsPatch(patch);
      return withInstance(id, (i) => ({ ...store.setLimits(i.id, valid)!.limits }));
    },
    usage: (id) => withInstance(id, (i) => usageOf(state, i)),
    consume: (id, calls) =>
      withInstance(id, (i) => {
        if (accounts.isSuspended(i.account)) {
          counters.metering.suspended += calls;
          return { accepted: 0, throttled: 0, refused: 0, suspended: calls, usage: usageOf(state, i) };
        }
        const outcome = metering.meter(i.id).consume(calls, i.limits);
        counters.metering.accepted += outcome.accepted;
        counters.metering.throttled += outcome.throttled;
        counters.metering.refused += outcome.refused;
        return { ...outcome, suspended: 0, usage: usageOf(state, i) };
      }),
    throttle: (id, requests) =>
      withInstance(id, (i) => {
        metering.meter(i.id).throttle(requests);
        return usageOf(state, i);
      }),
    clearThrottle: (id) =>
      withInstance(id, (i) => {
        metering.meter(i.id).clearThrottle();
        return usageOf(state, i);
      }),
    accounts: () => accounts.list(),
    setAccountState: (id, change) => accounts.set(id, change),
    suspendAccount: (id = DEFAULT_ACCOUNT, message, reason) =>
      accounts.set(id, { state: 'suspended', ...(reason === undefined ? {} : { reason }), ...(message === undefined ? {} : { message }) }),
    resumeAccount: (id = DEFAULT_ACCOUNT) => accounts.set(id, { state: 'active' }),
    quotaDay,
    advanceQuotaDay: () => {
      metering.calendar.advance();
      return quotaDay();
    },
    stop: async () => {},
  };

  const isAdmin = (req: IncomingMessage): boolean => {
    const given = bearerToken(req.headers.authorization);
    return given !== undefined && Buffer.byteLength(given) === adminToken.length && timingSafeEqual(Buffer.from(given), adminToken);
  };

  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const requestId = `req-${++requestSeq}`;
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'https://vendor-sim');
    } catch {
      fail(res, requestId, new HttpFailure(400, 'InvalidRequest', 'the request target is not a URL'));
      return;
    }
    const reply = (status: number, body: unknown, headers?: Record<string, string>): void => send(res, requestId, status, body, headers);
    const handler =
      url.pathname === '/healthz'
        ? async () => reply(200, { ok: true })
        : url.pathname === '/admin' || url.pathname.startsWith('/admin/')
          ? async () => {
              if (!isAdmin(req)) throw new HttpFailure(401, 'Unauthorized', 'missing or invalid admin token', undefined, { 'www-authenticate': 'Bearer' });
              return handleAdmin(sim, req, url, reply);
            }
          : () => handleV1(state, { req, url, send: reply, park: (op) => park(req, op), delay: (ms) => delay(req, ms) }, requestId);
    handler().catch((err: unknown) => {
      if (err instanceof HttpFailure) return fail(res, requestId, err);
      fail(res, requestId, new HttpFailure(500, 'InternalError', 'internal simulator error'));
      process.emitWarning(`vendor-sim: ${(err as Error)?.stack ?? String(err)}`);
    });
  });
  // A TLS handshake error (e.g. a client that does not trust the CA) is the client's problem.
  server.on('tlsClientError', () => {});

  await new Promise<void>((ready, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      ready();
    });
  }).catch(discardOwnDir);
  const port = (server.address() as AddressInfo).port;
  let stopping: Promise<void> | undefined;
  return Object.assign(sim, {
    baseUrl: `https://${formatHost(host)}:${port}`,
    port,
    stop: () =>
      (stopping ??= (async () => {
        for (const p of parked) p.req.socket.destroy();
        parked.clear();
        const closed = new Promise<void>((done) => server.close(() => done()));
        server.closeAllConnections();
        await closed;
        if (ownDir) await rm(dir, { recursive: true, force: true });
      })()),
  });
}
