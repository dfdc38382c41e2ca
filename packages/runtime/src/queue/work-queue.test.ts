import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, systemClock } from '../clock/index.ts';
import { WorkQueue, exponentialBackoff, type QueueMetrics } from './index.ts';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Resolves whether the promise settled within a real macrotask. */
async function settled<T>(p: Promise<T>): Promise<{ done: boolean; value?: T }> {
  let state: { done: boolean; value?: T } = { done: false };
  void p.then((value) => (state = { done: true, value }));
  await tick();
  return state;
}

function fakeQueue(extra: Partial<ConstructorParameters<typeof WorkQueue>[0]> = {}) {
  const clock = new FakeClock(1_000);
  const queue = new WorkQueue({ clock, name: 'test', ...extra });
  return { clock, queue };
}

describe('WorkQueue: add and get', () => {
  it('merges duplicate adds and keeps the first position', async () => {
    const { queue } = fakeQueue();
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/c');
    assert.equal(queue.len(), 3);
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ['ns/a', 'ns/b', 'ns/c']);
    assert.equal(queue.len(), 0);
    assert.equal(queue.name, 'test');
  });

  it('is FIFO among ready keys', async () => {
    const { queue } = fakeQueue();
    const keys = Array.from({ length: 50 }, (_, i) => `ns/k${i}`);
    for (const k of keys) queue.add(k);
    const out: string[] = [];
    for (let i = 0; i < keys.length; i++) {
      const k = (await queue.get())!;
      out.push(k);
      queue.done(k);
    }
    assert.deepEqual(out, keys);
  });

  it('get waits while empty and resolves on add; blocked getters are served in call order', async () => {
    const { queue } = fakeQueue();
    const g1 = queue.get();
    const g2 = queue.get();
    assert.equal((await settled(g1)).done, false);
    queue.add('a');
    queue.add('b');
    assert.equal(await g1, 'a');
    assert.equal(await g2, 'b');
    assert.equal(queue.len(), 0);
    assert.equal(queue.inFlight(), 2);
  });

  it('a key handed to a blocked getter cannot be taken by a later synchronous get', async () => {
    const { queue } = fakeQueue();
    const waiting = queue.get();
    queue.add('a');
    const sync = queue.get(); // must not steal 'a'
    assert.equal(await waiting, 'a');
    assert.equal((await settled(sync)).done, false);
    queue.add('b');
    assert.equal(await sync, 'b');
  });

  it('a key added while processing is not handed out again until done, then re-queued', async () => {
    const { queue } = fakeQueue();
    queue.add('a');
    assert.equal(await queue.get(), 'a');
    queue.add('a');
    queue.add('a');
    assert.equal(queue.len(), 0, 'dirty while processing, not ready');
    const other = queue.get();
    assert.equal((await settled(other)).done, false);
    queue.done('a');
    assert.equal(await other, 'a', 're-queued exactly once after done');
    queue.done('a');
    assert.equal(queue.len(), 0);
    assert.equal(queue.inFlight(), 0);
  });

  it('a re-queued key goes to the back of the ready queue', async () => {
    const { queue } = fakeQueue();
    queue.add('a');
    assert.equal(await queue.get(), 'a');
    queue.add('a');
    queue.add('b');
    queue.done('a');
    assert.deepEqual([await queue.get(), await queue.get()], ['b', 'a']);
  });

  it('done for a key that is not in flight is ignored', async () => {
    const { queue } = fakeQueue();
    queue.add('a');
    queue.done('a'); // queued, not processing: must not duplicate it
    queue.done('zzz');
    assert.equal(queue.len(), 1);
    assert.equal(await queue.get(), 'a');
    queue.done('a');
    queue.done('a');
    assert.equal(queue.len(), 0);
  });

  it('get resolves undefined when its signal aborts, taking nothing', async () => {
    const { queue } = fakeQueue();
    const ac = new AbortController();
    const g = queue.get(ac.signal);
    ac.abort();
    assert.equal(await g, undefined);
    queue.add('a');
    assert.equal(queue.len(), 1, 'the aborted getter did not take the key');
    assert.equal(await queue.get(AbortSignal.abort()), undefined, 'already aborted: undefined even with keys ready');
    assert.equal(queue.len(), 1);
    const ac2 = new AbortController();
    assert.equal(await queue.get(ac2.signal), 'a');
    ac2.abort(); // after the hand-off: no effect
    assert.equal(queue.inFlight(), 1);
  });

  it('never hands one key to two concurrent workers (many async workers, random adds)', async () => {
    const queue = new WorkQueue({ clock: systemClock, rateLimiter: exponentialBackoff({ baseMs: 0, maxMs: 0 }) });
    const keys = Array.from({ length: 8 }, (_, i) => `ns/k${i}`);
    const inFlight = new Set<string>();
    const lastAdd = new Map<string, number>();
    const lastStart = new Map<string, number>();
    let step = 0;
    let violations = 0;
    let processed = 0;
    let seed = 42;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const worker = async (): Promise<void> => {
      for (;;) {
        const key = await queue.get();
        if (key === undefined) return;
        if (inFlight.has(key)) violations++;
        inFlight.add(key);
        lastStart.set(key, step++);
        for (let i = rand(4); i > 0; i--) await tick();
        inFlight.delete(key);
        processed++;
        if (rand(5) === 0) queue.addRateLimited(key);
        else queue.forget(key);
        queue.done(key);
      }
    };
    const workers = Array.from({ length: 6 }, () => worker());
    for (let i = 0; i < 2_000; i++) {
      const key = keys[rand(keys.length)]!;
      lastAdd.set(key, step++);
      queue.add(key);
      if (rand(3) === 0) await tick();
    }
    // Let everything settle, then drain.
    while (queue.len() > 0 || queue.inFlight() > 0 || queue.delayedLen() > 0) await tick();
    await queue.shutDownWithDrain();
    await Promise.all(workers);
    assert.equal(violations, 0);
    assert.ok(processed > keys.length);
    for (const [key, added] of lastAdd) {
      assert.ok((lastStart.get(key) ?? -1) > added, `${key} was processed after its last add`);
    }
  });
});

