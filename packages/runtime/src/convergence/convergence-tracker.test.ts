import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock/index.ts';
import type { KubeObject, Condition } from '../objects/index.ts';
import { ConvergenceTracker, defaultConvergencePredicate } from './index.ts';

function obj(name: string, generation: number | undefined, status?: { observedGeneration?: number; conditions?: Condition[] }): KubeObject {
  return {
    metadata: { namespace: 'ns', name, ...(generation === undefined ? {} : { generation }) },
    ...(status ? { status } : {}),
  } as KubeObject;
}
function ready(status: Condition['status'], lastTransitionTime = '1970-01-01T00:00:00Z', extra: Partial<Condition> = {}): Condition {
  return { type: 'Ready', status, reason: status === 'True' ? 'Ready' : 'Waiting', message: '', lastTransitionTime, ...extra };
}

describe('defaultConvergencePredicate', () => {
  const p = defaultConvergencePredicate();
  it('converged: observedGeneration current and Ready True', () => {
    assert.equal(p(obj('a', 2, { observedGeneration: 2, conditions: [ready('True')] })), undefined);
  });
  it('names the gap', () => {
    assert.equal(p(obj('a', 2))?.reason, 'NotObserved');
    assert.equal(p(obj('a', 3, { observedGeneration: 2, conditions: [ready('True')] }))?.reason, 'GenerationLag');
    assert.equal(p(obj('a', 2, { observedGeneration: 2 }))?.reason, 'ReadyMissing');
    assert.equal(p(obj('a', 2, { observedGeneration: 2, conditions: [ready('False', '1970-01-01T00:00:05Z', { reason: 'VendorDown' })] }))?.reason, 'VendorDown');
    assert.equal(p(obj('a', 2, { observedGeneration: 2, conditions: [ready('True', undefined, { observedGeneration: 1 })] }))?.reason, 'ReadyStale');
  });
  it('dates a not-Ready object from its condition', () => {
    assert.equal(p(obj('a', 2, { observedGeneration: 2, conditions: [ready('Unknown', '1970-01-01T00:00:05Z')] }))?.sinceMs, 5000);
  });
  it('a custom condition type, or none', () => {
    const avail = defaultConvergencePredicate({ readyCondition: 'Available' });
    assert.equal(avail(obj('a', 1, { observedGeneration: 1, conditions: [ready('True')] }))?.reason, 'AvailableMissing');
    const none = defaultConvergencePredicate({ readyCondition: null });
    assert.equal(none(obj('a', 1, { observedGeneration: 1 })), undefined);
  });
  it('objects without generation skip the generation check', () => {
    assert.equal(p(obj('a', undefined, { conditions: [ready('True')] })), undefined);
  });
});

describe('ConvergenceTracker', () => {
  it('rises while an object stays unconverged and falls to 0 when it converges', () => {
    const clock = new FakeClock(100_000);
    const t = new ConvergenceTracker({ clock });
    assert.equal(t.oldestAgeSeconds(), 0);
    assert.equal(t.observe(obj('a', 1)), true);
    clock.advance(10_000);
    assert.equal(t.oldestAgeSeconds(), 10);
    // The reason changes but the object is still unconverged: the age keeps counting.
    t.observe(obj('a', 1, { observedGeneration: 1, conditions: [ready('False', new Date(200_000).toISOString())] }));
    clock.advance(5_000);
    assert.equal(t.oldestAgeSeconds(), 15);
    assert.equal(t.top(1)[0]?.reason, 'Waiting');
    assert.equal(t.observe(obj('a', 1, { observedGeneration: 1, conditions: [ready('True')] })), false);
    assert.equal(t.oldestAgeSeconds(), 0);
    assert.equal(t.size, 0);
  });

  it('an object recreated under the same name starts its own age (a relist reports it as an update)', () => {
    const clock = new FakeClock(100_000);
    const t = new ConvergenceTracker({ clock });
    const withUid = (uid: string) => ({ ...obj('a', 1), metadata: { namespace: 'ns', name: 'a', generation: 1, uid } }) as KubeObject;
    t.observe(withUid('u1'));
    clock.advance(3_600_000);
    t.observe(withUid('u1'));
    assert.equal(t.oldestAgeSeconds(), 3_600);
    t.observe(withUid('u2'));
    assert.equal(t.oldestAgeSeconds(), 0, 'the new object is not an hour old');
    clock.advance(2_000);
    t.observe(withUid('u2'));
    assert.equal(t.oldestAgeSeconds(), 2);
  });

  it('uses the Ready condition time when it is older than first sight, never a future time', () => {
    const clock = new FakeClock(1_000_000);
    const t = new ConvergenceTracker({ clock });
    t.observe(obj('old', 1, { observedGeneration: 1, conditions: [ready('False', new Date(400_000).toISOString())] }));
    assert.equal(t.oldestAgeSeconds(), 600);
    t.observe(obj('future', 1, { observedGeneration: 1, conditions: [ready('False', new Date(9_000_000).toISOString())] }));
    assert.deepEqual(t.top(5).map((e) => [e.key, e.ageSeconds]), [['ns/old', 600], ['ns/future', 0]]);
  });

  it('top(n) lists the oldest first and forget removes', () => {
    const clock = new FakeClock(0);
    const t = new ConvergenceTracker({ clock });
    for (const name of ['c', 'b', 'a']) {
      t.observe(obj(name, 2, { observedGeneration: 1 }));
      clock.advance(1000);
    }
    assert.deepEqual(t.top(2).map((e) => e.key), ['ns/c', 'ns/b']);
    assert.deepEqual(t.top(2)[0], { key: 'ns/c', sinceMs: 0, ageSeconds: 3, reason: 'GenerationLag', message: 'observedGeneration 1 < generation 2' });
    t.forget('ns/c');
    assert.equal(t.oldestAgeSeconds(), 2);
    assert.equal(t.top(0).length, 0);
    assert.equal(t.top(10).length, 2);
  });

  it('a custom predicate; a throwing predicate counts as unconverged', () => {
    const clock = new FakeClock(0);
    const t = new ConvergenceTracker({
      clock,
      predicate: (o) => {
        if (o.metadata.name === 'boom') throw new Error('bad');
        return o.metadata.labels?.done === 'yes' ? undefined : { reason: 'NotDone' };
      },
    });
    assert.equal(t.observe({ metadata: { name: 'x', labels: { done: 'yes' } } }), false);
    assert.equal(t.observe({ metadata: { name: 'y' } }), true);
    assert.equal(t.observe({ metadata: { name: 'boom' } }), true);
    assert.deepEqual(t.top(5).map((e) => [e.key, e.reason]), [['boom', 'PredicateError'], ['y', 'NotDone']]);
  });
});
