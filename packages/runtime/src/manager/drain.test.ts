/**
 * The bounded drain as a function of the monotonic clock: the bound is grace + abort timeout,
 * shrinks to the abort timeout from the moment `abortNow` fires (never grows back), the error
 * names what is still running then, and work that returns in time settles `undefined`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../clock/index.ts';
import { drain } from './drain.ts';
import { DrainTimeoutError } from './lifecycle-errors.ts';

const log = pino({ level: 'silent' });
const never = new Promise<void>(() => undefined);

async function settledAt(clock: FakeClock, pending: Promise<unknown>, stepMs: number, maxMs: number): Promise<{ at: number; value: unknown }> {
  let value: unknown;
  let done = false;
  void pending.then((v) => { value = v; done = true; });
  const start = clock.monotonic();
  while (!done && clock.monotonic() - start <= maxMs) {
    await clock.advanceAsync(stepMs);
    await new Promise((r) => setImmediate(r));
  }
  assert.ok(done, 'settled');
  return { at: clock.monotonic() - start, value };
}

describe('drain', () => {
  it('gives up after grace + abort timeout and names what still runs', async () => {
    const clock = new FakeClock();
    const running = ['controller a/ns/x'];
    const { at, value } = await settledAt(clock, drain(never, { clock, log, graceMs: 3_000, abortTimeoutMs: 1_000, abortNow: new AbortController().signal, stillRunning: () => running }), 100, 10_000);
    assert.ok(at >= 4_000 && at <= 4_100, `settled at ${at}`);
    assert.ok(value instanceof DrainTimeoutError);
    assert.deepEqual(value.stuck, running);
    assert.equal(value.cause, undefined, 'no loss: no cause');
  });

  it('shrinks to the abort timeout from the moment abortNow fires, with its reason as the cause', async () => {
    const clock = new FakeClock();
    const abortNow = new AbortController();
    const pending = drain(never, { clock, log, graceMs: 30_000, abortTimeoutMs: 1_000, abortNow: abortNow.signal, stillRunning: () => [] });
    await clock.advanceAsync(2_000);
    abortNow.abort(new Error('lost'));
    const { at, value } = await settledAt(clock, pending, 100, 5_000);
    assert.ok(at >= 1_000 && at <= 1_100, `settled ${at} ms after the abort`);
    assert.ok(value instanceof DrainTimeoutError);
    assert.equal((value.cause as Error).message, 'lost');
  });

  it('never lengthens the bound: abortNow late in a short grace keeps the earlier deadline', async () => {
    const clock = new FakeClock();
    const abortNow = new AbortController();
    const pending = drain(never, { clock, log, graceMs: 500, abortTimeoutMs: 1_000, abortNow: abortNow.signal, stillRunning: () => [] });
    await clock.advanceAsync(1_200);
    abortNow.abort();
    const { at } = await settledAt(clock, pending, 50, 2_000);
    assert.ok(at <= 350, `settled ${at} ms after the abort (the first deadline was 300 ms away)`);
  });

  it('work that returns in time settles undefined and leaves no timer behind', async () => {
    const clock = new FakeClock();
    let finish!: () => void;
    const work = new Promise<void>((r) => (finish = r));
    const pending = drain(work, { clock, log, graceMs: 1_000, abortTimeoutMs: 1_000, abortNow: new AbortController().signal, stillRunning: () => [] });
    await clock.advanceAsync(500);
    finish();
    assert.equal(await pending, undefined);
    assert.equal(clock.pendingTimers(), 0);
  });
});
