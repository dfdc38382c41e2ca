import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSelection } from './selectors.ts';

const o = (labels: Record<string, string>, name = 'x', namespace = 'ns') => ({ metadata: { name, namespace, labels } });

test('label selectors: equality, sets, existence', () => {
  const s = compileSelection('app=web, tier in (a, b),!legacy,env!=prod,team', undefined);
  assert.equal(s.matches(o({ app: 'web', tier: 'a', team: 't' })), true);
  assert.equal(s.matches(o({ app: 'web', tier: 'c', team: 't' })), false);
  assert.equal(s.matches(o({ app: 'web', tier: 'a', team: 't', legacy: '1' })), false);
  assert.equal(s.matches(o({ app: 'web', tier: 'a', team: 't', env: 'prod' })), false);
  assert.equal(s.matches(o({ app: 'web', tier: 'b' })), false, 'team must exist');
  assert.equal(compileSelection('tier notin (a)', undefined).matches(o({})), true);
  assert.equal(compileSelection('a==b', undefined).matches(o({ a: 'b' })), true);
  assert.equal(compileSelection(undefined, undefined).matches(o({})), true);
});

test('field selectors: name and namespace are judged, other fields cannot be', () => {
  assert.equal(compileSelection(undefined, 'metadata.name=x').matches(o({})), true);
  assert.equal(compileSelection(undefined, 'metadata.namespace!=ns').matches(o({})), false);
  assert.equal(compileSelection(undefined, 'spec.nodeName=n1').matches(o({})), undefined);
  assert.equal(compileSelection('a=b', 'spec.nodeName=n1').matches(o({})), false, 'a failing label still decides');
});

test('label keys named like Object.prototype members are looked up on the object alone', () => {
  for (const key of ['constructor', 'toString', 'hasOwnProperty']) {
    assert.equal(compileSelection(key, undefined).matches(o({})), false, `${key} exists on no object without it`);
    assert.equal(compileSelection(`!${key}`, undefined).matches(o({})), true);
    assert.equal(compileSelection(`${key} notin (a)`, undefined).matches(o({})), true);
    assert.equal(compileSelection(key, undefined).matches(o({ [key]: '' })), true);
  }
});

test('label selectors: > and < compare integers, as apimachinery does', () => {
  assert.equal(compileSelection('n>5', undefined).matches(o({ n: '7' })), true);
  assert.equal(compileSelection('n > 5', undefined).matches(o({ n: '5' })), false);
  assert.equal(compileSelection('n<5', undefined).matches(o({ n: '05' })), false, '05 is 5');
  assert.equal(compileSelection('n<+5', undefined).matches(o({ n: '1' })), true);
  assert.equal(compileSelection('n<5', undefined).matches(o({ n: 'x' })), false, 'a value that is no integer matches neither');
  assert.equal(compileSelection('n<5', undefined).matches(o({})), false, 'nor does a missing label');
  assert.equal(compileSelection('n>9223372036854775806', undefined).matches(o({ n: '9223372036854775807' })), true, '64-bit');
  assert.equal(compileSelection('n<1', undefined).matches(o({ n: '9223372036854775808' })), false, 'out of int64 range: no integer');
  assert.throws(() => compileSelection('n>x', undefined), /must be an integer/);
});
