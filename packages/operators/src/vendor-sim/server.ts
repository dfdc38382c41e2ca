/**
 * The vendor simulator's HTTPS server: the /v1 vendor API of `openapi.yaml`, the /admin fault
 * controls, and `startVendorSimulator` which wires TLS, state and faults together.
 *
 * @module
 */
import { timingSafeEqual, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { prepareTls } from './certs.ts';
import { FaultState, FaultValidationError, parseFaults, parseFaultsPatch, type Faults, type FaultsPatch, type VendorOperation } from './faults.ts';
import { bump, emptyCounters, type Counters, type SimStats } from './stats.ts';
import { HEALTH_STATUSES, InstanceStore, publicInstance, type HealthStatus, type StoredInstance } from './store.ts';

export interface VendorSimulatorOptions {
  /** Listen address. Default `127.0.0.1`. */
  host?: string;
  /** Listen port; 0 (default) picks a free one. */
  port?: number;
  /** The bearer token /v1 requests must carry. */
  token: string;
  /** The bearer token for /admin. Default: random (read it from `adminToken`). */
  adminToken?: string;
  /** JSON file holding the instances; loaded at start, rewritten after each change. */
  stateFile?: string;
  /**
   * Where the CA and server certificate live. An existing CA there is reused, so clients keep
   * trusting a restarted simulator. Default: the state file's folder when `stateFile` is given,
   * else a new temporary folder that `stop()` removes.
   */
  dir?: string;
  /** Faults active from the start. */
  faults?: Faults;
}

/** An instance as the admin view shows it: with its health. */
export type AdminInstance = StoredInstance;

export interface ResetOptions {
  /** Clear all faults (releasing hanging requests). Default true. */
  faults?: boolean;
  /** Zero the statistics. Default true. */
  stats?: boolean;
  /** Delete every instance. Default false. */
  instances?: boolean;
}

export interface VendorSimulator {
  /** `https://<host>:<port>` — no trailing slash. */
  readonly baseUrl: string;
  readonly host: string;
  readonly port: number;
  /** File holding the CA certificate (PEM) that signs the server certificate. */
  readonly caPath: string;
  readonly caPem: string;
  /** Folder with the TLS material. */
  readonly dir: string;
  readonly stateFile: string | undefined;
  /** Bearer token for /admin. */
  readonly adminToken: string;

  /** Active faults. */
  faults(): Faults;
  /** Replaces all faults (validated like PUT /admin/faults; throws `FaultValidationError`). */
  setFaults(faults: Faults): Faults;
  /** Merges faults; `null` clears a field (like PATCH /admin/faults). */
  patchFaults(patch: FaultsPatch): Faults;
  clearFaults(): Faults;
  stats(): SimStats;
  reset(options?: ResetOptions): SimStats;
  /** Live instances with their health. */
  instances(): AdminInstance[];
  /** Deletes an instance behind the operator's back; false when there was none. */
  deleteInstance(id: string): boolean;
  /** Sets an instance's health; false when there is no such instance. */
  setHealth(id: string, status: HealthStatus, message?: string): boolean;
  /** Closes the server and every connection (hanging requests included). Idempotent. */
  stop(): Promise<void>;
}

interface Route {
  op: VendorOperation;
  template: string;
  id?: string;
}

const MAX_BODY_BYTES = 64 * 1024;
const REGION = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Thrown by handlers to answer with the standard error body. */
class HttpFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, field?: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
    this.headers = headers;
  }
}

function matchV1(method: string, path: string): Route | 'method-not-allowed' | undefined {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] !== 'v1' || parts[1] !== 'instances') return undefined;
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
  if (parts.length === 4 && parts[3] === 'health') {
    return method === 'GET' ? { op: 'health', template: '/v1/instances/{id}/health', id } : 'method-not-allowed';
  }
  return undefined;
}

function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice('Bearer '.length).trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpFailure(413, 'PayloadTooLarge', `request body over ${MAX_BODY_BYTES} bytes`));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new HttpFailure(400, 'InvalidRequest', 'body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpFailure(400, 'InvalidRequest', 'body must be a JSON object');
  return body as Record<string, unknown>;
}

function onlyFields(body: Record<string, unknown>, allowed: string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw new HttpFailure(400, 'InvalidRequest', `unknown field "${key}"`, key);
  }
}

function checkDisplayName(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > 256) throw new HttpFailure(400, 'InvalidRequest', 'displayName must be a string of at most 256 characters', 'displayName');
  return v;
}

