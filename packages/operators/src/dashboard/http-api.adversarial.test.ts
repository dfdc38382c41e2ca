/**
 * Adversarial tests of the dashboard's HTTP API (`http-server.ts`, `security.ts`, and the
 * filters, sorting and ranking it serves), through the real server on 127.0.0.1:0 over a
 * `DashboardModel` the test fills itself. No cluster: each source is a stand-in with a name, a
 * `view()` that returns the state the test gave the model, and an in-memory cache holding the
 * test's objects (enough for the detail endpoint). Every request is written to a raw socket,
 * so request targets that no client library would send reach the server as they are.
 *
 * What it generates and checks:
 * - random request targets (fast-check): known paths, detail paths with segments named like
 *   `Object.prototype` properties, undecodable (`%zz`) or unicode segments, junk that is no URL
 *   (`//[`); queries with repeated and empty parameters, unicode, percent-encoding errors, huge,
 *   negative, NaN and float `limit`s, keys and values like `constructor` or `__proto__`.
 *   Checked: never a 5xx and never a dropped connection; a 4xx carries the contract's JSON error
 *   body with the code that goes with its status; the list endpoints answer exactly what the
 *   reference below computes; every 200 body validates against `openapi.yaml` (ajv); every
 *   response has the security headers; HEAD has GET's status and headers and no body; no
 *   unhandled rejection; the server keeps serving;
 * - random models (objects across clusters, kinds and namespaces, random conditions, quota and
 *   reachability) and random filter/sort/limit combinations: `GET /api/v1/microservices` and
 *   `/providers` equal a reference written from the documented semantics (`shared/filters.ts`,
 *   `shared/ranking.ts`, `openapi.yaml`: filter, best-first rank for providers, sort, limit;
 *   `total` before the limit), the overview and cluster list likewise;
 * - methods other than GET and HEAD, CONNECT included: 405 with `allow: GET, HEAD` and a JSON body;
 * - access with a token: every path refuses no token and wrong ones (other lengths, case,
 *   unicode, prefixes) by header, cookie (also malformed) and `?token=`, and takes the right one
 *   by header (a non-ASCII token as UTF-8, as curl sends it, and as latin1, as fetch does) and by
 *   cookie; `?token=` on a page sets the cookie and redirects to the same origin without it,
 *   whatever the path (`/.//evil.example`); `tokensEqual` is string equality (lone surrogates
 *   included) and never throws; on a loopback listen a Host that is not loopback gets a 421;
 * - the model the API reads, under random upserts, removals and cluster changes: its events
 *   replayed rebuild its rows and clusters, no event without a change, `usable` follows the
 *   cluster's reachability;
 * - the event stream: random queries never 5xx, a `kind` it cannot understand is a 400, a
 *   snapshot holds exactly the clusters and kinds asked for, HEAD has GET's headers.
 *
 * `DASHBOARD_API_RUNS` sets how many cases each property tries (default 60).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '@converge/runtime';
import type { AssetName } from './assets.ts';
import type { ClusterSource } from './cluster-source.ts';
import { createDashboardServer, listen } from './http-server.ts';
import { DashboardModel } from './model.ts';
import { SECURITY_HEADERS, TOKEN_COOKIE, tokensEqual } from './security.ts';
import type { ClusterView, Item, ItemKind, ProviderItem } from './shared/types.ts';
import { watchFailures } from './process-failures.test-support.ts';

const RUNS = Number.parseInt(process.env.DASHBOARD_API_RUNS ?? '', 10) || 60;

// ---------------------------------------------------------------------------------------------
// The contract

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(parseYaml(readFileSync(new URL('./openapi.yaml', import.meta.url), 'utf8')) as object, 'openapi');
const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const okSchema = (path: string) => ajv.compile({ $ref: `openapi#/paths/${pointer(path)}/get/responses/200/content/application~1json/schema` });
const OK_SCHEMAS: Record<string, ReturnType<typeof okSchema>> = {
  '/api/v1/clusters': okSchema('/api/v1/clusters'),
  '/api/v1/overview': okSchema('/api/v1/overview'),
  '/api/v1/microservices': okSchema('/api/v1/microservices'),
  '/api/v1/providers': okSchema('/api/v1/providers'),
  detail: okSchema('/api/v1/{kind}/{cluster}/{namespace}/{name}'),
};
const ERROR_SCHEMA = ajv.compile({ $ref: 'openapi#/components/responses/Error/content/application~1json/schema' });
const EVENT_SCHEMA = ajv.compile({ $ref: 'openapi#/components/schemas/ServerEvent' });
const ERROR_CODES: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 404: 'NotFound', 405: 'MethodNotAllowed', 421: 'MisdirectedRequest' };

function assertValid(validate: ReturnType<typeof okSchema>, body: unknown, what: string): void {
  assert.ok(validate(body), `${what}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
}

// ---------------------------------------------------------------------------------------------
// A raw HTTP/1.1 client: one request per connection, written as given

interface Answer { status: number; headers: Record<string, string>; body: string }

function parseAnswer(buf: Buffer): Answer {
  const end = buf.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no complete response head in ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`);
  const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = buf.subarray(end + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf('\r\n', at);
      const size = Number.parseInt(body.subarray(at, eol).toString('latin1'), 16);
      if (!size) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  }
  return { status, headers, body: body.toString('utf8') };
}

/** Sends one request (`Connection: close`) and reads the whole answer; rejects on a dropped connection. */
function send(port: number, method: string, target: string, headers: Record<string, string> = {}, encoding: 'utf8' | 'latin1' = 'utf8'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`${method} ${target}: no answer in 5 s`)); }, 5_000);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) => { clearTimeout(timer); reject(new Error(`${method} ${target}: ${err.message}`)); });
    socket.on('close', () => {
      clearTimeout(timer);
      const buf = Buffer.concat(chunks);
      if (buf.length === 0) reject(new Error(`${method} ${target}: connection closed without an answer`));
      else {
        try {
          resolve(parseAnswer(buf));
        } catch (err) {
          reject(err as Error);
        }
      }
    });
    const head = Object.entries({ host: `127.0.0.1:${port}`, connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    // UTF-8 on the wire, as curl sends what it is given; latin1 as fetch sends header values.
    socket.end(Buffer.from(`${method} ${target} HTTP/1.1\r\n${head}\r\n`, encoding));
  });
}

