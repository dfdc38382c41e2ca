import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { afterPass, decodeLedger, encodeEntry, firstLook, nextLook, retryLook } from './late-create-ledger.ts';
import type { LedgerEntry, LookOutcome, PassKey } from './late-create-ledger.ts';

const entry: LedgerEntry = {
  uid: '6f1c2f4e-0000-4000-8000-000000000001',
  namespace: 'team-a',
  name: 'presenter',
  endpoint: 'https://vendor.example.com',
  secret: { name: 'creds', key: 'token' },
  requestedAt: '2026-12-01T10:00:00.000Z',
  until: '2026-12-01T10:15:00.000Z',
};

describe('the late-create ledger', () => {
  it('reads back what it wrote', () => {
    assert.deepEqual(decodeLedger({ [entry.uid]: encodeEntry(entry) }), { entries: [entry], unreadable: [] });
  });

  it('reports what it cannot read and keeps the rest', () => {
    const data = {
      [entry.uid]: encodeEntry(entry),
      broken: '{not json',
      other: encodeEntry({ ...entry, uid: 'someone-else' }), // stored under the wrong key
      empty: JSON.stringify({ ...entry, uid: 'empty', endpoint: '' }),
      'bad-date': JSON.stringify({ ...entry, uid: 'bad-date', until: 'soon' }),
      array: '[]',
      'no-secret': JSON.stringify({ ...entry, uid: 'no-secret', secret: 'creds' }),
      'number-name': JSON.stringify({ ...entry, uid: 'number-name', name: 7 }),
    };
    const { entries, unreadable } = decodeLedger(data);
    assert.deepEqual(entries, [entry]);
    assert.deepEqual(unreadable.sort(), ['array', 'bad-date', 'broken', 'empty', 'no-secret', 'number-name', 'other']);
    assert.deepEqual(decodeLedger(undefined), { entries: [], unreadable: [] });
  });

  it('never writes a token: only the Secret that holds it', () => {
    assert.deepEqual(Object.keys(JSON.parse(encodeEntry({ ...entry, token: 'secret' } as LedgerEntry))).sort(), ['endpoint', 'name', 'namespace', 'requestedAt', 'secret', 'uid', 'until']);
  });

  it('reads an entry with fields it does not know (another version wrote it), and keeps none of them: no token comes with an entry', () => {
    const written = JSON.stringify({ ...entry, token: 'secret', writtenBy: 'v2', secret: { ...entry.secret, token: 'secret' } });
    assert.deepEqual(decodeLedger({ [entry.uid]: written }), { entries: [entry], unreadable: [] });
  });
});

describe('the look schedule', () => {
  it('looks settleMs after the release, then at doubling gaps up to the cap, the last look at until', () => {
    const until = 100_000;
    let s = firstLook(0, 2_000, until);
    const looks = [s.dueAt];
    for (let next = nextLook(s, s.dueAt, until, 30_000); next; next = nextLook(s, s.dueAt, until, 30_000)) {
      s = next;
      looks.push(s.dueAt);
    }
    assert.deepEqual(looks, [2_000, 6_000, 14_000, 30_000, 60_000, 90_000, 100_000]);
  });

  it('property: looks never stop before until, never leave a gap over the cap, and end', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 100, max: 60_000 }), fc.integer({ min: 1, max: 3_600_000 }), fc.integer({ min: 1_000, max: 300_000 }), (releasedAt, settle, window, cap) => {
        const until = releasedAt + window;
        let s = firstLook(releasedAt, settle, until);
        let last = releasedAt;
        for (let i = 0; i < 100_000; i++) {
          assert.ok(s.dueAt > last || s.dueAt === until, 'moves forward');
          assert.ok(s.dueAt - last <= Math.max(settle, cap), 'within the cap');
          last = s.dueAt;
          const next = nextLook(s, s.dueAt, until, cap);
          if (!next) {
            assert.equal(last, until, 'the last look is at until');
            return;
          }
          s = next;
        }
        assert.fail('the schedule never ends');
      }),
    );
  });

  it('repeats a failed look after the same gap, capped, past until too', () => {
    assert.deepEqual(retryLook({ dueAt: 10, gapMs: 8_000 }, 200_000, 5_000), { dueAt: 205_000, gapMs: 5_000 });
    assert.deepEqual(retryLook({ dueAt: 10, gapMs: 2_000 }, 50, 5_000), { dueAt: 2_050, gapMs: 2_000 });
  });
});

describe('after a pass over several keys', () => {
  it('a failed look delays its own key only: the others advance, or are done after their last look', () => {
    const keys: PassKey[] = [
      { uid: 'a', schedule: { dueAt: 1_000, gapMs: 2_000 }, untilAt: 100_000, outcome: 'looked' },
      { uid: 'b', schedule: { dueAt: 1_000, gapMs: 2_000 }, untilAt: 100_000, outcome: 'failed' },
      { uid: 'c', schedule: { dueAt: 1_000, gapMs: 8_000 }, untilAt: 1_000, outcome: 'looked' },
      { uid: 'd', schedule: { dueAt: 1_000, gapMs: 8_000 }, untilAt: 1_000, outcome: 'notLooked' },
    ];
    const { next, done } = afterPass(keys, 1_000, 60_000);
    assert.deepEqual(Object.fromEntries(next), { a: { dueAt: 5_000, gapMs: 4_000 }, b: { dueAt: 3_000, gapMs: 2_000 }, d: { dueAt: 9_000, gapMs: 8_000 } });
    assert.deepEqual(done, ['c']);
  });

  it('property: each key follows its own outcome alone; a key whose look failed or did not happen is never done', () => {
    const key = fc.record({
      schedule: fc.record({ dueAt: fc.integer({ min: 0, max: 1e6 }), gapMs: fc.integer({ min: 1, max: 120_000 }) }),
      untilAt: fc.integer({ min: 0, max: 2e6 }),
      outcome: fc.constantFrom<LookOutcome>('looked', 'failed', 'notLooked'),
    });
    fc.assert(
      fc.property(fc.array(key, { maxLength: 12 }), fc.integer({ min: 0, max: 2e6 }), fc.integer({ min: 1_000, max: 300_000 }), (raw, lookedAt, cap) => {
        const keys = raw.map((k, i) => ({ ...k, uid: `uid-${i}` }));
        const { next, done } = afterPass(keys, lookedAt, cap);
        assert.equal(next.size + done.length, keys.length, 'every key is rescheduled or done, once');
        for (const k of keys) {
          const alone = afterPass([k], lookedAt, cap);
          assert.deepEqual(next.get(k.uid), alone.next.get(k.uid), 'as if it had been looked at alone');
          assert.equal(done.includes(k.uid), alone.done.includes(k.uid));
          const expected = k.outcome === 'looked' ? nextLook(k.schedule, lookedAt, k.untilAt, cap) : retryLook(k.schedule, lookedAt, cap);
          assert.deepEqual(next.get(k.uid), expected);
          if (k.outcome !== 'looked') assert.ok(!done.includes(k.uid), 'not dropped without a look');
        }
      }),
    );
  });
});
