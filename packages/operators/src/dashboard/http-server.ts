/**
 * The dashboard's HTTP surface: the page and its assets, the read-only JSON API
 * (`/api/v1/...`, described in `openapi.yaml`) and the SSE stream of changes.
 *
 * What a caller can rely on: GET and HEAD only (any other method is 405, so nothing here can
 * change anything); every response carries the security headers (`security.ts`) and API
 * responses `cache-control: no-store`; errors are JSON `{ error, message }` with a stable
 * `error` code (`NotFound`, `BadRequest`, `MethodNotAllowed`, `Unauthorized`, `MisdirectedRequest`).
 * @module
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { requestTargetUrl } from '@converge/runtime';
import { ASSET_TYPES, type AssetName, type DashboardAssets } from './assets.ts';
import type { ClusterSource } from './cluster-source.ts';
import { objectDetail } from './detail.ts';
import type { DashboardModel } from './model.ts';
import { applySecurityHeaders, checkAccess, SECURITY_HEADERS } from './security.ts';
import { EventStream } from './sse.ts';
import { FilterError, matchesFilter, parseFilter, sortItems } from './shared/filters.ts';
import type { Sort, SortKey } from './shared/filters.ts';
import { buildOverview } from './shared/overview.ts';
import { rankProviders } from './shared/ranking.ts';
import { DASHBOARD_API_VERSION } from './shared/types.ts';
import type { Item, ItemKind, ServerEvent } from './shared/types.ts';

export interface HttpServerOptions {
  model: DashboardModel;
  sources: readonly ClusterSource[];
  assets: DashboardAssets;
  token: string | undefined;
  loopbackListen: boolean;
}

const KIND_PATHS: Record<string, ItemKind> = { microservices: 'Microservice', providers: 'DigitalHumanProvider' };
const SORT_KEYS: readonly SortKey[] = ['cluster', 'namespace', 'name', 'health', 'why', 'age', 'unconverged', 'region', 'phase', 'rank', 'quota'];

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The request target as a URL (`requestTargetUrl`); a target that is none (`http://[/`) is a 400, not a 500. */
function requestUrl(target: string | undefined): URL {
  const url = requestTargetUrl(target);
  if (!url) throw new HttpError(400, 'BadRequest', `the request target ${JSON.stringify(target)} is not a URL`);
  return url;
}