function checkRegion(v: unknown): string {
  if (typeof v !== 'string' || !REGION.test(v)) {
    throw new HttpFailure(400, 'InvalidRequest', 'region must be lower-case letters, digits and dashes (1-63)', 'region');
  }
  return v;
}

function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Starts the simulator; resolves once it listens. */
export async function startVendorSimulator(options: VendorSimulatorOptions): Promise<VendorSimulator> {
  if (!options.token) throw new Error('vendor-sim: a token is required');
  const host = options.host ?? '127.0.0.1';
  const stateFile = options.stateFile === undefined ? undefined : resolve(options.stateFile);
  const initialFaults = options.faults ? parseFaults(options.faults) : undefined; // before anything is written
  const ownDir = options.dir === undefined && stateFile === undefined;
  const dir = options.dir !== undefined ? resolve(options.dir) : stateFile ? dirname(stateFile) : await mkdtemp(join(tmpdir(), 'converge-vendor-sim-'));
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
  const token = Buffer.from(options.token);
  const adminTokenText = options.adminToken ?? randomBytes(16).toString('hex');
  const adminToken = Buffer.from(adminTokenText);
  let counters: Counters = emptyCounters();
  let requestSeq = 0;

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

  async function handleV1(req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
    const method = req.method ?? 'GET';
    const route = matchV1(method, url.pathname);
    const counted = typeof route === 'object' ? `${method} ${route.template}` : 'OTHER';
    bump(counters.requests, counted);
    if (method === 'POST' || method === 'PATCH' || method === 'DELETE') counters.writes++;
    if (route === undefined) throw new HttpFailure(404, 'NotFound', `no route ${method} ${url.pathname}`);
    if (route === 'method-not-allowed') throw new HttpFailure(405, 'InvalidRequest', `method ${method} not allowed on ${url.pathname}`);
    const op = route.op;

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
      if (!(await park(req, op))) return;
    }
    const latency = faults.latencyMs(op);
    if (latency > 0) {
      counters.injected.delayed++;
      if (!(await delay(req, latency))) return;
    }
    if (!bearerMatches(req.headers.authorization, token)) {
      throw new HttpFailure(401, 'Unauthorized', 'missing or invalid bearer token', undefined, { 'www-authenticate': 'Bearer' });
    }
    const burst = faults.takeBurst429(op);
    const retryAfter = burst ?? faults.takeRateLimit();
    if (retryAfter !== undefined) {
      throw new HttpFailure(429, 'RateLimited', 'too many requests', undefined, { 'retry-after': String(retryAfter) });
    }
    const errorStatus = faults.error(op);
    if (errorStatus !== undefined) {
      counters.injected.errors++;
      throw new HttpFailure(errorStatus, errorStatus === 503 ? 'ServiceUnavailable' : 'InternalError', `simulated failure (${errorStatus})`);
    }

    const found = (): StoredInstance => {
      const instance = store.get(route.id!);
      if (!instance) throw new HttpFailure(404, 'NotFound', `instance ${route.id} not found`);
      return instance;
    };
    switch (op) {
      case 'create': {
        const key = req.headers['idempotency-key'];
        if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) {
          throw new HttpFailure(400, 'InvalidRequest', 'Idempotency-Key must be 1-255 characters', 'Idempotency-Key');
        }
        const body = await readJson(req);
        onlyFields(body, ['region', 'displayName']);
        const input = { region: checkRegion(body.region), displayName: checkDisplayName(body.displayName) ?? '' };
        const slow = faults.slowCreateMs();
        if (slow > 0) {
          // Unlike latency, this is not cut short when the client leaves: the create still happens.
          counters.injected.delayed++;
          await new Promise((done) => setTimeout(done, slow));
        }
        const outcome = store.create(input, key);
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
        if (outcome.kind === 'created') return send(res, requestId, 201, instance, { location: `/v1/instances/${encodeURIComponent(instance.id)}` });
        return send(res, requestId, 200, instance, { 'idempotent-replayed': 'true' });
      }
      case 'list': {
        const key = url.searchParams.get('idempotencyKey');
        const items = key === null ? store.list() : [store.findByKey(key)].filter((i) => i !== undefined);
        return send(res, requestId, 200, { items: items.map(publicInstance) });
      }
      case 'get':
        return send(res, requestId, 200, publicInstance(found()));
      case 'update': {
        const body = await readJson(req);
        onlyFields(body, ['displayName', 'region']);
        const displayName = checkDisplayName(body.displayName);
        const instance = found();
        if (body.region !== undefined && body.region !== instance.region) {
          throw new HttpFailure(422, 'ImmutableField', 'region is immutable', 'region');
        }
        return send(res, requestId, 200, publicInstance(store.update(instance.id, displayName === undefined ? {} : { displayName })!));
      }
      case 'delete':
        if (!store.delete(route.id!)) throw new HttpFailure(404, 'NotFound', `instance ${route.id} not found`);
        counters.deletes++;
        return send(res, requestId, 204, undefined);
      case 'health': {
        const instance = found();
        return send(res, requestId, 200, {
          id: instance.id,
          status: instance.health,
          ...(instance.healthMessage ? { message: instance.healthMessage } : {}),
          checkedAt: new Date().toISOString(),
        });
      }
    }
  }

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
      if (opts.instances ?? false) store.clear();
      return stats();
    },
    instances: () => structuredClone(store.list()),
    deleteInstance: (id) => store.delete(id),
    setHealth: (id, status, message) => {
      if (!HEALTH_STATUSES.includes(status)) throw new FaultValidationError('status', `must be one of ${HEALTH_STATUSES.join(', ')}`);
      return store.setHealth(id, status, message) !== undefined;
    },
    stop: async () => {},
  };

  async function handleAdmin(req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
    if (!bearerMatches(req.headers.authorization, adminToken)) {
      throw new HttpFailure(401, 'Unauthorized', 'missing or invalid admin token', undefined, { 'www-authenticate': 'Bearer' });
    }
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean).slice(1); // after "admin"
    const path = parts.join('/');
    const guard = <T>(fn: () => T): T => {
      try {
        return fn();
      } catch (err) {
        if (err instanceof FaultValidationError) throw new HttpFailure(400, 'InvalidRequest', err.message, err.field);
        throw err;
      }
    };
    if (path === 'faults') {
      if (method === 'GET') return send(res, requestId, 200, sim.faults());
      if (method === 'PUT') {
        const body = await readJson(req);
        return send(res, requestId, 200, guard(() => sim.setFaults(body as Faults)));
      }
      if (method === 'PATCH') {
        const body = await readJson(req);
        return send(res, requestId, 200, guard(() => sim.patchFaults(body as FaultsPatch)));
      }
      if (method === 'DELETE') return send(res, requestId, 200, sim.clearFaults());
    } else if (path === 'stats' && method === 'GET') {
      return send(res, requestId, 200, stats());
    } else if (path === 'reset' && method === 'POST') {
      const text = await readBody(req);
      let body: ResetOptions = {};
      try {
        body = text.trim() === '' ? {} : (JSON.parse(text) as ResetOptions);
      } catch {
        throw new HttpFailure(400, 'InvalidRequest', 'body is not valid JSON');
      }
      return send(res, requestId, 200, sim.reset(body));
    } else if (path === 'instances' && method === 'GET') {
      return send(res, requestId, 200, { items: sim.instances() });
    } else if (parts[0] === 'instances' && parts.length === 2 && method === 'DELETE') {
      const id = decodeURIComponent(parts[1]!);
      if (!sim.deleteInstance(id)) throw new HttpFailure(404, 'NotFound', `instance ${id} not found`);
      return send(res, requestId, 204, undefined);
    } else if (parts[0] === 'instances' && parts.length === 3 && parts[2] === 'health' && method === 'PUT') {
      const id = decodeURIComponent(parts[1]!);
      const body = await readJson(req);
      const status = body.status as HealthStatus;
      if (!HEALTH_STATUSES.includes(status)) throw new HttpFailure(400, 'InvalidRequest', `status must be one of ${HEALTH_STATUSES.join(', ')}`, 'status');
      if (body.message !== undefined && typeof body.message !== 'string') throw new HttpFailure(400, 'InvalidRequest', 'message must be a string', 'message');
      if (!sim.setHealth(id, status, body.message as string | undefined)) throw new HttpFailure(404, 'NotFound', `instance ${id} not found`);
      const instance = store.get(id)!;
      return send(res, requestId, 200, { id, status: instance.health, ...(instance.healthMessage ? { message: instance.healthMessage } : {}), checkedAt: new Date().toISOString() });
    }
    throw new HttpFailure(404, 'NotFound', `no admin route ${method} ${url.pathname}`);
  }

  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const requestId = `req-${++requestSeq}`;
    const url = new URL(req.url ?? '/', 'https://vendor-sim');
    const handler =
      url.pathname === '/healthz'
        ? async () => send(res, requestId, 200, { ok: true })
        : url.pathname === '/admin' || url.pathname.startsWith('/admin/')
          ? () => handleAdmin(req, res, url, requestId)
          : () => handleV1(req, res, url, requestId);
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
