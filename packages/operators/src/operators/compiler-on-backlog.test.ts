import { test } from 'node:test';
import assert from 'node:assert/strict';
import { optimizeOnBacklog, startedWithoutOptimizingCompiler } from './compiler-on-backlog.ts';
import { OPERATOR_NODE_FLAGS } from './node-flags.ts';

function harness(execArgv: readonly string[] = OPERATOR_NODE_FLAGS) {
  const set: string[] = [];
  const logged: unknown[] = [];
  let queued = 0;
  return {
    set,
    logged,
    setQueued: (n: number) => (queued = n),
    options: {
      queued: () => queued,
      threshold: 200,
      intervalMs: 1_000,
      execArgv,
      setFlags: (f: string) => set.push(f),
      log: { info: (o: unknown) => logged.push(o) },
    },
  };
}

test('the image flags start the process without the optimizing compiler', () => {
  assert.equal(startedWithoutOptimizingCompiler(OPERATOR_NODE_FLAGS), true);
  assert.equal(startedWithoutOptimizingCompiler(['--no-turbofan']), true);
  assert.equal(startedWithoutOptimizingCompiler([]), false);
  assert.equal(startedWithoutOptimizingCompiler(['--max-semi-space-size=2', '--no-maglev']), false);
});

test('the compiler is turned on once, at the first check that sees the threshold reached', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const h = harness();
  const stop = new AbortController();
  optimizeOnBacklog(h.options, stop.signal);
  h.setQueued(199);
  t.mock.timers.tick(5_000);
  assert.deepEqual(h.set, [], 'below the threshold nothing is set');
  h.setQueued(200);
  t.mock.timers.tick(999);
  assert.deepEqual(h.set, [], 'only at a check');
  t.mock.timers.tick(1);
  assert.deepEqual(h.set, ['--turbofan']);
  assert.deepEqual(h.logged, [{ queued: 200, threshold: 200 }]);
  h.setQueued(0);
  t.mock.timers.tick(10_000);
  h.setQueued(500);
  t.mock.timers.tick(10_000);
  assert.deepEqual(h.set, ['--turbofan'], 'once, and never turned off');
  stop.abort();
});

test('a process started with the compiler on, or a stopped operator, sets nothing', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const on = harness([]);
  optimizeOnBacklog(on.options, new AbortController().signal);
  on.setQueued(10_000);
  t.mock.timers.tick(5_000);
  assert.deepEqual(on.set, []);

  const stopped = harness();
  const stop = new AbortController();
  optimizeOnBacklog(stopped.options, stop.signal);
  stop.abort();
  stopped.setQueued(10_000);
  t.mock.timers.tick(5_000);
  assert.deepEqual(stopped.set, [], 'the checks end with the signal');
});

test('converge_optimizing_compiler tells whether the compiler is on', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { Registry } = await import('prom-client');
  const value = async (r: InstanceType<typeof Registry>) => (await r.getSingleMetric('converge_optimizing_compiler')!.get()).values[0]!.value;
  const h = harness();
  const registry = new Registry();
  const stop = new AbortController();
  optimizeOnBacklog({ ...h.options, registry }, stop.signal);
  assert.equal(await value(registry), 0);
  h.setQueued(300);
  t.mock.timers.tick(1_000);
  assert.equal(await value(registry), 1);
  stop.abort();
  const on = new Registry();
  optimizeOnBacklog({ ...harness([]).options, registry: on }, new AbortController().signal);
  assert.equal(await value(on), 1, 'a process started with the compiler on');
});
