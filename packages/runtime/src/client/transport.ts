/**
 * The HTTP transport under `KubeClient`: Node's own `http`/`https` with keep-alive agents
 * (ADR 0025: `undici` cost ≈ 11 MB of heap and 0.12 s to load, for what `node:https` does).
 *
 * Contracts:
 * - HTTP/1.1 with keep-alive and no cap on sockets: each watch holds its own connection, so
 *   watches never starve requests. Idle sockets close after 30 s (before the API server's own
 *   idle timeout, so a reused socket is never one the server is closing).
 * - `https://` servers use the kubeconfig's CA, client certificate, `tls-server-name` and
 *   `insecure-skip-tls-verify`; `http://` servers (kubectl proxy) get none of it.
 * - `proxy-url` sends every request through that proxy: HTTP(S) (CONNECT for https), or SOCKS5,
 *   which is asked for the server by name, as kubectl asks.
 * - A request resolves when the response headers arrive; the body is the caller's to read. The
 *   caller's signal aborts the request and its body; `headersTimeoutMs` bounds the wait for
 *   headers alone (watches, whose body has no time limit).
 * - A 401 makes the credentials fetch fresh ones for the next request (exec plugins, token
 *   files), unless they were already replaced since the request was sent (a late 401 for the
 *   old ones runs no plugin again); the request itself is not retried.
 * - When an exec plugin returns a new client certificate, new connections use it; open ones
 *   (watches) keep theirs until they end.
 * @module
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { checkServerIdentity, createSecureContext } from 'node:tls';
import type { PeerCertificate, SecureContext } from 'node:tls';
import type * as SocksModule from 'socks-proxy-agent';
import type { Credentials, TlsMaterial } from '../kubeconfig/index.ts';
import { loadOnFirstUse } from '../loading/index.ts';

export interface TransportRequest {
  method: string;
  /** Path and query, e.g. `/api/v1/pods?limit=500`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Fail when no response headers arrived in this time (default: no bound but the signal). */
  headersTimeoutMs?: number;
}

/** A request that got no answer within its headers timeout. */
export class HeadersTimeoutError extends Error {
  override readonly name = 'HeadersTimeoutError';
  readonly code = 'UND_ERR_HEADERS_TIMEOUT';
}

/** The caller's signal aborted the request (its reason is the `cause`). */
class RequestAbortedError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'ABORT_ERR';
}

// `import … from 'node:http'` makes Node 24 evaluate every export of the module, which loads
// its bundled undici and http2 (≈ 2 MB of heap, 10 MB of RSS) for nothing; this does not.
const { Agent: HttpAgentClass, request: httpRequest } = process.getBuiltinModule('node:http');

const IDLE_SOCKET_MS = 30_000;

/**
 * The request's signal aborted while its credentials were still being obtained (an exec
 * credential plugin still running): nothing was sent to the API server.
 */
export class CredentialsNotReadyError extends Error {
  override readonly name = 'CredentialsNotReadyError';
}

