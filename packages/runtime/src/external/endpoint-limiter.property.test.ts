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
 *   up was admitted, the queue is empty and no timer is left (a lost wake-up would stall it);
 * - a caller with `maxPauseWaitMs` is refused exactly when a pause with more left than that
 *   stands in its way (on arrival, or the moment such a pause begins or extends while it waits),
 *   and then at once; it is never admitted after such a pause, nor refused otherwise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../clock/index.ts';
import { EndpointLimiter, EndpointPausedError, type Permit } from './index.ts';

type Command =
  | { kind: 'acquire'; maxPauseWaitMs: number | undefined }
  | { kind: 'abort'; which: number }
  | { kind: 'release'; which: number }
  | { kind: 'pause'; ms: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'stepWall'; ms: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.option(fc.constantFrom(0, 1, 250, 999, 1_000, 1_001, 2_500), { nil: undefined }).map<Command>((maxPauseWaitMs) => ({ kind: 'acquire', maxPauseWaitMs })),
    weight: 5,
  },
  { arbitrary: fc.nat(40).map<Command>((which) => ({ kind: 'abort', which })), weight: 2 },
  { arbitrary: fc.nat(40).map<Command>((which) => ({ kind: 'release', which })), weight: 3 },
  {
    // Often a pause at, or one past, a caller's bound below: refusals are judged to the millisecond.
    arbitrary: fc.oneof(fc.integer({ min: 1, max: 3_000 }), fc.constantFrom(1, 2, 250, 251, 999, 1_000, 1_001, 1_002, 2_500, 2_501)).map<Command>((ms) => ({ kind: 'pause', ms })),
    weight: 1,
  },
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
      /** Each caller's bound, the command it came in, and the command in which it was admitted, gave up or was refused. */
      type Caller = { abort: AbortController; permit?: Permit; gaveUp: boolean; bound: number | undefined; askedIn: number; leftOnArrival: number; settledIn?: number; refused?: EndpointPausedError };
      const callers: Caller[] = [];
      /** What is left of the pause the moment it is set or extended, by command. */
      const pausesSet: { in: number; left: number }[] = [];
      let pausedUntil = -Infinity;
      let seq = 0;
      let held = 0;
      const release = (i: number): void => {
        const c = callers[i];
        if (!c?.permit) return;
        if ((c as { released?: boolean }).released !== true) held--;
        (c as { released?: boolean }).released = true;
        c.permit.release();
      };
      for (const c of commands) {
        seq++;
        if (c.kind === 'acquire') {
          const i = callers.length;
          const caller: Caller = { abort: new AbortController(), gaveUp: false, bound: c.maxPauseWaitMs, askedIn: seq, leftOnArrival: Math.max(0, pausedUntil - clock.monotonic()) };
          callers.push(caller);
          limiter.acquire(caller.abort.signal, c.maxPauseWaitMs === undefined ? {} : { maxPauseWaitMs: c.maxPauseWaitMs }).then(
            (permit) => {
              caller.permit = permit;
              caller.settledIn ??= seq;
              held++;
              log.push({ kind: 'grant', at: clock.monotonic(), caller: i, held });
            },
            (err: unknown) => {
              caller.settledIn ??= seq;
              if (err instanceof EndpointPausedError) caller.refused = err;
              else caller.gaveUp = true;
            },
          );
        } else if (c.kind === 'abort') {
          if (callers.length) callers[c.which % callers.length]!.abort.abort(new Error('gave up'));
        } else if (c.kind === 'release') {
          if (callers.length) release(c.which % callers.length);
        } else if (c.kind === 'pause') {
          limiter.pauseFor(c.ms);
          const from = clock.monotonic();
          log.push({ kind: 'pause', from, until: from + Math.min(c.ms, maxPauseMs) });
          if (from + Math.min(c.ms, maxPauseMs) > pausedUntil) {
            pausedUntil = from + Math.min(c.ms, maxPauseMs);
            pausesSet.push({ in: seq, left: pausedUntil - from });
          }
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
      callers.forEach((c, i) => {
        // The first moment a pause longer than its bound stood in its way while it waited.
        const bound = c.bound ?? Infinity;
        const firstTooLong =
          c.leftOnArrival > bound ? c.askedIn : pausesSet.find((p) => p.in > c.askedIn && p.in <= (c.settledIn ?? Infinity) && p.left > bound)?.in;
        if (firstTooLong !== undefined) {
          assert.ok(c.refused, `caller ${i} (bound ${bound} ms) was ${c.permit ? 'admitted' : 'not refused'} after a pause longer than its bound began in command ${firstTooLong} (${what})`);
          assert.equal(c.settledIn, firstTooLong, `caller ${i} refused in command ${c.settledIn}, not at once in command ${firstTooLong} (${what})`);
          assert.ok(c.refused.pausedForMs > bound, `caller ${i} refused for a pause of ${c.refused.pausedForMs} ms, within its bound ${bound} (${what})`);
        } else {
          assert.equal(c.refused, undefined, `caller ${i} (bound ${bound} ms) refused with no pause longer than its bound: ${c.refused?.message} (${what})`);
        }
      });
      assert.equal(limiter.stats().refused, callers.filter((c) => c.refused).length, 'stats().refused counts the refusals');
      const lost = callers.flatMap((c, i) => (c.permit || c.gaveUp || c.refused ? [] : [i]));
      assert.deepEqual(lost, [], `callers neither admitted nor given up after everyone let go (${what})`);
      assert.equal(limiter.stats().queued, 0);
      assert.equal(limiter.stats().inFlight, 0);
      assert.equal(clock.pendingTimers(), 0, 'no timer left once nobody waits');
    }),
    { numRuns: 500 },
  );
});
