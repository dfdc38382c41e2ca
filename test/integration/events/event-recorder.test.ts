/**
 * The event recorder against the real API server: Events are created as events.k8s.io/v1 and
 * visible through core/v1 (what `kubectl describe` reads), identical events become one Event
 * with a series, per-object rate limits drop the excess, notes are cut to 1 KiB, an Event that
 * disappeared from the server is created again. Time for series batching is a FakeClock set to
 * the real time, so the test steps the interval instead of waiting it out.
 */
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMapKind, EventKind, FakeClock, type ConfigMap, type KubeEvent, type KubeClient } from '@converge/runtime';
import { createEventRecorder, type EventRecorder, type EventRecorderOptions } from '../../../packages/runtime/src/events/index.ts';
import { testClient, testNamespace, eventually } from '../../support/operator-harness.ts';

const CONTROLLER = 'converge.dev/test-controller';

async function setup(t: TestContext, options: Partial<EventRecorderOptions> = {}) {
  const client = testClient();
  t.after(() => client.close());
  const ns = await testNamespace(t, client, 'ev');
  const clock = new FakeClock(Date.now());
  const recorder = createEventRecorder({ client, reportingController: CONTROLLER, reportingInstance: 'test-pod-0', clock, ...options });
  t.after(() => recorder.close());
  const cm = await client.create(ConfigMapKind, { metadata: { name: 'subject', namespace: ns }, data: { a: '1' } });
  // List items and created objects carry no guarantee of kind; give the recorder a full object.
  const subject: ConfigMap = { ...cm, apiVersion: 'v1', kind: 'ConfigMap' };
  return { client, ns, clock, recorder, subject };
}

async function eventsIn(client: KubeClient, ns: string): Promise<KubeEvent[]> {
  return (await client.list(EventKind, { namespace: ns })).items.filter((e) => e.reportingController === CONTROLLER);
}

async function settle(recorder: EventRecorder): Promise<void> {
  await recorder.flush();
}