describe('WorkQueue: delayed adds', () => {
  it('adds after the delay on the injected clock, in deadline order', async () => {
    const { clock, queue } = fakeQueue();
    queue.addAfter('late', 100);
    queue.addAfter('early', 50);
    queue.addAfter('early-2', 50);
    assert.equal(queue.len(), 0);
    assert.equal(queue.delayedLen(), 3);
    assert.equal(clock.pendingTimers(), 1, 'one timer for the whole queue');
    clock.advance(49);
    assert.equal(queue.len(), 0);
    clock.advance(1);
    assert.equal(queue.len(), 2);
    clock.advance(50);
    assert.equal(queue.len(), 3);
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ['early', 'early-2', 'late']);
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(queue.delayedLen(), 0);
  });

  it('keeps the earliest deadline per key and adds it once', async () => {
    const { clock, queue } = fakeQueue();
    queue.addAfter('a', 100);
    queue.addAfter('a', 30); // earlier: wins
    queue.addAfter('a', 80); // later: ignored
    assert.equal(queue.delayedLen(), 1);
    clock.advance(30);
    assert.equal(queue.len(), 1);
    assert.equal(await queue.get(), 'a');
    queue.done('a');
    clock.advance(1_000);
    assert.equal(queue.len(), 0, 'the superseded deadlines do not fire');
    assert.equal(clock.pendingTimers(), 0);
  });

  it('an earlier deadline re-arms the single timer', () => {
    const { clock, queue } = fakeQueue();
    queue.addAfter('a', 1_000);
    assert.equal(clock.nextTimerAt(), 2_000);
    queue.addAfter('b', 10);
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.nextTimerAt(), 1_010);
    clock.advance(10);
    assert.equal(queue.len(), 1);
    assert.equal(clock.nextTimerAt(), 2_000);
  });

  it('delayMs <= 0 (or NaN) is a plain add', () => {
    const { clock, queue } = fakeQueue();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    queue.addAfter('c', Number.NaN);
    assert.equal(queue.len(), 3);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('a delayed key merges with a waiting or in-flight copy when it fires', async () => {
    const { clock, queue } = fakeQueue();
    queue.add('a');
    queue.addAfter('a', 10);
    clock.advance(10);
    assert.equal(queue.len(), 1, 'merged with the waiting copy');
    assert.equal(await queue.get(), 'a');
    queue.addAfter('a', 10);
    clock.advance(10);
    assert.equal(queue.len(), 0, 'in flight: marked, not ready');
    queue.done('a');
    assert.equal(await queue.get(), 'a');
  });

  it('a delayed key wakes a blocked getter', async () => {
    const { clock, queue } = fakeQueue();
    const g = queue.get();
    queue.addAfter('a', 25);
    clock.advance(25);
    assert.equal(await g, 'a');
  });

  it('delays run on monotonic time: wall-clock steps neither hold keys back nor release them early', async () => {
    const { clock, queue } = fakeQueue();
    queue.addAfter('back', 1_000);
    queue.addAfter('forward', 60_000);
    clock.stepWall(-3_600_000); // an NTP step back by an hour
    clock.advance(1_000);
    assert.deepEqual(await settled(queue.get()), { done: true, value: 'back' }, 'a step back must not hold a due key for an hour');
    queue.done('back');
    clock.stepWall(7_200_000); // and forward by two
    queue.addAfter('soon', 10);
    clock.advance(10);
    assert.deepEqual(await settled(queue.get()), { done: true, value: 'soon' }, 'a key added after a step forward fires on time');
    queue.done('soon');
    assert.equal(queue.len(), 0, 'the 60 s key is not released early by the step forward');
    assert.equal(queue.delayedLen(), 1);
    clock.advance(60_000 - 1_010);
    assert.equal(await queue.get(), 'forward');
    queue.done('forward');
  });

  it('durations (latency, work, unfinished work) ignore wall-clock steps', async () => {
    const latencies: number[] = [];
    const work: number[] = [];
    const { clock, queue } = fakeQueue({ metrics: { queueLatency: (ms) => latencies.push(ms), workDuration: (ms) => work.push(ms) } });
    queue.add('a');
    clock.advance(20);
    clock.stepWall(3_600_000);
    assert.equal(await queue.get(), 'a');
    clock.advance(30);
    clock.stepWall(-7_200_000);
    assert.equal(queue.longestRunningMs(), 30);
    assert.equal(queue.unfinishedWorkMs(), 30);
    queue.done('a');
    assert.deepEqual([latencies, work], [[20], [30]]);
  });

  it('works with the system clock', async () => {
    const queue = new WorkQueue();
    const start = performance.now();
    queue.addAfter('a', 20);
    assert.equal(await queue.get(), 'a');
    assert.ok(performance.now() - start >= 18);
    queue.done('a');
    queue.shutDown();
  });
});

