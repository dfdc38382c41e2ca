/**
 * Optional OpenTelemetry traces: a span per reconcile, with the API calls made inside it as
 * child spans.
 *
 * Guarantees:
 * - Uses only `@opentelemetry/api`. Until the application registers a tracer provider (e.g. the
 *   OTel Node SDK), every span is a no-op and costs next to nothing; nothing is exported, and
 *   the API itself is not even loaded (it is ≈ 100 modules).
 * - `withReconcileSpan` never changes the outcome of the work it wraps: the result and any
 *   thrown error pass through unchanged (errors are recorded on the span first).
 * - Parenting of API-call spans does not depend on an OTel context manager being installed:
 *   the runtime keeps the reconcile span in its own AsyncLocalStorage. The span is also made
 *   the active OTel span, so user code with a context manager nests its own spans under it.
 *
 * Caveats: API-call spans are recorded when the request ends (start time back-dated by its
 * duration), so they appear in the trace after the fact; watches are never traced.
 * @module
 */
export { withReconcileSpan, apiCallObserver, activeReconcileSpan, TRACER_NAME } from './spans.ts';
export type { ReconcileSpanOptions } from './spans.ts';
