/**
 * Test support: a fault-injecting HTTP(S) proxy in front of the real local API server, so the
 * runtime's data path meets the traffic real networks and API servers produce — bodies cut at
 * any byte (inside multi-byte characters too), watches closed early (cleanly or abruptly), a
 * write's response held until after its watch event, 410 / 504 "Too large resource version" /
 * 429 with Retry-After / 500 answers, 404 for an object that exists (its CRD briefly not serving
 * it), latency and slow bodies. Nothing above the proxy is faked: every answer that is not
 * injected is the API server's own.
 *
 * Design: the proxy terminates TLS with its own certificate (a CA generated for it, written into
 * the kubeconfig it hands out, so the client verifies it like any server) and re-originates each
 * request to the API server with the credentials of the kubeconfig it was built from. Passing
 * TLS through would keep the bodies encrypted, and cutting them at chosen byte offsets, parsing
 * watch events to hold a write until its event, or answering in the server's place all need the
 * plaintext. Identity is kept by building one proxy per kubeconfig (an admin proxy, a
 * ServiceAccount proxy); the client's own credentials are not forwarded.
 *
 * `proxy.kubeconfigPath` is a kubeconfig pointing at the proxy (HTTPS); `httpUrl` serves the same
 * over plain HTTP. `setFaults(mix)` changes the background mix at any time; `inject(rule)` and
 * `holdWrites(rule)` add targeted faults; `stats()` counts what was done.
 * @module
 */
import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Agent, createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Credentials, KubeConfig } from '@converge/runtime';
import { prepareTls } from '../../packages/operators/src/vendor-sim/certs.ts';
import { LineFramer } from '../../packages/runtime/src/client/line-framer.ts';

/** The background faults applied to all traffic. */
export interface FaultMix {
  /** Probability that a response chunk (a watch event, a piece of a body) is cut; 0 disables. */
  split: number;
  /**
   * Cut into at most this many pieces (≥ 2). Cuts prefer offsets inside multi-byte characters: a
   * cut chunk that holds one is always cut inside one at least once.
   */
  maxPieces: number;
  /** Probability that a watch is closed early. */
  closeWatch: number;
  /** An early close happens after this many ms (uniform in the range). */
  closeWatchAfterMs: [number, number];
  /** Share of early closes that reset the connection instead of ending the response cleanly. */
  abruptShare: number;
  /** Added before each request is forwarded (uniform in the range, ms). */
  latencyMs: [number, number];
}

export const NO_FAULTS: FaultMix = { split: 0, maxPieces: 2, closeWatch: 0, closeWatchAfterMs: [0, 0], abruptShare: 0, latencyMs: [0, 0] };

/** What the suites run with: splits everywhere, early watch closes, some latency. */
export const DEFAULT_FAULTS: FaultMix = { split: 1, maxPieces: 3, closeWatch: 0.5, closeWatchAfterMs: [500, 8_000], abruptShare: 0.5, latencyMs: [0, 10] };

export interface RequestMatch {
  method?: string;
  /** Tested against the path (without the query). */
  path?: RegExp;
  /** Only watches (true) or only non-watch requests (false). */
  watch?: boolean;
  /** Only requests whose `resourceVersion` parameter is a number at most this one. */
  resourceVersionAtMost?: number;
  /** Only list pages after the first (a `continue` token given: true) or only first pages (false). */
  continued?: boolean;
}

export interface InjectRule {
  match: RequestMatch;
  /** Answer in the API server's place. */
  /**
   * `continueInStatus`: a 410 for a continued list page carries a continue token in its Status,
   * as kube-apiserver's for a token compacted away (`handleCompactedErrorForPaging`: go on from
   * the same key, inconsistently); the proxy gives the request's own token, which goes on from
   * the same key too.
   */
  answer?: { status: 404 | 410 | 429 | 500 | 504; retryAfterSeconds?: number; asWatchEvent?: boolean; continueInStatus?: boolean };
  /** Forward, but send the response body at this rate. */
  bytesPerSecond?: number;
  /** How many matching requests this rule takes (default: all). */
  times?: number;
}

