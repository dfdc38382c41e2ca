/**
 * Model-based property test: random sequences of add / addAfter / addRateLimited / get / done /
 * advance / shutDown run against the real WorkQueue (on a FakeClock) and a tiny reference model.
 * Checked after every step: the exact key each get() resolves with (FIFO, hand-off to blocked
 * getters in call order), queue lengths, no key in flight twice; at the end: no key lost (every
 * key added before shutdown was handed out after its last add).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../clock/index.ts';
import { WorkQueue, exponentialBackoff } from './index.ts';

type Op =
  | { op: 'add'; key: string }
  | { op: 'addAfter'; key: string; delay: number }
  | { op: 'addRateLimited'; key: string }
  | { op: 'get' }
  | { op: 'getAborted' }
  | { op: 'done'; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'shutDown' };

const KEYS = ['ns/a', 'ns/b', 'ns/c', 'ns/d', 'ns/e'];
const key = fc.constantFrom(...KEYS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('add' as const), key }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('addAfter' as const), key, delay: fc.integer({ min: -5, max: 60 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('addRateLimited' as const), key }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('get' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('getAborted' as const) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('done' as const), pick: fc.nat(10) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('shutDown' as const) }) },
);

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** The reference model: the documented semantics, written as plainly as possible. */
class Model {
  now = 0;
  shutdown = false;
  dirty = new Set<string>();
  ready: string[] = [];
  inFlight = new Set<string>();
  delayed = new Map<string, { at: number; seq: number }>();
  seq = 0;
  failures = new Map<string, number>();
  /** Blocked getters by id, oldest first; `expected` holds what each getter must resolve with. */
  waiters: number[] = [];
  expected = new Map<number, string | undefined>();

  add(k: string): void {
    if (this.shutdown || this.dirty.has(k)) return;
    this.dirty.add(k);
    if (!this.inFlight.has(k)) this.makeReady(k);
  }
  makeReady(k: string): void {
    const w = this.waiters.shift();
    if (w === undefined) {
      this.ready.push(k);
      return;
    }
    this.dirty.delete(k);
    this.inFlight.add(k);
    this.expected.set(w, k);
  }
  addAfter(k: string, delay: number): void {
    if (this.shutdown) return;
    if (delay <= 0) return this.add(k);
    const at = this.now + delay;
    const cur = this.delayed.get(k);
    if (cur && cur.at <= at) return;
    this.delayed.set(k, { at, seq: this.seq++ });
  }
  addRateLimited(k: string): void {
    if (this.shutdown) return;
    const n = this.failures.get(k) ?? 0;
    this.failures.set(k, n + 1);
    this.addAfter(k, Math.min(40, 2 ** n));
  }
  /** Returns the key a non-blocking get() must resolve with, or 'block'. */
  get(id: number): string | undefined | 'block' {
    const k = this.ready.shift();
    if (k !== undefined) {
      this.dirty.delete(k);
      this.inFlight.add(k);
      return k;
    }
    if (this.shutdown) return undefined;
    this.waiters.push(id);
    return 'block';
  }
  done(k: string): void {
    this.inFlight.delete(k);
    if (this.dirty.has(k)) this.makeReady(k);
  }
  advance(ms: number): void {
    const target = this.now + ms;
    const due = [...this.delayed].filter(([, d]) => d.at <= target).sort(([, x], [, y]) => x.at - y.at || x.seq - y.seq);
    for (const [k, d] of due) {
      this.now = d.at;
      this.delayed.delete(k);
      this.add(k);
    }
    this.now = target;
  }
  shutDown(): void {
    if (this.shutdown) return;
    this.shutdown = true;
    this.delayed.clear();
    for (const w of this.waiters) this.expected.set(w, undefined);
    this.waiters = [];
  }
}