/** `credentials`, unless `signal` aborts first (then `CredentialsNotReadyError`; the signal's reason when it already had). */
async function beforeAbort<T>(credentials: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw signal.reason;
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new CredentialsNotReadyError('the credentials were still being obtained (an exec credential plugin had not finished)'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([credentials, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

export class Transport {
  readonly #credentials: Credentials;
  #agent: HttpAgent | undefined;
  #agentTlsId = '';
  /** Agents replaced by a new client certificate: still carrying open watches until close. */
  readonly #retired: HttpAgent[] = [];
  /** Where requests go, parsed from the server URL once. */
  readonly #target: Target;

  constructor(credentials: Credentials) {
    this.#credentials = credentials;
    this.#target = targetOf(credentials.server);
  }

  async send(req: TransportRequest): Promise<IncomingMessage> {
    const credentials = this.#credentials;
    const { signal } = req;
    // An exec credential plugin may take its time (a login prompt nobody answers, a hung
    // helper): the request's signal (the caller's stop, the request timeout) is not held by it.
    const auth = await beforeAbort(credentials.headers(), signal);
    const tls = credentials.protocol === 'https:' ? await beforeAbort(credentials.tls(), signal) : undefined;
    const agent = await this.#agentFor(tls);
    const headers: Record<string, string | string[]> = { ...req.headers, ...auth };
    // The body as bytes: Node sends the header block in the encoding of a *string* body written
    // with it (UTF-8) and as Latin-1 otherwise, so header values (impersonated names, sent as the
    // Latin-1 string of their UTF-8 bytes by `Credentials`) would reach the API server one way for
    // a GET and another for a POST. A Buffer body makes it Latin-1 for every request.
    const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
    if (body !== undefined) headers['content-length'] = String(body.length);
    const target = this.#target;
    if (signal.aborted) throw signal.reason;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = credentials.protocol === 'https:' ? httpsRequest : httpRequest;
      // The server's URL is parsed once (not per request), and the signal is watched here rather
      // than through the request's `signal` option (which adds stream-end tracking to every
      // request): less CPU and garbage per request on a cold start (issue 17).
      const r: ClientRequest = send({ ...target, path: `${target.path}${req.path}`, method: req.method, headers, agent }, resolve);
      const onAbort = (): void => {
        r.destroy(new RequestAbortedError('the request was aborted', { cause: signal.reason }));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      // 'close' comes when the response has been read to its end, or the connection ended early.
      r.once('close', () => signal.removeEventListener('abort', onAbort));
      let timer: NodeJS.Timeout | undefined;
      if (req.headersTimeoutMs) {
        timer = setTimeout(() => r.destroy(new HeadersTimeoutError(`no response headers within ${req.headersTimeoutMs} ms`)), req.headersTimeoutMs);
        timer.unref();
        r.once('response', () => clearTimeout(timer));
      }
      r.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      r.end(body);
    });
    if (res.statusCode === 401 && credentials.dynamic) credentials.invalidate({ authorization: auth.authorization as string | undefined, tlsId: tls?.id });
    return res;
  }

  /** Destroys every connection, open watches included; later requests open new ones. */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
    this.#agentTlsId = '';
    for (const a of this.#retired.splice(0)) a.destroy();
  }

  async #agentFor(tls: TlsMaterial | undefined): Promise<HttpAgent> {
    const id = tls?.id ?? 'http';
    if (this.#agent && this.#agentTlsId === id) return this.#agent;
    if (this.#agent) this.#retired.push(this.#agent);
    const proxyUrl = this.#credentials.proxyUrl;
    if (proxyUrl?.startsWith('socks5:')) {
      this.#agent = this.#socksAgent(proxyUrl, tls);
      this.#agentTlsId = id;
      return this.#agent;
    }
    const common = {
      keepAlive: true,
      timeout: IDLE_SOCKET_MS,
      // Node ≥ 24.5: the agent sends requests through the proxy (CONNECT for https).
      ...(proxyUrl ? { proxyEnv: { HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl } } : {}),
    };
    this.#agent = tls
      ? new HttpsAgent({
          ...common,
          // One TLS context for every connection, built once per certificate (given as `ca`,
          // `cert` and `key`, Node parses the PEM texts again for each new connection and puts
          // them into the pool key it computes for every request).
          secureContext: secureContextOf(tls),
          rejectUnauthorized: tls.rejectUnauthorized,
          // SNI: what Node would otherwise derive from the Host header on every request — the
          // host, unless it is an IP address (then none is sent, and the certificate is checked
          // against the address).
          servername: tls.servername || serverNameFor(this.#target.hostname),
        })
      : new HttpAgentClass(common);
    this.#agentTlsId = id;
    return this.#agent;
  }

  /**
   * An agent whose connections go through a SOCKS5 proxy (`socks-proxy-agent`, loaded only then),
   * asking the proxy for the server by name as kubectl's dialer does (`socks5h`), with the same
   * TLS checks as a direct connection. The certificate is checked against `tls-server-name` or the
   * server's host, also when that is an IP address (the proxied TLS socket is given no host).
   */
  #socksAgent(proxyUrl: string, tls: TlsMaterial | undefined): HttpAgent {
    const { SocksProxyAgent } = loadOnFirstUse<typeof SocksModule>('socks-proxy-agent');
    const url = new URL(proxyUrl);
    url.protocol = 'socks5h:';
    const expected = tls?.servername || this.#target.hostname;
    const agent = new SocksProxyAgent(url, {
      keepAlive: true,
      timeout: IDLE_SOCKET_MS,
      ...(tls
        ? {
            secureContext: secureContextOf(tls),
            rejectUnauthorized: tls.rejectUnauthorized,
            ...(serverNameFor(expected) ? { servername: expected } : {}),
            checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(expected, cert),
          }
        : {}),
    });
    // Its own `timeout` would destroy a socket in use after that long without data (a quiet
    // watch); the agent's option alone closes idle sockets, as for a direct connection.
    agent.timeout = null;
    return agent;
  }
}

/** Where requests go: the server URL's parts, parsed once. `path` is its path prefix, if any. */
interface Target {
  protocol: string;
  hostname: string;
  port: string;
  path: string;
}

function targetOf(server: string): Target {
  const url = new URL(server);
  return {
    protocol: url.protocol,
    // `[::1]` in a URL, `::1` for a connection.
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    path: url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, ''),
  };
}

/** The CA and client certificate as one TLS context, built once per certificate. */
function secureContextOf(tls: TlsMaterial): SecureContext {
  return createSecureContext({ ...(tls.ca ? { ca: tls.ca } : {}), ...(tls.cert ? { cert: tls.cert, key: tls.key } : {}) });
}

function serverNameFor(hostname: string): string {
  return isIP(hostname) ? '' : hostname;
}

/**
 * Reads a whole body as text; rejects if the response ends before its body does. Decodes once,
 * after the last chunk, so a character split between chunks stays whole.
 */
export function readText(res: IncomingMessage): Promise<string> {
  // Ended (or failed) between its headers and this call: no event is coming any more.
  if (res.errored) return Promise.reject(res.errored);
  if (res.destroyed) return Promise.reject(new Error('the response ended before its body was complete'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    res.once('error', reject);
    res.once('close', () => {
      if (!ended) reject(new Error('the response ended before its body was complete'));
    });
  });
}
