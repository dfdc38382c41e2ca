/**
 * Model-based property test of the recorder's give-way (ADR 0038): random sequences of new
 * events, "reconciles queued" switched on and off, clock steps, slow or failing writes, flushes
 * and a close run against the real recorder on a FakeClock. The client is a stand-in that only
 * records when each create reaches it (no API semantics are modelled: the real API server is in
 * test/integration/events).
 *
 * Checked for every write: it reached the client while nothing was queued, or after it had
 * waited its cap (`maxGiveWayMs` for a Warning, `maxNormalGiveWayMs` for a Normal event), or
 * once a Warning recorded after it had waited its cap (writes stay in order), or during a
 * flush. At the end (reconciles still queued or not, the clock stepped past the caps):
 * every event was sent exactly once, in the order recorded (a create that failed is not sent
 * again: the recorder's contract), and created + failed counts them all.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../clock/index.ts';
import type { KubeClient } from '../client/index.ts';
import type { KubeEvent } from '../objects/index.ts';
import { createEventRecorder } from './index.ts';

const MAX_GIVE_WAY_MS = 30_000;
const MAX_NORMAL_GIVE_WAY_MS = 120_000;

type Op =
  | { op: 'record'; warning: boolean }
  | { op: 'busy'; on: boolean }
  | { op: 'advance'; ms: number }
  | { op: 'slowWrites'; on: boolean }
  | { op: 'failNext' }
  | { op: 'flush' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('record' as const), warning: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('busy' as const), on: fc.boolean() }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 40_000 }), fc.integer({ min: 0, max: 150_000 })) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('slowWrites' as const), on: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('failNext' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('flush' as const) }) },
);

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await tick();
}

interface Written { note: string; at: number; busy: boolean; flushing: boolean }

/** A stand-in client: records each create as it arrives; a write may be held (slow) or fail. */
function standInClient(state: { busy: boolean; flushing: boolean; slow: boolean; failNext: boolean }, clock: FakeClock, written: Written[], held: Array<() => void>): KubeClient {
  const client = {
    withRateLimit: () => client,
    create: async (_kind: unknown, body: KubeEvent) => {
      written.push({ note: body.note ?? '', at: clock.monotonic(), busy: state.busy, flushing: state.flushing });
      if (state.failNext) {
        state.failNext = false;
        throw new Error('injected failure');
      }
      if (state.slow) await new Promise<void>((r) => held.push(r));
      return { ...body, metadata: { ...body.metadata, resourceVersion: '1' } };
    },
    patch: async () => ({}),
  };
  return client as unknown as KubeClient;
}