describe('WorkQueue: rate-limited adds', () => {
  it('uses the per-key backoff, counts requeues, forget resets', async () => {
    const { clock, queue } = fakeQueue();
    queue.addRateLimited('a');
    assert.equal(queue.numRequeues('a'), 1);
    clock.advance(4);
    assert.equal(queue.len(), 0);
    clock.advance(1);
    assert.equal(queue.len(), 1, 'first retry after 5 ms');
    assert.equal(await queue.get(), 'a');
    queue.addRateLimited('a');
    queue.done('a');
    clock.advance(9);
    assert.equal(queue.len(), 0);
    clock.advance(1);
    assert.equal(queue.len(), 1, 'second retry after 10 ms');
    assert.equal(queue.numRequeues('a'), 2);
    queue.forget('a');
    assert.equal(queue.numRequeues('a'), 0);
  });

  it('takes a custom rate limiter', () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, rateLimiter: exponentialBackoff({ baseMs: 100, maxMs: 150 }) });
    queue.addRateLimited('a');
    queue.addRateLimited('b');
    assert.equal(clock.nextTimerAt(), 100);
    clock.advance(100);
    assert.equal(queue.len(), 2);
  });
});

describe('WorkQueue: shutdown', () => {
  it('stops intake, drops delayed keys, wakes blocked getters with undefined', async () => {
    const { clock, queue } = fakeQueue();
    const blocked = [queue.get(), queue.get()];
    queue.addAfter('delayed', 10);
    assert.equal(queue.shuttingDown, false);
    queue.shutDown();
    assert.equal(queue.shuttingDown, true);
    assert.deepEqual(await Promise.all(blocked), [undefined, undefined]);
    assert.equal(clock.pendingTimers(), 0, 'delay timer cancelled');
    assert.equal(queue.delayedLen(), 0);
    queue.add('a');
    queue.addAfter('b', 5);
    queue.addRateLimited('c');
    assert.equal(queue.numRequeues('c'), 0);
    clock.advance(100);
    assert.equal(queue.len(), 0);
    assert.equal(await queue.get(), undefined);
    queue.shutDown(); // idempotent
  });

  it('keys already ready are still handed out, then undefined', async () => {
    const { queue } = fakeQueue();
    queue.add('a');
    queue.add('b');
    queue.shutDown();
    assert.equal(await queue.get(), 'a');
    assert.equal(await queue.get(), 'b');
    assert.equal(await queue.get(), undefined);
  });

  it('shutDownWithDrain waits for every in-flight key to be done', async () => {
    const { queue } = fakeQueue();
    queue.add('a');
    queue.add('b');
    const a = (await queue.get())!;
    const b = (await queue.get())!;
    const drained = queue.shutDownWithDrain();
    assert.equal((await settled(drained)).done, false);
    queue.done(a);
    assert.equal((await settled(drained)).done, false);
    assert.equal(queue.inFlight(), 1);
    queue.done(b);
    assert.equal((await settled(drained)).done, true);
  });

  it('shutDownWithDrain resolves at once when nothing is in flight', async () => {
    const { queue } = fakeQueue();
    queue.add('left-over');
    await queue.shutDownWithDrain();
    assert.equal(queue.len(), 1);
  });

  it('a key re-added before shutdown still comes back after done during the drain', async () => {
    const { queue } = fakeQueue();
    queue.add('a');
    const a = (await queue.get())!;
    queue.add('a');
    const drained = queue.shutDownWithDrain();
    queue.done(a);
    await drained;
    assert.equal(await queue.get(), 'a');
    // A later drain waits for this second round, too.
    const again = queue.shutDownWithDrain();
    assert.equal((await settled(again)).done, false);
    queue.done('a');
    await again;
    assert.equal(await queue.get(), undefined);
  });
});

