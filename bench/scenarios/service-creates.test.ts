import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IN_FLIGHT, measurementPlan, speedUps } from './service-creates.ts';
import type { Measurement } from './service-creates.ts';

const m = (shape: Measurement['shape'], inFlight: number, pass: number, perSecond: number): Measurement => ({
  shape, inFlight, pass, perSecond, meanCreateMs: 1, ipAddressCreates: 0, meanIpAddressCreateMs: null, meanIpAddressEtcdMs: null,
});

describe('service-creates', () => {
  it('measures every shape at every concurrency twice, the second pass in reverse order', () => {
    const plan = measurementPlan();
    assert.equal(plan.length, IN_FLIGHT.length * 2 * 2);
    const first = plan.filter((p) => p.pass === 0).map((p) => `${p.shape}/${p.inFlight}`);
    const second = plan.filter((p) => p.pass === 1).map((p) => `${p.shape}/${p.inFlight}`);
    assert.deepEqual(second, [...first].reverse());
    assert.equal(new Set(first).size, first.length);
  });

  it('speed-ups are the mean rate of both passes over the mean rate at one in flight', () => {
    const ups = speedUps([
      m('cluster-ip', 1, 0, 150), m('cluster-ip', 1, 1, 160), m('cluster-ip', 4, 0, 150), m('cluster-ip', 4, 1, 160),
      m('cluster-ip', 16, 0, 155), m('cluster-ip', 16, 1, 155),
      m('headless', 1, 0, 250), m('headless', 1, 1, 270), m('headless', 4, 0, 480), m('headless', 4, 1, 520),
      m('headless', 16, 0, 650), m('headless', 16, 1, 690),
    ]);
    assert.deepEqual(ups['cluster-ip'], { 1: 1, 4: 1, 16: 1 });
    assert.deepEqual(ups.headless, { 1: 1, 4: 1.92, 16: 2.58 });
  });

  it('a concurrency not measured has no speed-up rather than a made-up one', () => {
    const ups = speedUps([m('cluster-ip', 1, 0, 150)]);
    assert.equal(ups['cluster-ip'][4], null);
    assert.equal(ups.headless[1], null);
  });
});
