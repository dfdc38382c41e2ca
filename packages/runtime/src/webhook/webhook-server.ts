/**
 * The webhook server: HTTPS on `bindAddress` (default `:9443`), JSON in and out, one handler per
 * path (`/convert` for CRD conversion). Run by the manager on every replica, leader or not: the
 * API server calls whichever replica its Service picks.
 *
 * Guarantees: `start(signal)` obtains a certificate from its `CertificateSource` before it
 * listens (a server never answers with no or a stale certificate), swaps certificates in place
 * when the source renews them (open connections keep theirs, new ones get the new one; a renewed
 * pair TLS refuses is not swapped in, and the source's callback throws), and
 * settles when the signal aborts, after closing the socket and every connection: idle ones (and
 * those still in the TLS handshake or the headers of a request) at once, those with a request in
 * flight once it is answered
 * (with `Connection: close`) or `drainMs` (1.5 s) passed, whichever is first. It rejects when the address cannot be bound
 * or the first certificate cannot be used (`listening()` then rejects too). Whichever way it
 * settles, its certificate source has returned first (a pair handed over after the signal
 * aborted is neither served nor logged): nothing of the server runs after `start` settles.
 * `ready()` is true only while listening with a certificate (a manager readiness check).
 * Requests: POST only (405 otherwise); `application/json` bodies (415 for another declared media
 * type; none declared is taken as JSON) up to `maxBodyBytes` (32 MiB), 413 beyond, answered as
 * soon as the declared or received length exceeds it (the rest of the body is read and dropped,
 * never buffered, for at most the 30 s request timeout, so a client still sending receives the
 * 413 and the connection stays usable); a body that is not JSON 400; a handler that throws 500
 * with its message. A handler's answer is sent as JSON, whatever its type; one that is
 * `undefined` or cannot be encoded (a cycle, a BigInt) is a 500 naming the path. Unknown paths
 * 404; a request target that is not a URL 400. A client that goes away mid-request is not an
 * error (no request ever becomes an unhandled rejection).
 * @module
 */
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Counter, Histogram } from 'prom-client';
import { loadPromClient } from '../metrics/index.ts';
import type { Registry } from 'prom-client';
import { ListenError, parseBindAddress, requestTargetUrl } from '../serving/index.ts';
import type { CertificateSource, ServingCertificate } from './certificates.ts';
import type { ConversionRegistry } from './conversion.ts';

export type WebhookHandler = (body: unknown) => unknown | Promise<unknown>;

export interface WebhookServerOptions {
  /** `host:port` or `:port` (default `:9443`); `0` disables the server. */
  bindAddress?: string;
  certificates: CertificateSource;
  log?: Logger;
  /** Registers the webhook metrics here (the manager's registry). */
  registry?: Registry;
  /** The largest request body accepted, in bytes (default 32 MiB); larger ones get a 413. */
  maxBodyBytes?: number;
  /**
   * On stop, how long requests whose headers were received (their body still arriving, or being
   * handled) may run on to their answer
   * (default 1.5 s; a conversion takes milliseconds): the API server sends a conversion once, and
   * one cut off fails the client's request. New connections are refused from the stop on, idle
   * ones closed at once.
   */
  drainMs?: number;
}

const MAX_BODY = 32 * 1024 * 1024;
/** The TLS alerts of a client that does not trust the certificate it was shown. */
const REFUSED_CERTIFICATE = /ALERT_(BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN)$/;

export class WebhookServer {
  readonly #opts: WebhookServerOptions;
  readonly #handlers = new Map<string, WebhookHandler>();
  readonly #listening: PromiseWithResolvers<AddressInfo | undefined> = Promise.withResolvers();
  readonly #requests: Counter<'path' | 'code'> | undefined;
  readonly #conversions: Counter<'kind' | 'from' | 'to' | 'result'> | undefined;
  readonly #conversionTime: Histogram<'kind' | 'from' | 'to'> | undefined;
  readonly #refusals: Counter | undefined;
  #certificate: ServingCertificate | undefined;
  #server: Server | undefined;
  #started = false;

  constructor(options: WebhookServerOptions) {
    this.#opts = options;
    this.#listening.promise.catch(() => undefined);
    const registers = options.registry ? [options.registry] : [];
    if (options.registry) {
      const { Counter, Histogram } = loadPromClient();
      this.#requests = new Counter({ name: 'converge_webhook_requests_total', help: 'Webhook requests by path and HTTP status code', labelNames: ['path', 'code'], registers });
      this.#conversions = new Counter({ name: 'converge_webhook_conversions_total', help: 'Objects converted by the conversion webhook, by kind, version pair and result', labelNames: ['kind', 'from', 'to', 'result'], registers });
      this.#conversionTime = new Histogram({ name: 'converge_webhook_conversion_duration_seconds', help: 'Time to convert one object, by kind and version pair', labelNames: ['kind', 'from', 'to'], buckets: [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05], registers });
      this.#refusals = new Counter({ name: 'converge_webhook_certificate_refusals_total', help: 'TLS handshakes a client ended because it does not trust the serving certificate (bad certificate, unknown CA): the API server trusts another CA', registers });
    }
  }

