import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DeadlineHeap, FakeClock, systemClock } from './index.ts';

describe('FakeClock', () => {
  it('starts at the given time and only moves on advance', () => {
    const clock = new FakeClock(1_000);
    assert.equal(clock.now(), 1_000);
    clock.advance(250);
    assert.equal(clock.now(), 1_250);
    assert.equal(new FakeClock().now(), 0);
  });

  it('fires due timers in deadline order, FIFO among equal deadlines, with now() at each deadline', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    const at = (label: string) => () => fired.push(`${label}@${clock.now()}`);
    clock.setTimer(30, at('c'));
    clock.setTimer(10, at('a1'));
    clock.setTimer(20, at('b'));
    clock.setTimer(10, at('a2'));
    clock.setTimer(40, at('late'));
    assert.equal(clock.pendingTimers(), 5);
    clock.advance(30);
    assert.deepEqual(fired, ['a1@10', 'a2@10', 'b@20', 'c@30']);
    assert.equal(clock.now(), 30);
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.nextTimerAt(), 40);
    clock.advance(9);
    assert.equal(fired.length, 4);
    clock.advance(1);
    assert.deepEqual(fired.at(-1), 'late@40');
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(clock.nextTimerAt(), undefined);
  });

  it('fires timers set by callbacks within the same advance when due', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimer(10, () => {
      fired.push(clock.now());
      clock.setTimer(5, () => fired.push(clock.now()));
      clock.setTimer(100, () => fired.push(clock.now()));
    });
    clock.advance(20);
    assert.deepEqual(fired, [10, 15]);
    assert.equal(clock.pendingTimers(), 1);
  });

  it('never fires synchronously; ms <= 0 fires on the next advance, even advance(0)', () => {
    const clock = new FakeClock();
    let fired = 0;
    clock.setTimer(0, () => fired++);
    clock.setTimer(-5, () => fired++);
    assert.equal(fired, 0);
    clock.advance(0);
    assert.equal(fired, 2);
  });

  it('cancel prevents firing, is idempotent and harmless after firing', () => {
    const clock = new FakeClock();
    let fired = 0;
    const t1 = clock.setTimer(10, () => fired++);
    const t2 = clock.setTimer(10, () => fired++);
    t1.cancel();
    t1.cancel();
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(10);
    assert.equal(fired, 1);
    t2.cancel();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('stepWall jumps the wall clock both ways; monotonic time and timers do not move', () => {
    const clock = new FakeClock(1_000);
    const fired: number[] = [];
    clock.setTimer(100, () => fired.push(clock.monotonic()));
    assert.equal(clock.monotonic(), 1_000);
    clock.stepWall(3_600_000);
    assert.deepEqual([clock.now(), clock.monotonic(), fired], [3_601_000, 1_000, []]);
    clock.stepWall(-7_200_000);
    assert.deepEqual([clock.now(), clock.monotonic(), fired], [-3_599_000, 1_000, []]);
    clock.advance(100);
    assert.deepEqual([clock.now(), clock.monotonic(), fired], [-3_598_900, 1_100, [1_100]]);
    assert.throws(() => clock.stepWall(Number.NaN), RangeError);
  });

  it('rejects negative and NaN moves and NaN delays', () => {
    const clock = new FakeClock();
    assert.throws(() => clock.advance(-1), RangeError);
    assert.throws(() => clock.advance(Number.NaN), RangeError);
    assert.throws(() => clock.setTimer(Number.NaN, () => {}), RangeError);
    assert.throws(() => clock.setTime(-1), RangeError);
  });

  it('setTime moves to an absolute time', () => {
    const clock = new FakeClock(100);
    let at = -1;
    clock.setTimer(50, () => (at = clock.now()));
    clock.setTime(500);
    assert.equal(at, 150);
    assert.equal(clock.now(), 500);
  });

  it('a throwing callback does not stop the rest; advance rethrows the first error', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimer(1, () => {
      throw new Error('boom');
    });
    clock.setTimer(2, () => fired.push(2));
    assert.throws(() => clock.advance(5), /boom/);
    assert.deepEqual(fired, [2]);
    assert.equal(clock.now(), 5);
  });

  it('sleep resolves when time passes', async () => {
    const clock = new FakeClock();
    let done = false;
    const p = clock.sleep(100).then(() => (done = true));
    clock.advance(99);
    await Promise.resolve();
    assert.equal(done, false);
    clock.advance(1);
    await p;
    assert.equal(done, true);
  });

  it('sleep rejects with signal.reason on abort and cancels its timer', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const p = clock.sleep(100, ac.signal);
    assert.equal(clock.pendingTimers(), 1);
    const reason = new Error('stop');
    ac.abort(reason);
    await assert.rejects(p, (err) => err === reason);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('sleep with an already aborted signal rejects at once without a timer', async () => {
    const clock = new FakeClock();
    const p = clock.sleep(100, AbortSignal.abort('gone'));
    assert.equal(clock.pendingTimers(), 0);
    await assert.rejects(p, (err) => err === 'gone');
  });

  it('advance is synchronous; advanceAsync lets await-chains schedule follow-up timers', async () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    const loop = async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        seen.push(clock.now());
      }
    };
    const sync = new FakeClock();
    const syncSeen: number[] = [];
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await sync.sleep(10);
        syncSeen.push(sync.now());
      }
    })();
    sync.advance(30);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(syncSeen, [30]); // only the first sleep fired within the synchronous advance

    const p = loop();
    await clock.advanceAsync(30);
    await p;
    assert.deepEqual(seen, [10, 20, 30]);
  });
});

