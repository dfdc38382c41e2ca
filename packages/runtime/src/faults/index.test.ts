import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFaultSpec, faultPointsFromEnv } from './index.ts';

test('fault specs parse and act on the nth hit only', () => {
  assert.deepEqual([...parseFaultSpec('a:b=kill, c=throw@3')], [['a:b', { action: 'kill', at: 1 }], ['c', { action: 'throw', at: 3 }]]);
  assert.throws(() => parseFaultSpec('nonsense'));
  const fp = faultPointsFromEnv({ CONVERGE_FAULTS: 'x=throw@2' });
  fp('x');
  assert.throws(() => fp('x'), /fault injected at x/);
  fp('x');
  faultPointsFromEnv({})('anything');
});
