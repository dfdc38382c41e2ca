/**
 * Model-based differential test of the dashboard's live event stream over the wire: the real
 * HTTP server (`http-server.ts`, `sse.ts`) over a `DashboardModel`, a TCP fault proxy (in this
 * file) between it and the client, undici's WHATWG `EventSource` as the browser's, and the page's
 * own `Store` (`web/store.ts`) connected through `Store.connect`. Whatever the program does, once
 * the wire is quiet the page must show exactly what the model holds.
 *
 * Searched (fast-check): random programs over 1–3 clusters (named as the dashboard allows: `.`,
 * `_`, `-`, digits, `constructor`, `toString`; given in any order) that interleave
 * - model operations: upserts of new and changed Microservices and DigitalHumanProviders
 *   (re-created under the same name too), removals (mostly of rows it holds), cluster state
 *   changes (reachable, unreachable, connecting) pushed at once or only when the server next
 *   asks the source (`view()` before each answer and each snapshot, as `ClusterSource` does;
 *   the changes that causes then reach a stream just before its snapshot), with awkward text
 *   wherever the API takes free text (images, messages, reasons, regions, endpoints, display
 *   names, provider IDs, watch errors and warnings): 2-, 3- and 4-byte UTF-8, emoji and ZWJ
 *   sequences, flags, combining marks, U+2028/U+2029, lone CR, CRLF, LF LF, NUL, BOM, NEL, lone
 *   surrogates, U+FFFD and U+FFFF, and lines that look like SSE fields (`data: `, `event: `,
 *   `id: `, `retry: `, `: comment`), short and kilobytes long;
 * - transport faults: every server write cut into pieces at random places (preferably inside
 *   multi-byte characters and right after line ends, so a piece ends between the two LFs of an
 *   event or inside a chunk header), latency, connections cut now or after N more bytes (mid-
 *   event), cleanly (FIN) or abruptly (RST), connection attempts refused, and a reverse proxy
 *   answering 502/503/504 in the dashboard's place for a while (nginx while the dashboard
 *   restarts);
 * - how the program starts: the page live before the first step, or racing its first connection;
 *   steps back to back, an event-loop turn apart, or a few ms apart;
 * - streams filtered by `cluster` and `kind` (a quarter of the programs), the page's own being
 *   unfiltered.
 * Named examples: a connection cut at (nearly) every byte offset of a response, each the next
 * reconnection's; a 502 from a reverse proxy (this test found that the page then stayed
 * "reconnecting" for good: a browser's EventSource gives up on a non-200 answer, and the Store
 * did not open a new one); a page that stops reading and is cut off by the 8 MiB rule.
 *
 * What must hold, after each program, once a fence change the test makes last has reached the
 * page (so everything before it has too):
 * - the Store's items (by key) deep-equal the model's `items()` (those the filter keeps), and its
 *   clusters the model's clusters in the order the sources were given (the snapshot's, and
 *   `/api/v1/clusters`'s, documented order), as a set the model's `clusters()`;
 * - `store.connection === 'live'`, its current EventSource open and every earlier one closed;
 *   the Store's subscribers were told of its last change;
 * - nothing a client saw was corrupted: every event it got (type, id, data) is one the server
 *   wrote on some connection, byte for byte (the proxy parses what the server wrote before it
 *   cuts anything), every `data:` parses as JSON of the event's type and validates as a
 *   `ServerEvent` (openapi.yaml); no uncaught exception (a `JSON.parse` failure in the Store's
 *   listener would land there) and no unhandled rejection;
 * - the server holds one stream (one model subscription) per connected page: none leaked by
 *   cut connections.
 *
 * The proxy rewrites the server's `retry: 1000` into `retry: 0005` (same length, so the chunked
 * framing holds) and the client's initial reconnection time is 5 ms, so that the hundreds of
 * reconnections cost milliseconds; the slow-reader test keeps the server's 1000 ms.
 *
 * Runs: 80 programs by default (about 5 s; 7–10 s for the file on 2 cores, more with other test
 * processes busy), 800 with CONVERGE_RELIABILITY_LONG=1, which also cuts at every byte offset
 * (about 85 s for the file). A failure prints fast-check's seed:
 * `CONVERGE_FC_SEED=<seed> npm run test:unit -- packages/operators/src/dashboard/event-stream.differential.test.ts`.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import type { Server as TcpServer, Socket } from 'node:net';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import { Agent, EventSource as UndiciEventSource } from 'undici';
import type { KubeObject } from '@converge/runtime';
import type { AssetName } from './assets.ts';
import type { ClusterSource } from './cluster-source.ts';
import { createDashboardServer, listen } from './http-server.ts';
import { DashboardModel } from './model.ts';
import type { ClusterState, ClusterView, Item, ItemKind, ServerEvent } from './shared/types.ts';
import { watchFailures } from './process-failures.test-support.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const PROGRAMS = LONG ? 800 : 80;

// ---------------------------------------------------------------------------------------------
// The page's Store. Imported by a specifier tsc does not follow: store.ts is typed against the
// DOM (EventSource, requestAnimationFrame), which the server-side tsconfig does not have.

interface PageStore {
  readonly items: Map<string, Item>;
  clusters: ClusterView[];
  connection: 'connecting' | 'live' | 'reconnecting';
  version: number;
  subscribe(listener: () => void): () => void;
  connect(url?: string): void;
  close(): void;
}
const STORE_MODULE = './web/store.ts';
const { Store } = (await import(STORE_MODULE)) as { Store: new (options?: { retryMs?: number; maxRetryMs?: number }) => PageStore };

// ---------------------------------------------------------------------------------------------
// The contract

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(parseYaml(readFileSync(new URL('./openapi.yaml', import.meta.url), 'utf8')) as object, 'openapi');
const EVENT_SCHEMA = ajv.compile({ $ref: 'openapi#/components/schemas/ServerEvent' });

const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

// ---------------------------------------------------------------------------------------------
// A seeded PRNG for the proxy (mulberry32)

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------------
// What the server wrote: its response parsed from the raw bytes (head, chunked framing, SSE)

const EMPTY = Buffer.alloc(0);

class ServerTap {
  #raw: Buffer = EMPTY;
  #inHead = true;
  #chunked = false;
  #done = false;
  #sse: Buffer = EMPTY;
  readonly #onEvent: (type: string, id: string, data: string) => void;

  constructor(onEvent: (type: string, id: string, data: string) => void) {
    this.#onEvent = onEvent;
  }

  push(chunk: Buffer): void {
    if (this.#done) return;
    this.#raw = this.#raw.length ? Buffer.concat([this.#raw, chunk]) : chunk;
    if (this.#inHead) {
      const end = this.#raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.#chunked = /\r\ntransfer-encoding:\s*chunked\r?$/im.test(this.#raw.subarray(0, end).toString('latin1'));
      this.#raw = this.#raw.subarray(end + 4);
      this.#inHead = false;
    }
    if (!this.#chunked) {
      this.#body(this.#raw);
      this.#raw = EMPTY;
      return;
    }
    for (;;) {
      const eol = this.#raw.indexOf('\r\n');
      if (eol < 0) return;
      const size = Number.parseInt(this.#raw.subarray(0, eol).toString('latin1'), 16);
      if (size === 0) {
        this.#done = true;
        return;
      }
      if (this.#raw.length < eol + 2 + size + 2) return;
      this.#body(this.#raw.subarray(eol + 2, eol + 2 + size));
      this.#raw = this.#raw.subarray(eol + 2 + size + 2);
    }
  }

  #body(bytes: Buffer): void {
    this.#sse = this.#sse.length ? Buffer.concat([this.#sse, bytes]) : Buffer.from(bytes);
    for (;;) {
      const end = this.#sse.indexOf('\n\n');
      if (end < 0) return;
      const block = this.#sse.subarray(0, end).toString('utf8');
      this.#sse = this.#sse.subarray(end + 2);
      let type = 'message';
      let id = '';
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
        if (field === 'event') type = value;
        else if (field === 'id') id = value;
        else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
      }
      if (data !== undefined) this.#onEvent(type, id, data);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The fault proxy: TCP between the page and the dashboard

interface WireMix {
  /** Each server write is cut into up to this many pieces; below 2, forwarded whole. */
  maxPieces: number;
  /** Up to this much latency before each server write is forwarded (ms). */
  latencyMs: number;
}

