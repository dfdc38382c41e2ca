import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FaultState, FaultValidationError, parseFaults, parseFaultsPatch } from './faults.ts';

describe('fault validation', () => {
  it('accepts every fault and normalises it', () => {
    const faults = parseFaults({
      latency: { ms: 100, jitterMs: 10, ops: ['get'] },
      errors: { rate: 0.5, status: 503 },
      burst429: { count: 3, retryAfterSeconds: 2 },
      rateLimit: { requestsPerSecond: 5 },
      hang: {},
      outage: { mode: 'reset' },
      loseCreateResponses: { count: 1 },
      slowCreates: { ms: 1500 },
      unknownHealth: { status: 'maintenance', ids: ['i-1'] },
    });
    assert.deepEqual(faults.latency, { ms: 100, jitterMs: 10, ops: ['get'] });
    assert.deepEqual(faults.unknownHealth, { status: 'maintenance', ids: ['i-1'] });
    assert.deepEqual(faults.slowCreates, { ms: 1500 });
    assert.deepEqual(faults.hang, {});
  });

  it('rejects unknown faults, unknown fields, bad numbers and bad ops with the field path', () => {
    const bad: [unknown, string][] = [
      [{ nope: {} }, 'nope'],
      [{ latency: { ms: 1, extra: 1 } }, 'latency.extra'],
      [{ errors: { rate: 2 } }, 'errors.rate'],
      [{ errors: { rate: 0.1, status: 399 } }, 'errors.status'],
      [{ errors: { rate: 0.1, status: 600 } }, 'errors.status'],
      [{ errors: { rate: 0.1, spread: 'sometimes' } }, 'errors.spread'],
      [{ burst429: { count: 1.5 } }, 'burst429.count'],
      // The contract promises Retry-After ≥ 1 on every 429.
      [{ burst429: { count: 1, retryAfterSeconds: 0 } }, 'burst429.retryAfterSeconds'],
      [{ rateLimit: { requestsPerSecond: 0 } }, 'rateLimit.requestsPerSecond'],
      [{ outage: { mode: 'explode' } }, 'outage.mode'],
      [{ hang: { ops: ['fly'] } }, 'hang.ops'],
      [{ slowCreates: { ms: -1 } }, 'slowCreates.ms'],
      [{ slowCreates: {} }, 'slowCreates.ms'],
      [{ unknownHealth: {} }, 'unknownHealth.status'],
      [{ unknownHealth: { status: 'in maintenance' } }, 'unknownHealth.status'],
      [{ unknownHealth: { status: 'maintenance', ids: 'i-1' } }, 'unknownHealth.ids'],
      [{ latency: 'slow' }, 'latency'],
      [[], 'faults'],
      [{ latency: null }, 'latency'],
    ];
    for (const [body, field] of bad) {
      assert.throws(() => parseFaults(body), (err: unknown) => err instanceof FaultValidationError && err.field === field, JSON.stringify(body));
    }
    assert.deepEqual(parseFaultsPatch({ latency: null }), { latency: null });
  });
});

describe('FaultState', () => {
  it('fails exactly floor(n * rate) of n requests, evenly spread, only for the scoped ops', () => {
    const state = new FaultState();
    state.replace({ errors: { rate: 0.25, ops: ['get'] } });
    const outcomes = Array.from({ length: 8 }, () => state.error('get'));
    assert.deepEqual(outcomes, [undefined, undefined, undefined, 500, undefined, undefined, undefined, 500]);
    assert.equal(state.error('create'), undefined);
    state.patch({ errors: { rate: 1, status: 502 } });
    assert.equal(state.error('delete'), 502);
  });

  it('random spread: about rate of requests fail, at no fixed rhythm, the same for the same seed', () => {
    const run = (seed: number): boolean[] => {
      const state = new FaultState();
      state.replace({ errors: { rate: 0.3, spread: 'random', seed } });
      return Array.from({ length: 2000 }, () => state.error('delete') !== undefined);
    };
    const a = run(7);
    const failed = a.filter(Boolean).length;
    assert.ok(failed > 500 && failed < 700, `${failed} of 2000 failed`);
    assert.deepEqual(run(7), a);
    assert.notDeepEqual(run(8), a);
    // Every 10th request (a client in a fixed rhythm) fails about as often as any other.
    const tenth = a.filter((_, i) => i % 10 === 3);
    const share = tenth.filter(Boolean).length / tenth.length;
    assert.ok(share > 0.15 && share < 0.45, `every 10th request failed ${share}`);
  });

  it('counts bursts and lost creates down and shows the remaining count', () => {
    const state = new FaultState();
    state.patch({ burst429: { count: 2, retryAfterSeconds: 3 }, loseCreateResponses: { count: 1 } });
    assert.deepEqual(state.takeBurst429('list'), { retryAfterSeconds: 3, code: 'RateLimited' });
    assert.equal(state.get().burst429?.count, 1);
    assert.deepEqual(state.takeBurst429('get'), { retryAfterSeconds: 3, code: 'RateLimited' });
    assert.equal(state.takeBurst429('get'), undefined);
    state.patch({ burst429: { count: 1, code: 'QuotaExhausted' } });
    assert.deepEqual(state.takeBurst429('usage'), { retryAfterSeconds: 1, code: 'QuotaExhausted' });
    assert.throws(() => parseFaults({ burst429: { count: 1, code: 'Teapot' } }), /burst429\.code: must be one of RateLimited, QuotaExhausted, InstanceThrottled/);
    assert.equal(state.takeLostCreate(), true);
    assert.equal(state.takeLostCreate(), false);
  });

  it('rate-limits with a token bucket and a whole-second Retry-After', () => {
    let now = 0;
    const state = new FaultState(() => now);
    state.patch({ rateLimit: { requestsPerSecond: 2, burst: 2 } });
    assert.equal(state.takeRateLimit(), undefined);
    assert.equal(state.takeRateLimit(), undefined);
    assert.equal(state.takeRateLimit(), 1);
    now += 500;
    assert.equal(state.takeRateLimit(), undefined);
    assert.equal(state.takeRateLimit(), 1);
    state.patch({ rateLimit: { requestsPerSecond: 0.1 } });
    assert.equal(state.takeRateLimit(), undefined, 'a new limit starts with a full bucket');
    assert.equal(state.takeRateLimit(), 10);
  });

  it('patch null clears, replace clears what it does not name, get returns a copy', () => {
    const state = new FaultState();
    state.patch({ hang: {}, outage: { status: 500 } });
    assert.equal(state.hangs('get'), true);
    assert.deepEqual(state.outage('get'), { mode: 'status', status: 500 });
    state.patch({ hang: null });
    assert.equal(state.hangs('get'), false);
    state.replace({ latency: { ms: 5 } });
    assert.deepEqual(state.get(), { latency: { ms: 5 } });
    state.get().latency!.ms = 99;
    assert.equal(state.latencyMs('create'), 5);
    assert.deepEqual(state.clear(), {});
  });
});