/** Opens a GET that may stream; resolves with the answer so far once `done(text)` holds, then hangs up. */
function sendStreaming(port: number, target: string, done: (answer: Answer) => boolean, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(parseAnswer(buf));
    };
    const timer = setTimeout(() => finish(new Error(`GET ${target}: not done in 5 s: ${buf.toString('latin1').slice(0, 500)}`)), 5_000);
    const ready = () => {
      if (buf.indexOf('\r\n\r\n') < 0) return false;
      const a = parseAnswer(buf);
      // A streamed body is chunked: read the raw text after the head instead.
      const raw = buf.subarray(buf.indexOf('\r\n\r\n') + 4).toString('utf8');
      return done({ ...a, body: a.headers['transfer-encoding'] === 'chunked' ? raw : a.body });
    };
    socket.on('data', (c) => {
      buf = Buffer.concat([buf, c]);
      try {
        if (ready()) finish();
      } catch {
        // not parseable yet
      }
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => (buf.length && !settled ? (ready() ? finish() : finish(new Error(`GET ${target}: closed early: ${buf.toString('latin1').slice(0, 500)}`))) : finish(new Error(`GET ${target}: closed without an answer`))));
    const head = Object.entries({ host: `127.0.0.1:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(Buffer.from(`GET ${target} HTTP/1.1\r\n${head}\r\n`, 'utf8'));
  });
}


// ---------------------------------------------------------------------------------------------
// Models and the server over them

interface ObjSpec {
  kind: ItemKind;
  cluster: string;
  namespace: string;
  name: string;
  generation: number;
  caughtUp: boolean;
  ready: { status: 'True' | 'False' | 'Unknown'; reason: string; current: boolean; since: string | undefined } | undefined;
  deleting: boolean;
  createdAt: string;
  // Microservice
  image: string;
  phase: string | undefined;
  stalled: boolean;
  // Provider
  region: string;
  providerID: string | undefined;
  finalizer: boolean;
  usage: { callsToday: number; dailyQuota: number; quotaRemaining: number } | undefined;
  limitedBy: string | undefined;
}

const CLUSTER_NAMES = ['alpha', 'beta', 'constructor', 'toString'];
const NAMESPACES = ['default', 'ns-a', 'team.b'];
const NAMES = ['web', 'api', 'tokyo', 'a-1', 'zeta'];
const TIMES = ['2025-01-01T00:00:00Z', '2025-06-01T12:00:00Z', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'];
const IMAGES = ['img:1', 'example.com/web:2', 'Registry.IO/API:3'];
const REGIONS = ['eu-central-1', 'ap-northeast-1', 'us-east-1'];
const MS_REASONS = ['Available', 'RolloutInProgress', 'RolloutStalled', 'InvalidSpec', 'OwnershipConflict'];
const DHP_REASONS = ['ProviderReady', 'ProviderDegraded', 'ProviderUnhealthy', 'QuotaExhausted', 'CredentialsMissing'];

const objSpecArb = (clusters: readonly string[]): fc.Arbitrary<ObjSpec> =>
  fc.record({
    kind: fc.constantFrom<ItemKind>('Microservice', 'DigitalHumanProvider'),
    cluster: fc.constantFrom(...clusters),
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom(...NAMES),
    generation: fc.integer({ min: 1, max: 3 }),
    caughtUp: fc.boolean(),
    wellFormed: fc.boolean(),
    ready: fc.option(
      fc.record({ status: fc.constantFrom<'True' | 'False' | 'Unknown'>('True', 'False', 'Unknown'), reasonIndex: fc.nat(4), current: fc.boolean(), since: fc.option(fc.constantFrom(...TIMES), { nil: undefined }) }),
      { nil: undefined },
    ),
    deleting: fc.boolean(),
    createdAt: fc.constantFrom(...TIMES),
    image: fc.constantFrom(...IMAGES),
    phase: fc.constantFrom(undefined, 'Accepted', 'ResourcesApplied', 'Failed'),
    stalled: fc.boolean(),
    region: fc.constantFrom(...REGIONS),
    providerID: fc.option(fc.constantFrom('pid-1', 'PID-eu-2'), { nil: undefined }),
    finalizer: fc.boolean(),
    usage: fc.option(fc.record({ callsToday: fc.nat(10), dailyQuota: fc.nat(10), quotaRemaining: fc.nat(3) }), { nil: undefined }),
    limitedBy: fc.option(fc.constantFrom('RateLimited', 'QuotaExhausted'), { nil: undefined }),
  }).map((r): ObjSpec => {
    const reasons = r.kind === 'Microservice' ? MS_REASONS : DHP_REASONS;
    const ready = r.ready && { status: r.ready.status, reason: reasons[r.ready.reasonIndex]!, current: r.ready.current, since: r.ready.since };
    // Half the objects are converged-shaped, so that `ready=true` and `usable=true` match something.
    if (!r.wellFormed) return { ...r, ready };
    return { ...r, caughtUp: true, deleting: false, finalizer: true, providerID: r.providerID ?? 'pid-1', ready: { status: 'True', reason: r.kind === 'Microservice' ? 'Available' : reasons[r.ready?.reasonIndex === 1 ? 1 : 0]!, current: true, since: ready?.since ?? TIMES[1] } };
  });

function kubeObject(s: ObjSpec): KubeObject {
  const ready = s.ready && {
    type: 'Ready', status: s.ready.status, reason: s.ready.reason, message: `${s.ready.reason} message`,
    observedGeneration: s.ready.current ? s.generation : s.generation - 1,
    ...(s.ready.since ? { lastTransitionTime: s.ready.since } : {}),
  };
  const metadata = {
    name: s.name, namespace: s.namespace, uid: `${s.cluster}/${s.namespace}/${s.name}/${s.kind}`, generation: s.generation, creationTimestamp: s.createdAt,
    ...(s.deleting ? { deletionTimestamp: TIMES[3] } : {}),
    ...(s.kind === 'DigitalHumanProvider' && s.finalizer ? { finalizers: ['dhp.example.com/provider-cleanup'] } : {}),
  };
  const observedGeneration = s.caughtUp ? s.generation : s.generation - 1;
  if (s.kind === 'Microservice') {
    const conditions = [...(ready ? [ready] : []), ...(s.stalled ? [{ type: 'Stalled', status: 'True', reason: 'ProgressDeadlineExceeded', message: '' }] : [])];
    return {
      apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata,
      spec: { container: { image: s.image, port: 8080 } },
      status: { observedGeneration, ...(s.phase ? { phase: s.phase } : {}), conditions },
    } as unknown as KubeObject;
  }
  return {
    apiVersion: 'dhp.example.com/v1', kind: 'DigitalHumanProvider', metadata,
    spec: { region: s.region, endpoint: 'https://vendor.invalid' },
    status: {
      observedGeneration, conditions: ready ? [ready] : [],
      ...(s.providerID ? { providerID: s.providerID } : {}),
      ...(s.usage ? { usage: { ...s.usage, throttledRequests: 0, observedAt: TIMES[2] } } : {}),
      ...(s.limitedBy ? { limitedBy: s.limitedBy } : {}),
    },
  } as unknown as KubeObject;
}

interface World {
  clusters: { name: string; reachable: boolean }[];
  objects: ObjSpec[];
}

const worldArb: fc.Arbitrary<World> = fc
  .uniqueArray(fc.record({ name: fc.constantFrom(...CLUSTER_NAMES), reachable: fc.boolean() }), { minLength: 1, maxLength: 3, selector: (c) => c.name })
  .chain((clusters) => fc.record({ clusters: fc.constant(clusters), objects: fc.array(objSpecArb(clusters.map((c) => c.name)), { maxLength: 14 }) }));

const clusterView = (name: string, reachable: boolean): ClusterView => ({
  name, server: `https://${name}.invalid:6443`, state: reachable ? 'reachable' : 'unreachable', reachable,
  syncedAt: reachable ? TIMES[2]! : null, lastSync: reachable ? TIMES[3]! : null, error: reachable ? null : 'connect ECONNREFUSED', warnings: [],
});

const ASSETS = new Map<AssetName, Buffer>([
  ['index.html', Buffer.from('<!doctype html><title>t</title>')],
  ['app.js', Buffer.from('export {};\n')],
  ['app.css', Buffer.from('body{}\n')],
  ['openapi.yaml', readFileSync(new URL('./openapi.yaml', import.meta.url))],
]);

interface Served { port: number; model: DashboardModel; close(): Promise<void> }

/** The real server over a model holding `world`; sources are stand-ins (see the module comment). */
async function serve(world: World, options: { token?: string; loopbackListen?: boolean } = {}): Promise<Served> {
  const model = new DashboardModel({ now: () => new Date('2026-03-01T00:00:00Z') });
  for (const c of world.clusters) model.setCluster(clusterView(c.name, c.reachable));
  const objects = new Map<string, KubeObject>();
  for (const s of world.objects) {
    const o = kubeObject(s);
    model.upsert(s.cluster, s.kind, o);
    objects.set(`${s.kind}/${s.cluster}/${s.namespace}/${s.name}`, o);
  }
  const sources = world.clusters.map((c) => ({
    name: c.name,
    server: clusterView(c.name, c.reachable).server,
    view: () => model.cluster(c.name)!,
    cache: {
      store: (kind: { kind: string }) => ({
        get: ({ namespace, name }: { namespace: string; name: string }) => objects.get(`${kind.kind}/${c.name}/${namespace}/${name}`),
        list: () => [],
        byIndex: () => [],
      }),
    },
  }));
  const server = createDashboardServer({ model, sources: sources as unknown as ClusterSource[], assets: ASSETS, token: options.token, loopbackListen: options.loopbackListen ?? true });
  const { port } = await listen(server, '127.0.0.1', 0);
  return {
    port,
    model,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// The reference: the list endpoints' documented semantics, written independently of the server
//
// shared/filters.ts: each filter parameter may repeat or hold a comma-separated list, values
// within one parameter OR-ed, parameters AND-ed; `region` and `usable` concern providers only;
// `q` is a case-insensitive substring of namespace/name, image, region, provider ID or reason.
// openapi.yaml: `sort` (prefix - for descending; ties cluster, namespace, name), `limit` (after
// sorting), `total` (before the limit); Microservices by cluster, namespace, name by default,
// providers best first (shared/ranking.ts) with `rank` their position in that order.

type Expected = { status: 400 } | { status: 200; total: number; items: Item[] } | { status: 'either' };

const KIND_WORDS: Record<string, ItemKind> = {
  microservice: 'Microservice', microservices: 'Microservice', ms: 'Microservice',
  digitalhumanprovider: 'DigitalHumanProvider', digitalhumanproviders: 'DigitalHumanProvider', dhp: 'DigitalHumanProvider', provider: 'DigitalHumanProvider', providers: 'DigitalHumanProvider',
};
const SORTS = ['cluster', 'namespace', 'name', 'health', 'why', 'age', 'unconverged', 'region', 'phase', 'rank', 'quota'];

function listValues(params: URLSearchParams, name: string): string[] | undefined {
  const all = params.getAll(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  return all.length ? all : undefined;
}

const cmpText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const cmpNum = (a: number, b: number) => (a === b ? 0 : a < b ? -1 : 1);
const identity = (a: Item, b: Item) => cmpText(a.cluster, b.cluster) || cmpText(a.namespace, b.namespace) || cmpText(a.name, b.name);
/** A time as ms, or `missing` when there is none. */
const ms = (t: string | null | undefined, missing: number) => (t ? Date.parse(t) : missing);

function byKey(key: string): (a: Item, b: Item) => number {
  const region = (i: Item) => (i.kind === 'DigitalHumanProvider' ? i.region : '');
  const phase = (i: Item) => (i.kind === 'Microservice' ? (i.phase ?? '') : '');
  const quotaLeft = (i: Item) => (i.kind === 'DigitalHumanProvider' && typeof i.quota?.left === 'number' ? i.quota.left : -1);
  const worst = { failed: 0, progressing: 1, ready: 2 };
  switch (key) {
    case 'cluster': return (a, b) => cmpText(a.cluster, b.cluster);
    case 'namespace': return (a, b) => cmpText(a.namespace, b.namespace);
    case 'name': return (a, b) => cmpText(a.name, b.name);
    case 'health': return (a, b) => worst[a.health] - worst[b.health];
    case 'why': return (a, b) => cmpText(a.why ?? '', b.why ?? '');
    // Ascending age: the youngest first.
    case 'age': return (a, b) => cmpNum(ms(b.createdAt, Infinity), ms(a.createdAt, Infinity));
    // Ascending: unconverged the longest first, converged last.
    case 'unconverged': return (a, b) => cmpNum(ms(a.unconvergedSince, Infinity), ms(b.unconvergedSince, Infinity));
    case 'region': return (a, b) => cmpText(region(a), region(b));
    case 'phase': return (a, b) => cmpText(phase(a), phase(b));
    case 'rank': return (a, b) => cmpNum((a as ProviderItem).rank ?? Infinity, (b as ProviderItem).rank ?? Infinity);
    case 'quota': return (a, b) => cmpNum(quotaLeft(a), quotaLeft(b));
  }
  throw new Error(key);
}

/** shared/ranking.ts, criteria 1-6. */
function bestFirst(a: ProviderItem, b: ProviderItem): number {
  const degraded = (p: ProviderItem) => p.ready?.reason === 'ProviderDegraded';
  const left = (p: ProviderItem) => (typeof p.quota?.left === 'number' ? p.quota.left : -1);
  const readySince = (p: ProviderItem) => (p.ready?.status === 'True' ? ms(p.ready.lastTransitionTime, Infinity) : Infinity);
  if (a.usable !== b.usable) return a.usable ? -1 : 1;
  if (degraded(a) !== degraded(b)) return degraded(a) ? 1 : -1;
  if ((a.limitingReason !== null) !== (b.limitingReason !== null)) return a.limitingReason !== null ? 1 : -1;
  return cmpNum(left(b), left(a)) || cmpNum(readySince(a), readySince(b)) || identity(a, b);
}

function referenceList(kind: ItemKind, all: readonly Item[], params: URLSearchParams): Expected {
  let either = false;
  const limitText = params.get('limit');
  let limit: number | undefined;
  if (limitText !== null) {
    if (/^[0-9]+$/.test(limitText) && Number(limitText) > 0) limit = Number(limitText);
    else if (/^(|-.*|0+|[0-9]*\.[0-9]*[1-9][0-9]*|NaN|[^0-9+\s.-].*)$/.test(limitText) || Number.isNaN(Number(limitText))) return { status: 400 };
    else {
      // Other spellings of a number (" 5", "1e3", "0x10", "5.0"): the contract says nothing of them.
      either = true;
      limit = Number(limitText);
      if (!Number.isInteger(limit) || limit <= 0) return { status: 400 };
    }
  }
  const sortText = params.get('sort');
  let sort: { key: string; descending: boolean } | undefined;
  if (sortText) {
    const descending = sortText.startsWith('-');
    const key = descending ? sortText.slice(1) : sortText;
    if (!SORTS.includes(key)) return { status: 400 };
    sort = { key, descending };
  }
  const kinds = listValues(params, 'kind');
  if (kinds && !kinds.every((k) => Object.hasOwn(KIND_WORDS, k.toLowerCase()))) return { status: 400 };
  const healths = listValues(params, 'health');
  if (healths && !healths.every((h) => h === 'ready' || h === 'progressing' || h === 'failed')) return { status: 400 };
  const bools = (name: string): boolean[] | undefined | 'bad' => {
    const v = listValues(params, name);
    if (!v) return undefined;
    if (!v.every((x) => ['true', 'false', '1', '0'].includes(x))) return 'bad';
    const set = new Set(v.map((x) => x === 'true' || x === '1'));
    // true OR false: no filter at all.
    return set.size === 2 ? undefined : [...set];
  };
  const ready = bools('ready');
  const usable = bools('usable');
  if (ready === 'bad' || usable === 'bad') return { status: 400 };
  const clusters = listValues(params, 'cluster');
  const namespaces = listValues(params, 'namespace');
  const regions = listValues(params, 'region');
  const q = params.get('q')?.trim().toLowerCase() || undefined;
  const matches = (i: Item): boolean => {
    if (clusters && !clusters.includes(i.cluster)) return false;
    if (namespaces && !namespaces.includes(i.namespace)) return false;
    if (kinds && !kinds.some((k) => KIND_WORDS[k.toLowerCase()] === i.kind)) return false;
    if (regions && !(i.kind === 'DigitalHumanProvider' && regions.includes(i.region))) return false;
    if (healths && !healths.includes(i.health)) return false;
    // `ready` is ready to take work: a provider must be usable (README: the upstream's pick).
    if (ready && !ready.includes(i.kind === 'DigitalHumanProvider' ? i.usable : i.converged)) return false;
    if (usable && !(i.kind === 'DigitalHumanProvider' && usable.includes(i.usable))) return false;
    if (q) {
      const fields = [`${i.namespace}/${i.name}`, i.why ?? '', ...(i.kind === 'Microservice' ? [i.image] : [i.region, i.providerID ?? ''])];
      if (!fields.some((f) => f.toLowerCase().includes(q))) return false;
    }
    return true;
  };
  let items = all.filter((i) => i.kind === kind && matches(i));
  if (kind === 'DigitalHumanProvider') items = (items as ProviderItem[]).sort(bestFirst).map((p, n) => ({ ...p, rank: n + 1 }));
  else items = [...items].sort(identity);
  if (sort) {
    const by = byKey(sort.key);
    const sign = sort.descending ? -1 : 1;
    items = [...items].sort((a, b) => sign * by(a, b) || identity(a, b));
  }
  if (either) return { status: 'either' };
  return { status: 200, total: items.length, items: limit === undefined ? items : items.slice(0, limit) };
}

/** Compares an answer of a list endpoint with the reference. */
function checkList(kind: ItemKind, model: DashboardModel, params: URLSearchParams, a: Answer, what: string): void {
  const expected = referenceList(kind, model.items(), params);
  if (expected.status === 'either') {
    assert.ok(a.status === 200 || a.status === 400, `${what}: ${a.status}`);
    return;
  }
  assert.equal(a.status, expected.status, `${what}: ${a.body.slice(0, 300)}`);
  if (expected.status !== 200) return;
  const body = JSON.parse(a.body) as { total: number; items: Item[] };
  const keys = (items: Item[]) => items.map((i) => `${i.key}${i.kind === 'DigitalHumanProvider' ? `#${i.rank}` : ''}`);
  assert.equal(body.total, expected.total, `${what}: total`);
  assert.deepEqual(keys(body.items), keys(expected.items), `${what}: order`);
  assert.deepEqual(body.items, JSON.parse(JSON.stringify(expected.items)), `${what}: rows`);
}

/** Checks every answer: no 5xx, security headers, JSON errors with the right code, 200 bodies per the contract. */
function checkAnswer(a: Answer, pathname: string | undefined, what: string): void {
  assert.ok(a.status < 500, `${what}: ${a.status} ${a.body.slice(0, 300)}`);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) assert.equal(a.headers[name], value, `${what}: ${name}`);
  if (a.status >= 400) {
    assert.match(a.headers['content-type'] ?? '', /^application\/json/, `${what}: error content-type`);
    const body = JSON.parse(a.body) as { error: string };
    assertValid(ERROR_SCHEMA, body, what);
    assert.equal(body.error, ERROR_CODES[a.status], `${what}: error code for ${a.status}`);
  }
  if (a.status === 200 && pathname !== undefined && pathname.startsWith('/api/v1/') && pathname !== '/api/v1/openapi.yaml') {
    assert.equal(a.headers['cache-control'], 'no-store', `${what}: cache-control`);
    const schema = OK_SCHEMAS[pathname] ?? OK_SCHEMAS.detail!;
    assertValid(schema, JSON.parse(a.body), what);
  }
}

/** GET and HEAD of one target: the checks above, and HEAD = GET's status and headers, no body. */
async function getAndHead(port: number, target: string, headers: Record<string, string> = {}, encoding: 'utf8' | 'latin1' = 'utf8'): Promise<Answer> {
  const get = await send(port, 'GET', target, headers, encoding);
  const head = await send(port, 'HEAD', target, headers, encoding);
  // The date moves; `transfer-encoding` is how GET's (empty) body is framed.
  const strip = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'date' && k !== 'transfer-encoding'));
  assert.equal(head.status, get.status, `HEAD ${target}: status`);
  assert.deepEqual(strip(head.headers), strip(get.headers), `HEAD ${target}: headers`);
  assert.equal(head.body, '', `HEAD ${target}: no body`);
  return get;
}

/** The path a server reads from a request target: an origin-form one (`/…`) names no host. */
function pathnameOf(target: string): string | undefined {
  try {
    return (target.startsWith('/') ? new URL(`http://dashboard.invalid${target}`) : new URL(target, 'http://dashboard.invalid')).pathname;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Random requests

const PROTO = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
const BAD_PERCENT = ['%zz', '%', '%E0%A4%A', '%C0%80', '%ED%A0%80', '%FF', '%2'];
const UNICODE = ['é', '💥', 'İ', '\u00a0', 'ß', '\u200b'].map(encodeURIComponent);
/** Characters a request target may carry as they are (no space, no controls). */
const targetChar = fc.constantFrom(...'abcAZ09-._~!$&\'()*+,;=:@/?%[]"<>\\^`{|}#'.split(''));

const segmentArb = fc.oneof(
  fc.constantFrom('microservices', 'providers', 'pods', ...PROTO, ...BAD_PERCENT, ...UNICODE, ...CLUSTER_NAMES, ...NAMESPACES, ...NAMES, '', '.', '..', '%2F', 'a%2Fb'),
  fc.string({ unit: targetChar, maxLength: 6 }).map((s) => s.replace(/[/?#]/g, '')),
);
const pathArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('/api/v1/microservices', '/api/v1/providers') },
  { weight: 2, arbitrary: fc.constantFrom('/api/v1/overview', '/api/v1/clusters', '/healthz', '/', '/index.html', '/assets/app.js', '/assets/app.css', '/api/v1/openapi.yaml') },
  { weight: 3, arbitrary: fc.tuple(segmentArb, segmentArb, segmentArb, segmentArb).map((s) => `/api/v1/${s.join('/')}`) },
  { weight: 1, arbitrary: fc.constantFrom('//[', '//[/api/v1/clusters', '/%', '/%zz', '//', '/..', '/./api/v1/clusters', '/api/v1/../v1/clusters', '*', 'http://127.0.0.1/api/v1/clusters', 'http://[/', '/api/v1/microservices/', '/API/v1/clusters', '/api/v1/clusters%00', '/api/v2/clusters', '/assets/../healthz') },
  { weight: 1, arbitrary: fc.string({ unit: targetChar, maxLength: 24 }).map((s) => `/${s}`) },
);
const keyArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('cluster', 'namespace', 'kind', 'region', 'health', 'ready', 'usable', 'q', 'sort', 'limit', 'snapshot') },
  { weight: 2, arbitrary: fc.constantFrom(...PROTO, 'token', '', 'li%6dit', 'limit%', 'sort[]') },
  { weight: 1, arbitrary: fc.string({ unit: targetChar, maxLength: 6 }).map((s) => s.replace(/[&=#]/g, '')) },
);
const valueArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('', '0', '1', '2', '5', '-1', '1.5', 'NaN', 'Infinity', '1e400', '1e3', '0x10', '+5', '%205', '9007199254740993', '99999999999999999999', '1' + '0'.repeat(400), '5.0') },
  { weight: 3, arbitrary: fc.constantFrom('true', 'false', 'maybe', 'TRUE', 'ms', 'dhp', 'Microservice', 'providers', 'pod', 'ready', 'failed', 'sad', 'name', '-name', '--name', '-', 'colour', 'quota', '-rank') },
  { weight: 2, arbitrary: fc.constantFrom(...PROTO, ...BAD_PERCENT, ...UNICODE, ...CLUSTER_NAMES, 'alpha,beta', 'alpha,,', ',', '%2C', 'web', 'EU', 'nowhere') },
  { weight: 1, arbitrary: fc.string({ unit: targetChar, maxLength: 10 }).map((s) => s.replace(/[&#]/g, '')) },
);
const queryArb = fc.array(fc.tuple(keyArb, valueArb, fc.boolean()), { maxLength: 6 }).map((pairs) => pairs.map(([k, v, bare]) => (bare && v === '' ? k : `${k}=${v}`)).join('&'));
const targetArb = fc.tuple(pathArb, fc.option(queryArb, { nil: undefined })).map(([path, query]) => (query === undefined ? path : `${path}?${query}`));

const FIXED_WORLD: World = {
  clusters: [{ name: 'alpha', reachable: true }, { name: 'constructor', reachable: false }],
  objects: fc.sample(objSpecArb(['alpha', 'constructor']), { numRuns: 24, seed: 7 }),
};

test('random request targets: never a 5xx or a dropped connection, JSON errors, bodies per the contract, lists as the reference (fast-check)', { timeout: 120_000 }, async (t) => {
  const failures = watchFailures(t);
  const served = await serve(FIXED_WORLD);
  t.after(() => served.close());
  // Known objects, so the detail endpoint also answers 200.
  const known = served.model.items().map((i) => `/api/v1/${i.kind === 'Microservice' ? 'microservices' : 'providers'}/${i.cluster}/${i.namespace}/${i.name}`);
  await fc.assert(
    fc.asyncProperty(fc.oneof({ weight: 5, arbitrary: targetArb }, { weight: 1, arbitrary: fc.constantFrom(...known) }), async (target) => {
      const a = await getAndHead(served.port, target);
      const pathname = pathnameOf(target);
      checkAnswer(a, pathname, `GET ${target}`);
      if (pathname === undefined) {
        assert.equal(a.status, 400, `GET ${target}: a target that is no URL`);
        return;
      }
      const params = new URL(target.startsWith('/') ? `http://dashboard.invalid${target}` : target, 'http://dashboard.invalid').searchParams;
      if (pathname === '/api/v1/microservices') checkList('Microservice', served.model, params, a, `GET ${target}`);
      else if (pathname === '/api/v1/providers') checkList('DigitalHumanProvider', served.model, params, a, `GET ${target}`);
      else if (/^\/api\/v1\/[^/]+\/[^/]+\/[^/]+\/[^/]+$/.test(pathname)) {
        assert.ok(a.status === 200 || a.status === 404, `GET ${target}: ${a.status}`);
        const kindPath = pathname.split('/')[3]!;
        if (kindPath !== 'microservices' && kindPath !== 'providers') {
          assert.equal(a.status, 404);
          assert.match(JSON.parse(a.body).message, /unknown kind|percent-encoding/, `GET ${target}`);
        }
      }
    }),
    { numRuns: RUNS * 3 },
  );
  // Still serving.
  assert.equal((await send(served.port, 'GET', '/healthz')).status, 200);
  assert.deepEqual(failures, []);
});

test('named cases: prototype names, bad percent-encoding, targets that are no URL, paths that start with //', async (t) => {
  const failures = watchFailures(t);
  const served = await serve(FIXED_WORLD);
  t.after(() => served.close());
  const cases: [string, number, RegExp?][] = [
    ['http://[/', 400],
    // An origin-form target's path is what it says: `//host/...` names no other host.
    ['//[', 404],
    ['//evil.example/api/v1/clusters', 404],
    ['//evil.example/healthz', 404],
    ['//', 404],
    ['/api/v1/microservices?kind=constructor', 400],
    ['/api/v1/providers?kind=__proto__', 400],
    ['/api/v1/microservices?kind=toString', 400],
    ['/api/v1/microservices/alpha/default/%zz', 404, /percent-encoding/],
    ['/api/v1/microservices/%E0%A4%A/default/web', 404, /percent-encoding/],
    ['/api/v1/constructor/alpha/default/web', 404, /unknown kind "constructor"/],
    ['/api/v1/__proto__/constructor/default/web', 404, /unknown kind "__proto__"/],
    ['/api/v1/microservices?limit=-1', 400],
    ['/api/v1/microservices?limit=1.5', 400],
    ['/api/v1/microservices?limit=NaN', 400],
    ['/api/v1/microservices?limit=1e400', 400],
    ['/api/v1/microservices?limit=99999999999999999999', 200],
    [`/api/v1/microservices?limit=1${'0'.repeat(400)}`, 200],
    [`/api/v1/overview?limit=1${'0'.repeat(400)}`, 200],
    ['/api/v1/microservices?sort=constructor', 400],
    ['/api/v1/microservices?sort=__proto__', 400],
    ['/api/v1/overview?limit=0', 400],
    ['/api/v1/microservices?constructor=1&__proto__=x&hasOwnProperty=y', 200],
  ];
  for (const [target, status, message] of cases) {
    const a = await getAndHead(served.port, target);
    checkAnswer(a, pathnameOf(target), `GET ${target}`);
    assert.equal(a.status, status, `GET ${target}: ${a.body}`);
    if (message) assert.match(JSON.parse(a.body).message, message, `GET ${target}`);
  }
  assert.deepEqual(failures, []);
});

test('random models, filters, sorts and limits: the lists, the overview and the clusters equal the reference (fast-check)', { timeout: 120_000 }, async (t) => {
  const failures = watchFailures(t);
  const pairArb = (world: World) => {
    const cl = fc.constantFrom(...world.clusters.map((c) => c.name), 'nowhere');
    const texts = world.objects.flatMap((o) => [`${o.namespace}/${o.name} ${o.image}`, `${o.region} ${o.providerID ?? ''}`, `${o.name} ${o.ready?.reason ?? ''}`, o.ready?.reason ?? '']);
    const slice = fc.tuple(fc.constantFrom('web', ...texts), fc.nat(30), fc.nat(12), fc.boolean()).map(([s, from, len, upper]) => {
      const piece = s.slice(from % (s.length || 1), (from % (s.length || 1)) + len + 1);
      return upper ? piece.toUpperCase() : piece;
    });
    const list = <T extends string>(values: fc.Arbitrary<T>) => fc.array(values, { minLength: 1, maxLength: 3 }).map((v) => v.join(','));
    return fc.oneof(
      fc.tuple(fc.constant('cluster'), list(cl)),
      fc.tuple(fc.constant('namespace'), list(fc.constantFrom(...NAMESPACES, ' ns-a ', 'other'))),
      fc.tuple(fc.constant('kind'), list(fc.constantFrom('ms', 'dhp', 'Microservice', 'DIGITALHUMANPROVIDER', 'providers', 'pod', 'constructor', '__proto__'))),
      fc.tuple(fc.constant('region'), list(fc.constantFrom(...REGIONS, 'nowhere'))),
      fc.tuple(fc.constant('health'), list(fc.constantFrom('ready', 'progressing', 'failed', 'sad'))),
      fc.tuple(fc.constantFrom('ready', 'usable'), fc.constantFrom('true', 'false', '1', '0', '', 'maybe', 'true,false')),
      fc.tuple(fc.constant('q'), slice),
      fc.tuple(fc.constant('sort'), fc.tuple(fc.constantFrom('', '-'), fc.constantFrom(...SORTS, ...SORTS, 'colour')).map(([d, k]) => d + k)),
      fc.tuple(fc.constant('limit'), fc.constantFrom('1', '2', '3', '10', '0', '-1', '1.5', '')),
    );
  };
  const caseArb = worldArb.chain((world) => fc.record({
    world: fc.constant(world),
    queries: fc.array(fc.tuple(fc.constantFrom<ItemKind>('Microservice', 'DigitalHumanProvider'), fc.array(pairArb(world), { maxLength: 5 })), { minLength: 1, maxLength: 5 }),
    overviewLimit: fc.constantFrom(undefined, '1', '3', '50'),
  }));
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ world, queries, overviewLimit }) => {
      const served = await serve(world);
      try {
        const items = served.model.items();
        for (const [kind, pairs] of queries) {
          const params = new URLSearchParams(pairs);
          const path = kind === 'Microservice' ? '/api/v1/microservices' : '/api/v1/providers';
          const target = `${path}?${params}`;
          const a = await send(served.port, 'GET', target);
          checkAnswer(a, path, `GET ${target}`);
          checkList(kind, served.model, params, a, `GET ${target}`);
        }
        // The overview: counts per listed cluster and kind, the longest unconverged first.
        const target = `/api/v1/overview${overviewLimit ? `?limit=${overviewLimit}` : ''}`;
        const overview = await send(served.port, 'GET', target);
        checkAnswer(overview, '/api/v1/overview', target);
        const body = JSON.parse(overview.body) as { clusters: { cluster: string; kind: string; counts: Record<string, number> }[]; longestUnconverged: { key: string }[] };
        const names = [...new Set([...world.clusters.map((c) => c.name), ...items.map((i) => i.cluster)])].sort(cmpText);
        assert.deepEqual(body.clusters, names.flatMap((cluster) => (['Microservice', 'DigitalHumanProvider'] as const).map((kind) => {
          const mine = items.filter((i) => i.cluster === cluster && i.kind === kind);
          const count = (h: string) => mine.filter((i) => i.health === h).length;
          return { cluster, kind, counts: { total: mine.length, ready: count('ready'), progressing: count('progressing'), failed: count('failed') } };
        })));
        const unconverged = items.filter((i) => i.unconvergedSince !== null)
          .sort((a, b) => cmpNum(Date.parse(a.unconvergedSince!), Date.parse(b.unconvergedSince!)) || cmpText(a.key, b.key));
        assert.deepEqual(body.longestUnconverged.map((u) => u.key), unconverged.slice(0, Number(overviewLimit ?? 10)).map((i) => i.key));
        // The clusters, in the order given.
        const clusters = await send(served.port, 'GET', '/api/v1/clusters');
        checkAnswer(clusters, '/api/v1/clusters', 'GET /api/v1/clusters');
        assert.deepEqual((JSON.parse(clusters.body) as { items: ClusterView[] }).items, world.clusters.map((c) => clusterView(c.name, c.reachable)));
      } finally {
        await served.close();
      }
    }),
    { numRuns: RUNS },
  );
  assert.deepEqual(failures, []);
});

test('methods other than GET and HEAD: 405 with allow and a JSON body, whatever the target (fast-check)', async (t) => {
  const failures = watchFailures(t);
  const served = await serve(FIXED_WORLD, { token: 'a-token-of-enough-length' });
  t.after(() => served.close());
  // CONNECT too: Node hands it to a `connect` listener, not to the request handler.
  const methods = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'PURGE', 'LOCK', 'MKCOL', 'REPORT', 'SEARCH', 'LINK', 'QUERY'];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...methods), targetArb, async (method, target) => {
      const a = await send(served.port, method, target, method === 'POST' ? { 'content-length': '2', 'content-type': 'application/json' } : {});
      checkAnswer(a, undefined, `${method} ${target}`);
      assert.equal(a.status, 405, `${method} ${target}: ${a.body}`);
      assert.equal(a.headers.allow, 'GET, HEAD', `${method} ${target}`);
    }),
    { numRuns: RUNS * 2 },
  );
  assert.deepEqual(failures, []);
});

// ---------------------------------------------------------------------------------------------
// Access control

/** Tokens as `tokenFor` accepts them (16+ characters, no whitespace), some not ASCII. */
const tokenArb = fc.tuple(
  fc.string({ unit: fc.constantFrom(...'abcdefXYZ0189-_.~+/='.split('')), minLength: 16, maxLength: 40 }),
  fc.option(fc.constantFrom('é', 'ß', '💥', 'İ', 'Ω'), { nil: undefined }),
  fc.nat(40),
).map(([base, extra, at]) => (extra === undefined ? base : base.slice(0, at % base.length) + extra + base.slice(at % base.length)));

/** Tokens that are not `token` but close to it. */
const wrongTokens = (token: string): string[] => {
  const flip = [...token].map((c) => (c.toUpperCase() !== c ? c.toUpperCase() : c.toLowerCase())).join('');
  const candidates = [
    '', 'x', token.slice(0, -1), `${token}x`, `${token}${token}`, token.slice(1), `x${token}`, flip,
    token.replace(/[a-z]/, (c) => c.toUpperCase()), token.replace(/./, (c) => (c === 'a' ? 'b' : 'a')),
    token.normalize('NFD'), token.replace(/[éßİΩ💥]/u, 'e'), `${token.slice(0, -1)}é`, Buffer.from(token, 'utf8').toString('latin1'),
  ];
  return [...new Set(candidates)].filter((w) => w !== token && !/\s/.test(w) && w.isWellFormed());
};

test('tokensEqual is string equality and never throws, whatever the lengths and code units (fast-check)', () => {
  const anyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: fc.integer({ min: 0xd7fe, max: 0xe001 }).map((n) => String.fromCharCode(n)), maxLength: 4 }));
  fc.assert(fc.property(anyString, anyString, (a, b) => tokensEqual(a, b) === (a === b) && tokensEqual(a, a)), { numRuns: RUNS * 20 });
  assert.equal(tokensEqual('\ud800', '\udbff'), false, 'two lone surrogates are two different strings');
  assert.equal(tokensEqual('\ud800', '\ufffd'), false);
});

