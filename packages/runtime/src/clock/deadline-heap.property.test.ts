/**
 * DeadlineHeap against a sorted list, with pushes, pops, peeks and clears interleaved at random
 * (the example test in clock.test.ts only pops after every push). Equal deadlines are common
 * here on purpose: their FIFO order is what the work queue's delayed adds and FakeClock's timers
 * promise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DeadlineHeap } from './index.ts';

type Command = { kind: 'push'; at: number } | { kind: 'pop' } | { kind: 'peek' } | { kind: 'clear' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.integer({ min: -3, max: 12 }).map<Command>((at) => ({ kind: 'push', at })), weight: 6 },
  { arbitrary: fc.constant<Command>({ kind: 'pop' }), weight: 4 },
  { arbitrary: fc.constant<Command>({ kind: 'peek' }), weight: 1 },
  { arbitrary: fc.constant<Command>({ kind: 'clear' }), weight: 1 },
);

test('interleaved pushes and pops come out earliest deadline first, FIFO among equal deadlines', () => {
  fc.assert(
    fc.property(fc.array(command, { maxLength: 200 }), (commands) => {
      const heap = new DeadlineHeap<{ at: number; seq: number }>();
      let model: { at: number; seq: number }[] = [];
      let seq = 0;
      for (const c of commands) {
        if (c.kind === 'push') {
          const entry = { at: c.at, seq: seq++ };
          heap.push(entry);
          model.push(entry);
          model.sort((a, b) => a.at - b.at || a.seq - b.seq);
        } else if (c.kind === 'pop') {
          assert.equal(heap.pop(), model.shift());
        } else if (c.kind === 'peek') {
          assert.equal(heap.peek(), model[0]);
        } else {
          heap.clear();
          model = [];
        }
        assert.equal(heap.size, model.length);
      }
    }),
    { numRuns: 2_000 },
  );
});