  /** Serves `handler` at `path` (e.g. `/convert`). */
  handle(path: string, handler: WebhookHandler): this {
    if (this.#handlers.has(path)) throw new Error(`webhook path ${path} is already served`);
    this.#handlers.set(path, handler);
    return this;
  }

  /** Serves CRD conversion for every kind in `registry` at `path` (default `/convert`). */
  serveConversion(registry: ConversionRegistry, path = '/convert'): this {
    return this.handle(path, (body) =>
      registry.review(body, (e) => {
        this.#conversions?.inc({ kind: e.kind, from: e.from, to: e.to, result: e.ok ? 'success' : 'failure' });
        this.#conversionTime?.observe({ kind: e.kind, from: e.from, to: e.to }, e.seconds);
      }),
    );
  }

  /** The bound address once listening (`undefined` when disabled); rejects when binding failed. */
  listening(): Promise<AddressInfo | undefined> {
    return this.#listening.promise;
  }

  /** The CA of the current certificate, when the source knows it (self-managed). */
  caPem(): string | undefined {
    return this.#certificate?.caPem;
  }

  ready(): { ok: boolean; detail?: string } {
    if (this.#server?.listening && this.#certificate) return { ok: true };
    return { ok: false, detail: this.#certificate ? 'not listening yet' : 'waiting for a serving certificate' };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error('webhook server already started');
    this.#started = true;
    const bind = parseBindAddress(this.#opts.bindAddress ?? ':9443');
    if (!bind) {
      this.#listening.resolve(undefined);
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      return;
    }
    const first = Promise.withResolvers<void>();
    // The source runs until the signal aborts or this server fails to start; either way `start`
    // waits for it to return, so nothing of this server runs (or logs) after `start` settles.
    const failed = new AbortController();
    const sourceSignal = AbortSignal.any([signal, failed.signal]);
    const certificates = this.#opts.certificates.start(sourceSignal, (cert) => {
      if (sourceSignal.aborted) return; // handed over while stopping: neither served nor logged
      // Swapped in first: a pair TLS refuses throws to the source (which retries it) and leaves the
      // certificate served, and the one `caPem()` reports, as they were.
      this.#server?.setSecureContext({ cert: cert.certPem, key: cert.keyPem });
      this.#certificate = cert;
      this.#opts.log?.info({ notAfter: new Date(cert.notAfter).toISOString() }, 'webhook serving certificate loaded');
      first.resolve();
    }).catch((err: unknown) => first.reject(err));
    /** Start failed (or was stopped) before serving: say so to `listening()`, stop the source, wait for it. */
    const giveUp = async (err: unknown): Promise<void> => {
      this.#listening.reject(err);
      failed.abort();
      await certificates;
    };
    try {
      await Promise.race([first.promise, new Promise<void>((_, reject) => (signal.aborted ? reject(signal.reason) : signal.addEventListener('abort', () => reject(signal.reason), { once: true })))]);
    } catch (err) {
      await giveUp(err);
      if (signal.aborted) return;
      throw err;
    }
    const cert = this.#certificate!;
    // Every socket, from accept on: `closeAllConnections()` knows only those past the TLS handshake.
    const sockets = new Set<Socket>();
    // The responses of requests in flight, by their connection's remote address and port (the
    // request's socket is the TLS socket; `sockets` holds the TCP ones under them).
    const inFlight = new Map<string, ServerResponse>();
    const peer = (socket: Socket): string => `${socket.remoteAddress}|${socket.remotePort}`;
    let stopping: (() => void) | undefined;
    let server: Server;
    try {
      server = this.#server = createServer({ cert: cert.certPem, key: cert.keyPem, minVersion: 'TLSv1.2', keepAliveTimeout: 30_000, requestTimeout: 30_000 }, (req, res) => {
        const connection = peer(req.socket);
        inFlight.set(connection, res);
        if (stopping) res.shouldKeepAlive = false;
        res.once('close', () => {
          inFlight.delete(connection);
          stopping?.();
        });
        void this.#serve(req, res).catch((err: unknown) => {
          this.#opts.log?.error({ err }, 'webhook request failed');
          res.destroy();
        });
      });
      server.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      // A client that does not trust our certificate says so with an alert (Go: bad certificate;
      // OpenSSL: unknown CA): the CA it trusts may have changed, so the source looks again.
      server.on('tlsClientError', (err: NodeJS.ErrnoException) => {
        if (!REFUSED_CERTIFICATE.test(err.code ?? '')) return;
        this.#refusals?.inc();
        this.#opts.log?.debug({ err }, 'a client refused the serving certificate; looking at the certificate source again');
        this.#opts.certificates.recheck?.();
      });
      await new Promise<void>((resolve, reject) => {
        // As the metrics and probe servers say it: which server, which address, what to do.
        const refused = (cause: unknown) => reject(new ListenError('webhook', this.#opts.bindAddress ?? ':9443', cause));
        server.once('error', refused);
        server.listen(bind.port, bind.host, () => {
          server.off('error', refused);
          resolve();
        });
      });
    } catch (err) {
      await giveUp(err);
      throw err;
    }
    this.#listening.resolve(server.address() as AddressInfo);
    this.#opts.log?.info({ address: server.address() }, 'webhook server listening');
    await new Promise<void>((resolve) => {
      const stop = () => {
        server.close(() => resolve());
        // Whatever has no request in flight goes now; the rest is answered first (see the header).
        const closeIdle = () => {
          for (const socket of sockets) if (!inFlight.has(peer(socket))) socket.destroy();
        };
        for (const res of inFlight.values()) if (!res.headersSent) res.shouldKeepAlive = false;
        const deadline = setTimeout(() => {
          server.closeAllConnections();
          for (const socket of sockets) socket.destroy();
        }, this.#opts.drainMs ?? 1_500);
        deadline.unref();
        server.once('close', () => clearTimeout(deadline));
        stopping = closeIdle;
        closeIdle();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    await certificates;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = requestTargetUrl(req.url)?.pathname;
    const send = (code: number, contentType: string, text: string) => {
      this.#requests?.inc({ path: path !== undefined && this.#handlers.has(path) ? path : 'other', code: String(code) });
      res.writeHead(code, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const answer = (code: number, message: string) => send(code, 'text/plain; charset=utf-8', message);
    if (path === undefined) return answer(400, 'the request target is not a URL\n');
    const handler = this.#handlers.get(path);
    if (!handler) return answer(404, `no webhook at ${path}\n`);
    if (req.method !== 'POST') return answer(405, 'POST only\n');
    if (!isJsonMediaType(req.headers['content-type'])) return answer(415, 'the body must be application/json\n');
    let raw: Buffer | undefined;
    try {
      raw = await readBody(req, this.#opts.maxBodyBytes ?? MAX_BODY);
    } catch {
      return; // the client went away mid-body: nobody to answer
    }
    if (!raw) return answer(413, 'request body too large\n');
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return answer(400, 'the body is not JSON\n');
    }
    let result: unknown;
    try {
      result = await handler(body);
    } catch (err) {
      this.#opts.log?.error({ err, path }, 'webhook handler failed');
      return answer(500, `${err instanceof Error ? err.message : String(err)}\n`);
    }
    let text: string | undefined;
    try {
      text = JSON.stringify(result);
    } catch (err) {
      this.#opts.log?.error({ err, path }, 'webhook handler gave an answer that is not JSON');
      return answer(500, `the handler at ${path} gave an answer that is not JSON\n`);
    }
    if (text === undefined) {
      this.#opts.log?.error({ path }, 'webhook handler gave no answer');
      return answer(500, `the handler at ${path} gave no answer\n`);
    }
    send(200, 'application/json', text);
  }
}

/**
 * Whether a request's `Content-Type` says JSON: `application/json` with any parameters, in any
 * case; a request without one is taken as JSON (the API server always sends it).
 */
function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const semicolon = header.indexOf(';');
  return (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase() === 'application/json';
}

/**
 * The body of `req`, or `undefined` as soon as its declared or received length exceeds `max`.
 * The rest of a body that is too large is read and dropped: destroying the request instead would
 * leave the socket unread (a client still sending stalls until the request timeout) or reset it
 * before the client has read the 413. Rejects when the client goes away mid-body.
 */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number(req.headers['content-length'] ?? 0) > max;
    if (over) resolve(undefined);
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      over = true;
      chunks.length = 0;
      resolve(undefined);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    // Closed before its end without an error: settled all the same, so nothing waits for ever.
    req.once('close', () => {
      if (!req.complete) reject(new Error('the client went away mid-body'));
    });
  });
}
