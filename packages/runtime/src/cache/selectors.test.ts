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