describe('WorkQueue: metrics', () => {
  it('fires adds, depth, queue latency, work duration and retries', async () => {
    const events: string[] = [];
    const metrics: QueueMetrics = {
      adds: () => events.push('add'),
      depth: (n) => events.push(`depth=${n}`),
      queueLatency: (ms) => events.push(`latency=${ms}`),
      workDuration: (ms) => events.push(`work=${ms}`),
      retries: () => events.push('retry'),
    };
    const { clock, queue } = fakeQueue({ metrics });
    queue.add('a');
    queue.add('a'); // merged: no add
    queue.add('b');
    assert.deepEqual(events.splice(0), ['add', 'depth=1', 'add', 'depth=2']);
    clock.advance(30);
    assert.equal(await queue.get(), 'a');
    assert.deepEqual(events.splice(0), ['depth=1', 'latency=30']);
    clock.advance(12);
    queue.done('a');
    assert.deepEqual(events.splice(0), ['work=12']);
    queue.addRateLimited('a'); // 5 ms
    assert.deepEqual(events.splice(0), ['retry']);
    clock.advance(5);
    assert.deepEqual(events.splice(0), ['add', 'depth=2']);
    clock.advance(3);
    assert.equal(await queue.get(), 'b');
    assert.deepEqual(events.splice(0), ['depth=1', 'latency=50']);
    assert.equal(await queue.get(), 'a');
    assert.deepEqual(events.splice(0), ['depth=0', 'latency=3'], 'latency counts from the delayed key becoming ready');
  });

  it('latency of a key re-added while processing counts from that add', async () => {
    const latencies: number[] = [];
    const { clock, queue } = fakeQueue({ metrics: { queueLatency: (ms) => latencies.push(ms) } });
    queue.add('a');
    await queue.get();
    clock.advance(10);
    queue.add('a');
    clock.advance(40);
    queue.done('a');
    await queue.get();
    assert.deepEqual(latencies, [0, 40]);
  });

  it('a throwing hook does not break the queue', async () => {
    const boom = (): void => {
      throw new Error('metrics down');
    };
    const { queue } = fakeQueue({ metrics: { adds: boom, depth: boom, queueLatency: boom, workDuration: boom, retries: boom } });
    queue.add('a');
    assert.equal(await queue.get(), 'a');
    queue.done('a');
    queue.addRateLimited('a');
    assert.equal(queue.inFlight(), 0);
  });

  it('reports unfinished work and the longest running key', async () => {
    const { clock, queue } = fakeQueue();
    assert.equal(queue.unfinishedWorkMs(), 0);
    assert.equal(queue.longestRunningMs(), 0);
    queue.add('a');
    queue.add('b');
    await queue.get();
    clock.advance(100);
    await queue.get();
    clock.advance(50);
    assert.equal(queue.unfinishedWorkMs(), 150 + 50);
    assert.equal(queue.longestRunningMs(), 150);
    queue.done('a');
    assert.equal(queue.unfinishedWorkMs(), 50);
    assert.equal(queue.longestRunningMs(), 50);
  });
});
