/**
 * `KubeClient`: typed access to any kind, built-in or custom, over HTTPS.
 *
 * Contracts:
 * - Every method either resolves with the API server's answer or rejects with an `ApiError`
 *   (see `errors.ts`); nothing is retried here — retrying is the controller's job, where the
 *   backoff belongs to the object being reconciled.
 * - Requests may be rate limited client-side (token bucket, `qps`/`burst`) and time out after
 *   `timeoutMs` (watches excepted: they end by the server's `timeoutSeconds` or the caller's signal).
 * - Successful writes are reported to observers (`observe`) so the cache can see the operator's
 *   own writes at once (read-your-own-writes; ADR 0002).
 * - Watch streams are framed on bytes: a chunk cut inside a multi-byte character never
 *   corrupts an event (`line-framer.ts`).
 * - `metadataOnly` reads (get, list, watch) ask for `PartialObjectMetadata`, as controller-runtime's
 *   metadata client does, and return metadata only (also from a server that ignores the ask).
 * - A partial object (metadata only, or reduced by an informer's transform) is never written:
 *   create, replace and apply throw before sending it.
 * - Authentication and TLS come from the `KubeConfig` (`../kubeconfig/`: client certificates,
 *   tokens, token files, exec plugins, in-cluster config, plain `http://`); HTTP is Node's own
 *   (`transport.ts`). Credentials never reach logs or errors.
 * - No client-side rate limit by default, as controller-runtime since v0.21: the API server's
 *   Priority and Fairness protects it (ADR 0026). `qps` sets one token bucket for the client;
 *   `withRateLimit` gives a view with its own bucket (Events use one, so they never take the
 *   reconciles' budget).
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { Credentials, KubeConfigError } from '../kubeconfig/index.ts';
import type { KubeObject, ObjectList, ResourceKind, ObjectKey, PartialObjectMetadata } from '../objects/index.ts';
import { formatKey, isPartial, keyOf, toPartialObjectMetadata } from '../objects/index.ts';
import { TokenBucket } from '../rate-limit/index.ts';
import { ApiError, apiErrorFromResponse, apiErrorFromWatchEvent } from './errors.ts';
import { resourceOfPath } from './path-resource.ts';
import { LineFramer } from './line-framer.ts';
import { deleteOutcome } from './delete-outcome.ts';
import { CredentialsNotReadyError, Transport, readText } from './transport.ts';
import type { ApplyOptions, DeleteOptions, KubeClientOptions, ListAllOptions, ListOptions, Patch, PatchOptions, WatchEvent, WatchOptions, WriteOptions } from './options.ts';

export interface ClientObserver {
  /**
   * Called after every HTTP request (watches when they end) with its outcome. What an observer
   * throws is ignored (as for `onWrite` and `onDelete`): the request's outcome stands.
   */
  onRequest?(info: RequestInfo): void;
  /** Called after a successful create/update/patch/apply with the object the server returned. */
  onWrite?(kind: ResourceKind, object: KubeObject): void;
  /**
   * Called after a successful delete; `object` is set when the object still exists (finalizers,
   * graceful deletion), else `deleted` names the UID that is gone (when the answer says).
   */
  onDelete?(kind: ResourceKind, key: ObjectKey, object: KubeObject | undefined, deleted?: { uid?: string }): void;
}

export interface RequestInfo {
  method: string;
  /** HTTP status code, or 0 when no answer came (network failure, timeout). */
  code: number;
  durationMs: number;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete. */
  verb: string;
  /** Plural resource name (with `/status` for the subresource). */
  resource: string;
}

const PATCH_CONTENT_TYPE = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

interface RawResponse {
  code: number;
  body: unknown;
}

const ACCEPT_PARTIAL = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const ACCEPT_PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** What views of one client (`withRateLimit`) share: connections, credentials, observers. */
interface Shared {
  transport: Transport;
  credentials: Credentials;
  observers: Set<ClientObserver>;
}
let adopting: Shared | undefined;

export class KubeClient {
  readonly server: string;
  readonly fieldManager: string;
  readonly #options: KubeClientOptions;
  readonly #userAgent: string;
  readonly #timeoutMs: number;
  readonly #bucket: TokenBucket | undefined;
  readonly #shared: Shared;