interface Link {
  readonly ordinal: number;
  readonly client: Socket;
  readonly upstream: Socket;
  readonly tap: ServerTap;
  queue: Buffer[];
  pumping: boolean;
  dead: boolean;
  upstreamEnded: boolean;
  /** The response until the `retry:` line went by (it is rewritten, see the module comment). */
  head: Buffer | null;
  cutAfter: { bytes: number; abrupt: boolean } | undefined;
}

const RETRY_LINE = Buffer.from('retry: 1000\n');
const GATEWAY_REASONS: Record<number, string> = { 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

class FaultWire {
  /** `type\nid\ndata` of every event the server wrote, on any connection. */
  readonly sent = new Set<string>();
  readonly stats = { connections: 0, refused: 0, gateway: 0, cuts: 0, pieces: 0, cutsInsideCharacters: 0, serverEvents: 0, bytesToClients: 0 };
  mix: WireMix = { maxPieces: 0, latencyMs: 0 };
  /** Called with each forwarded connection's ordinal (1-based): a cut to arm on it from the start. */
  cutPolicy: ((ordinal: number) => { bytes: number; abrupt: boolean } | undefined) | undefined;
  readonly #server: TcpServer;
  readonly #upstreamPort: number;
  readonly #random: () => number;
  readonly #fastRetry: boolean;
  readonly #links = new Set<Link>();
  readonly #sockets = new Set<Socket>();
  #refuse = 0;
  #gateway: number[] = [];
  #paused = false;

  private constructor(upstreamPort: number, seed: number, fastRetry: boolean) {
    this.#upstreamPort = upstreamPort;
    this.#random = prng(seed);
    this.#fastRetry = fastRetry;
    this.#server = createTcpServer((client) => this.#accept(client));
  }

  static async start(upstreamPort: number, options: { seed: number; fastRetry: boolean }): Promise<FaultWire> {
    const wire = new FaultWire(upstreamPort, options.seed, options.fastRetry);
    await new Promise<void>((resolve) => wire.#server.listen(0, '127.0.0.1', resolve));
    return wire;
  }

  get port(): number {
    return (this.#server.address() as { port: number }).port;
  }

  /** Refuses (resets) the next `n` connection attempts. */
  refuse(n: number): void {
    this.#refuse += n;
  }

  /** Answers the next connection attempts with these statuses in the dashboard's place. */
  gateway(statuses: number[]): void {
    this.#gateway.push(...statuses);
  }

  /** Cuts every open connection now (`bytes` 0) or once `bytes` more have gone to the client. */
  cut(abrupt: boolean, bytes: number): void {
    for (const link of this.#links) {
      if (link.dead) continue;
      if (bytes === 0) this.#cut(link, abrupt);
      else link.cutAfter = { bytes, abrupt };
    }
  }

  /** Stops reading from the server, as a client that stopped reading would. */
  pause(): void {
    this.#paused = true;
    for (const link of this.#links) link.upstream.pause();
  }

  resume(): void {
    this.#paused = false;
    for (const link of this.#links) link.upstream.resume();
  }

  /** Faults that keep a client away: none from now on. */
  heal(): void {
    this.#refuse = 0;
    this.#gateway = [];
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    for (const link of this.#links) link.upstream.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    this.#sockets.add(client);
    client.on('close', () => this.#sockets.delete(client));
    client.on('error', () => {});
    client.setNoDelay(true);
    if (this.#refuse > 0) {
      this.#refuse--;
      this.stats.refused++;
      client.resetAndDestroy();
      return;
    }
    const status = this.#gateway.shift();
    if (status !== undefined) {
      this.stats.gateway++;
      const body = `<html><body><h1>${status} ${GATEWAY_REASONS[status]}</h1></body></html>\n`;
      client.once('data', () => client.end(`HTTP/1.1 ${status} ${GATEWAY_REASONS[status]}\r\ncontent-type: text/html\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`));
      return;
    }
    this.stats.connections++;
    const upstream = connect(this.#upstreamPort, '127.0.0.1');
    upstream.setNoDelay(true);
    upstream.on('error', () => {});
    const link: Link = {
      ordinal: this.stats.connections,
      client,
      upstream,
      tap: new ServerTap((type, id, data) => {
        this.stats.serverEvents++;
        this.sent.add(`${type}\n${id}\n${data}`);
      }),
      queue: [],
      pumping: false,
      dead: false,
      upstreamEnded: false,
      head: EMPTY,
      cutAfter: this.cutPolicy?.(this.stats.connections),
    };
    this.#links.add(link);
    if (this.#paused) upstream.pause();
    client.on('data', (d: Buffer) => upstream.write(d));
    client.on('close', () => {
      link.dead = true;
      upstream.destroy();
      this.#links.delete(link);
    });
    upstream.on('data', (d: Buffer) => this.#fromServer(link, d));
    upstream.on('close', () => {
      link.upstreamEnded = true;
      if (link.head !== null && link.head.length) link.queue.push(link.head);
      link.head = null;
      void this.#pump(link);
    });
  }

  #fromServer(link: Link, chunk: Buffer): void {
    link.tap.push(chunk);
    let d = chunk;
    if (link.head !== null) {
      const head = Buffer.concat([link.head, chunk]);
      const at = head.indexOf(RETRY_LINE);
      if (at < 0 && head.length < 65_536) {
        link.head = head;
        return;
      }
      if (at >= 0 && this.#fastRetry) head.write('0005', at + 7, 'latin1');
      link.head = null;
      d = head;
    }
    link.queue.push(d);
    void this.#pump(link);
  }

  async #pump(link: Link): Promise<void> {
    if (link.pumping) return;
    link.pumping = true;
    try {
      while (!link.dead) {
        const chunk = link.queue.shift();
        if (!chunk) break;
        if (this.mix.latencyMs > 0) await sleep(this.#random() * this.mix.latencyMs);
        const pieces = this.#pieces(chunk);
        for (const piece of pieces) {
          if (link.dead) return;
          const cut = link.cutAfter;
          if (cut && piece.length >= cut.bytes) {
            link.client.write(piece.subarray(0, cut.bytes));
            this.stats.bytesToClients += cut.bytes;
            this.#cut(link, cut.abrupt);
            return;
          }
          if (cut) cut.bytes -= piece.length;
          link.client.write(piece);
          this.stats.bytesToClients += piece.length;
          if (pieces.length > 1) await (this.#random() < 0.15 ? sleep(1) : tick());
        }
      }
      if (!link.dead && link.upstreamEnded && link.queue.length === 0) link.client.end();
    } finally {
      link.pumping = false;
    }
  }

  #cut(link: Link, abrupt: boolean): void {
    link.dead = true;
    this.stats.cuts++;
    link.upstream.destroy();
    if (abrupt) link.client.resetAndDestroy();
    else link.client.end();
  }

  /** A server write cut into pieces: inside multi-byte characters, after line ends, anywhere. */
  #pieces(chunk: Buffer): Buffer[] {
    if (this.mix.maxPieces < 2 || chunk.length < 2) return [chunk];
    const inside: number[] = [];
    const afterBreak: number[] = [];
    for (let i = 1; i < chunk.length; i++) {
      if ((chunk[i]! & 0xc0) === 0x80) inside.push(i);
      if (chunk[i - 1] === 0x0a || chunk[i - 1] === 0x0d) afterBreak.push(i);
    }
    const cuts = new Set<number>();
    const n = 1 + Math.floor(this.#random() * (this.mix.maxPieces - 1));
    for (let k = 0; k < n; k++) {
      const r = this.#random();
      const from = r < 0.5 && inside.length ? inside : r < 0.75 && afterBreak.length ? afterBreak : undefined;
      cuts.add(from ? from[Math.floor(this.#random() * from.length)]! : 1 + Math.floor(this.#random() * (chunk.length - 1)));
    }
    const pieces: Buffer[] = [];
    let at = 0;
    for (const c of [...cuts].sort((a, b) => a - b)) {
      pieces.push(chunk.subarray(at, c));
      if ((chunk[c]! & 0xc0) === 0x80) this.stats.cutsInsideCharacters++;
      at = c;
    }
    pieces.push(chunk.subarray(at));
    this.stats.pieces += pieces.length;
    return pieces;
  }
}

// ---------------------------------------------------------------------------------------------
// Objects, clusters and programs

const CLUSTER_POOL = ['alpha', 'Beta.2', 'constructor', 'z_9-x', 'toString', '0'];
const NAMESPACES = ['default', 'team-a', `n${'x'.repeat(62)}`];
const NAMES = ['web', 'api.v2', 'a-1', '0', 'constructor', `${'a'.repeat(200)}.b`];
const TIMES = ['2025-01-01T00:00:00Z', '2025-06-01T12:00:00.123Z', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00+09:00'];
const MS_REASONS = ['Available', 'RolloutInProgress', 'RolloutStalled', 'InvalidSpec', 'OwnershipConflict'];
const DHP_REASONS = ['ProviderReady', 'ProviderDegraded', 'ProviderUnhealthy', 'QuotaExhausted', 'CredentialsMissing'];
const FINALIZER = 'dhp.example.com/provider-cleanup';

/** Pieces of awkward text: multi-byte UTF-8, line breaks of every kind, lookalike SSE fields. */
const AWKWARD = [
  'é', 'ß', 'Ω', 'ж', '中文', '日本語', '€', '\u2028', '\u2029', '\r', '\n', '\r\n', '\n\n', '\r\r\n', '😀', '👩‍👩‍👧‍👦', '🇯🇵', '𝕏',
  'e\u0301', '\ufeff', '\u0000', '\u0085', '\u00a0', '\u200b', '\ufffd', '\uffff', '\ud800', '\udfff', '"', '\\', '\t', 'data: {}',
  'event: snapshot', 'id: 1', ': keep-alive', 'retry: 1000', '</script>', ' ', 'x',
];

const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.constantFrom(...AWKWARD), { maxLength: 12 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...AWKWARD.filter((a) => a.length > 0)), fc.integer({ min: 200, max: 3_000 })).map(([s, n]) => s.repeat(Math.ceil(n / s.length))) },
);

interface ObjSpec {
  kind: ItemKind;
  cluster: string;
  namespace: string;
  name: string;
  /** A different value is the object deleted and created again under the same name. */
  incarnation: number;
  generation: number;
  caughtUp: boolean;
  ready: { status: 'True' | 'False' | 'Unknown'; reason: string; message: string; current: boolean; since: string | undefined } | undefined;
  deleting: boolean;
  createdAt: string;
  // Microservice
  image: string;
  port: number;
  phase: 'Accepted' | 'ResourcesApplied' | 'Failed' | undefined;
  statusReason: string | undefined;
  statusMessage: string | undefined;
  rollout: boolean;
  // Provider
  region: string;
  endpoint: string;
  displayName: string | undefined;
  providerID: string | undefined;
  finalizer: boolean;
  usage: { callsToday: number; dailyQuota: number; quotaRemaining: number } | undefined;
  limitedBy: string | undefined;
  recommendation: string | undefined;
}

const objSpecArb = (clusters: readonly string[]): fc.Arbitrary<ObjSpec> =>
  fc.record({
    kind: fc.constantFrom<ItemKind>('Microservice', 'DigitalHumanProvider'),
    cluster: fc.constantFrom(...clusters),
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom(...NAMES),
    incarnation: fc.nat(1),
    generation: fc.integer({ min: 1, max: 3 }),
    caughtUp: fc.boolean(),
    converged: fc.boolean(),
    ready: fc.option(fc.record({
      status: fc.constantFrom<'True' | 'False' | 'Unknown'>('True', 'False', 'Unknown'),
      reason: fc.oneof(fc.nat(4).map(String), textArb),
      message: textArb,
      current: fc.boolean(),
      since: fc.option(fc.constantFrom(...TIMES), { nil: undefined }),
    }), { nil: undefined }),
    deleting: fc.boolean(),
    createdAt: fc.constantFrom(...TIMES),
    image: textArb,
    port: fc.integer({ min: 1, max: 65_535 }),
    phase: fc.constantFrom(undefined, 'Accepted' as const, 'ResourcesApplied' as const, 'Failed' as const),
    statusReason: fc.option(textArb, { nil: undefined }),
    statusMessage: fc.option(textArb, { nil: undefined }),
    rollout: fc.boolean(),
    region: textArb,
    endpoint: textArb.map((t) => `https://vendor.invalid/${t}`),
    displayName: fc.option(textArb, { nil: undefined }),
    providerID: fc.option(textArb, { nil: undefined }),
    finalizer: fc.boolean(),
    usage: fc.option(fc.record({ callsToday: fc.nat(10), dailyQuota: fc.nat(10), quotaRemaining: fc.nat(3) }), { nil: undefined }),
    limitedBy: fc.option(fc.oneof(fc.constantFrom('RateLimited', 'QuotaExhausted'), textArb), { nil: undefined }),
    recommendation: fc.option(textArb, { nil: undefined }),
  }).map(({ converged, ...r }): ObjSpec => {
    const reasons = r.kind === 'Microservice' ? MS_REASONS : DHP_REASONS;
    const ready = r.ready && { ...r.ready, reason: /^\d$/.test(r.ready.reason) ? reasons[Number(r.ready.reason)]! : r.ready.reason };
    // Half the objects are converged-shaped, so that reachability flips `usable` back and forth.
    if (!converged) return { ...r, ready };
    return {
      ...r, caughtUp: true, deleting: false, finalizer: true, providerID: r.providerID ?? 'pid-1', phase: r.phase === 'Failed' ? undefined : r.phase,
      ready: { status: 'True', reason: reasons[0]!, message: ready?.message ?? '', current: true, since: ready?.since ?? TIMES[1] },
    };
  });

function kubeObject(s: ObjSpec): KubeObject {
  const conditions = s.ready
    ? [{
        type: 'Ready', status: s.ready.status, reason: s.ready.reason, message: s.ready.message,
        observedGeneration: s.ready.current ? s.generation : s.generation - 1,
        ...(s.ready.since ? { lastTransitionTime: s.ready.since } : {}),
      }]
    : [];
  const metadata = {
    name: s.name, namespace: s.namespace, uid: `${s.kind}/${s.cluster}/${s.namespace}/${s.name}#${s.incarnation}`,
    generation: s.generation, creationTimestamp: s.createdAt,
    ...(s.deleting ? { deletionTimestamp: TIMES[3] } : {}),
    ...(s.kind === 'DigitalHumanProvider' && s.finalizer ? { finalizers: [FINALIZER] } : {}),
  };
  const observedGeneration = s.caughtUp ? s.generation : s.generation - 1;
  if (s.kind === 'Microservice') {
    return {
      apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata,
      spec: { container: { image: s.image, port: s.port } },
      status: {
        observedGeneration, conditions,
        ...(s.phase ? { phase: s.phase } : {}),
        ...(s.statusReason !== undefined ? { reason: s.statusReason } : {}),
        ...(s.statusMessage !== undefined ? { message: s.statusMessage } : {}),
        ...(s.rollout ? { rollout: { replicas: 3, updatedReplicas: 2, availableReplicas: 1, readyEndpoints: 1 } } : {}),
        managedResources: { deployment: s.name, service: s.name },
      },
    } as unknown as KubeObject;
  }
  return {
    apiVersion: 'dhp.example.com/v1', kind: 'DigitalHumanProvider', metadata,
    spec: { region: s.region, endpoint: s.endpoint, ...(s.displayName !== undefined ? { displayName: s.displayName } : {}) },
    status: {
      observedGeneration, conditions,
      ...(s.providerID !== undefined ? { providerID: s.providerID } : {}),
      ...(s.usage ? { usage: { ...s.usage, throttledRequests: 0, observedAt: TIMES[2] } } : {}),
      ...(s.limitedBy !== undefined ? { limitedBy: s.limitedBy } : {}),
      ...(s.recommendation !== undefined ? { recommendation: s.recommendation } : {}),
    },
  } as unknown as KubeObject;
}

interface ViewSpec {
  state: ClusterState;
  error: string;
  warnings: string[];
  lastSync: string | undefined;
}

const viewSpecArb: fc.Arbitrary<ViewSpec> = fc.record({
  state: fc.constantFrom<ClusterState>('reachable', 'reachable', 'unreachable', 'connecting'),
  error: textArb,
  warnings: fc.array(textArb, { maxLength: 2 }),
  lastSync: fc.option(fc.constantFrom(...TIMES), { nil: undefined }),
});

function clusterView(name: string, v: ViewSpec): ClusterView {
  return {
    name, server: `https://${name.toLowerCase()}.invalid:6443`, state: v.state, reachable: v.state === 'reachable',
    syncedAt: v.state === 'connecting' ? null : TIMES[0]!, lastSync: v.lastSync ?? null,
    error: v.state === 'unreachable' ? `Microservice: ${v.error}` : null, warnings: v.warnings.map((w) => `DigitalHumanProvider: ${w}`),
  };
}

type Step =
  | { op: 'upsert'; spec: ObjSpec }
  | { op: 'remove'; spec: ObjSpec }
  /** Removes the `pick`-th row the model holds (modulo their number), if any. */
  | { op: 'removeExisting'; pick: number }
  /** `lazy`: the source judges it now but pushes it only when next asked (a request) or at `publish`. */
  | { op: 'cluster'; cluster: string; view: ViewSpec; lazy: boolean }
  /** The sources' health timer: pending cluster states reach the model. */
  | { op: 'publish' }
  | { op: 'cut'; abrupt: boolean; afterBytes: number }
  | { op: 'mix'; mix: WireMix }
  | { op: 'refuse'; count: number }
  | { op: 'gateway'; statuses: number[] }
  | { op: 'wait'; ms: number };

/** After the step: go on at once ('none'), let one event-loop turn pass ('tick'), or sleep this many ms. */
type TimedStep = Step & { pause: 'none' | 'tick' | number };

const mixArb: fc.Arbitrary<WireMix> = fc.record({
  maxPieces: fc.oneof(fc.constant(0), fc.integer({ min: 2, max: 40 })),
  latencyMs: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: 5 })),
});

const stepArb = (clusters: readonly string[]): fc.Arbitrary<TimedStep> =>
  fc.tuple(
    fc.oneof(
      { weight: 8, arbitrary: objSpecArb(clusters).map((spec): Step => ({ op: 'upsert', spec })) },
      { weight: 1, arbitrary: objSpecArb(clusters).map((spec): Step => ({ op: 'remove', spec })) },
      { weight: 3, arbitrary: fc.nat().map((pick): Step => ({ op: 'removeExisting', pick })) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant('cluster' as const), cluster: fc.constantFrom(...clusters), view: viewSpecArb, lazy: fc.boolean() }) },
      { weight: 1, arbitrary: fc.constant<Step>({ op: 'publish' }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant('cut' as const), abrupt: fc.boolean(), afterBytes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 6_000 })) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('mix' as const), mix: mixArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('refuse' as const), count: fc.integer({ min: 1, max: 3 }) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('gateway' as const), statuses: fc.array(fc.constantFrom(502, 503, 504), { minLength: 1, maxLength: 2 }) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 15 }) }) },
    ),
    fc.oneof<fc.Arbitrary<TimedStep['pause']>[]>(fc.constant('none'), fc.constant('tick'), fc.integer({ min: 1, max: 6 })),
  ).map(([step, pause]) => ({ ...step, pause }));

