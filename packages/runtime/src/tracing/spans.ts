/**
 * A span per reconcile, and the API calls made inside it as child spans.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, trace, SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { ClientObserver, RequestInfo } from '../client/index.ts';

export const TRACER_NAME = 'converge-runtime';

/** The reconcile span of the running async call chain, kept apart from OTel's context manager (which may be absent). */
const current = new AsyncLocalStorage<Span>();

function defaultTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

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
  const tracer = options.tracer ?? defaultTracer();
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
      const tracer = options.tracer ?? defaultTracer();
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
