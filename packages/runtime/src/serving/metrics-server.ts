/**
 * `/metrics` (Prometheus text format from a prom-client registry) and `/debug/<name>` JSON,
 * optionally behind an authorizer (`metrics-auth.ts`): then every path, `/debug` and unknown ones
 * included, is answered only once the authorizer allows it (401/403/503 otherwise, the same for a
 * path that exists and one that does not).
 * @module
 */
import type { Registry } from 'prom-client';
import { HttpEndpoint, send, sendJson, type EndpointServer } from './http-endpoint.ts';
import { describeError } from '../logging/index.ts';
import type { AuthorizationVerdict, MetricsAuthorizer } from './metrics-auth.ts';

/**
 * Feeds a debug endpoint; receives the query parameters (e.g. `?limit=20`). Its value is sent as
 * JSON; a `DebugQueryError` it throws is a 400 with its message, anything else a 500.
 */
export type DebugProvider = (params: URLSearchParams) => unknown | Promise<unknown>;

/** A debug endpoint's query it cannot answer (a bad parameter): answered 400 with the message. */
export class DebugQueryError extends Error {
  override readonly name = 'DebugQueryError';
}

export interface MetricsServerOptions {
  /** `host:port`, `:port`, or `0` to disable. */
  address: string;
  registry: Registry;
  /** Debug endpoints by name: `{ unconverged: ... }` serves `/debug/unconverged`. */
  debug?: Record<string, DebugProvider>;
  /**
   * Checks every request before it is served (e.g. `kubernetesAuthorizer`: TokenReview and
   * SubjectAccessReview); a refusal is answered with its code and message, an authorizer that
   * throws with 503. Absent: every request is served.
   */
  authorize?: MetricsAuthorizer;
}

export interface MetricsServer extends EndpointServer {
  addDebug(name: string, provider: DebugProvider): void;
}

export function createMetricsServer(options: MetricsServerOptions): MetricsServer {
  const debug = new Map(Object.entries(options.debug ?? {}));
  const authorize = options.authorize;
  const endpoint = new HttpEndpoint('metrics', options.address, async (req, res, url) => {
    if (authorize) {
      let verdict: AuthorizationVerdict | undefined;
      try {
        verdict = await authorize({ authorization: req.headers.authorization, path: url.pathname });
      } catch {
        verdict = undefined;
      }
      // Anything but an explicit allow is a refusal; a verdict that is not one of the three
      // refusals (a custom authorizer's mistake) is a 503, never the endpoint.
      if (verdict?.allowed !== true) {
        const code = verdict?.code === 401 || verdict?.code === 403 ? verdict.code : 503;
        const message = typeof verdict?.message === 'string' ? verdict.message : 'service unavailable: the request could not be authorized';
        send(res, code, `${message}\n`, code === 401 ? { 'www-authenticate': 'Bearer' } : {});
        return;
      }
    }
    if (url.pathname === '/metrics') {
      const body = await options.registry.metrics();
      send(res, 200, body, { 'content-type': options.registry.contentType });
      return;
    }
    if (url.pathname === '/debug' || url.pathname === '/debug/') {
      sendJson(res, 200, { endpoints: [...debug.keys()].map((n) => `/debug/${n}`) });
      return;
    }
    const m = /^\/debug\/([^/]+)\/?$/.exec(url.pathname);
    const provider = m ? debug.get(m[1]!) : undefined;
    if (!provider) {
      send(res, 404, 'not found\n');
      return;
    }
    try {
      sendJson(res, 200, await provider(url.searchParams));
    } catch (err) {
      // Neither `instanceof` (a Proxy's getPrototypeOf trap) nor `String(err)` may throw here:
      // that answered a text/plain 500 carrying what they threw, or nothing at all.
      let queryError = false;
      try {
        queryError = err instanceof DebugQueryError;
      } catch { /* a 500 */ }
      sendJson(res, queryError ? 400 : 500, { error: describeError(err) });
    }
  });
  return {
    name: endpoint.name,
    start: (signal) => endpoint.start(signal),
    listening: () => endpoint.listening(),
    addDebug(name, provider) {
      if (debug.has(name)) throw new Error(`debug endpoint ${name} is already registered`);
      debug.set(name, provider);
    },
  };
}
