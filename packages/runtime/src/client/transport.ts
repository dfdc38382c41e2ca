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
 * - `proxy-url` sends every request through that HTTP(S) proxy (CONNECT for https).
 * - A request resolves when the response headers arrive; the body is the caller's to read. The
 *   caller's signal aborts the request and its body; `headersTimeoutMs` bounds the wait for
 *   headers alone (watches, whose body has no time limit).
 * - A 401 makes the credentials fetch fresh ones for the next request (exec plugins, token
 *   files); the request itself is not retried.
 * - When an exec plugin returns a new client certificate, new connections use it; open ones
 *   (watches) keep theirs until they end.
 * @module
 */
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Credentials, TlsMaterial } from '../kubeconfig/index.ts';

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

// `import … from 'node:http'` makes Node 24 evaluate every export of the module, which loads
// its bundled undici and http2 (≈ 2 MB of heap, 10 MB of RSS) for nothing; this does not.
const { Agent: HttpAgentClass, request: httpRequest } = process.getBuiltinModule('node:http');

const IDLE_SOCKET_MS = 30_000;

export class Transport {
  readonly #credentials: Credentials;
  #agent: HttpAgent | undefined;
  #agentTlsId = '';
  /** Agents replaced by a new client certificate: still carrying open watches until close. */
  readonly #retired: HttpAgent[] = [];

  constructor(credentials: Credentials) {
    this.#credentials = credentials;
  }

  async send(req: TransportRequest): Promise<IncomingMessage> {
    const credentials = this.#credentials;
    const auth = await credentials.headers();
    const agent = await this.#agentFor(credentials.protocol === 'https:' ? await credentials.tls() : undefined);
    const headers: Record<string, string> = { ...req.headers, ...auth };
    if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
    const url = `${credentials.server}${req.path}`;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = credentials.protocol === 'https:' ? httpsRequest : httpRequest;
      const r = send(url, { method: req.method, headers, agent, signal: req.signal }, resolve);
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
      r.end(req.body);
    });
    if (res.statusCode === 401 && credentials.dynamic) credentials.invalidate();
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
    const common = {
      keepAlive: true,
      timeout: IDLE_SOCKET_MS,
      // Node ≥ 24.5: the agent sends requests through the proxy (CONNECT for https).
      ...(proxyUrl ? { proxyEnv: { HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl } } : {}),
    };
    this.#agent = tls
      ? new HttpsAgent({
          ...common,
          ...(tls.ca ? { ca: tls.ca } : {}),
          ...(tls.cert ? { cert: tls.cert, key: tls.key } : {}),
          rejectUnauthorized: tls.rejectUnauthorized,
          ...(tls.servername ? { servername: tls.servername } : {}),
        })
      : new HttpAgentClass(common);
    this.#agentTlsId = id;
    return this.#agent;
  }
}

/** Reads a whole body as text. */
export async function readText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}
