/**
 * A tiny loopback HTTP endpoint that lets other processes (test files run by `node --test`)
 * operate a control plane owned by this process: stop/start the API server, compact, back up and
 * restore etcd.
 *
 * Routes (POST, empty body, JSON answer): /apiserver/stop (`?graceful=1` for SIGTERM instead of
 * a crash), /apiserver/start, /etcd/compact (→ {"revision": n}), /etcd/backup, /etcd/restore
 * (see `ControlPlane`). Calls are serialized; errors answer 500 with {"error": message}.
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControlPlane } from './launcher.ts';

export interface ControlEndpoint {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the routes for `cp` on a free loopback port. */
export async function serveControlEndpoint(cp: ControlPlane): Promise<ControlEndpoint> {
  let chain: Promise<unknown> = Promise.resolve();
  const routes: Record<string, (q: URLSearchParams) => Promise<unknown>> = {
    '/apiserver/stop': async (q) => (await cp.stopApiServer({ graceful: q.get('graceful') === '1' }), {}),
    '/apiserver/start': async () => (await cp.startApiServer(), {}),
    '/etcd/compact': async () => ({ revision: await cp.compactEtcd() }),
    '/etcd/backup': async () => (await cp.backupEtcd(), {}),
    '/etcd/restore': async () => (await cp.restoreEtcd(), {}),
  };
  const server: Server = createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://127.0.0.1');
    } catch {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"the request target is not a URL"}');
      return;
    }
    const route = req.method === 'POST' && Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
    req.resume();
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const run = chain.then(() => route(url.searchParams));
    chain = run.catch(() => {});
    run.then(
      (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (err: Error) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err.message })),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Client side: calls a route of a control endpoint. */
export async function callControlEndpoint(url: string, route: string): Promise<Record<string, unknown>> {
  const resp = await fetch(`${url}${route}`, { method: 'POST', signal: AbortSignal.timeout(180_000) });
  const body = (await resp.json()) as Record<string, unknown>;
  if (!resp.ok) throw new Error(`control endpoint ${route}: ${String(body.error ?? resp.status)}`);
  return body;
}
