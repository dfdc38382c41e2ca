import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BenchUsageError, PRESETS, SCENARIO_NAMES, parseBenchArgs } from './options.ts';

describe('bench flags', () => {
  it('no flags: the default preset, every scenario, a default run copied to latest', () => {
    const o = parseBenchArgs([])!;
    assert.equal(o.microservices, PRESETS.default!.microservices);
    assert.deepEqual(o.scenarios, [...SCENARIO_NAMES]);
    assert.equal(o.isDefaultRun, true);
    assert.equal(o.latest, true);
  });
  it('scenarios run in the canonical order, whatever order they are given in', () => {
    const o = parseBenchArgs(['--scenarios', 'repair,cold-start', '--size', '1000'])!;
    assert.deepEqual(o.scenarios, ['cold-start', 'repair']);
    assert.equal(o.isDefaultRun, false);
    assert.equal(o.latest, false);
  });
  it('the opt-in scenarios run only when named, after the others', () => {
    assert.ok(!parseBenchArgs([])!.scenarios.includes('service-creates'));
    assert.deepEqual(parseBenchArgs(['--scenarios', 'service-creates,compare,cli-start'])!.scenarios, ['cli-start', 'compare', 'service-creates']);
  });
  it('a number as size scales the fleet and the memory steps', () => {
    const o = parseBenchArgs(['--size', '5000'])!;
    assert.equal(o.microservices, 5000);
    assert.deepEqual(o.memoryObjects, [1000, 10_000]);
  });
  it('tiny is tiny; explicit flags win over the preset', () => {
    const o = parseBenchArgs(['--size', 'tiny', '--repairs', '7', '--churn-rates', '5,1'])!;
    assert.equal(o.microservices, PRESETS.tiny!.microservices);
    assert.equal(o.repairs, 7);
    assert.deepEqual(o.churnRates, [1, 5]);
  });
  it('--operator-node-flags replaces the image\'s flags (an empty string: none); absent, the image\'s', () => {
    assert.equal(parseBenchArgs([])!.operatorNodeFlags, undefined);
    assert.deepEqual(parseBenchArgs(['--operator-node-flags=--max-semi-space-size=2  --optimize-for-size'])!.operatorNodeFlags, ['--max-semi-space-size=2', '--optimize-for-size']);
    assert.deepEqual(parseBenchArgs(['--operator-node-flags', ''])!.operatorNodeFlags, []);
  });

  it('--plain-client-watches is off unless asked for, and a run with it is not the default run', () => {
    assert.equal(parseBenchArgs([])!.plainClientWatches, false);
    const o = parseBenchArgs(['--scenarios', 'compare', '--plain-client-watches'])!;
    assert.equal(o.plainClientWatches, true);
    assert.equal(o.isDefaultRun, false);
  });
  it('--split-cpus is off unless asked for, and a run with it is not the default run', () => {
    assert.equal(parseBenchArgs([])!.splitCpus, false);
    const o = parseBenchArgs(['--scenarios', 'compare', '--split-cpus'])!;
    assert.equal(o.splitCpus, true);
    assert.equal(o.isDefaultRun, false);
    assert.equal(o.latest, false);
  });
  it('a profiled run is not the default run', () => {
    assert.equal(parseBenchArgs(['--profile'])!.isDefaultRun, false);
  });
  it('rejects bad input with a usage error; --help returns undefined', () => {
    assert.throws(() => parseBenchArgs(['--scenarios', 'nope']), BenchUsageError);
    assert.throws(() => parseBenchArgs(['--size', 'huge']), BenchUsageError);
    assert.throws(() => parseBenchArgs(['--repairs', '0']), BenchUsageError);
    assert.throws(() => parseBenchArgs(['--bogus']), BenchUsageError);
    assert.equal(parseBenchArgs(['--help']), undefined);
  });
});