  constructor(options: KubeClientOptions) {
    const adopted = adopting;
    adopting = undefined;
    if (adopted) this.#shared = adopted;
    else {
      const credentials = new Credentials(options.kubeConfig, options.credentials);
      this.#shared = { credentials, transport: new Transport(credentials), observers: new Set() };
    }
    this.#options = options;
    this.server = this.#shared.credentials.server;
    this.#userAgent = options.userAgent ?? 'converge/0.1';
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.fieldManager = options.fieldManager ?? 'converge';
    const qps = options.qps ?? 0;
    this.#bucket = qps > 0 ? new TokenBucket({ qps, burst: options.burst ?? Math.max(1, Math.ceil(qps * 2)) }) : undefined;
  }

  /**
   * The same client (connections, credentials, observers) with its own rate limit: `null` for
   * none. Closing either closes both.
   */
  withRateLimit(limit: { qps: number; burst?: number } | null): KubeClient {
    adopting = this.#shared;
    try {
      return new KubeClient({ ...this.#options, qps: limit?.qps ?? 0, ...(limit?.burst ? { burst: limit.burst } : {}) });
    } finally {
      adopting = undefined;
    }
  }

  /** The client-side limit in force (`undefined`: none). */
  get rateLimit(): { qps: number; burst: number } | undefined {
    return this.#bucket ? { qps: this.#bucket.qps, burst: this.#bucket.burst } : undefined;
  }

  /** Registers an observer of requests and writes; returns a function that removes it. */
  observe(observer: ClientObserver): () => void {
    this.#shared.observers.add(observer);
    return () => this.#shared.observers.delete(observer);
  }

  async get<T extends KubeObject>(kind: ResourceKind<T>, key: ObjectKey, opts?: { signal?: AbortSignal; metadataOnly?: false }): Promise<T>;
  async get(kind: ResourceKind, key: ObjectKey, opts: { signal?: AbortSignal; metadataOnly: true }): Promise<PartialObjectMetadata>;
  async get<T extends KubeObject>(kind: ResourceKind<T>, key: ObjectKey, opts: { signal?: AbortSignal; metadataOnly?: boolean } = {}): Promise<T | PartialObjectMetadata> {
    const res = await this.#send('GET', 'get', kind, this.#path(kind, key.namespace, key.name), {
      signal: opts.signal,
      ...(opts.metadataOnly ? { accept: ACCEPT_PARTIAL } : {}),
    });
    return opts.metadataOnly ? toPartialObjectMetadata(res.body as KubeObject) : (res.body as T);
  }