describe('event recorder', { concurrency: false }, () => {
  it('creates an events.k8s.io/v1 Event that core/v1 shows for the object', async (t) => {
    const { client, ns, recorder, subject } = await setup(t);
    recorder.normal(subject, 'Mirrored', 'Mirror', 'copied 1 key');
    await settle(recorder);
    const [event] = await eventsIn(client, ns);
    assert.ok(event, 'one event');
    assert.equal(event.type, 'Normal');
    assert.equal(event.reason, 'Mirrored');
    assert.equal(event.action, 'Mirror');
    assert.equal(event.note, 'copied 1 key');
    assert.equal(event.reportingInstance, 'test-pod-0');
    assert.deepEqual(
      [event.regarding?.kind, event.regarding?.name, event.regarding?.uid, event.regarding?.apiVersion],
      ['ConfigMap', 'subject', subject.metadata.uid, 'v1'],
    );
    assert.match(event.eventTime, /\.\d{6}Z$/);
    assert.equal(event.series, undefined);
    // What kubectl describe looks up.
    const core = await client.request<{ items: { involvedObject: { uid: string }; reason: string; source?: unknown }[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/events`,
      { query: new URLSearchParams({ fieldSelector: `involvedObject.uid=${subject.metadata.uid}` }) },
    );
    assert.deepEqual(core.items.map((e) => e.reason), ['Mirrored']);
    assert.equal(recorder.stats().created, 1);
  });

  it('folds identical events into one series: create, then count/lastObservedTime patches', async (t) => {
    const { client, ns, clock, recorder, subject } = await setup(t, { seriesIntervalMs: 30_000 });
    recorder.warning(subject, 'SyncFailed', 'Sync', 'vendor returned 503');
    recorder.warning(subject, 'SyncFailed', 'Sync', 'a different note'); // not identical: its own Event
    await settle(recorder);
    let events = await eventsIn(client, ns);
    assert.equal(events.length, 2);
    const first = events.find((e) => e.note === 'vendor returned 503')!;
    assert.equal(first.series, undefined);
    // Two repeats within the interval: counted, not written one by one.
    recorder.warning(subject, 'SyncFailed', 'Sync', 'vendor returned 503');
    recorder.warning(subject, 'SyncFailed', 'Sync', 'vendor returned 503');
    await new Promise((r) => setTimeout(r, 300));
    events = await eventsIn(client, ns);
    assert.equal(events.length, 2, 'no new Event for the repeats');
    assert.equal(events.find((e) => e.metadata.name === first.metadata.name)!.series, undefined);
    clock.advance(30_000); // the interval passes: one patch carries the count
    const series = await eventually(async () => {
      const e = (await eventsIn(client, ns)).find((x) => x.metadata.name === first.metadata.name);
      return e?.series?.count === 3 && e;
    }, { timeoutMs: 10_000, what: 'series count 3' });
    clock.advance(31_000);
    recorder.warning(subject, 'SyncFailed', 'Sync', 'vendor returned 503'); // the last write is old: written at once
    const again = await eventually(async () => {
      const e = (await eventsIn(client, ns)).find((x) => x.metadata.name === first.metadata.name);
      return e?.series?.count === 4 && e;
    }, { timeoutMs: 10_000, what: 'series count 4' });
    assert.ok(Date.parse(again.series!.lastObservedTime) > Date.parse(series.series!.lastObservedTime));
    await recorder.flush(); // the server can show the patch before the recorder has counted its answer
    assert.deepEqual(recorder.stats(), { created: 2, seriesUpdates: 2, deduplicated: 3, dropped: 0, failed: 0, gaveWay: 0 });
  });

  it('rate limits new events per object and drops the excess', async (t) => {
    const { client, ns, recorder, subject } = await setup(t, { perObject: { qps: 1 / 300, burst: 3 } });
    const other = { ...subject, metadata: { ...subject.metadata, uid: 'another-uid', name: 'other' } };
    for (let i = 0; i < 6; i++) recorder.normal(subject, `Step${i}`, 'Step');
    recorder.normal(other, 'Step0', 'Step'); // another object has its own budget
    await settle(recorder);
    const events = await eventsIn(client, ns);
    assert.deepEqual(events.map((e) => `${e.regarding?.name}:${e.reason}`).sort(), ['other:Step0', 'subject:Step0', 'subject:Step1', 'subject:Step2']);
    assert.equal(recorder.stats().dropped, 3);
  });

  it('gives way to queued reconciles: writes wait while giveWayTo() is true, a Warning at most maxGiveWayMs, a Normal event longer', async (t) => {
    let busy = true;
    const { client, ns, clock, recorder, subject } = await setup(t, { giveWayTo: () => busy, maxGiveWayMs: 30_000 });
    recorder.normal(subject, 'Waited', 'Apply', 'first');
    await clock.advanceAsync(1_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await eventsIn(client, ns), [], 'nothing written while reconciles wait');
    busy = false;
    await clock.advanceAsync(100);
    await eventually(async () => (await eventsIn(client, ns)).length === 1, { what: 'the Event once nothing waits' });

    // Busy for good: a Normal event waits longer than maxGiveWayMs; a Warning goes once it has
    // waited maxGiveWayMs, not later, and takes the Normal event queued ahead of it along.
    busy = true;
    recorder.normal(subject, 'Routine', 'Apply', 'second');
    await clock.advanceAsync(31_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual((await eventsIn(client, ns)).map((e) => e.reason).sort(), ['Waited'], 'a Normal event waits past maxGiveWayMs');
    recorder.warning(subject, 'Capped', 'Apply', 'third');
    await clock.advanceAsync(29_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual((await eventsIn(client, ns)).map((e) => e.reason).sort(), ['Waited']);
    await clock.advanceAsync(1_100);
    await eventually(async () => (await eventsIn(client, ns)).length === 3, { what: 'the Warning after maxGiveWayMs, with the Normal event ahead of it' });
    assert.deepEqual((await eventsIn(client, ns)).map((e) => e.reason).sort(), ['Capped', 'Routine', 'Waited']);

    // flush (and close) do not wait.
    recorder.normal(subject, 'Flushed', 'Apply', 'fourth');
    await recorder.flush();
    assert.deepEqual((await eventsIn(client, ns)).map((e) => e.reason).sort(), ['Capped', 'Flushed', 'Routine', 'Waited']);
    assert.equal(recorder.stats().gaveWay, 2, 'Waited and Routine waited at the head of the queue; Capped went with Routine');
  });

  it('cuts notes to 1 KiB and never throws into the caller', async (t) => {
    const { client, ns, recorder, subject } = await setup(t);
    recorder.warning(subject, 'Huge', 'Report', 'é'.repeat(1000)); // 2000 bytes
    assert.doesNotThrow(() => recorder.normal({ metadata: {} }, 'NoName', 'X')); // invalid: logged, not thrown
    await settle(recorder);
    const events = await eventsIn(client, ns);
    const huge = events.find((e) => e.reason === 'Huge')!;
    assert.equal(Buffer.byteLength(huge.note!), 1024);
    assert.equal(events.length, 1);
  });

  it('recreates a series whose Event disappeared from the server', async (t) => {
    const { client, ns, clock, recorder, subject } = await setup(t, { seriesIntervalMs: 1_000 });
    recorder.warning(subject, 'Flapping', 'Probe');
    await settle(recorder);
    const [created] = await eventsIn(client, ns);
    await client.delete(EventKind, { namespace: ns, name: created!.metadata.name! });
    clock.advance(2_000);
    recorder.warning(subject, 'Flapping', 'Probe');
    await settle(recorder);
    await eventually(async () => (await eventsIn(client, ns)).length === 1, { what: 'recreated event' });
    const [recreated] = await eventsIn(client, ns);
    assert.notEqual(recreated!.metadata.name, created!.metadata.name);
    assert.equal(recreated!.series?.count, 2);
  });

  it('close() writes the last counts, then ignores further events', async (t) => {
    const { client, ns, recorder, subject } = await setup(t);
    recorder.normal(subject, 'Tick', 'Tick');
    await settle(recorder);
    recorder.normal(subject, 'Tick', 'Tick'); // within the interval: pending until close
    await recorder.close();
    recorder.normal(subject, 'AfterClose', 'Tick');
    await new Promise((r) => setTimeout(r, 200));
    const events = await eventsIn(client, ns);
    assert.deepEqual(events.map((e) => [e.reason, e.series?.count]), [['Tick', 2]]);
  });
});