async function run(ops: Op[]): Promise<void> {
  const clock = new FakeClock(0);
  const queue = new WorkQueue({ clock, rateLimiter: exponentialBackoff({ baseMs: 1, maxMs: 40 }) });
  const model = new Model();
  const gets = new Map<number, { settled: boolean; value: string | undefined }>();
  const realInFlight = new Set<string>();
  const lastAdd = new Map<string, number>(); // step of the last add call that was not a no-op
  const lastHandedOut = new Map<string, number>();
  let nextId = 0;
  let step = 0;

  const startGet = (signal?: AbortSignal): number => {
    const id = nextId++;
    const rec = { settled: false, value: undefined as string | undefined };
    gets.set(id, rec);
    void queue.get(signal).then((v) => {
      rec.settled = true;
      rec.value = v;
      if (v !== undefined) {
        assert.ok(!realInFlight.has(v), `key ${v} handed out while already in flight`);
        realInFlight.add(v);
        lastHandedOut.set(v, step);
      }
    });
    return id;
  };
  const noteAdd = (k: string): void => {
    if (!model.shutdown) lastAdd.set(k, step);
  };

  const apply = (o: Op): void => {
    switch (o.op) {
      case 'add':
        noteAdd(o.key);
        queue.add(o.key);
        model.add(o.key);
        break;
      case 'addAfter':
        queue.addAfter(o.key, o.delay);
        if (o.delay <= 0) noteAdd(o.key);
        model.addAfter(o.key, o.delay);
        break;
      case 'addRateLimited':
        queue.addRateLimited(o.key);
        model.addRateLimited(o.key);
        break;
      case 'get': {
        const id = startGet();
        const want = model.get(id);
        if (want !== 'block') model.expected.set(id, want);
        break;
      }
      case 'getAborted': {
        const id = startGet(AbortSignal.abort());
        model.expected.set(id, undefined);
        break;
      }
      case 'done': {
        const inFlight = [...model.inFlight];
        if (inFlight.length === 0) break;
        const k = inFlight[o.pick % inFlight.length]!;
        assert.ok(realInFlight.has(k), `model says ${k} is in flight`);
        realInFlight.delete(k);
        queue.done(k);
        model.done(k);
        break;
      }
      case 'advance': {
        // Delayed keys that fire count as adds at this step.
        for (const [k, d] of model.delayed) if (d.at <= model.now + o.ms) noteAdd(k);
        clock.advance(o.ms);
        model.advance(o.ms);
        break;
      }
      case 'shutDown':
        queue.shutDown();
        model.shutDown();
        break;
    }
  };

  const check = async (): Promise<void> => {
    await tick();
    for (const [id, rec] of gets) {
      const want = model.expected.get(id);
      if (!model.expected.has(id)) {
        assert.equal(rec.settled, false, `getter ${id} must still be blocked`);
        continue;
      }
      assert.equal(rec.settled, true, `getter ${id} must have resolved`);
      assert.equal(rec.value, want, `getter ${id}`);
      gets.delete(id);
      model.expected.delete(id);
    }
    assert.equal(queue.len(), model.ready.length, 'len');
    assert.equal(queue.inFlight(), model.inFlight.size, 'inFlight');
    assert.equal(queue.delayedLen(), model.delayed.size, 'delayedLen');
    assert.equal(queue.shuttingDown, model.shutdown);
    assert.deepEqual(realInFlight, model.inFlight);
  };

  for (const o of ops) {
    step++;
    apply(o);
    await check();
  }

  // Quiesce: let every delay expire, finish all work, take every ready key, until nothing moves.
  for (let rounds = 0; rounds < 100; rounds++) {
    step++;
    for (const k of model.delayed.keys()) noteAdd(k);
    apply({ op: 'advance', ms: 1_000 });
    await check();
    for (const k of [...model.inFlight]) {
      realInFlight.delete(k);
      queue.done(k);
      model.done(k);
    }
    await check();
    while (model.ready.length > 0) apply({ op: 'get' });
    await check();
    if (model.inFlight.size === 0 && model.ready.length === 0 && model.delayed.size === 0) break;
  }
  assert.equal(queue.len() + queue.inFlight() + queue.delayedLen(), 0, 'quiescent');

  // No key lost: every key added before shutdown was handed out after its last add.
  for (const [k, added] of lastAdd) {
    const out = lastHandedOut.get(k) ?? -1;
    assert.ok(out >= added, `${k} added at step ${added} but last handed out at ${out}`);
  }

  // Shutdown releases every blocked getter.
  await queue.shutDownWithDrain();
  model.shutDown();
  await check();
  assert.equal(gets.size, 0, 'every getter settled');
}

describe('WorkQueue properties', () => {
  it('matches the reference model on random operation sequences', async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 120 }), run), { numRuns: 300 });
  });

  it('handles a hand-picked tricky sequence', async () => {
    await run([
      { op: 'get' },
      { op: 'get' },
      { op: 'addAfter', key: 'ns/a', delay: 10 },
      { op: 'add', key: 'ns/b' },
      { op: 'addAfter', key: 'ns/a', delay: 5 },
      { op: 'advance', ms: 5 },
      { op: 'add', key: 'ns/a' },
      { op: 'add', key: 'ns/b' },
      { op: 'done', pick: 0 },
      { op: 'get' },
      { op: 'shutDown' },
      { op: 'done', pick: 0 },
      { op: 'get' },
      { op: 'get' },
    ]);
  });
});