/** A path segment percent-decoded; one that does not decode (`%zz`) names nothing: 404. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(404, 'NotFound', `no such path: ${JSON.stringify(segment)} is not valid percent-encoding`);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, head: boolean): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(head ? undefined : text);
}

function sendError(res: ServerResponse, err: HttpError, head: boolean): void {
  sendJson(res, err.status, { error: err.code, message: err.message }, head);
}

function parseSort(params: URLSearchParams, fallback: Sort | undefined): Sort | undefined {
  const text = params.get('sort');
  if (!text) return fallback;
  const descending = text.startsWith('-');
  const key = (descending ? text.slice(1) : text) as SortKey;
  if (!SORT_KEYS.includes(key)) throw new HttpError(400, 'BadRequest', `sort must be one of ${SORT_KEYS.join(', ')} (prefix - for descending), got ${JSON.stringify(text)}`);
  return { key, descending };
}

/** `limit`: a positive integer; one too large for a number (`1` and 400 zeros) is no limit (Infinity), not an error. */
function parseLimit(params: URLSearchParams): number | undefined {
  const text = params.get('limit');
  if (text === null) return undefined;
  const n = Number(text);
  if (n === Infinity && /^[0-9]+$/.test(text)) return n;
  if (!Number.isInteger(n) || n <= 0) throw new HttpError(400, 'BadRequest', `limit must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

function filterFrom(params: URLSearchParams) {
  try {
    return parseFilter(params);
  } catch (err) {
    if (err instanceof FilterError) throw new HttpError(400, 'BadRequest', err.message);
    throw err;
  }
}

export function createDashboardServer(options: HttpServerOptions): Server {
  const { model, sources, assets } = options;
  const byName = new Map(sources.map((s) => [s.name, s]));

  const list = (kind: ItemKind, params: URLSearchParams) => {
    const filter = filterFrom(params);
    const limit = parseLimit(params);
    let items: Item[] = (kind === 'Microservice' ? model.microservices() : model.providers()).filter((i) => matchesFilter(i, filter));
    // Providers come best first (the upstream's pick, see shared/ranking.ts); `sort` reorders.
    if (kind === 'DigitalHumanProvider') items = rankProviders(items as never);
    const sort = parseSort(params, kind === 'Microservice' ? { key: 'cluster', descending: false } : undefined);
    if (sort) items = sortItems(items, sort);
    const total = items.length;
    return {
      apiVersion: DASHBOARD_API_VERSION,
      kind: kind === 'Microservice' ? 'MicroserviceList' : 'ProviderList',
      total,
      items: limit === undefined ? items : items.slice(0, limit),
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    applySecurityHeaders(res);
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.setHeader('allow', 'GET, HEAD');
      throw new HttpError(405, 'MethodNotAllowed', `${req.method} is not allowed: the dashboard is read-only`);
    }
    const url = requestUrl(req.url);
    const access = checkAccess(req, url, { token: options.token, loopbackListen: options.loopbackListen });
    if (access.ok === 'redirect') {
      res.writeHead(303, { location: access.location, ...(access.cookie ? { 'set-cookie': access.cookie } : {}), 'cache-control': 'no-store' });
      res.end();
      return;
    }
    if (!access.ok) {
      if (access.status === 401) res.setHeader('www-authenticate', 'Bearer realm="converge-dashboard"');
      throw new HttpError(access.status, access.status === 421 ? 'MisdirectedRequest' : 'Unauthorized', access.message);
    }
    const path = url.pathname;
    const params = url.searchParams;

    if (path === '/' || path === '/index.html') return sendAsset(res, 'index.html', head);
    if (path === '/assets/app.js') return sendAsset(res, 'app.js', head);
    if (path === '/assets/app.css') return sendAsset(res, 'app.css', head);
    if (path === '/api/v1/openapi.yaml') return sendAsset(res, 'openapi.yaml', head);
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(head ? undefined : 'ok\n');
      return;
    }
    // Judged now, and pushed to the model first: the rows below agree with the clusters' state.
    const clusterViews = path.startsWith('/api/') ? sources.map((s) => s.view()) : [];
    if (path === '/api/v1/clusters') {
      return sendJson(res, 200, { apiVersion: DASHBOARD_API_VERSION, kind: 'ClusterList', items: clusterViews }, head);
    }
    if (path === '/api/v1/overview') {
      const limit = parseLimit(params) ?? 10;
      return sendJson(res, 200, { apiVersion: DASHBOARD_API_VERSION, kind: 'Overview', ...buildOverview(model.items(), sources.map((s) => s.name), limit) }, head);
    }
    if (path === '/api/v1/microservices') return sendJson(res, 200, list('Microservice', params), head);
    if (path === '/api/v1/providers') return sendJson(res, 200, list('DigitalHumanProvider', params), head);
    if (path === '/api/v1/events') return openStream(req, res, params, head);

    const m = /^\/api\/v1\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const [, kindPath, cluster, namespace, name] = m.map(decodeSegment) as [string, string, string, string, string];
      const kind = Object.hasOwn(KIND_PATHS, kindPath) ? KIND_PATHS[kindPath] : undefined;
      if (!kind) throw new HttpError(404, 'NotFound', `unknown kind ${JSON.stringify(kindPath)}: use microservices or providers`);
      const source = byName.get(cluster);
      if (!source) throw new HttpError(404, 'NotFound', `no cluster named ${JSON.stringify(cluster)}`);
      const detail = await objectDetail(model, source, kind, namespace, name);
      if (!detail) throw new HttpError(404, 'NotFound', `${kind} ${namespace}/${name} not found in cluster ${cluster}`);
      return sendJson(res, 200, detail, head);
    }
    throw new HttpError(404, 'NotFound', `no such path: ${path}`);
  };

  const sendAsset = (res: ServerResponse, name: AssetName, head: boolean): void => {
    const body = assets.get(name)!;
    res.writeHead(200, { 'content-type': ASSET_TYPES[name], 'content-length': body.length, 'cache-control': 'no-cache' });
    res.end(head ? undefined : body);
  };

  const openStream = (req: IncomingMessage, res: ServerResponse, params: URLSearchParams, head: boolean): void => {
    // Read as the lists read them (repeated or comma-separated, empty values ignored): `cluster=`
    // alone is no filter, not a filter that nothing passes.
    const { cluster: clusters, kind: kinds } = filterFrom(new URLSearchParams([...params].filter(([k]) => k === 'cluster' || k === 'kind')));
    if (head) {
      // The headers the stream sends (sse.ts), without the stream.
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
      res.end();
      return;
    }
    const wanted = (e: ServerEvent): boolean => {
      if (e.type === 'snapshot') return true;
      if (e.type === 'cluster') return !clusters || clusters.includes(e.cluster.name);
      const cluster = e.type === 'upsert' ? e.item.cluster : e.cluster;
      const kind = e.type === 'upsert' ? e.item.kind : e.kind;
      return (!clusters || clusters.includes(cluster)) && (!kinds || kinds.includes(kind));
    };
    // A source's view() judges its cluster again and may tell the model of a change: asked before
    // the stream listens, so that the snapshot is its first event. All of this is synchronous, so
    // nothing can change between the views, the subscription and the snapshot.
    const snapshot = params.get('snapshot') === 'true';
    const views = snapshot ? sources.map((s) => s.view()) : [];
    let unsubscribe = () => {};
    const stream = new EventStream(res, () => unsubscribe());
    unsubscribe = model.subscribe((e) => {
      if (wanted(e)) stream.send(e);
    });
    if (snapshot) {
      const keep = (i: Item) => (!clusters || clusters.includes(i.cluster)) && (!kinds || kinds.includes(i.kind));
      stream.send({
        type: 'snapshot',
        clusters: views.filter((c) => !clusters || clusters.includes(c.name)),
        microservices: model.microservices().filter(keep),
        providers: model.providers().filter(keep),
      });
    }
    req.socket.setTimeout(0);
  };

  const server = createServer({ requestTimeout: 0, headersTimeout: 10_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const e = err instanceof HttpError ? err : new HttpError(500, 'InternalError', (err as Error).message);
      sendError(res, e, req.method === 'HEAD');
    });
  });
  // Node gives CONNECT to this event, not to the handler above (without a listener it drops the
  // connection): the same 405 as every other method, written on the socket.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    const body = JSON.stringify({ error: 'MethodNotAllowed', message: 'CONNECT is not allowed: the dashboard is read-only' });
    const headers = { ...SECURITY_HEADERS, allow: 'GET, HEAD', 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body), connection: 'close' };
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
  });
  return server;
}

/** Listens; resolves with the bound address. */
export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: host || undefined, port }, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