interface StreamFilter {
  clusters: string[] | undefined;
  /** As the query spells it, and what it means. */
  kind: { text: string; kinds: ItemKind[] } | undefined;
}

const KIND_SPELLINGS: { text: string; kinds: ItemKind[] }[] = [
  { text: 'ms', kinds: ['Microservice'] },
  { text: 'DigitalHumanProvider', kinds: ['DigitalHumanProvider'] },
  { text: 'providers,Microservice', kinds: ['Microservice', 'DigitalHumanProvider'] },
  { text: 'dhp', kinds: ['DigitalHumanProvider'] },
];

const filterArb = (clusters: readonly string[]): fc.Arbitrary<StreamFilter> =>
  fc.record({
    clusters: fc.option(
      fc.tuple(fc.subarray([...clusters], { minLength: 1 }), fc.boolean()).map(([c, other]) => (other ? [...c, 'nowhere'] : c)),
      { nil: undefined },
    ),
    kind: fc.option(fc.constantFrom(...KIND_SPELLINGS), { nil: undefined }),
  });

interface Program {
  /** In the order the dashboard was given them. */
  clusters: string[];
  initial: ViewSpec[];
  filter: StreamFilter | undefined;
  seed: number;
  mix: WireMix;
  /** Whether the page is live before the steps start (else they race its first connection). */
  liveFirst: boolean;
  steps: TimedStep[];
}

