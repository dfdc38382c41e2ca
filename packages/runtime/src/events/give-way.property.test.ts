/**
 * Model-based property test of the recorder's give-way (ADR 0038): random sequences of new
 * events, "reconciles queued" switched on and off, clock steps, slow or failing writes, flushes
 * and a close run against the real recorder on a FakeClock. The client is a stand-in that only
 * records when each create reaches it (no API semantics are modelled: the real API server is in
 * test/integration/events).
 *
 * Checked for every write: it reached the client while nothing was queued, or after it had
 * waited `maxGiveWayMs`, or during a flush. At the end (reconciles still queued or not, the
 * clock stepped past the cap):
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

type Op =
  | { op: 'record' }
  | { op: 'busy'; on: boolean }
  | { op: 'advance'; ms: number }
  | { op: 'slowWrites'; on: boolean }
  | { op: 'failNext' }
  | { op: 'flush' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('record' as const) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('busy' as const), on: fc.boolean() }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 40_000 })) }) },
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
        });
        let n = 0;
        const releaseHeld = (): void => {
          for (const r of held.splice(0)) r();
        };
        const check = (): void => {
          for (const w of written) {
            const waited = w.at - recordedAt.get(w.note)!;
            assert.ok(!w.busy || w.flushing || waited >= MAX_GIVE_WAY_MS, `${w.note} written while reconciles were queued after waiting only ${waited} ms`);
          }
        };
        for (const o of ops) {
          switch (o.op) {
            case 'record': {
              const note = `e${n++}`;
              recordedAt.set(note, clock.monotonic());
              order.push(note);
              recorder.normal({ apiVersion: 'v1', kind: 'ConfigMap', name: note, namespace: 'ns', uid: `uid-${note}` }, 'Happened', 'Act', note);
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
          await clock.advanceAsync(i === 0 ? MAX_GIVE_WAY_MS + 200 : 200);
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

  it('a write held back by queued reconciles goes at the cap, and close does not wait for it', async () => {
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
    });
    recorder.normal({ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: 'ns', uid: 'uid-a' }, 'Happened', 'Act', 'a');
    await clock.advanceAsync(MAX_GIVE_WAY_MS - 100);
    await settle();
    assert.equal(written.length, 0);
    await clock.advanceAsync(100);
    await settle();
    assert.deepEqual(written.map((w) => w.note), ['a']);
    recorder.normal({ apiVersion: 'v1', kind: 'ConfigMap', name: 'b', namespace: 'ns', uid: 'uid-b' }, 'Happened', 'Act', 'b');
    await settle();
    await recorder.close(1_000); // flushes: the waiting write goes at once
    assert.deepEqual(written.map((w) => w.note), ['a', 'b']);
    assert.equal(recorder.stats().gaveWay, 2);
  });
});