export interface HoldRule {
  match: RequestMatch;
  /** Release once a watch has delivered the write's own event (`own-event`) or a later event of the same object (`later-event`). */
  until: 'own-event' | 'later-event';
  /** Release anyway after this long (default 10 s). */
  timeoutMs?: number;
  /** Called while the response is held, with the object the API server returned. */
  onHeld?: (object: any) => void | Promise<void>;
  times?: number;
}

export interface ProxyStats {
  requests: number;
  watches: number;
  cuts: number;
  /** Cuts that fell inside a multi-byte UTF-8 character. */
  cutsInsideCharacters: number;
  closedCleanly: number;
  closedAbruptly: number;
  injected: Record<string, number>;
  held: number;
  /** Watches open now. */
  openWatches: number;
  /** Requests open to the API server now. */
  upstreamOpen: number;
  /** Response bytes per resource (plural, `/status` kept), per metadata-only or full. */
  bytes: Record<string, number>;
}

export interface FaultProxy {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>`: the same proxy in plain HTTP. */
  readonly httpUrl: string;
  /** A kubeconfig whose server is `url` and whose CA is the proxy's. */
  readonly kubeconfigPath: string;
  readonly caPem: string;
  setFaults(mix: Partial<FaultMix>): void;
  inject(rule: InjectRule): () => void;
  holdWrites(rule: HoldRule): () => void;
  /** Ends every watch open now (cleanly, or by resetting the connection). */
  closeWatches(abrupt?: boolean): void;
  /**
   * An etcd restore, as clients see it: from now on every watch from a resourceVersion this proxy
   * has already delivered (in a list, event or bookmark) answers 504 Too large resource version;
   * open watches are closed. Lists pass. Returns a function that ends it.
   */
  restore(match?: RequestMatch): () => void;
  stats(): ProxyStats;
  close(): Promise<void>;
}

interface WatchEventSeen {
  resource: string;
  key: string;
  rv: bigint;
}

export async function startFaultProxy(options: { kubeconfigPath: string; faults?: Partial<FaultMix>; seed?: number }): Promise<FaultProxy> {
  const upstreamConfig = new KubeConfig();
  upstreamConfig.loadFromFile(options.kubeconfigPath);
  const upstream = new URL(upstreamConfig.getCurrentCluster()!.server);
  const credentials = new Credentials(upstreamConfig);
  const { ca, cert, key } = await credentials.tls();
  const upstreamAgent = new Agent({ keepAlive: true, maxSockets: 256, ca, cert, key });
  const upstreamHeaders = await credentials.headers();

  const dir = mkdtempSync(join(tmpdir(), 'converge-fault-proxy-'));
  const tls = await prepareTls(join(dir, 'tls'), '127.0.0.1');
  let mix: FaultMix = { ...NO_FAULTS, ...options.faults };
  let seed = (options.seed ?? Date.now()) >>> 0;
  const random = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let x = seed;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const between = ([a, b]: [number, number]) => a + random() * (b - a);
  const stats: ProxyStats = { requests: 0, watches: 0, cuts: 0, cutsInsideCharacters: 0, closedCleanly: 0, closedAbruptly: 0, injected: {}, held: 0, openWatches: 0, upstreamOpen: 0, bytes: {} };
  const rules = new Set<InjectRule & { left: number }>();
  const holds = new Set<HoldRule & { left: number }>();
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const seen: WatchEventSeen[] = [];
  const sockets = new Set<Socket>();
  /** Set by `close()`: a request still on its way through (reading its body, delayed) goes no further. */
  let closing = false;
  const openWatches = new Set<{ abort(abrupt: boolean): void }>();
  /** The highest resourceVersion any response has carried to a client. */
  let delivered = 0;
  const noteVersion = (text: string) => {
    const m = /"resourceVersion":"(\d+)"/.exec(text);
    if (m && Number(m[1]) > delivered) delivered = Number(m[1]);
  };

  const matches = (m: RequestMatch, req: IncomingMessage, url: URL, watch: boolean) => {
    if (m.method && m.method !== req.method) return false;
    if (m.path && !m.path.test(url.pathname)) return false;
    if (m.watch !== undefined && m.watch !== watch) return false;
    if (m.continued !== undefined && m.continued !== Boolean(url.searchParams.get('continue'))) return false;
    if (m.resourceVersionAtMost !== undefined) {
      const rv = url.searchParams.get('resourceVersion');
      if (!rv || !/^\d+$/.test(rv) || Number(rv) > m.resourceVersionAtMost) return false;
    }
    return true;
  };
  const take = <R extends { left: number }>(set: Set<R>, test: (r: R) => boolean): R | undefined => {
    for (const r of set) {
      if (!test(r)) continue;
      if (--r.left <= 0) set.delete(r);
      return r;
    }
    return undefined;
  };

  /** Writes `chunk`, cut into pieces (preferably inside multi-byte characters), a tick apart. */
  const send = async (res: ServerResponse, chunk: Buffer, bytesPerSecond?: number) => {
    const pieces: Buffer[] = [];
    if (mix.split > 0 && chunk.length > 1 && random() < mix.split) {
      const inside: number[] = [];
      for (let i = 1; i < chunk.length; i++) if ((chunk[i]! & 0xc0) === 0x80) inside.push(i);
      const cuts = new Set<number>();
      const n = 1 + Math.floor(random() * Math.max(1, mix.maxPieces - 1));
      for (let k = 0; k < n; k++) {
        // The first cut is inside a character whenever the chunk has one, so a test that sends
        // multi-byte text through a splitting proxy always exercises a split character.
        const useInside = inside.length > 0 && (k === 0 || random() < 0.7);
        cuts.add(useInside ? inside[Math.floor(random() * inside.length)]! : 1 + Math.floor(random() * (chunk.length - 1)));
      }
      let at = 0;
      for (const c of [...cuts].sort((a, b) => a - b)) {
        pieces.push(chunk.subarray(at, c));
        stats.cuts++;
        if ((chunk[c]! & 0xc0) === 0x80) stats.cutsInsideCharacters++;
        at = c;
      }
      pieces.push(chunk.subarray(at));
    } else pieces.push(chunk);
    for (let i = 0; i < pieces.length; i++) {
      if (bytesPerSecond) await sleep((pieces[i]!.length / bytesPerSecond) * 1000);
      // Checked after every wait: the client may have gone (a request timed out or aborted while
      // a slowed body was in flight) and the response been ended; a write then would be an
      // ERR_STREAM_WRITE_AFTER_END 'error' that no one handles.
      if (res.destroyed || res.writableEnded) return;
      res.write(pieces[i]);
      if (i < pieces.length - 1) await sleep(2); // a separate TCP segment and TLS record, read apart
    }
  };

  const answer = (res: ServerResponse, rule: NonNullable<InjectRule['answer']>, watch: boolean, url: URL) => {
    const rv = url.searchParams.get('resourceVersion') ?? '0';
    const status = {
      // What kube-apiserver answers for a custom resource while its CRD does not serve the
      // requested version or subresource (its handler falls through to the 404 at the end).
      404: { reason: 'NotFound', message: 'the server could not find the requested resource (injected)', details: {} },
      410: { reason: 'Expired', message: `too old resource version: ${rv} (injected by the fault proxy)` },
      429: { reason: 'TooManyRequests', message: 'the server has received too many requests and has asked us to try again later (injected)', details: { retryAfterSeconds: rule.retryAfterSeconds ?? 1 } },
      500: { reason: 'InternalError', message: 'Internal error occurred: injected by the fault proxy' },
      504: { reason: 'Timeout', message: `Timeout: Too large resource version: ${rv}, current: 1 (injected)`, details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 } },
    }[rule.status];
    const token = rule.continueInStatus ? url.searchParams.get('continue') : null;
    const body = { kind: 'Status', apiVersion: 'v1', metadata: token ? { continue: token } : {}, status: 'Failure', code: rule.status, ...status };
    stats.injected[String(rule.status)] = (stats.injected[String(rule.status)] ?? 0) + 1;
    if (watch && rule.asWatchEvent) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: body })}\n`);
      return;
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (rule.status === 429) headers['retry-after'] = String(rule.retryAfterSeconds ?? 1);
    res.writeHead(rule.status, headers);
    res.end(JSON.stringify(body));
  };

  const waitForEvent = (resource: string, key: string, rv: bigint, later: boolean, timeoutMs: number) =>
    new Promise<void>((resolve) => {
      const ok = (e: WatchEventSeen) => e.resource === resource && e.key === key && (later ? e.rv > rv : e.rv >= rv);
      if (seen.some(ok)) return resolve();
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        events.off('event', onEvent);
        resolve();
      }
      function onEvent(e: WatchEventSeen) {
        if (ok(e)) done();
      }
      events.on('event', onEvent);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    // The client may go while its body is read or its latency waited out: what was sent upstream
    // by then is cut with it, and nothing is sent after (a watch opened upstream for no one would
    // stay open until its next event or bookmark, and keep the test's process alive till then).
    let upstreamReq: ReturnType<typeof httpsRequest> | undefined;
    let gone = false;
    res.once('close', () => {
      gone = true;
      upstreamReq?.destroy();
    });
    const url = new URL(req.url ?? '/', upstream);
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const resource = resourceOf(url.pathname);
    const metadataOnly = /as=PartialObjectMetadata/.test(String(req.headers.accept ?? ''));
    const bytesKey = `${resource}${metadataOnly ? ' (metadata)' : ''}`;
    if (watch) stats.watches++;
    const body = await readAll(req);
    const latency = between(mix.latencyMs);
    if (latency > 0) await sleep(latency);
    const rule = take(rules, (r) => matches(r.match, req, url, watch));
    if (rule?.answer) return answer(res, rule.answer, watch, url);
    const hold = req.method !== 'GET' ? take(holds, (h) => matches(h.match, req, url, watch)) : undefined;

    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !['host', 'authorization', 'connection', 'content-length'].includes(k)) headers[k] = String(v);
    Object.assign(headers, upstreamHeaders);
    if (body.length) headers['content-length'] = String(body.length);
    if (gone || closing) {
      res.destroy();
      return;
    }
    upstreamReq = httpsRequest({ protocol: 'https:', hostname: upstream.hostname, port: upstream.port, path: `${url.pathname}${url.search}`, method: req.method, headers, agent: upstreamAgent });
    stats.upstreamOpen++;
    upstreamReq.once('close', () => stats.upstreamOpen--);
    upstreamReq.on('error', () => res.destroy());
    upstreamReq.end(body);
    upstreamReq.on('response', async (up) => {
      const outHeaders = { ...up.headers };
      delete outHeaders['content-length'];
      delete outHeaders['transfer-encoding'];
      delete outHeaders.connection;
      if (hold) {
        const text = await readAll(up);
        stats.bytes[bytesKey] = (stats.bytes[bytesKey] ?? 0) + text.length;
        let object: any;
        try {
          object = JSON.parse(text.toString('utf8'));
        } catch {
          object = undefined;
        }
        const rv = object?.metadata?.resourceVersion;
        if (up.statusCode && up.statusCode < 300 && object?.metadata && /^\d+$/.test(rv ?? '')) {
          stats.held++;
          const key = `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
          const released = waitForEvent(resourceOf(url.pathname).replace(/\/status$/, ''), key, BigInt(rv), hold.until === 'later-event', hold.timeoutMs ?? 10_000);
          await hold.onHeld?.(object);
          await released;
          await sleep(50); // the client has read the event before this response starts
        }
        res.writeHead(up.statusCode ?? 502, outHeaders);
        await send(res, text);
        res.end();
        return;
      }
      res.writeHead(up.statusCode ?? 502, outHeaders);
      res.flushHeaders();
      let closeTimer: NodeJS.Timeout | undefined;
      const closer = {
        abort(abrupt: boolean) {
          upstreamReq?.destroy();
          if (abrupt) {
            stats.closedAbruptly++;
            res.socket?.destroy();
          } else {
            stats.closedCleanly++;
            res.end();
          }
        },
      };
      if (watch) openWatches.add(closer);
      res.on('close', () => openWatches.delete(closer));
      if (watch && up.statusCode === 200 && mix.closeWatch > 0 && random() < mix.closeWatch) {
        const abrupt = random() < mix.abruptShare;
        closeTimer = setTimeout(() => closer.abort(abrupt), between(mix.closeWatchAfterMs));
      }
      const framer = watch ? new LineFramer() : undefined;
      let first = true;
      try {
        for await (const chunk of up as AsyncIterable<Buffer>) {
          stats.bytes[bytesKey] = (stats.bytes[bytesKey] ?? 0) + chunk.length;
          if (res.writableEnded || res.destroyed) break;
          if (framer) {
            // Watch events are forwarded line by line (so events are known, for holds), each cut anew.
            for (const line of framer.push(chunk)) {
              noteVersion(line.slice(0, 600));
              await send(res, Buffer.from(`${line}\n`, 'utf8'), rule?.bytesPerSecond);
              noteEvent(resource, line); // once written: a held write is released after its event is out
            }
          } else {
            if (first) noteVersion(chunk.subarray(0, 300).toString('latin1'));
            first = false;
            await send(res, chunk, rule?.bytesPerSecond);
          }
        }
        if (!res.writableEnded && !res.destroyed) res.end();
      } catch {
        res.destroy();
      } finally {
        clearTimeout(closeTimer);
      }
    });
  };

  const noteEvent = (resource: string, line: string) => {
    if (holds.size === 0 && seen.length === 0) return;
    try {
      const e = JSON.parse(line) as { object?: { metadata?: { namespace?: string; name?: string; resourceVersion?: string } } };
      const m = e.object?.metadata;
      if (!m?.resourceVersion || !/^\d+$/.test(m.resourceVersion) || !m.name) return;
      const seenEvent = { resource, key: `${m.namespace ?? ''}/${m.name}`, rv: BigInt(m.resourceVersion) };
      seen.push(seenEvent);
      if (seen.length > 2_000) seen.splice(0, 1_000);
      events.emit('event', seenEvent);
    } catch {
      // not an event line
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => res.destroy());
  };
  const track = (server: Server) => server.on('connection', (s: Socket) => {
    s.setNoDelay(true);
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const https = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, onRequest);
  https.on('secureConnection', (s: Socket) => s.setNoDelay(true));
  const http = createHttpServer(onRequest);
  track(https);
  track(http);
  await Promise.all([https, http].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  const url = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
  const httpUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fault-proxy', cluster: { server: url, 'certificate-authority-data': Buffer.from(tls.caPem).toString('base64') } }],
    users: [{ name: 'through-proxy', user: {} }],
    contexts: [{ name: 'fault-proxy', context: { cluster: 'fault-proxy', user: 'through-proxy' } }],
    'current-context': 'fault-proxy',
  }));

  return {
    url,
    httpUrl,
    kubeconfigPath,
    caPem: tls.caPem,
    setFaults(m) {
      mix = { ...mix, ...m };
    },
    inject(rule) {
      const r = { ...rule, left: rule.times ?? Number.POSITIVE_INFINITY };
      rules.add(r);
      return () => rules.delete(r);
    },
    holdWrites(rule) {
      const h = { ...rule, left: rule.times ?? Number.POSITIVE_INFINITY };
      holds.add(h);
      if (seen.length === 0) seen.push({ resource: '', key: '', rv: 0n }); // start remembering events
      return () => holds.delete(h);
    },
    restore(match = {}) {
      const r = { match: { ...match, watch: true, resourceVersionAtMost: delivered }, answer: { status: 504 as const }, left: Number.POSITIVE_INFINITY };
      rules.add(r);
      for (const w of [...openWatches]) w.abort(false);
      return () => rules.delete(r);
    },
    closeWatches(abrupt = false) {
      for (const w of [...openWatches]) w.abort(abrupt);
    },
    stats: () => ({ ...structuredClone(stats), openWatches: openWatches.size }),
    async close() {
      closing = true;
      for (const s of sockets) s.destroy();
      await Promise.all([https, http].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      upstreamAgent.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `deployments`, `services/status`, … from an API path. */
export function resourceOf(path: string): string {
  const parts = path.split('/').filter(Boolean);
  // /api/v1/[namespaces/ns/]plural[/name[/sub]] or /apis/group/version/[namespaces/ns/]plural[/name[/sub]]
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [plural, , sub] = rest;
  return sub ? `${plural}/${sub}` : (plural ?? '');
}

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