describe('systemClock', () => {
  it('now() is the wall clock; monotonic() is performance.now()', () => {
    const before = Date.now();
    const now = systemClock.now();
    assert.ok(now >= before && now <= Date.now());
    const m0 = performance.now();
    const m = systemClock.monotonic();
    assert.ok(m >= m0 && m <= performance.now());
  });

  it('setTimer fires once after the delay, never synchronously, even for ms <= 0', async () => {
    let fired = 0;
    const started = performance.now();
    await new Promise<void>((resolve) => {
      systemClock.setTimer(20, () => {
        fired++;
        resolve();
      });
    });
    assert.ok(performance.now() - started >= 19);
    let zero = 0;
    const p = new Promise<void>((resolve) => systemClock.setTimer(-1, () => (zero++, resolve())));
    assert.equal(zero, 0);
    await p;
    assert.equal(zero, 1);
    assert.equal(fired, 1);
  });

  it('cancel prevents firing', async () => {
    let fired = false;
    const t = systemClock.setTimer(5, () => (fired = true));
    t.cancel();
    t.cancel();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(fired, false);
  });

  it('sleep resolves, and rejects with the abort reason', async () => {
    await systemClock.sleep(1);
    const ac = new AbortController();
    const p = systemClock.sleep(60_000, ac.signal);
    ac.abort(new Error('shutdown'));
    await assert.rejects(p, /shutdown/);
    await assert.rejects(systemClock.sleep(1, AbortSignal.abort(new Error('pre'))), /pre/);
  });

  it('handles delays beyond setTimeout range and Infinity without firing early', async () => {
    let fired = false;
    const long = systemClock.setTimer(2 ** 31 + 10, () => (fired = true));
    const never = systemClock.setTimer(Infinity, () => (fired = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(fired, false);
    long.cancel();
    never.cancel();
    assert.throws(() => systemClock.setTimer(Number.NaN, () => {}), RangeError);
  });
});

describe('DeadlineHeap', () => {
  it('pops by deadline then sequence', () => {
    const heap = new DeadlineHeap<{ at: number; seq: number }>();
    const entries = Array.from({ length: 200 }, (_, seq) => ({ at: (seq * 7919) % 37, seq }));
    for (const e of entries) heap.push(e);
    assert.equal(heap.size, 200);
    const out: { at: number; seq: number }[] = [];
    for (let e = heap.pop(); e; e = heap.pop()) out.push(e);
    const sorted = [...entries].sort((a, b) => a.at - b.at || a.seq - b.seq);
    assert.deepEqual(out, sorted);
    assert.equal(heap.pop(), undefined);
    assert.equal(heap.peek(), undefined);
  });
});
