/**
 * The endpoint limiter's contracts, searched for counterexamples with random interleavings of
 * callers that wait, give up, release (twice, too) and servers that ask for pauses, while time
 * moves in uneven steps and the wall clock is stepped (an NTP correction, a resumed VM): every
 * time below is monotonic time, which steps of the wall clock must not bend. Checked after every run:
 * - never more permits held than `maxConcurrency`;
 * - admissions in FIFO order (a caller never overtakes an earlier one still waiting);
 * - no admission inside a pause, and the first two after a pause never at the same instant;
 * - admissions in any window at most `burst + rate × window`;
 * - nothing lost: once every permit is released and time passes, every caller that did not give
 *   up was admitted, the queue is empty and no timer is left (a lost wake-up would stall it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../clock/index.ts';
import { EndpointLimiter, type Permit } from './index.ts';

type Command =
  | { kind: 'acquire' }
  | { kind: 'abort'; which: number }
  | { kind: 'release'; which: number }
  | { kind: 'pause'; ms: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'stepWall'; ms: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.constant<Command>({ kind: 'acquire' }), weight: 5 },
  { arbitrary: fc.nat(40).map<Command>((which) => ({ kind: 'abort', which })), weight: 2 },
  { arbitrary: fc.nat(40).map<Command>((which) => ({ kind: 'release', which })), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 3_000 }).map<Command>((ms) => ({ kind: 'pause', ms })), weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 700 }).map<Command>((ms) => ({ kind: 'advance', ms })), weight: 4 },
  { arbitrary: fc.constantFrom(-3_600_000, -5_000, 5_000, 3_600_000).map<Command>((ms) => ({ kind: 'stepWall', ms })), weight: 1 },
);

const limits = fc.record({
  rate: fc.constantFrom(Infinity, 2, 5, 20),
  burst: fc.integer({ min: 1, max: 3 }),
  maxConcurrency: fc.constantFrom(1, 2, 3, Infinity),
});

type Logged = { kind: 'grant'; at: number; caller: number; held: number } | { kind: 'pause'; from: number; until: number };

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

test('concurrency, FIFO, pauses and rate hold, and no caller is lost, under random interleavings', async () => {
  await fc.assert(
    fc.asyncProperty(limits, fc.array(command, { minLength: 1, maxLength: 50 }), async ({ rate, burst, maxConcurrency }, commands) => {
      const clock = new FakeClock(1_700_000_000_000); // a wall clock of 2023, so a step back stays after 1970
      const maxPauseMs = 2_000;
      const limiter = new EndpointLimiter({ ratePerSecond: rate, burst, maxConcurrency, maxPauseMs, clock });
      const log: Logged[] = [];
      const callers: { abort: AbortController; permit?: Permit; gaveUp: boolean }[] = [];
      let held = 0;
      const release = (i: number): void => {
        const c = callers[i];
        if (!c?.permit) return;
        if ((c as { released?: boolean }).released !== true) held--;
        (c as { released?: boolean }).released = true;
        c.permit.release();
      };
      for (const c of commands) {
        if (c.kind === 'acquire') {
          const i = callers.length;
          const caller = { abort: new AbortController(), gaveUp: false } as (typeof callers)[number];
          callers.push(caller);
          limiter.acquire(caller.abort.signal).then(
            (permit) => {
              caller.permit = permit;
              held++;
              log.push({ kind: 'grant', at: clock.monotonic(), caller: i, held });
            },
            () => void (caller.gaveUp = true),
          );
        } else if (c.kind === 'abort') {
          if (callers.length) callers[c.which % callers.length]!.abort.abort(new Error('gave up'));
        } else if (c.kind === 'release') {
          if (callers.length) release(c.which % callers.length);
        } else if (c.kind === 'pause') {
          limiter.pauseFor(c.ms);
          log.push({ kind: 'pause', from: clock.monotonic(), until: clock.monotonic() + Math.min(c.ms, maxPauseMs) });
        } else if (c.kind === 'stepWall') {
          clock.stepWall(c.ms);
        } else {
          await clock.advanceAsync(c.ms);
        }
        await settle();
      }
      // Everyone lets go; whoever is admitted from now on lets go at once.
      for (let round = 0; round < callers.length + 2; round++) {
        callers.forEach((_, i) => release(i));
        await clock.advanceAsync(maxPauseMs + 1_000);
        await settle();
      }

      const grants = log.filter((e) => e.kind === 'grant');
      const what = `rate ${rate}, burst ${burst}, maxConcurrency ${maxConcurrency}`;
      for (const g of grants) assert.ok(g.held <= maxConcurrency, `${g.held} permits held at ${g.at} ms (${what})`);
      const order = grants.map((g) => g.caller);
      assert.deepEqual(order, [...order].sort((a, b) => a - b), `admitted out of FIFO order: ${order.join(', ')} (${what})`);
      log.forEach((e, i) => {
        if (e.kind !== 'pause') return;
        const after = log.slice(i + 1).filter((x) => x.kind === 'grant');
        const inside = after.find((g) => g.at < e.until);
        assert.equal(inside, undefined, `admitted at ${inside?.at} ms inside a pause until ${e.until} ms (${what})`);
        if (rate !== Infinity && after.length >= 2) {
          assert.notEqual(after[0]!.at, after[1]!.at, `two admitted at once (${after[0]!.at} ms) right after a pause (${what})`);
        }
      });
      if (rate !== Infinity) {
        const t = grants.map((g) => g.at).sort((a, b) => a - b);
        for (let i = 0; i < t.length; i++) {
          for (let j = i; j < t.length; j++) {
            const allowed = burst + (rate * (t[j]! - t[i]!)) / 1000;
            assert.ok(j - i + 1 <= allowed + 1e-6, `${j - i + 1} admitted between ${t[i]} and ${t[j]} ms, ${allowed.toFixed(2)} allowed (${what})`);
          }
        }
      }
      const lost = callers.flatMap((c, i) => (c.permit || c.gaveUp ? [] : [i]));
      assert.deepEqual(lost, [], `callers neither admitted nor given up after everyone let go (${what})`);
      assert.equal(limiter.stats().queued, 0);
      assert.equal(limiter.stats().inFlight, 0);
      assert.equal(clock.pendingTimers(), 0, 'no timer left once nobody waits');
    }),
    { numRuns: 500 },
  );
});
