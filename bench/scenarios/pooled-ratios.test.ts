import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { poolRatios, ratiosOfReport } from './pooled-ratios.ts';

const report = (ratios: string | undefined, microservices = 500) => ({
  scenarios: [{ name: 'compare', figures: { microservices, ...(ratios === undefined ? {} : { 'unlimited.convergeOverPlainClientByRound': ratios }) } }],
});

describe('pooled ratios', () => {
  it('reads the per-round ratios of a compare report in round order', () => {
    assert.deepEqual(ratiosOfReport(report('1.32, 1.16, 1.07')), { microservices: 500, ratios: [1.32, 1.16, 1.07] });
  });

  it('refuses a report without the ratios rather than pooling nothing', () => {
    assert.throws(() => ratiosOfReport({ scenarios: [] }), /no compare scenario/);
    assert.throws(() => ratiosOfReport(report(undefined)), /no per-round ratio/);
  });

  it('pools the rounds of all sets into one median and interval', () => {
    const text = poolRatios([
      { name: 'a', microservices: 500, ratios: [1, 2, 3] },
      { name: 'b', microservices: 500, ratios: [4, 5, 6, 7] },
    ]);
    const lines = text.split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^a: 3 rounds, median 2\.00, interval 1\.00–3\.00 \(75\.0 %\)$/);
    assert.match(lines[2]!, /^all 2 sets \(500 Microservices\): 7 rounds, median 4\.00, interval 1\.00–7\.00 \(98\.4 %\)$/);
  });

  it('refuses to pool sets of different sizes', () => {
    assert.throws(() => poolRatios([{ name: 'a', microservices: 500, ratios: [1] }, { name: 'b', microservices: 2000, ratios: [1] }]), /different sizes/);
  });
});
