/**
 * What `close` leaves unwritten is counted and said: Events held back (ADR 0038) or queued when
 * the close's deadline passes, and a write it aborts, are `dropped` (what
 * `converge_events_total{outcome="dropped"}` reports), with one warning. The client is a stand-in
 * that takes 20 ms per create (no API semantics: the real API server is in test/integration/events).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import type { KubeClient } from '../client/index.ts';
import type { KubeEvent } from '../objects/index.ts';
import { createEventRecorder } from './index.ts';

function slowClient(counts: { creates: number }): KubeClient {
  const client = {
    withRateLimit: () => client,
    create: async (_kind: unknown, body: KubeEvent, options: { signal?: AbortSignal } = {}) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 20);
        options.signal?.addEventListener('abort', () => { clearTimeout(timer); reject(options.signal?.reason); }, { once: true });
      });
      counts.creates++;
      return { ...body, metadata: { ...body.metadata, resourceVersion: '1' } };
    },
    patch: async () => ({}),
  };
  return client as unknown as KubeClient;
}

function recordingLog(lines: string[]): Logger {
  const log = { warn: (_o: unknown, m: string) => lines.push(m), info: () => {}, debug: () => {}, error: () => {} };
  return log as unknown as Logger;
}

const subject = (i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default', uid: `u${i}` } });

for (const timeoutMs of [300, 0]) {
  test(`close(${timeoutMs}) with Events still held back counts each one it leaves unwritten as dropped and says so once`, async () => {
    const counts = { creates: 0 };
    const warnings: string[] = [];
    const recorder = createEventRecorder({ client: slowClient(counts), reportingController: 'example.dev/c', reportingInstance: 'i', log: recordingLog(warnings), giveWayTo: () => true });
    for (let i = 0; i < 100; i++) recorder.normal(subject(i) as never, 'Created', 'Create', `event ${i}`);
    await new Promise((r) => setTimeout(r, 50)); // reconciles still queued: every Event held back
    await recorder.close(timeoutMs);
    const s = recorder.stats();
    assert.ok(s.dropped > 0, 'some were left unwritten');
    assert.equal(s.created + s.dropped + s.failed, 100, `every Event is accounted for (created ${s.created}, dropped ${s.dropped}, failed ${s.failed})`);
    assert.equal(warnings.filter((w) => /not written/.test(w)).length, 1, `one warning: ${warnings.join(' | ')}`);
  });
}

test('a close that wrote everything drops nothing and warns of nothing', async () => {
  const counts = { creates: 0 };
  const warnings: string[] = [];
  const recorder = createEventRecorder({ client: slowClient(counts), reportingController: 'example.dev/c', reportingInstance: 'i', log: recordingLog(warnings) });
  for (let i = 0; i < 5; i++) recorder.normal(subject(i) as never, 'Created', 'Create', `event ${i}`);
  await recorder.close(5_000);
  assert.deepEqual({ created: recorder.stats().created, dropped: recorder.stats().dropped }, { created: 5, dropped: 0 });
  assert.deepEqual(warnings, []);
});

test('a series update already dropped for want of budget is not counted again by close', async () => {
  const counts = { creates: 0 };
  const recorder = createEventRecorder({ client: slowClient(counts), reportingController: 'example.dev/c', reportingInstance: 'i', log: recordingLog([]), qps: 0.001, burst: 1, seriesIntervalMs: 0 });
  recorder.normal(subject(1) as never, 'Created', 'Create', 'same');
  await new Promise((r) => setTimeout(r, 60)); // the create is written (the one token)
  recorder.normal(subject(1) as never, 'Created', 'Create', 'same');
  recorder.normal(subject(1) as never, 'Created', 'Create', 'same');
  await new Promise((r) => setTimeout(r, 20));
  const before = recorder.stats().dropped;
  await recorder.close(0);
  assert.equal(counts.creates, 1);
  assert.equal(recorder.stats().dropped, before, `counted once (before close: ${before})`);
});