  /** One page of a list. See `listAll` for every page. With `metadataOnly`, items are `PartialObjectMetadata`. */
  async list<T extends KubeObject>(kind: ResourceKind<T>, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const query = new URLSearchParams();
    if (opts.labelSelector) query.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) query.set('fieldSelector', opts.fieldSelector);
    if (opts.limit) query.set('limit', String(opts.limit));
    if (opts.continue) query.set('continue', opts.continue);
    if (opts.resourceVersion !== undefined) query.set('resourceVersion', opts.resourceVersion);
    const res = await this.#send('GET', 'list', kind, this.#path(kind, opts.namespace), {
      query,
      signal: opts.signal,
      ...(opts.metadataOnly ? { accept: ACCEPT_PARTIAL_LIST } : {}),
      ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    });
    const list = res.body as ObjectList<T>;
    // An empty PartialObjectMetadataList comes with `"items": null`.
    const items = list.items ?? [];
    return { ...list, items: opts.metadataOnly ? items.map((i) => toPartialObjectMetadata(i) as unknown as T) : items };
  }

  /**
   * Every page of a list, as one consistent snapshot: the items and the list's resourceVersion.
   * When a continue token expires mid-way (410), the rest is not paged: one list of everything,
   * with the client's request timeout, as client-go's pager does. Each page has its own
   * timeout; a page whose answer was still arriving when it timed out is asked for again in
   * smaller pages (see `ListAllOptions`); one with no answer at all, once.
   */
  async listAll<T extends KubeObject>(kind: ResourceKind<T>, opts: ListAllOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    const { pageSize, pageTimeoutMs, ...listOpts } = opts;
    let limit = Math.max(1, pageSize ?? 500);
    const items: T[] = [];
    let token: string | undefined;
    /** A page with no answer at all is asked for smaller once (per page): a server that never answers fails in two timeouts, not five. */
    let unanswered = 0;
    for (;;) {
      let page: ObjectList<T>;
      try {
        page = await this.list(kind, { ...listOpts, limit, ...(token ? { continue: token } : {}), ...(pageTimeoutMs ? { timeoutMs: pageTimeoutMs } : {}) });
      } catch (err) {
        const slowAnswer = err instanceof ApiError && TIMED_OUT_READING.has(err);
        const noAnswer = err instanceof ApiError && err.reason === 'Timeout' && err.code === 0 && !slowAnswer;
        if ((slowAnswer || (noAnswer && unanswered++ < 1)) && limit > 1 && !opts.signal?.aborted) {
          limit = Math.max(1, Math.floor(limit / 4));
          continue; // the same page again, smaller
        }
        // Asked twice, unanswered twice: the message says so (it names one timeout, two passed).
        if (noAnswer && unanswered > 1) throw new ApiError({ reason: 'Timeout', code: 0, message: `${err.message}, twice (the page was asked for again, smaller)`, cause: err });
        if (!(token && err instanceof ApiError && err.reason === 'Gone')) throw err;
        // The continue token expired (its resourceVersion was compacted away while we paged).
        // Starting over in pages can fail the same way for ever when listing takes longer than
        // the compaction interval; as client-go's pager does, list once without pages.
        const all = await this.list(kind, listOpts);
        return { items: all.items, resourceVersion: all.metadata.resourceVersion ?? '' };
      }
      items.push(...page.items);
      unanswered = 0; // counted per page: the next one may be asked again once too
      token = page.metadata.continue || undefined;
      if (!token) return { items, resourceVersion: page.metadata.resourceVersion ?? '' };
    }
  }

  async create<T extends KubeObject>(kind: ResourceKind<T>, obj: T, opts: WriteOptions = {}): Promise<T> {
    refusePartial(kind, obj);
    const ns = kind.namespaced ? obj.metadata.namespace : undefined;
    const res = await this.#send('POST', 'create', kind, this.#path(kind, ns), {
      query: writeQuery(opts, this.fieldManager),
      body: JSON.stringify(withTypeMeta(kind, obj)),
      contentType: 'application/json',
      signal: opts.signal,
    });
    return this.#wrote(kind, res.body as T, opts);
  }

  /** PUT the whole object; `metadata.resourceVersion` makes it a compare-and-swap (409 Conflict when stale). */
  async replace<T extends KubeObject>(kind: ResourceKind<T>, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put(kind, obj, undefined, opts);
  }

  /** PUT the status subresource (spec changes in `obj` are ignored by the server). */
  async replaceStatus<T extends KubeObject>(kind: ResourceKind<T>, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put(kind, obj, 'status', opts);
  }

  async patch<T extends KubeObject>(kind: ResourceKind<T>, key: ObjectKey, patch: Patch, opts: PatchOptions = {}): Promise<T> {
    const res = await this.#send('PATCH', 'patch', kind, this.#path(kind, key.namespace, key.name, opts.subresource), {
      query: writeQuery(opts, this.fieldManager),
      body: JSON.stringify(patch.body),
      contentType: PATCH_CONTENT_TYPE[patch.type],
      signal: opts.signal,
    });
    return this.#wrote(kind, res.body as T, opts);
  }

  /**
   * Server-Side Apply: the server merges `obj` into the live object and records this client's
   * field manager as the owner of every field in `obj`. Creates the object when it is missing.
   * A `metadata.resourceVersion` in `obj` makes it a compare-and-swap.
   */
  async apply<T extends KubeObject>(kind: ResourceKind<T>, obj: T, opts: ApplyOptions = {}): Promise<T> {
    refusePartial(kind, obj);
    const query = writeQuery(opts, this.fieldManager);
    if (opts.force) query.set('force', 'true');
    const key = keyOf(obj);
    const res = await this.#send('PATCH', 'patch', kind, this.#path(kind, key.namespace, key.name, opts.subresource), {
      query,
      body: JSON.stringify(withTypeMeta(kind, obj)),
      contentType: 'application/apply-patch+yaml',
      signal: opts.signal,
    });
    return this.#wrote(kind, res.body as T, opts);
  }

  /**
   * Deletes an object. Resolves with the object when it still exists afterwards (it has
   * finalizers, deletion is in the foreground, or a graceful deletion is pending), or `undefined`
   * when it is gone. A NotFound answer is an error: callers that treat it as success say so.
   *
   * The answer is a Status for most kinds and the deleted object for some built-ins; a returned
   * object is still there only with finalizers or a pending graceful deletion (`delete-outcome.ts`).
   */
  async delete<T extends KubeObject>(kind: ResourceKind<T>, key: ObjectKey, opts: DeleteOptions = {}): Promise<T | undefined> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    if (opts.preconditions) body.preconditions = opts.preconditions;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    // In the body, not the query: kube-apiserver reads a DELETE's options from its body when it
    // has one and ignores the query then (a `?dryRun=All` with this body deleted for real).
    if (opts.dryRun) body.dryRun = ['All'];
    const res = await this.#send('DELETE', 'delete', kind, this.#path(kind, key.namespace, key.name), {
      body: JSON.stringify(body),
      contentType: 'application/json',
      signal: opts.signal,
    });
    const { still, uid } = deleteOutcome<T>(res.body);
    if (!opts.dryRun) for (const o of this.#shared.observers) tell(() => o.onDelete?.(kind, key, still, still ? undefined : { ...(uid ? { uid } : {}) }));
    return still;
  }

  /**
   * Opens a watch and yields its events until the server ends it, the signal aborts, or an
   * error occurs (an ERROR event becomes a thrown `ApiError`; 410 Gone has reason `Gone`).
   * Recovery (resume, relist, backoff) is the cache's job, not this method's.
   */
  async *watch<T extends KubeObject>(kind: ResourceKind<T>, opts: WatchOptions, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const query = new URLSearchParams({ watch: 'true' });
    if (opts.resourceVersion) query.set('resourceVersion', opts.resourceVersion);
    if (opts.allowWatchBookmarks) query.set('allowWatchBookmarks', 'true');
    if (opts.timeoutSeconds) query.set('timeoutSeconds', String(opts.timeoutSeconds));
    if (opts.labelSelector) query.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) query.set('fieldSelector', opts.fieldSelector);
    const started = performance.now();
    const resource = kind.plural;
    const headers = this.#baseHeaders();
    if (opts.metadataOnly) headers.accept = ACCEPT_PARTIAL;
    let code = 0;
    try {
      await this.#bucket?.take(signal);
      const res = await this.#shared.transport.send({
        method: 'GET',
        path: `${this.#path(kind, opts.namespace)}?${query}`,
        headers,
        signal,
        headersTimeoutMs: this.#timeoutMs,
      });
      code = res.statusCode ?? 0;
      if (code >= 300) {
        throw apiErrorFromResponse(code, await readBody(res), headerValue(res.headers['retry-after']));
      }
      const framer = new LineFramer();
      for await (const chunk of res) {
        for (const raw of framer.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Uint8Array))) {
          const line = raw.trim();
          if (!line) continue;
          const event = JSON.parse(line) as { type: string; object: unknown };
          if (event.type === 'ERROR') throw apiErrorFromWatchEvent(event.object);
          if (opts.metadataOnly && event.type !== 'BOOKMARK') event.object = toPartialObjectMetadata(event.object as KubeObject);
          yield event as WatchEvent<T>;
        }
      }
    } catch (err) {
      throw toApiError(err, signal);
    } finally {
      this.#report({ method: 'GET', code, durationMs: performance.now() - started, verb: 'watch', resource });
    }
  }

  /**
   * A raw request against the API server for what the typed methods do not cover
   * (e.g. SelfSubjectAccessReview). `path` starts with `/api` or `/apis`.
   */
  async request<R = unknown>(method: string, path: string, opts: { body?: unknown; contentType?: string; query?: URLSearchParams; signal?: AbortSignal } = {}): Promise<R> {
    const res = await this.#raw(method, path, {
      ...(opts.query ? { query: opts.query } : {}),
      ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body), contentType: opts.contentType ?? 'application/json' }),
      signal: opts.signal,
    }, verbOfMethod(method), resourceOfPath(path));
    return res.body as R;
  }

  /**
   * Closes every connection, open watches included (they end with an error their consumers see
   * as an abort); the client must not be used afterwards. Never waits on a watch.
   */
  async close(): Promise<void> {
    this.#shared.transport.close();
  }

  async #put<T extends KubeObject>(kind: ResourceKind<T>, obj: T, subresource: 'status' | undefined, opts: WriteOptions): Promise<T> {
    refusePartial(kind, obj);
    const key = keyOf(obj);
    const res = await this.#send('PUT', 'update', kind, this.#path(kind, key.namespace, key.name, subresource), {
      query: writeQuery(opts, this.fieldManager),
      body: JSON.stringify(withTypeMeta(kind, obj)),
      contentType: 'application/json',
      signal: opts.signal,
    });
    return this.#wrote(kind, res.body as T, opts);
  }

  #wrote<T extends KubeObject>(kind: ResourceKind<T>, obj: T, opts: WriteOptions): T {
    if (!opts.dryRun) for (const o of this.#shared.observers) tell(() => o.onWrite?.(kind, obj));
    return obj;
  }

  #path(kind: ResourceKind, namespace?: string, name?: string, subresource?: string): string {
    let path = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
    if (kind.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
    path += `/${kind.plural}`;
    if (name !== undefined) {
      if (!name) throw new Error(`empty name for ${kind.kind}`);
      path += `/${encodeURIComponent(name)}`;
    }
    if (subresource) path += `/${subresource}`;
    return path;
  }

  async #send(
    method: string,
    verb: string,
    kind: ResourceKind,
    path: string,
    init: RequestInit,
  ): Promise<RawResponse> {
    const resource = path.endsWith('/status') ? `${kind.plural}/status` : kind.plural;
    return this.#raw(method, path, init, verb, resource);
  }

  async #raw(
    method: string,
    path: string,
    init: RequestInit,
    verb: string,
    resource: string,
  ): Promise<RawResponse> {
    // A timer cleared when the request ends, not AbortSignal.timeout/any: those keep a signal and
    // a timer alive for the whole timeout after the request is done (≈ 1,000 of them at once on a
    // cold start of 500 Microservices, issue 17), and the caller's signal would hold a listener.
    const deadline = new AbortController();
    const timeoutMs = init.timeoutMs ?? this.#timeoutMs;
    const timer = setTimeout(() => deadline.abort(new Error('request timed out')), timeoutMs);
    timer.unref?.();
    const outer = init.signal;
    const onOuterAbort = () => deadline.abort(outer?.reason);
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    const signal = deadline.signal;
    const started = performance.now();
    let code = 0;
    try {
      await this.#bucket?.take(signal);
      const headers = this.#baseHeaders();
      if (init.contentType) headers['content-type'] = init.contentType;
      if (init.accept) headers.accept = init.accept;
      const qs = init.query && init.query.size > 0 ? `?${init.query}` : '';
      const res = await this.#shared.transport.send({
        method,
        path: `${path}${qs}`,
        headers,
        ...(init.body === undefined ? {} : { body: init.body }),
        signal,
      });
      code = res.statusCode ?? 0;
      const body = await readBody(res);
      if (code >= 300) throw apiErrorFromResponse(code, body, headerValue(res.headers['retry-after']));
      if (typeof body === 'string') {
        // A web page or a proxy's text where JSON belongs: not an API server (a wrong server URL,
        // a sign-in page in front of it). Never read as an empty answer.
        const snippet = body.length > 200 ? `${body.slice(0, 200)}…` : body;
        throw new ApiError({ reason: 'ServerError', code, message: `${this.server} did not answer as a Kubernetes API server (${code} ${headerValue(res.headers['content-type']) ?? 'no content type'}): ${snippet}` });
      }
      return { code, body };
    } catch (err) {
      throw toApiError(err, outer, signal, { server: this.server, timeoutMs, answered: code > 0 });
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
      this.#report({ method, code, durationMs: performance.now() - started, verb, resource });
    }
  }

  #report(info: RequestInfo): void {
    // Guarded as writes are: an observer that throws (a tracer's span processor, a metrics bug)
    // must neither replace the request's own outcome nor keep the observers after it uninformed.
    for (const o of this.#shared.observers) tell(() => o.onRequest?.(info));
  }

  #baseHeaders(): Record<string, string> {
    return { 'user-agent': this.#userAgent, accept: 'application/json' };
  }
}