describe('event recorder give-way (model-based)', () => {
  it('writes only when nothing is queued, after the cap, or in a flush; writes every event once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        const clock = new FakeClock(1_700_000_000_000);
        const state = { busy: false, flushing: false, slow: false, failNext: false };
        const written: Written[] = [];
        const held: Array<() => void> = [];
        const recordedAt = new Map<string, number>();
        const order: string[] = [];
        const recorder = createEventRecorder({
          client: standInClient(state, clock, written, held),
          reportingController: 'converge.dev/test',
          reportingInstance: 'test-0',
          clock,
          qps: 1_000,
          burst: 1_000,
          giveWayTo: () => state.busy,
          maxGiveWayMs: MAX_GIVE_WAY_MS,
          maxNormalGiveWayMs: MAX_NORMAL_GIVE_WAY_MS,
        });
        let n = 0;
        const warnings = new Set<string>();
        const releaseHeld = (): void => {
          for (const r of held.splice(0)) r();
        };
        const check = (): void => {
          for (const w of written) {
            if (!w.busy || w.flushing) continue;
            const waited = w.at - recordedAt.get(w.note)!;
            const cap = warnings.has(w.note) ? MAX_GIVE_WAY_MS : MAX_NORMAL_GIVE_WAY_MS;
            // A Normal event may go sooner when a Warning recorded after it has waited its cap.
            const pushedByWarning = order.slice(order.indexOf(w.note)).some((v) => warnings.has(v) && w.at - recordedAt.get(v)! >= MAX_GIVE_WAY_MS);
            assert.ok(waited >= cap || pushedByWarning, `${w.note} (${warnings.has(w.note) ? 'Warning' : 'Normal'}) written while reconciles were queued after waiting only ${waited} ms`);
          }
        };
        for (const o of ops) {
          switch (o.op) {
            case 'record': {
              const note = `e${n++}`;
              recordedAt.set(note, clock.monotonic());
              order.push(note);
              const regarding = { apiVersion: 'v1', kind: 'ConfigMap', name: note, namespace: 'ns', uid: `uid-${note}` };
              if (o.warning) {
                warnings.add(note);
                recorder.warning(regarding, 'Failed', 'Act', note);
              } else {
                recorder.normal(regarding, 'Happened', 'Act', note);
              }
              break;
            }
            case 'busy':
              state.busy = o.on;
              break;
            case 'advance':
              await clock.advanceAsync(o.ms);
              break;
            case 'slowWrites':
              state.slow = o.on;
              if (!o.on) releaseHeld();
              break;
            case 'failNext':
              state.failNext = true;
              break;
            case 'flush': {
              state.slow = false;
              releaseHeld();
              state.flushing = true;
              await recorder.flush(1_000);
              state.flushing = false;
              break;
            }
          }
          await settle();
          check();
        }
        // The end: writes not held. Reconciles stay queued or not, as the sequence left them:
        // either way every event goes, at the latest once it has waited the cap.
        state.slow = false;
        state.failNext = false;
        releaseHeld();
        for (let i = 0; i < 5 && written.length < order.length; i++) {
          await clock.advanceAsync(i === 0 ? MAX_NORMAL_GIVE_WAY_MS + 200 : 200);
          await settle();
          releaseHeld();
        }
        releaseHeld();
        await settle();
        check();
        assert.deepEqual(written.map((w) => w.note), order, 'every event written exactly once, in the order recorded');
        assert.equal(recorder.stats().created + recorder.stats().failed, order.length);
        await recorder.close(1_000);
      }),
      { numRuns: 150 },
    );
  });

  it('close(0) writes nothing more: what a process that no longer leads must do with the Events it held back', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const state = { busy: true, flushing: false, slow: false, failNext: false };
    const written: Written[] = [];
    const recorder = createEventRecorder({ client: standInClient(state, clock, written, []), reportingController: 'converge.dev/test', reportingInstance: 'test-0', clock, giveWayTo: () => state.busy });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: 'ns', uid: 'uid-a' };
    recorder.normal(ref, 'Happened', 'Act', 'held back');
    recorder.warning(ref, 'Failed', 'Act', 'held back too');
    await settle();
    await recorder.close(0);
    await clock.advanceAsync(600_000);
    await settle();
    assert.deepEqual(written, []);
    recorder.normal(ref, 'Happened', 'Act', 'after the close');
    await settle();
    assert.deepEqual(written, []);
  });

  it('held back by queued reconciles, a Normal event goes at its own cap or with a Warning behind it at the Warning\'s; close does not wait', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const state = { busy: true, flushing: false, slow: false, failNext: false };
    const written: Written[] = [];
    const recorder = createEventRecorder({
      client: standInClient(state, clock, written, []),
      reportingController: 'converge.dev/test',
      reportingInstance: 'test-0',
      clock,
      giveWayTo: () => state.busy,
      maxGiveWayMs: MAX_GIVE_WAY_MS,
      maxNormalGiveWayMs: MAX_NORMAL_GIVE_WAY_MS,
    });
    const ref = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: 'ns', uid: `uid-${name}` });
    const step = async (ms: number) => {
      await clock.advanceAsync(ms);
      await settle();
    };
    recorder.normal(ref('a'), 'Happened', 'Act', 'a');
    await step(MAX_GIVE_WAY_MS + 5_000);
    assert.equal(written.length, 0, 'a Normal event waits longer than a Warning would');
    recorder.warning(ref('w'), 'Failed', 'Act', 'w');
    await step(MAX_GIVE_WAY_MS - 100);
    assert.equal(written.length, 0);
    await step(100);
    assert.deepEqual(written.map((w) => w.note), ['a', 'w'], 'the Warning\'s cap takes the Normal event ahead of it along, in order');
    recorder.normal(ref('b'), 'Happened', 'Act', 'b');
    await step(MAX_NORMAL_GIVE_WAY_MS - 100);
    assert.equal(written.length, 2);
    await step(100);
    assert.deepEqual(written.map((w) => w.note), ['a', 'w', 'b']);
    recorder.normal(ref('c'), 'Happened', 'Act', 'c');
    await settle();
    await recorder.close(1_000); // flushes: the waiting write goes at once
    assert.deepEqual(written.map((w) => w.note), ['a', 'w', 'b', 'c']);
    assert.equal(recorder.stats().gaveWay, 3, 'a, b and c waited at the head of the queue; w went as soon as a did');
  });
});
