/**
 * `/metrics` (Prometheus text format from a prom-client registry) and `/debug/<name>` JSON,
 * optionally behind an authorizer (`metrics-auth.ts`): then every path, `/debug` and unknown ones
 * included, is answered only once the authorizer allows it (401/403/503 otherwise, the same for a
 * path that exists and one that does not). Optionally over HTTPS (`certificates`, controller-runtime's
 * SecureServing): then the port speaks TLS 1.2+ only, is bound once the first certificate has
 * come, and serves each later one to new connections without a restart (`http-endpoint.ts`).
 * @module
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { HttpEndpoint, send, sendJson, type EndpointServer } from './http-endpoint.ts';
import { describeError } from '../logging/index.ts';
import type { AuthorizationVerdict, MetricsAuthorizer } from './metrics-auth.ts';
import type { CertificateSource } from '../webhook/certificates.ts';

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
  /**
   * Serve HTTPS (TLS 1.2 or later) with the certificates of this source: `certDirCertificates(dir)`
   * (`tls.crt`/`tls.key`, re-read when they change), or a self-signed certificate made in memory,
   * `selfManagedCertificates({ store: memoryCaStore() })`. Nothing is bound until the source's
   * first certificate; later ones are served to new connections without a restart. Absent: plain HTTP.
   */
  certificates?: CertificateSource;
  /** Where an HTTPS server says that it loaded a certificate (info). */
  log?: Logger;
}

export interface MetricsServer extends EndpointServer {
  addDebug(name: string, provider: DebugProvider): void;
}

export function createMetricsServer(options: MetricsServerOptions): MetricsServer {
  const debug = new Map(Object.entries(options.debug ?? {}));
  const authorize = options.authorize;
  const tls = options.certificates ? { tls: { certificates: options.certificates, ...(options.log ? { log: options.log } : {}) } } : {};
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
  }, tls);
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
