/**
 * Counts reconciles per object key for operators running in this process, through the
 * runtime's reconcile spans (`reconcile <controller>`, attribute `converge.key`): a minimal
 * OpenTelemetry tracer provider that records the attributes and returns non-recording spans.
 * The global provider can be set once per process, so call `recordReconciles()` once per file.
 * @module
 */
import { trace, INVALID_SPAN_CONTEXT } from '@opentelemetry/api';
import type { Attributes, SpanOptions, Tracer, TracerProvider } from '@opentelemetry/api';

export interface ReconcileLog {
  /** `<controller> <namespace>/<name>` → reconciles since the start (or the last `reset`). */
  readonly counts: Map<string, number>;
  total(): number;
  reset(): void;
}

let installed: ReconcileLog | undefined;

export function recordReconciles(): ReconcileLog {
  if (installed) return installed;
  const counts = new Map<string, number>();
  const record = (name: string, attributes: Attributes | undefined) => {
    if (!name.startsWith('reconcile ') || !attributes) return;
    const key = `${attributes['converge.controller']} ${attributes['converge.key']}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const tracer = {
    startSpan(name: string, options?: SpanOptions) {
      record(name, options?.attributes);
      return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    },
    startActiveSpan(name: string, ...rest: unknown[]) {
      const fn = rest[rest.length - 1] as (span: unknown) => unknown;
      const options = (rest.length > 1 ? rest[0] : undefined) as SpanOptions | undefined;
      record(name, options?.attributes);
      return fn(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
    },
  } as unknown as Tracer;
  const provider: TracerProvider = { getTracer: () => tracer };
  if (!trace.setGlobalTracerProvider(provider)) throw new Error('a global tracer provider is already registered in this process');
  installed = {
    counts,
    total: () => [...counts.values()].reduce((n, v) => n + v, 0),
    reset: () => counts.clear(),
  };
  return installed;
}