const programArb: fc.Arbitrary<Program> = fc
  .uniqueArray(fc.constantFrom(...CLUSTER_POOL), { minLength: 1, maxLength: 3 })
  .chain((clusters) => fc.record({
    clusters: fc.constant(clusters),
    initial: fc.array(viewSpecArb, { minLength: clusters.length, maxLength: clusters.length }),
    filter: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: filterArb(clusters) }),
    seed: fc.integer(),
    mix: mixArb,
    liveFirst: fc.boolean(),
    steps: fc.array(stepArb(clusters), { minLength: 1, maxLength: 50, size: 'max' }),
  }));

// ---------------------------------------------------------------------------------------------
// A dashboard (model, stand-in sources, the real server) behind the fault proxy

const ASSETS = new Map<AssetName, Buffer>([
  ['index.html', Buffer.from('<!doctype html><title>t</title>')],
  ['app.js', Buffer.from('export {};\n')],
  ['app.css', Buffer.from('body{}\n')],
  ['openapi.yaml', Buffer.from('openapi: 3.1.0\n')],
]);

interface StandInSource {
  readonly name: string;
  readonly server: string;
  /** A state judged but not pushed yet. */
  pending: ClusterView | undefined;
  publish(): void;
  view(): ClusterView;
}

interface Dashboard {
  model: DashboardModel;
  sources: StandInSource[];
  wire: FaultWire;
  /** Model subscriptions open now: one per stream the server holds. */
  streams(): number;
  /** Events the model emitted so far. */
  modelEvents(): number;
  close(): Promise<void>;
}