test('with a token, /healthz answers without one (a probe needs no secret), the Host check still applies', async (t) => {
  const failures = watchFailures(t);
  const open = await serve(FIXED_WORLD, { token: 'a-token-of-enough-length', loopbackListen: false });
  t.after(() => open.close());
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { cookie: `${TOKEN_COOKIE}=wrong` }] as Record<string, string>[]) {
    const a = await getAndHead(open.port, '/healthz', headers);
    assert.equal(a.status, 200, JSON.stringify(headers));
    assert.equal(a.body, 'ok\n');
  }
  assert.equal((await getAndHead(open.port, '/healthz?token=wrong')).status, 200);
  assert.equal((await getAndHead(open.port, '/api/v1/clusters')).status, 401, 'every other path still needs it');
  const loopback = await serve(FIXED_WORLD, { token: 'a-token-of-enough-length', loopbackListen: true });
  t.after(() => loopback.close());
  assert.equal((await send(loopback.port, 'GET', '/healthz', { host: 'evil.example' })).status, 421);
  assert.deepEqual(failures, []);
});

test('with a token: no token or a wrong one is refused on every path but /healthz, the right one works by header and cookie (fast-check)', { timeout: 120_000 }, async (t) => {
  const failures = watchFailures(t);
  const paths = ['/api/v1/clusters', '/api/v1/overview', '/api/v1/microservices', '/api/v1/providers?usable=true', '/api/v1/microservices/alpha/default/web', '/api/v1/openapi.yaml', '/', '/index.html', '/assets/app.js'];
  await fc.assert(
    fc.asyncProperty(tokenArb, fc.subarray(paths, { minLength: 1, maxLength: 3 }), fc.infiniteStream(fc.nat()), async (token, chosen, picks) => {
      const served = await serve(FIXED_WORLD, { token, loopbackListen: false });
      try {
        const wrong = wrongTokens(token);
        const pick = () => wrong[picks.next().value % wrong.length]!;
        for (const path of chosen) {
          const pathname = pathnameOf(path);
          const refused = async (headers: Record<string, string>, target = path) => {
            const a = await getAndHead(served.port, target, headers);
            checkAnswer(a, pathname, `GET ${target} ${JSON.stringify(headers)}`);
            assert.equal(a.status, 401, `GET ${target} with ${JSON.stringify(headers)} (token ${JSON.stringify(token)})`);
          };
          const allowed = async (headers: Record<string, string>, encoding: 'utf8' | 'latin1' = 'utf8') => {
            const a = await getAndHead(served.port, path, headers, encoding);
            checkAnswer(a, pathname, `GET ${path} ${JSON.stringify(headers)}`);
            assert.ok(a.status === 200 || a.status === 404, `GET ${path} with ${JSON.stringify(headers)} (token ${JSON.stringify(token)}): ${a.status} ${a.body}`);
          };
          await refused({});
          await refused({ authorization: `Bearer ${pick()}` });
          await refused({ authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` });
          await refused({ cookie: `${TOKEN_COOKIE}=${encodeURIComponent(pick())}` });
          await refused({ cookie: `${TOKEN_COOKIE}=%zz${encodeURIComponent(token)}` });
          await refused({ cookie: `${TOKEN_COOKIE}=${encodeURIComponent(pick())}; other=${encodeURIComponent(token)}` });
          const sep = path.includes('?') ? '&' : '?';
          if (path.startsWith('/api/')) await refused({}, `${path}${sep}token=${encodeURIComponent(token)}`);
          else await refused({}, `${path}${sep}token=${encodeURIComponent(pick())}`);
          await allowed({ authorization: `Bearer ${token}` });
          if ([...token].every((c) => c.codePointAt(0)! <= 0xff)) await allowed({ authorization: `Bearer ${token}` }, 'latin1');
          await allowed({ authorization: `bearer   ${token}` });
          await allowed({ cookie: `${TOKEN_COOKIE}=${encodeURIComponent(token)}` });
          await allowed({ cookie: `a=%zz; ${TOKEN_COOKIE}=${encodeURIComponent(token)}; b=1` });
        }
      } finally {
        await served.close();
      }
    }),
    { numRuns: Math.max(1, Math.round(RUNS / 4)) },
  );
  assert.deepEqual(failures, []);
});

test('?token= on a page: sets the cookie and redirects to the same origin and path without it (fast-check)', async (t) => {
  const failures = watchFailures(t);
  const token = 'a-token-of-enough-length';
  const served = await serve(FIXED_WORLD, { token, loopbackListen: false });
  t.after(() => served.close());
  const base = `http://127.0.0.1:${served.port}`;
  const pageArb = fc.oneof(
    fc.constantFrom('/', '/index.html', '/.//evil.example/', '/..//evil.example', '/%2e//evil.example/x', '//evil.example/', '///evil.example', '/\\evil.example', '/./\\evil.example', '/a/..//evil.example'),
    fc.string({ unit: targetChar, maxLength: 16 }).map((s) => `/${s.replace(/[?#]/g, '')}`),
  );
  await fc.assert(
    fc.asyncProperty(pageArb, fc.option(queryArb, { nil: undefined }), async (page, query) => {
      const target = `${page}?${query ? `${query}&` : ''}token=${encodeURIComponent(token)}`;
      const pathname = pathnameOf(target);
      const a = await getAndHead(served.port, target);
      checkAnswer(a, pathname, `GET ${target}`);
      // The first `token` counts: another one before it (from the random query) is refused.
      if (pathname === undefined || pathname.startsWith('/api/') || new URLSearchParams(query ?? '').has('token')) return;
      assert.equal(a.status, 303, `GET ${target}: ${a.body}`);
      assert.match(a.headers['set-cookie'] ?? '', new RegExp(`^${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/$`));
      const location = new URL(a.headers.location!, `${base}${page.startsWith('/') ? '' : '/'}`);
      assert.equal(location.origin, base, `GET ${target}: redirected to ${a.headers.location}`);
      assert.equal(location.searchParams.get('token'), null, `GET ${target}: ${a.headers.location}`);
    }),
    { numRuns: RUNS * 2 },
  );
  assert.deepEqual(failures, []);
});

test('on a loopback listen the Host must be loopback: 421 with a JSON body otherwise', async (t) => {
  const served = await serve(FIXED_WORLD);
  t.after(() => served.close());
  for (const host of ['evil.example', 'evil.example:80', '127.0.0.1.evil.example', 'localhost.evil.example', '', '[::2]:1']) {
    const a = await getAndHead(served.port, '/api/v1/clusters', { host });
    checkAnswer(a, '/api/v1/clusters', `Host ${host}`);
    assert.equal(a.status, 421, `Host ${JSON.stringify(host)}`);
  }
  for (const host of ['localhost', 'LOCALHOST:7070', '127.1.2.3', '[::1]:7070']) {
    assert.equal((await send(served.port, 'GET', '/api/v1/clusters', { host })).status, 200, `Host ${JSON.stringify(host)}`);
  }
});

// ---------------------------------------------------------------------------------------------
// The model the API reads

test('the model: its events replayed rebuild its rows and clusters, each event is a real change, usable follows reachability (fast-check)', () => {
  const opArb = fc.oneof(
    { weight: 4, arbitrary: objSpecArb(CLUSTER_NAMES).map((spec) => ({ op: 'upsert' as const, spec })) },
    { weight: 1, arbitrary: objSpecArb(CLUSTER_NAMES).map((spec) => ({ op: 'remove' as const, spec })) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('cluster' as const), name: fc.constantFrom(...CLUSTER_NAMES), reachable: fc.boolean() }) },
  );
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
      const model = new DashboardModel({ now: () => new Date('2026-03-01T00:00:00Z') });
      const rows = new Map<string, Item>();
      const clusters = new Map<string, ClusterView>();
      model.subscribe((e) => {
        if (e.type === 'upsert') {
          assert.notDeepEqual(rows.get(e.item.key), e.item, `an upsert of ${e.item.key} that changes nothing`);
          rows.set(e.item.key, e.item);
        } else if (e.type === 'delete') {
          assert.ok(rows.delete(e.key), `a delete of ${e.key}, which was not there`);
        } else if (e.type === 'cluster') {
          assert.notDeepEqual(clusters.get(e.cluster.name), e.cluster, `a cluster event for ${e.cluster.name} that changes nothing`);
          clusters.set(e.cluster.name, e.cluster);
        }
      });
      for (const o of ops) {
        if (o.op === 'cluster') model.setCluster(clusterView(o.name, o.reachable));
        else if (o.op === 'upsert') model.upsert(o.spec.cluster, o.spec.kind, kubeObject(o.spec));
        else model.remove(o.spec.cluster, o.spec.kind, kubeObject(o.spec));
        assert.deepEqual(rows, new Map(model.items().map((i) => [i.key, i])));
        assert.deepEqual([...clusters.values()].sort((a, b) => cmpText(a.name, b.name)), model.clusters());
        for (const p of model.providers()) {
          assert.equal(p.usable, p.converged && (model.cluster(p.cluster)?.reachable ?? false) && p.quota?.left !== 0, `${p.key}: usable`);
        }
      }
    }),
    { numRuns: RUNS * 5 },
  );
});

// ---------------------------------------------------------------------------------------------
// The event stream

test('the event stream: random queries never 5xx, a kind it cannot understand is a 400, the snapshot holds what was asked for (fast-check)', { timeout: 60_000 }, async (t) => {
  const failures = watchFailures(t);
  const served = await serve(FIXED_WORLD);
  t.after(() => served.close());
  const all = served.model.items();
  const streamQuery = fc.tuple(
    fc.option(fc.array(fc.constantFrom('alpha', 'constructor', 'nowhere', ''), { minLength: 1, maxLength: 3 }).map((v) => v.join(',')), { nil: undefined }),
    fc.option(fc.array(fc.constantFrom('ms', 'dhp', 'Microservice', 'DigitalHumanProvider', 'pod', 'constructor', '__proto__', ''), { minLength: 1, maxLength: 2 }).map((v) => v.join(',')), { nil: undefined }),
    fc.option(queryArb, { nil: undefined }),
  );
  await fc.assert(
    fc.asyncProperty(streamQuery, async ([cluster, kind, extra]) => {
      const params = new URLSearchParams({ snapshot: 'true', ...(cluster !== undefined ? { cluster } : {}), ...(kind !== undefined ? { kind } : {}) });
      const target = `/api/v1/events?${params}${extra ? `&${extra}` : ''}`;
      const parsed = new URL(target, 'http://x').searchParams;
      const a = await sendStreaming(served.port, target, (x) => (x.status !== 200 ? Buffer.byteLength(x.body) >= Number(x.headers['content-length']) : x.body.includes('event: snapshot') && x.body.includes('\n\n', x.body.indexOf('event: snapshot'))));
      assert.ok(a.status < 500, `GET ${target}: ${a.status}`);
      const kinds = listValues(parsed, 'kind');
      const badKind = kinds?.some((k) => !Object.hasOwn(KIND_WORDS, k.toLowerCase()));
      if (badKind) {
        checkAnswer(a, undefined, `GET ${target}`);
        assert.equal(a.status, 400, `GET ${target}`);
        return;
      }
      assert.equal(a.status, 200, `GET ${target}: ${a.body}`);
      const data = /event: snapshot\ndata: (.*)\n/.exec(a.body)?.[1];
      if (parsed.get('snapshot') !== 'true') return;
      const snapshot = JSON.parse(data!) as { clusters: ClusterView[]; microservices: Item[]; providers: Item[] };
      assertValid(EVENT_SCHEMA, snapshot, `GET ${target}: snapshot`);
      const clusters = listValues(parsed, 'cluster');
      const wanted = (i: Item) => (!clusters?.length || clusters.includes(i.cluster)) && (!kinds?.length || kinds.some((k) => KIND_WORDS[k.toLowerCase()] === i.kind));
      const keys = (items: Item[]) => items.map((i) => i.key).sort();
      assert.deepEqual(keys([...snapshot.microservices, ...snapshot.providers]), keys(all.filter(wanted)), `GET ${target}`);
      assert.deepEqual(snapshot.clusters.map((c) => c.name), FIXED_WORLD.clusters.map((c) => c.name).filter((c) => !clusters?.length || clusters.includes(c)));
    }),
    { numRuns: RUNS },
  );
  // HEAD: GET's status and headers (the stream's own), no body.
  const get = await sendStreaming(served.port, '/api/v1/events', (x) => x.status > 0);
  const head = await send(served.port, 'HEAD', '/api/v1/events');
  const strip = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => !['date', 'transfer-encoding', 'connection', 'keep-alive', 'content-length'].includes(k)));
  assert.equal(head.status, get.status);
  assert.deepEqual(strip(head.headers), strip(get.headers));
  assert.equal(head.body, '');
  assert.deepEqual(failures, []);
});