interface RequestInit {
  query?: URLSearchParams;
  body?: string;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

function refusePartial(kind: ResourceKind, obj: KubeObject): void {
  if (!isPartial(obj)) return;
  throw new Error(
    `refusing to write ${kind.kind} ${formatKey(keyOf(obj))}: it is a partial copy from the cache (metadata only, or reduced by the informer's transform); ` +
      'read the whole object from the API server (client.get) and write that',
  );
}

function writeQuery(opts: WriteOptions, defaultManager: string): URLSearchParams {
  const query = new URLSearchParams({ fieldManager: opts.fieldManager ?? defaultManager });
  if (opts.dryRun) query.set('dryRun', 'All');
  return query;
}

function withTypeMeta<T extends KubeObject>(kind: ResourceKind<T>, obj: T): T {
  return { ...obj, apiVersion: kind.apiVersion, kind: kind.kind };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(res: IncomingMessage): Promise<unknown> {
  const text = await readText(res);
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Timeouts of requests whose answer had begun (headers came, the body was still arriving). */
const TIMED_OUT_READING = new WeakSet<ApiError>();

/**
 * `deadline` is the request's own signal, aborted by its deadline timer (or by `callerSignal`,
 * checked first); `timeout` says which timeout it was: the answer had begun (headers came, the
 * body was still arriving) or no answer came at all.
 */
function toApiError(err: unknown, callerSignal?: AbortSignal, deadline?: AbortSignal, timeout?: { server: string; timeoutMs: number; answered: boolean }): unknown {
  if (err instanceof ApiError) return err;
  if (callerSignal?.aborted) return callerSignal.reason ?? err;
  // The timeout passed while the credentials were being obtained: nothing was sent, so it is not
  // the API server that did not answer (and not worth asking again at once, as a silent server is).
  if (err instanceof CredentialsNotReadyError) {
    return new ApiError({ reason: 'Unauthorized', code: 0, message: `no credentials${timeout ? ` within ${timeout.timeoutMs} ms` : ''}: ${err.message}; nothing was sent${timeout ? ` to ${timeout.server}` : ''}`, cause: err });
  }
  if (deadline?.aborted) {
    if (!timeout) return new ApiError({ reason: 'Timeout', code: 0, message: 'request timed out', cause: err });
    const { server, timeoutMs, answered } = timeout;
    const timedOut = new ApiError({ reason: 'Timeout', code: 0, message: answered ? `the answer of ${server} was still arriving after ${timeoutMs} ms` : `no answer from ${server} within ${timeoutMs} ms`, cause: err });
    if (answered) TIMED_OUT_READING.add(timedOut);
    return timedOut;
  }
  // No credentials to send (an exec plugin failed, a token file is unreadable): nothing was sent.
  if (err instanceof KubeConfigError) return new ApiError({ reason: 'Unauthorized', code: 0, message: `no credentials: ${err.message}`, cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError({ reason: 'Network', code: 0, message: `network error: ${message}`, cause: err });
}

/** The Kubernetes verb of a raw request (as the API server's audit log names it): POST creates. */
function verbOfMethod(method: string): string {
  const m = method.toUpperCase();
  return m === 'POST' ? 'create' : m === 'PUT' ? 'update' : m === 'PATCH' ? 'patch' : m === 'DELETE' ? 'delete' : m === 'GET' ? 'get' : m.toLowerCase();
}

/**
 * Tells an observer of a request or of a write the API server accepted. An observer that throws
 * (a bug: the cache reports its own failures) neither fails the request, whose outcome stands,
 * nor keeps the observers after it from hearing of it; the watch then brings a written object
 * to it.
 */
function tell(notify: () => void): void {
  try {
    notify();
  } catch {
    // See above: the write stands.
  }
}