async function startDashboard(clusters: readonly string[], initial: readonly ViewSpec[], options: { seed: number; fastRetry: boolean }): Promise<Dashboard> {
  let clock = Date.parse('2026-03-01T00:00:00Z');
  const model = new DashboardModel({ now: () => new Date((clock += 1_000)) });
  let streams = 0;
  let modelEvents = 0;
  const subscribe = model.subscribe.bind(model);
  subscribe(() => void modelEvents++);
  model.subscribe = (listener) => {
    streams++;
    const unsubscribe = subscribe(listener);
    let once = false;
    return () => {
      if (!once) streams--;
      once = true;
      return unsubscribe();
    };
  };
  // As ClusterSource: judged and published when built, published again on change when asked.
  const sources = clusters.map((name, i): StandInSource => {
    const source: StandInSource = {
      name,
      server: clusterView(name, initial[i]!).server,
      pending: undefined,
      publish() {
        if (source.pending) model.setCluster(source.pending);
        source.pending = undefined;
      },
      view() {
        source.publish();
        return model.cluster(name)!;
      },
    };
    model.setCluster(clusterView(name, initial[i]!));
    return source;
  });
  const server: Server = createDashboardServer({ model, sources: sources as unknown as ClusterSource[], assets: ASSETS, token: undefined, loopbackListen: true });
  const { port } = await listen(server, '127.0.0.1', 0);
  const wire = await FaultWire.start(port, options);
  return {
    model,
    sources,
    wire,
    streams: () => streams,
    modelEvents: () => modelEvents,
    async close() {
      await wire.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The page: the Store over undici's EventSource, every event checked as it arrives

interface Page {
  store: PageStore;
  /** Every EventSource the page opened, in order. */
  sources: InstanceType<typeof UndiciEventSource>[];
  /** What was wrong with what the client saw. */
  problems: string[];
  events: number;
  /** `store.version` when its subscribers were last told. */
  notifiedVersion: number;
  close(): Promise<void>;
}

const EVENT_TYPES: readonly string[] = ['snapshot', 'upsert', 'delete', 'cluster'];

/** What an EventSource's message event carries (MessageEvent, not generic in Node's types). */
interface SseMessage {
  data: string;
  lastEventId: string;
}

function openPage(wire: FaultWire, query: string): Page {
  const agent = new Agent({ keepAliveTimeout: 1_000 });
  const page: Page = {
    store: undefined as unknown as PageStore,
    sources: [],
    problems: [],
    events: 0,
    notifiedVersion: -1,
    close: async () => {},
  };
  const check = (type: string, e: SseMessage) => {
    page.events++;
    if (!wire.sent.has(`${type}\n${e.lastEventId}\n${e.data}`)) {
      page.problems.push(`the client got a ${type} event (id ${JSON.stringify(e.lastEventId)}) that the server never wrote: ${clip(JSON.stringify(e.data))}`);
    }
    if (!EVENT_TYPES.includes(type)) page.problems.push(`an event of type ${JSON.stringify(type)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(e.data);
    } catch (err) {
      page.problems.push(`data that is not JSON (${(err as Error).message}): ${clip(JSON.stringify(e.data))}`);
      return;
    }
    if ((parsed as ServerEvent).type !== type) page.problems.push(`a ${type} event whose data is a ${(parsed as ServerEvent).type}`);
    if (!EVENT_SCHEMA(parsed)) page.problems.push(`a ${type} event that is no ServerEvent: ${ajv.errorsText(EVENT_SCHEMA.errors)}: ${clip(e.data)}`);
  };
  class TappedEventSource extends UndiciEventSource {
    constructor(url: string | URL, init?: ConstructorParameters<typeof UndiciEventSource>[1]) {
      // A 5 ms reconnection time until the server's `retry:` arrives (browsers use about 3 s).
      super(url, { ...init, node: { dispatcher: agent, reconnectionTime: 5 } });
      page.sources.push(this);
      // Registered before the Store's own listeners: checked before it applies them.
      for (const type of [...EVENT_TYPES, 'message']) this.addEventListener(type, (e) => check(type, e as unknown as SseMessage));
    }
  }
  const g = globalThis as Record<string, unknown>;
  const saved = { EventSource: g.EventSource, requestAnimationFrame: g.requestAnimationFrame };
  g.EventSource = TappedEventSource;
  g.requestAnimationFrame = (callback: (now: number) => void) => setImmediate(() => callback(performance.now()));
  const store = new Store({ retryMs: 5, maxRetryMs: 100 });
  page.store = store;
  store.subscribe(() => (page.notifiedVersion = store.version));
  store.connect(`http://127.0.0.1:${wire.port}/api/v1/events?${query}`);
  let closed = false;
  page.close = async () => {
    if (closed) return;
    closed = true;
    store.close();
    for (const s of page.sources) s.close();
    g.EventSource = saved.EventSource;
    g.requestAnimationFrame = saved.requestAnimationFrame;
    await agent.destroy();
  };
  return page;
}

function streamQuery(filter: StreamFilter | undefined): string {
  const params = new URLSearchParams({ snapshot: 'true' });
  if (filter?.clusters) params.set('cluster', filter.clusters.join(','));
  if (filter?.kind) params.set('kind', filter.kind.text);
  return params.toString();
}

const keeps = (filter: StreamFilter | undefined) => (i: { cluster: string; kind: ItemKind }) =>
  (!filter?.clusters || filter.clusters.includes(i.cluster)) && (!filter?.kind || filter.kind.kinds.includes(i.kind));

async function until(what: string, ok: () => boolean, timeoutMs: number, diagnose: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms\n${diagnose()}`);
    await sleep(2);
  }
}


let fences = 0;

/**
 * A last change (a Microservice or provider of a cluster the stream keeps), then waits until the
 * page has it: the stream delivers in order and a snapshot holds everything, so the page then
 * has everything before it too.
 */
async function fence(d: Dashboard, page: Page, filter: StreamFilter | undefined): Promise<void> {
  const cluster = d.sources.map((s) => s.name).find((c) => !filter?.clusters || filter.clusters.includes(c))!;
  const kind = filter?.kind?.kinds[0] ?? 'Microservice';
  const generation = ++fences;
  const spec = {
    kind, cluster, namespace: 'zz-fence', name: 'fence', incarnation: 0, generation, caughtUp: true, ready: undefined, deleting: false, createdAt: TIMES[0]!,
    image: 'fence', port: 1, phase: undefined, statusReason: undefined, statusMessage: undefined, rollout: false,
    region: 'fence', endpoint: 'https://fence.invalid', displayName: undefined, providerID: undefined, finalizer: false, usage: undefined, limitedBy: undefined, recommendation: undefined,
  } satisfies ObjSpec;
  d.model.upsert(cluster, kind, kubeObject(spec));
  const key = `${kind}/${cluster}/zz-fence/fence`;
  await until('the fence reached the page', () => page.store.items.get(key)?.generation === generation && page.store.connection === 'live', 10_000, () => diagnose(d, page));
}

function diagnose(d: Dashboard, page: Page): string {
  const last = page.sources.at(-1);
  return `store.connection=${page.store.connection}, EventSources opened=${page.sources.length}, last readyState=${last?.readyState}, ` +
    `events seen=${page.events}, server streams=${d.streams()}, wire=${JSON.stringify(d.wire.stats)}, problems=${page.problems.slice(0, 3).join(' | ')}`;
}

/** The page shows what the model holds (the part the stream keeps); a diff when it does not. */
function assertPageEqualsModel(d: Dashboard, page: Page, filter: StreamFilter | undefined): void {
  const keep = keeps(filter);
  const byKey = (items: Iterable<Item>) => Object.fromEntries([...items].map((i) => [i.key, i] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const expected = byKey(d.model.items().filter(keep));
  const actual = byKey(page.store.items.values());
  const problems: string[] = [];
  for (const key of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
    if (!(key in actual)) problems.push(`missing on the page: ${key}`);
    else if (!(key in expected)) problems.push(`on the page but not in the model: ${key}`);
    else {
      const a = actual[key] as unknown as Record<string, unknown>;
      const e = expected[key] as unknown as Record<string, unknown>;
      try {
        assert.deepEqual(a, e);
      } catch {
        const fields = Object.keys({ ...e, ...a }).filter((f) => JSON.stringify(a[f]) !== JSON.stringify(e[f]));
        problems.push(`${key} differs in ${fields.join(', ') || '(values JSON cannot tell apart, e.g. -0 or undefined)'}: page ${clip(JSON.stringify(fields.map((f) => a[f])))} model ${clip(JSON.stringify(fields.map((f) => e[f])))}`);
      }
    }
  }
  assert.deepEqual(problems, [], `the page's rows are not the model's:\n${problems.slice(0, 10).join('\n')}`);
  assert.deepEqual(actual, expected);
  const wantedCluster = (c: ClusterView) => !filter?.clusters || filter.clusters.includes(c.name);
  // The order the dashboard was given (the snapshot's and /api/v1/clusters'), as a set the model's.
  assert.deepEqual(page.store.clusters, d.sources.map((s) => d.model.cluster(s.name)!).filter(wantedCluster), 'the page\'s clusters, in the order given');
  assert.deepEqual([...page.store.clusters].sort((a, b) => (a.name < b.name ? -1 : 1)), d.model.clusters().filter(wantedCluster));
}

/** Everything that must hold once the fence arrived. */
async function assertQuietAndEqual(d: Dashboard, page: Page, filter: StreamFilter | undefined, failures: unknown[]): Promise<void> {
  await fence(d, page, filter);
  assert.deepEqual(page.problems, [], 'what the client saw');
  assert.deepEqual(failures, [], 'uncaught exceptions or unhandled rejections');
  assertPageEqualsModel(d, page, filter);
  assert.equal(page.store.connection, 'live');
  const [last, ...earlier] = [...page.sources].reverse();
  assert.equal(last?.readyState, UndiciEventSource.OPEN, 'the page\'s current EventSource is open');
  for (const s of earlier) assert.equal(s.readyState, UndiciEventSource.CLOSED, 'an EventSource the page let go is closed');
  await tick();
  await tick();
  assert.equal(page.notifiedVersion, page.store.version, 'the Store\'s subscribers were told of its last change');
  await until('the server holds one stream (cut ones let go)', () => d.streams() === 1, 3_000, () => diagnose(d, page));
}

async function runStep(d: Dashboard, step: Step): Promise<void> {
  switch (step.op) {
    case 'upsert':
      d.model.upsert(step.spec.cluster, step.spec.kind, kubeObject(step.spec));
      break;
    case 'remove':
      d.model.remove(step.spec.cluster, step.spec.kind, kubeObject(step.spec));
      break;
    case 'removeExisting': {
      const items = d.model.items();
      const item = items[step.pick % Math.max(1, items.length)];
      if (item) d.model.remove(item.cluster, item.kind, { metadata: { namespace: item.namespace, name: item.name } } as KubeObject);
      break;
    }
    case 'cluster': {
      const source = d.sources.find((s) => s.name === step.cluster)!;
      source.pending = clusterView(step.cluster, step.view);
      if (!step.lazy) source.publish();
      break;
    }
    case 'publish':
      for (const s of d.sources) s.publish();
      break;
    case 'cut':
      d.wire.cut(step.abrupt, step.afterBytes);
      break;
    case 'mix':
      d.wire.mix = step.mix;
      break;
    case 'refuse':
      d.wire.refuse(step.count);
      break;
    case 'gateway':
      d.wire.gateway(step.statuses);
      break;
    case 'wait':
      await sleep(step.ms);
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// The search

const SEARCH_MS = LONG ? 1_500_000 : 240_000;

test('the event stream over a faulty wire: after any program of changes and faults, the page shows exactly the model (fast-check)', { timeout: SEARCH_MS + 60_000 }, async (t) => {
  const failures = watchFailures(t);
  const totals = { programs: 0, steps: 0, modelEvents: 0, connections: 0, cuts: 0, refused: 0, gateway: 0, pieces: 0, cutsInsideCharacters: 0, events: 0 };
  const started = Date.now();
  await fc.assert(
    fc.asyncProperty(programArb, async (p) => {
      const d = await startDashboard(p.clusters, p.initial, { seed: p.seed, fastRetry: true });
      d.wire.mix = p.mix;
      const page = openPage(d.wire, streamQuery(p.filter));
      try {
        if (p.liveFirst) await until('the page is live', () => page.store.connection === 'live' && page.events > 0, 5_000, () => diagnose(d, page));
        for (const step of p.steps) {
          await runStep(d, step);
          if (step.pause === 'tick') await tick();
          else if (step.pause !== 'none') await sleep(step.pause);
        }
        d.wire.heal();
        await assertQuietAndEqual(d, page, p.filter, failures);
      } finally {
        await page.close();
        await d.close();
        totals.programs++;
        totals.steps += p.steps.length;
        totals.events += page.events;
        totals.modelEvents += d.modelEvents();
        for (const k of ['connections', 'cuts', 'refused', 'gateway', 'pieces', 'cutsInsideCharacters'] as const) totals[k] += d.wire.stats[k];
      }
    }),
    // A failing program costs a fence timeout per shrink step: report the smallest found by then.
    { numRuns: PROGRAMS, interruptAfterTimeLimit: SEARCH_MS, markInterruptAsFailure: true },
  );
  t.diagnostic(`${JSON.stringify(totals)} in ${Date.now() - started} ms`);
  // The search did what it says: faults of every kind happened, pieces ended inside characters.
  assert.ok(totals.cuts > 0 && totals.refused > 0 && totals.gateway > 0 && totals.cutsInsideCharacters > 0, JSON.stringify(totals));
});

// ---------------------------------------------------------------------------------------------
// Named examples

const ONE_CLUSTER: ViewSpec = { state: 'reachable', error: '', warnings: [], lastSync: TIMES[2] };

const SAMPLE: ObjSpec = {
  kind: 'DigitalHumanProvider', cluster: 'alpha', namespace: 'default', name: 'tokyo', incarnation: 0, generation: 1, caughtUp: true,
  ready: { status: 'True', reason: 'ProviderReady', message: 'ok 日本語 😀\u2028\r', current: true, since: TIMES[1] }, deleting: false, createdAt: TIMES[0]!,
  image: '', port: 1, phase: undefined, statusReason: undefined, statusMessage: undefined, rollout: false,
  region: 'ap-northeast-1 東京', endpoint: 'https://vendor.invalid/é', displayName: 'Tōkyō 👩‍👩‍👧‍👦', providerID: 'pid-1', finalizer: true,
  usage: { callsToday: 1, dailyQuota: 10, quotaRemaining: 9 }, limitedBy: undefined, recommendation: undefined,
};

/** One cluster, one provider, one page showing exactly the model: where the named examples start. */
async function pageInStep(t: TestContext, options: { seed: number; fastRetry: boolean }): Promise<{ d: Dashboard; page: Page; failures: unknown[] }> {
  const failures = watchFailures(t);
  const d = await startDashboard(['alpha'], [ONE_CLUSTER], options);
  d.model.upsert('alpha', 'DigitalHumanProvider', kubeObject(SAMPLE));
  const page = openPage(d.wire, streamQuery(undefined));
  t.after(async () => {
    await page.close();
    await d.close();
  });
  await assertQuietAndEqual(d, page, undefined, failures);
  return { d, page, failures };
}

test('a 502 from a reverse proxy while the dashboard restarts: the page reconnects and catches up', { timeout: 60_000 }, async (t) => {
  const { d, page, failures } = await pageInStep(t, { seed: 1, fastRetry: true });
  // The dashboard goes away (the connection drops) and nginx in front of it answers 502 until
  // it is back; meanwhile things change.
  d.wire.gateway([502]);
  d.wire.cut(false, 0);
  await until('the page saw the connection go', () => page.store.connection === 'reconnecting', 5_000, () => diagnose(d, page));
  d.model.upsert('alpha', 'DigitalHumanProvider', kubeObject({ ...SAMPLE, generation: 2, caughtUp: false }));
  d.model.setCluster(clusterView('alpha', { ...ONE_CLUSTER, state: 'unreachable', error: 'connect ECONNREFUSED' }));
  await until('the proxy answered 502', () => d.wire.stats.gateway === 1, 5_000, () => diagnose(d, page));
  await assertQuietAndEqual(d, page, undefined, failures);
});

test('a connection cut at any byte of a response (head, retry, snapshot, the events after it) is recovered from', { timeout: 120_000 }, async (t) => {
  const failures = watchFailures(t);
  const d = await startDashboard(['alpha', 'Beta.2'], [ONE_CLUSTER, { ...ONE_CLUSTER, state: 'connecting' }], { seed: 2, fastRetry: true });
  const pages: Page[] = [];
  t.after(async () => {
    for (const p of pages) await p.close();
    await d.close();
  });
  d.model.upsert('alpha', 'DigitalHumanProvider', kubeObject(SAMPLE));
  d.model.upsert('Beta.2', 'Microservice', kubeObject({ ...SAMPLE, kind: 'Microservice', cluster: 'Beta.2', image: 'registry.example/ü:1 — 🐳', statusMessage: 'line\r\nnext\u2029' }));
  // Every new stream gets a snapshot and then changes after it, so the cuts fall in those too.
  let n = 0;
  const subscribe = d.model.subscribe.bind(d.model);
  d.model.subscribe = (listener) => {
    const unsubscribe = subscribe(listener);
    const i = ++n;
    setImmediate(() => {
      d.model.upsert('alpha', 'DigitalHumanProvider', kubeObject({ ...SAMPLE, ready: { ...SAMPLE.ready!, message: `${i} 中文😀` } }));
      d.model.setCluster(clusterView('Beta.2', { ...ONE_CLUSTER, state: i % 2 ? 'reachable' : 'connecting', lastSync: TIMES[i % 4] }));
    });
    return unsubscribe;
  };
  // How long a response is, measured on a healthy one.
  const probe = openPage(d.wire, streamQuery(undefined));
  pages.push(probe);
  await assertQuietAndEqual(d, probe, undefined, failures);
  await sleep(20);
  await probe.close();
  const length = d.wire.stats.bytesToClients + 200; // and a little past its end
  const cuts = LONG ? length : 250;
  const offset = (k: number) => (LONG ? k : Math.floor((k * length) / cuts) + (k % 7));
  const base = d.wire.stats.connections;
  d.wire.cutPolicy = (ordinal) => {
    const k = ordinal - base - 1;
    return k < cuts ? { bytes: offset(k), abrupt: k % 2 === 0 } : undefined;
  };
  const page = openPage(d.wire, streamQuery(undefined));
  pages.push(page);
  // A cut offset past the end of what a connection got so far is reached by later changes.
  let later = 0;
  const changes = setInterval(() => d.model.upsert('Beta.2', 'Microservice', kubeObject({ ...SAMPLE, kind: 'Microservice', cluster: 'Beta.2', name: 'later', image: `img:${++later}` })), 20);
  const started = Date.now();
  try {
    await until('every cut connection was reconnected', () => d.wire.stats.connections > base + cuts, 60_000, () => diagnose(d, page));
  } finally {
    clearInterval(changes);
  }
  t.diagnostic(`${cuts} cuts over ${length} bytes, each reconnected, in ${Date.now() - started} ms`);
  await assertQuietAndEqual(d, page, undefined, failures);
  assert.equal(d.wire.stats.cuts, cuts);
});

test('a page that stops reading is cut off past 8 MiB and comes back through a fresh snapshot', { timeout: 60_000 }, async (t) => {
  // The server's own `retry: 1000` this time.
  const { d, page, failures } = await pageInStep(t, { seed: 3, fastRetry: false });
  // The page stops reading (a laptop lid closed): the server's writes pile up until it lets go.
  d.wire.pause();
  const big = '😀中文é\u2028'.repeat(64 * 1024 / 12);
  let written = 0;
  for (let i = 0; d.streams() > 0 && written < 200 * 1024 * 1024; i++) {
    d.model.upsert('alpha', 'Microservice', kubeObject({ ...SAMPLE, kind: 'Microservice', name: `ms-${i % 50}`, statusMessage: `${i} ${big}` }));
    written += Buffer.byteLength(big);
    if (i % 8 === 0) await tick();
  }
  assert.equal(d.streams(), 0, `the server still holds the stream after ${written} bytes`);
  t.diagnostic(`the server let the stream go after about ${(written / 1024 / 1024).toFixed(1)} MiB of changes`);
  d.model.remove('alpha', 'Microservice', kubeObject({ ...SAMPLE, kind: 'Microservice', name: 'ms-7' }));
  d.wire.resume();
  await until('the page reconnected', () => d.wire.stats.connections >= 2, 10_000, () => diagnose(d, page));
  await assertQuietAndEqual(d, page, undefined, failures);
});

test('a reconnected page says live only once the new snapshot is in (until then its rows are the old stream\'s)', () => {
  class ScriptedEventSource extends EventTarget {
    static readonly CLOSED = 2;
    readyState = 0;
    close(): void {
      this.readyState = 2;
    }
  }
  const sources: ScriptedEventSource[] = [];
  const g = globalThis as Record<string, unknown>;
  const saved = { EventSource: g.EventSource, requestAnimationFrame: g.requestAnimationFrame };
  g.EventSource = class extends ScriptedEventSource {
    constructor() {
      super();
      sources.push(this);
    }
  };
  g.requestAnimationFrame = () => 0;
  try {
    const store = new Store();
    store.connect();
    const source = sources[0]!;
    const message = (type: string, data: unknown) => Object.assign(new Event(type), { data: JSON.stringify(data) });
    source.dispatchEvent(new Event('open'));
    assert.notEqual(store.connection, 'live', 'open, no snapshot yet');
    source.dispatchEvent(message('snapshot', { type: 'snapshot', clusters: [], microservices: [], providers: [] }));
    assert.equal(store.connection, 'live');
    // The connection drops; the browser reconnects by itself (same EventSource).
    source.dispatchEvent(new Event('error'));
    assert.equal(store.connection, 'reconnecting');
    source.dispatchEvent(new Event('open'));
    assert.equal(store.connection, 'reconnecting', 'reconnected, the rows still the old stream\'s');
    source.dispatchEvent(message('snapshot', { type: 'snapshot', clusters: [], microservices: [], providers: [] }));
    assert.equal(store.connection, 'live');
    store.close();
  } finally {
    g.EventSource = saved.EventSource;
    g.requestAnimationFrame = saved.requestAnimationFrame;
  }
});
