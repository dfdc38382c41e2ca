/**
 * The HTTP plumbing both endpoint servers share: bind, serve until the signal aborts, close
 * the socket and every open connection.
 * @module
 */
import type { IncomingMessage, ServerResponse, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { finished } from 'node:stream/promises';
import { parseBindAddress, type BindAddress } from './bind-address.ts';
import { requestTargetUrl } from './request-target.ts';
import { describeError } from '../logging/index.ts';

// Not `import { createServer } from 'node:http'`: that loads Node's bundled undici and http2
// (≈ 2 MB of heap) for nothing (see client/transport.ts).
const { createServer } = process.getBuiltinModule('node:http');

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

/** Binding the server's address failed (the port is taken, the host is not local, no permission). */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  /** Which server: `metrics`, `probe` or `webhook`. */
  readonly server: string;
  /** The bind address as configured. */
  readonly address: string;
  /** The system error code, e.g. `EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`. */
  readonly code: string | undefined;

  constructor(server: string, address: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const why =
      code === 'EADDRINUSE' ? 'the address is already in use (EADDRINUSE)'
        : code === 'EACCES' ? 'permission denied (EACCES)'
          : code === 'EADDRNOTAVAIL' ? 'no such local address (EADDRNOTAVAIL)'
            : cause instanceof Error ? cause.message : String(cause);
    super(`${server} server cannot listen on ${address}: ${why}`, { cause });
    this.server = server;
    this.address = address;
    this.code = code;
  }
}

/** What the manager runs: `start` settles when stopped (or rejects with a `ListenError` when the address cannot be bound). */
export interface EndpointServer {
  /** `metrics` or `probe`, for logs and errors. */
  readonly name: string;
  start(signal: AbortSignal): Promise<void>;
  /**
   * Resolves with the bound address once listening (useful with port 0), or `undefined` when the
   * server is disabled (address `0`). Rejects when binding failed.
   */
  listening(): Promise<AddressInfo | undefined>;
}

export class HttpEndpoint implements EndpointServer {
  readonly #bind: BindAddress | undefined;
  readonly #name: string;
  readonly #address: string;
  readonly #handler: Handler;
  readonly #listening: PromiseWithResolvers<AddressInfo | undefined> = Promise.withResolvers();
  #started = false;

  constructor(name: string, address: string, handler: Handler) {
    this.#name = name;
    this.#address = address;
    this.#bind = parseBindAddress(address);
    this.#handler = handler;
    this.#listening.promise.catch(() => {}); // observed through start() as well
  }

  get name(): string {
    return this.#name;
  }

  listening(): Promise<AddressInfo | undefined> {
    return this.#listening.promise;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`${this.#name} server already started`);
    this.#started = true;
    if (!this.#bind) {
      this.#listening.resolve(undefined);
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      return;
    }
    if (signal.aborted) {
      this.#listening.resolve(undefined);
      return;
    }
    const server = createServer({ keepAliveTimeout: 5_000, requestTimeout: 30_000 }, (req, res) => {
      void this.#serve(req, res);
    });
    // Node hands CONNECT to this event, not to the handler above, and without a listener drops
    // the connection without a word: the 405 every other method gets instead (the dashboard's
    // server does the same). Destroyed once written, so that a client that never closes its end
    // does not keep the socket (which closeAllConnections no longer tracks) and `stop` waiting.
    server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
      socket.on('error', () => {});
      const body = 'method not allowed\n';
      socket.end(
        'HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\ncache-control: no-store\r\n'
          + `x-content-type-options: nosniff\r\nallow: GET, HEAD\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        () => socket.destroy(),
      );
    });
    await listen(server, this.#bind).catch((cause: unknown) => {
      const err = new ListenError(this.#name, this.#address, cause);
      this.#listening.reject(err);
      throw err;
    });
    this.#listening.resolve(server.address() as AddressInfo);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        server.close(() => resolve());
        server.closeAllConnections();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      // Read (and drop) the request's body before answering: no route reads one, and an answer
      // sent first, the connection then closed (`connection: close`, HTTP/1.0) while the client
      // is still sending its body, resets the connection: a client reading after it has sent
      // loses the answer. Node's requestTimeout bounds a body that never ends.
      req.resume();
      try {
        await finished(req);
      } catch {
        return; // the client went away mid-body: no one to answer
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        send(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
        return;
      }
      const url = requestTargetUrl(req.url);
      if (!url) {
        send(res, 400, 'the request target is not a URL\n');
        return;
      }
      await this.#handler(req, res, url);
    } catch (err) {
      // describeError, not `String(err)`: formatting what a handler threw must not throw again,
      // or this promise rejects unhandled (`void` above) and the request is never answered.
      if (!res.headersSent) send(res, 500, `internal error: ${describeError(err)}\n`);
      else res.destroy();
    }
  }
}

function listen(server: Server, bind: BindAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen({ port: bind.port, ...(bind.host ? { host: bind.host } : {}) }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

export function send(res: ServerResponse, code: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(code, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

export function sendJson(res: ServerResponse, code: number, value: unknown): void {
  // `undefined` (or a function) has no JSON: `null`, so that the body is always JSON.
  send(res, code, `${JSON.stringify(value, null, 2) ?? 'null'}\n`, { 'content-type': 'application/json; charset=utf-8' });
}
