/**
 * The token bucket's one promise, searched for counterexamples: whatever callers do (take, give
 * up a wait, reserve, let time pass, in any order), the tokens actually used in any window
 * [t1, t2] number at most `burst + qps × (t2 − t1)`. Giving back an aborted wait's token is where
 * that promise is easiest to break (x/time/rate's `CancelAt`, which this bucket follows), so the
 * commands abort waits at random points, also after later reservations were made.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../clock/index.ts';
import { TokenBucket } from './token-bucket.ts';

type Command =
  | { kind: 'take' }
  | { kind: 'reserve' }
  | { kind: 'abort'; which: number }
  | { kind: 'advance'; ms: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.constant<Command>({ kind: 'take' }), weight: 4 },
  { arbitrary: fc.constant<Command>({ kind: 'reserve' }), weight: 1 },
  { arbitrary: fc.nat(50).map<Command>((which) => ({ kind: 'abort', which })), weight: 3 },
  { arbitrary: fc.integer({ min: 0, max: 400 }).map<Command>((ms) => ({ kind: 'advance', ms })), weight: 3 },
);

/** Lets the continuations of settled waits (and of aborts) run before time moves on. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/** The largest number of uses in a window, beyond what `burst + qps × window` allows (≤ 0 when kept). */
function worstExcess(useTimes: number[], qps: number, burst: number): { excess: number; from: number; to: number; count: number } {
  const t = [...useTimes].sort((a, b) => a - b);
  let worst = { excess: -Infinity, from: 0, to: 0, count: 0 };
  for (let i = 0; i < t.length; i++) {
    for (let j = i; j < t.length; j++) {
      const count = j - i + 1;
      const excess = count - (burst + (qps * (t[j]! - t[i]!)) / 1000);
      if (excess > worst.excess) worst = { excess, from: t[i]!, to: t[j]!, count };
    }
  }
  return worst;
}

test('tokens used in any window never exceed burst + qps × its length, with waits aborted at random', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(1, 4, 10, 20, 1000 / 3),
      fc.integer({ min: 1, max: 4 }),
      fc.array(command, { minLength: 1, maxLength: 40 }),
      async (qps, burst, commands) => {
        const clock = new FakeClock(0);
        const bucket = new TokenBucket({ qps, burst }, clock);
        const used: number[] = [];
        const waits: AbortController[] = [];
        const pending: Promise<void>[] = [];
        for (const c of commands) {
          if (c.kind === 'take') {
            const abort = new AbortController();
            waits.push(abort);
            pending.push(bucket.take(abort.signal).then(() => void used.push(clock.monotonic()), () => undefined));
          } else if (c.kind === 'reserve') {
            used.push(clock.monotonic() + bucket.reserve());
          } else if (c.kind === 'abort') {
            if (waits.length) waits[c.which % waits.length]!.abort(new Error('gave up'));
          } else {
            await clock.advanceAsync(c.ms);
          }
          await settle();
        }
        await clock.advanceAsync(60_000);
        await Promise.all(pending);
        const worst = worstExcess(used, qps, burst);
        assert.ok(
          worst.excess <= 1e-6,
          `${worst.count} tokens used between ${worst.from} and ${worst.to} ms with qps ${qps}, burst ${burst}: ` +
            `${worst.excess.toFixed(3)} more than the bucket allows`,
        );
      },
    ),
    { numRuns: 1_000 },
  );
});
