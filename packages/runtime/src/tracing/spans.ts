/**
 * A span per reconcile, and the API calls made inside it as child spans.
 *
 * `@opentelemetry/api` (≈ 100 modules) is loaded only when there is something to trace: a
 * tracer passed in, or a tracer provider registered globally (by an OTel SDK, which registers it
 * under the API's global symbol before the operator starts). Otherwise a reconcile runs with a
 * no-op span and the API is never loaded.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { loadOnFirstUse } from '../loading/index.ts';
import type { Span, SpanContext, Tracer } from '@opentelemetry/api';
import type { ClientObserver, RequestInfo } from '../client/index.ts';

export const TRACER_NAME = 'converge-runtime';

type OtelApi = typeof import('@opentelemetry/api');

/** Where the OTel API (any copy of version 1) keeps its registered providers. */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');
let api: OtelApi | undefined;

/** The OTel API when tracing can record anything (`tracer` given, or a provider registered); else undefined. */
function otel(tracer: Tracer | undefined): OtelApi | undefined {
  if (api) return api;
  const registered = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[OTEL_GLOBAL]?.trace;
  if (!tracer && !registered) return undefined;
  api = loadOnFirstUse<OtelApi>('@opentelemetry/api');
  return api;
}

const NO_SPAN_CONTEXT: SpanContext = { traceId: '00000000000000000000000000000000', spanId: '0000000000000000', traceFlags: 0 };
/** What `fn` gets when nothing traces: every method does nothing. */
const NOOP_SPAN: Span = {
  spanContext: () => NO_SPAN_CONTEXT,
  setAttribute: () => NOOP_SPAN,
  setAttributes: () => NOOP_SPAN,
  addEvent: () => NOOP_SPAN,
  addLink: () => NOOP_SPAN,
  addLinks: () => NOOP_SPAN,
  setStatus: () => NOOP_SPAN,
  updateName: () => NOOP_SPAN,
  end: () => undefined,
  isRecording: () => false,
  recordException: () => undefined,
};

/** The reconcile span of the running async call chain, kept apart from OTel's context manager (which may be absent). */
const current = new AsyncLocalStorage<Span>();

export interface ReconcileSpanOptions {
  /** Default: the global tracer provider's `converge-runtime` tracer (a no-op until one is registered). */
  tracer?: Tracer;
  reconcileId?: string;
}

/**
 * Runs `fn` inside a `reconcile <controller>` span. The span ends when `fn` settles; a thrown
 * error is recorded and marks the span as failed, then rethrown unchanged. API calls made by
 * `fn` (with `apiCallObserver` registered on the client) become its children.
 */
export async function withReconcileSpan<T>(
  controller: string,
  key: string,
  fn: (span: Span) => Promise<T>,
  options: ReconcileSpanOptions = {},
): Promise<T> {
  const otelApi = otel(options.tracer);
  if (!otelApi) return fn(NOOP_SPAN);
  const { context, trace, SpanKind, SpanStatusCode } = otelApi;
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  const slash = key.indexOf('/');
  const span = tracer.startSpan(`reconcile ${controller}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      'converge.controller': controller,
      'converge.key': key,
      'k8s.namespace.name': slash < 0 ? '' : key.slice(0, slash),
      'converge.object.name': slash < 0 ? key : key.slice(slash + 1),
      ...(options.reconcileId ? { 'converge.reconcile_id': options.reconcileId } : {}),
    },
  });
  const run = (): Promise<T> => context.with(trace.setSpan(context.active(), span), () => fn(span));
  try {
    const result = await (span.isRecording() ? current.run(span, run) : run());
    span.setStatus({ code: SpanStatusCode.OK });
    return result;
  } catch (err) {
    if (err instanceof Error) span.recordException(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** The reconcile span of the current async call chain, if one is recording. */
export function activeReconcileSpan(): Span | undefined {
  return current.getStore();
}

/**
 * A `ClientObserver` that records each API request made inside a recording reconcile span as a
 * CLIENT child span (`<verb> <resource>`, with method, status code and duration). Requests made
 * outside a reconcile (watches, lists of the cache, leader election) are not recorded.
 * Register it with `client.observe(apiCallObserver())`.
 */
export function apiCallObserver(options: { tracer?: Tracer } = {}): ClientObserver {
  return {
    onRequest(info: RequestInfo): void {
      const parent = current.getStore();
      if (!parent?.isRecording()) return;
      const otelApi = otel(options.tracer);
      if (!otelApi) return;
      const { context, trace, SpanKind, SpanStatusCode } = otelApi;
      const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
      const end = Date.now();
      const span = tracer.startSpan(
        `${info.verb} ${info.resource}`,
        {
          kind: SpanKind.CLIENT,
          startTime: new Date(end - info.durationMs),
          attributes: {
            'http.request.method': info.method,
            'http.response.status_code': info.code,
            'k8s.verb': info.verb,
            'k8s.resource': info.resource,
          },
        },
        trace.setSpan(context.active(), parent),
      );
      if (info.code === 0 || info.code >= 400) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: info.code === 0 ? 'no response' : `HTTP ${info.code}` });
      }
      span.end(new Date(end));
    },
  };
}
