import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  trace,
  SpanStatusCode,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
  type TracerProvider,
  type TimeInput,
} from '@opentelemetry/api';
import { withReconcileSpan, apiCallObserver, activeReconcileSpan } from './index.ts';

/** A minimal in-memory tracer (the SDK's peer range excludes the API version we use). */
class RecordedSpan implements Span {
  readonly name: string;
  readonly attributes: Attributes;
  readonly parentSpanId: string | undefined;
  readonly startTime: TimeInput | undefined;
  readonly ctx: SpanContext;
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  exceptions: unknown[] = [];
  ended = false;
  constructor(name: string, options: SpanOptions, parent: SpanContext | undefined) {
    this.name = name;
    this.attributes = { ...options.attributes };
    this.startTime = options.startTime;
    this.parentSpanId = parent?.spanId;
    this.ctx = { traceId: parent?.traceId ?? randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.SAMPLED };
  }
  spanContext(): SpanContext { return this.ctx; }
  setAttribute(k: string, v: never): this { this.attributes[k] = v; return this; }
  setAttributes(a: Attributes): this { Object.assign(this.attributes, a); return this; }
  addEvent(): this { return this; }
  addLink(): this { return this; }
  addLinks(): this { return this; }
  setStatus(s: SpanStatus): this { this.status = s; return this; }
  updateName(): this { return this; }
  end(): void { this.ended = true; }
  isRecording(): boolean { return !this.ended; }
  recordException(e: unknown): void { this.exceptions.push(e); }
}
class RecordingTracer implements Tracer {
  readonly spans: RecordedSpan[] = [];
  startSpan(name: string, options: SpanOptions = {}, ctx?: Context): Span {
    const parent = ctx ? trace.getSpanContext(ctx) : undefined;
    const span = new RecordedSpan(name, options, parent);
    this.spans.push(span);
    return span;
  }
  startActiveSpan(): never { throw new Error('not used'); }
}

const info = { method: 'PATCH', code: 200, durationMs: 12, verb: 'patch', resource: 'configmaps' };

describe('tracing without a provider (no-op)', () => {
  it('passes results and errors through; records nothing', async () => {
    assert.equal(await withReconcileSpan('mirror', 'ns/a', async (span) => {
      assert.equal(span.isRecording(), false);
      assert.equal(activeReconcileSpan(), undefined);
      apiCallObserver().onRequest!(info); // nothing to parent to: ignored
      return 42;
    }), 42);
    const boom = new Error('boom');
    await assert.rejects(withReconcileSpan('mirror', 'ns/a', async () => { throw boom; }), (e) => e === boom);
  });
});

describe('tracing with a tracer', () => {
  it('a reconcile span with API calls as children', async () => {
    const tracer = new RecordingTracer();
    const observer = apiCallObserver({ tracer });
    await withReconcileSpan('mirror', 'ns/a', async () => {
      await new Promise((r) => setTimeout(r, 1));
      observer.onRequest!(info);
      observer.onRequest!({ ...info, verb: 'get', method: 'GET', code: 404 });
    }, { tracer, reconcileId: 'r-1' });
    observer.onRequest!(info); // after the reconcile: not recorded
    const [root, patch, get] = tracer.spans;
    assert.equal(tracer.spans.length, 3);
    assert.equal(root!.name, 'reconcile mirror');
    assert.deepEqual(root!.attributes, { 'converge.controller': 'mirror', 'converge.key': 'ns/a', 'k8s.namespace.name': 'ns', 'converge.object.name': 'a', 'converge.reconcile_id': 'r-1' });
    assert.equal(root!.status.code, SpanStatusCode.OK);
    assert.equal(patch!.name, 'patch configmaps');
    assert.equal(patch!.parentSpanId, root!.ctx.spanId);
    assert.equal(patch!.ctx.traceId, root!.ctx.traceId);
    assert.equal(patch!.attributes['http.response.status_code'], 200);
    assert.ok(patch!.startTime instanceof Date);
    assert.equal(get!.status.code, SpanStatusCode.ERROR);
    assert.ok(tracer.spans.every((s) => s.ended));
  });

  it('records a failure on the span and rethrows it', async () => {
    const tracer = new RecordingTracer();
    const err = new Error('vendor down');
    await assert.rejects(withReconcileSpan('p', 'x', async () => { throw err; }, { tracer }), (e) => e === err);
    assert.deepEqual(tracer.spans[0]!.status, { code: SpanStatusCode.ERROR, message: 'vendor down' });
    assert.deepEqual(tracer.spans[0]!.exceptions, [err]);
  });

  it('concurrent reconciles keep their own children', async () => {
    const tracer = new RecordingTracer();
    const observer = apiCallObserver({ tracer });
    await Promise.all(['a', 'b'].map((name) => withReconcileSpan('c', `ns/${name}`, async () => {
      await new Promise((r) => setTimeout(r, name === 'a' ? 5 : 1));
      observer.onRequest!({ ...info, resource: name });
    }, { tracer })));
    const root = (n: string) => tracer.spans.find((s) => s.name === 'reconcile c' && s.attributes['converge.key'] === `ns/${n}`)!;
    assert.equal(tracer.spans.find((s) => s.name === 'patch a')!.parentSpanId, root('a').ctx.spanId);
    assert.equal(tracer.spans.find((s) => s.name === 'patch b')!.parentSpanId, root('b').ctx.spanId);
  });

  it('uses the global provider once one is registered', async () => {
    const tracer = new RecordingTracer();
    const provider: TracerProvider = { getTracer: () => tracer };
    assert.ok(trace.setGlobalTracerProvider(provider));
    after(() => trace.disable());
    await withReconcileSpan('g', 'ns/x', async () => apiCallObserver().onRequest!(info));
    assert.deepEqual(tracer.spans.map((s) => s.name), ['reconcile g', 'patch configmaps']);
  });
});
