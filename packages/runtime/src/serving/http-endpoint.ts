/**
 * The HTTP plumbing both endpoint servers share: bind, serve until the signal aborts, close
 * the socket and every open connection.
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseBindAddress, type BindAddress } from './bind-address.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

/** What the manager runs: `start` settles when stopped (or rejects when the port cannot be bound). */
export interface EndpointServer {
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
  readonly #handler: Handler;
  readonly #listening: PromiseWithResolvers<AddressInfo | undefined> = Promise.withResolvers();
  #started = false;

  constructor(name: string, address: string, handler: Handler) {
    this.#name = name;
    this.#bind = parseBindAddress(address);
    this.#handler = handler;
    this.#listening.promise.catch(() => {}); // observed through start() as well
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
    await listen(server, this.#bind).catch((err: unknown) => {
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
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        send(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
        return;
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      await this.#handler(req, res, url);
    } catch (err) {
      if (!res.headersSent) send(res, 500, `internal error: ${err instanceof Error ? err.message : String(err)}\n`);
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
  send(res, code, `${JSON.stringify(value, null, 2)}\n`, { 'content-type': 'application/json; charset=utf-8' });
}
