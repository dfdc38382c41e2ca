/**
 * The HTTP plumbing both endpoint servers share: bind, serve until the signal aborts, close
 * the socket and every open connection.
 *
 * With `tls` (the metrics server's HTTPS; never the probe server's, which the kubelet reads
 * without TLS configuration) the server is HTTPS, TLS 1.2 at least, with the certificate a
 * `CertificateSource` gives: nothing is bound until its first certificate (`listening()` waits
 * for it), each later one is swapped in with `setSecureContext` (new connections get it, open
 * ones keep theirs; a pair TLS refuses is thrown back to the source, which retries it, and the
 * old one stays served), and plain HTTP on the port gets no answer (the handshake fails, the
 * connection is closed). Stopped before the first certificate: `listening()` resolves
 * `undefined`, `start` settles. A source that fails (or returns) before its first certificate
 * makes `start` reject. `start` settles only once the source has returned.
 * @module
 */
import type { IncomingMessage, ServerResponse, Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Logger } from 'pino';
import { parseBindAddress, type BindAddress } from './bind-address.ts';
import { requestTargetUrl } from './request-target.ts';
import { describeError } from '../logging/index.ts';
import type { CertificateSource, ServingCertificate } from '../webhook/certificates.ts';

// Not `import { createServer } from 'node:http'`: that loads Node's bundled undici and http2
// (≈ 2 MB of heap) for nothing (see client/transport.ts). `node:https` is loaded only for TLS.
const { createServer } = process.getBuiltinModule('node:http');

/** HTTPS for an endpoint: its certificates, and where to say that one was loaded. */
export interface EndpointTls {
  certificates: CertificateSource;
  log?: Logger;
}

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
  readonly #tls: EndpointTls | undefined;
  readonly #listening: PromiseWithResolvers<AddressInfo | undefined> = Promise.withResolvers();
  #started = false;

  constructor(name: string, address: string, handler: Handler, options: { tls?: EndpointTls } = {}) {
    this.#name = name;
    this.#address = address;
    this.#bind = parseBindAddress(address);
    this.#handler = handler;
    this.#tls = options.tls;
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
    const tls = this.#tls ? await this.#firstCertificate(this.#tls, signal) : undefined;
    if (tls === null) return; // stopped before the first certificate
    const options = { keepAliveTimeout: 5_000, requestTimeout: 30_000 };
    const serve = (req: IncomingMessage, res: ServerResponse): void => void this.#serve(req, res);
    let server: Server | HttpsServer;
    try {
      server = tls ? tls.serve(options, serve) : createServer(options, serve);
    } catch (err) {
      this.#listening.reject(err); // a first certificate TLS refuses
      await tls?.giveUp(err);
      throw err;
    }
    // Every socket, from accept on: over TLS `closeAllConnections()` knows only those past the
    // handshake (a client that connects and never handshakes would hold `stop`).
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
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
    try {
      await listen(server, this.#bind);
    } catch (cause) {
      const err = new ListenError(this.#name, this.#address, cause);
      this.#listening.reject(err);
      await tls?.giveUp(err);
      throw err;
    }
    this.#listening.resolve(server.address() as AddressInfo);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    await tls?.stopped;
  }

  /**
   * Starts the certificate source and waits for its first certificate: then how to make the
   * HTTPS server (which gets every later certificate), how to stop the source when the server
   * cannot start, and the source's end; `null` when the signal aborted first (`listening()`
   * resolved `undefined`, the source stopped). Rejects (and so does `listening()`) when the source
   * failed or returned before it gave a certificate.
   */
  async #firstCertificate(tls: EndpointTls, signal: AbortSignal): Promise<{
    serve(options: { keepAliveTimeout: number; requestTimeout: number }, handler: (req: IncomingMessage, res: ServerResponse) => void): HttpsServer;
    giveUp(err: unknown): Promise<void>;
    stopped: Promise<void>;
  } | null> {
    const first = Promise.withResolvers<ServingCertificate>();
    // The source runs until the signal aborts or the server fails to start; either way `start`
    // waits for it to return, so nothing of this server runs (or logs) after `start` settles.
    const failed = new AbortController();
    const sourceSignal = AbortSignal.any([signal, failed.signal]);
    let server: HttpsServer | undefined;
    let current: ServingCertificate | undefined;
    const stopped = tls.certificates.start(sourceSignal, (cert) => {
      if (sourceSignal.aborted) return; // handed over while stopping: neither served nor logged
      // Swapped in first: a pair TLS refuses throws to the source (which retries it) and the
      // certificate served stays as it was.
      server?.setSecureContext({ cert: cert.certPem, key: cert.keyPem });
      current = cert;
      tls.log?.info({ notAfter: new Date(cert.notAfter).toISOString() }, `${this.#name} serving certificate loaded`);
      first.resolve(cert);
    }).then(
      () => first.reject(new Error(`${this.#name} server: the certificate source stopped before it gave a certificate`)),
      (err: unknown) => first.reject(err),
    );
    const giveUp = async (err: unknown): Promise<void> => {
      failed.abort(err);
      await stopped;
    };
    const aborted = Promise.withResolvers<null>();
    const onAbort = (): void => aborted.resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    let cert: ServingCertificate | null;
    try {
      cert = await Promise.race([first.promise, aborted.promise]);
    } catch (err) {
      if (!signal.aborted) this.#listening.reject(err);
      else this.#listening.resolve(undefined);
      await giveUp(err);
      if (signal.aborted) return null;
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (cert === null) {
      this.#listening.resolve(undefined);
      await giveUp(signal.reason);
      return null;
    }
    const { createServer: createHttpsServer } = process.getBuiltinModule('node:https');
    return {
      // The latest certificate: one that came after the first, before the server, is not lost.
      serve: (options, handler) => (server = createHttpsServer({ ...options, cert: (current ?? cert).certPem, key: (current ?? cert).keyPem, minVersion: 'TLSv1.2' }, handler)),
      giveUp,
      stopped,
    };
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

function listen(server: Server | HttpsServer, bind: BindAddress): Promise<void> {
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
