/**
 * The recorder's series interval and TTL are durations: they are measured on the monotonic clock,
 * so a wall-clock step (NTP, a VM resumed) neither holds a series count back for the size of the
 * step nor forgets a series seen a moment ago. Event timestamps (`eventTime`, the series'
 * `lastObservedTime`) stay wall-clock readings, as the API server and people read them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/index.ts';
import type { KubeClient } from '../client/index.ts';
import type { KubeEvent } from '../objects/index.ts';
import { createEventRecorder, microTime } from './index.ts';

const START = 1_700_000_000_000;
const HOUR = 3_600_000;
const INTERVAL = 30_000;
const subject = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', namespace: 'ns', uid: 'uid-1' };

type Call = { op: 'create'; count: number } | { op: 'patch'; count: number; lastObservedTime: string };

function setup() {
  const clock = new FakeClock(START);
  const calls: Call[] = [];
  const client = {
    withRateLimit: () => client,
    create: async (_kind: unknown, body: KubeEvent) => {
      calls.push({ op: 'create', count: body.series?.count ?? 1 });
      return { ...body, metadata: { ...body.metadata, resourceVersion: '1' } };
    },
    patch: async (_kind: unknown, _key: unknown, patch: { body: { series: { count: number; lastObservedTime: string } } }) => {
      calls.push({ op: 'patch', ...patch.body.series });
      return {};
    },
  };
  const recorder = createEventRecorder({ client: client as unknown as KubeClient, reportingController: 'converge.dev/test', reportingInstance: 'test-0', clock, seriesIntervalMs: INTERVAL, seriesTtlMs: 360_000 });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { clock, calls, recorder, settle };
}

test('a wall clock stepped back does not hold a series count back: it is written one interval after the last write', async () => {
  const { clock, calls, recorder, settle } = setup();
  recorder.warning(subject, 'Failed', 'Reconcile');
  await settle();
  await clock.advanceAsync(1_000);
  recorder.warning(subject, 'Failed', 'Reconcile');
  const observedAt = clock.now();
  clock.stepWall(-HOUR);
  await clock.advanceAsync(INTERVAL);
  await settle();
  assert.deepEqual(calls, [{ op: 'create', count: 1 }, { op: 'patch', count: 2, lastObservedTime: microTime(observedAt) }]);
  await recorder.close(100);
});

test('a wall clock stepped forward does not forget a series seen a moment ago: the next occurrence folds into it', async () => {
  const { clock, calls, recorder, settle } = setup();
  recorder.warning(subject, 'Failed', 'Reconcile');
  await settle();
  await clock.advanceAsync(1_000);
  clock.stepWall(2 * HOUR);
  recorder.warning(subject, 'Failed', 'Reconcile');
  assert.equal(recorder.stats().deduplicated, 1, 'folded into the series seen 1 s ago (monotonic)');
  await clock.advanceAsync(INTERVAL);
  await settle();
  assert.deepEqual(calls.map((c) => [c.op, c.count]), [['create', 1], ['patch', 2]]);
  await recorder.close(100);
});

test('a series not seen for its TTL of monotonic time is still forgotten, whatever the wall clock did', async () => {
  const { clock, calls, recorder, settle } = setup();
  recorder.warning(subject, 'Failed', 'Reconcile');
  await settle();
  clock.stepWall(-HOUR);
  await clock.advanceAsync(360_000);
  recorder.warning(subject, 'Failed', 'Reconcile');
  await settle();
  assert.equal(recorder.stats().deduplicated, 0);
  assert.deepEqual(calls.map((c) => c.op), ['create', 'create']);
  await recorder.close(100);
});
