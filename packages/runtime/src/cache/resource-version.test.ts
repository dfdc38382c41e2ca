import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareResourceVersions } from './resource-version.ts';

test('well-formed resourceVersions compare as the numbers they spell, of any length', () => {
  assert.equal(compareResourceVersions('9', '10'), -1);
  assert.equal(compareResourceVersions('10', '9'), 1);
  assert.equal(compareResourceVersions('123', '123'), 0);
  assert.equal(compareResourceVersions('99999999999999999999', '100000000000000000000'), -1);
  fc.assert(fc.property(fc.bigInt({ min: 1n, max: 2n ** 80n }), fc.bigInt({ min: 1n, max: 2n ** 80n }), (a, b) => {
    assert.equal(compareResourceVersions(String(a), String(b)), a < b ? -1 : a > b ? 1 : 0);
  }), { numRuns: 2_000 });
});

test('anything else is not comparable (as apimachinery: absent, empty, zero, leading zeros, signs, other characters): NaN, so every ordering test is false', () => {
  for (const bad of [undefined, '', '0', '01', '007', '-1', '+1', '1.0', ' 1', '1 ', 'abc', '1e3', '١٢']) {
    for (const answer of [compareResourceVersions(bad, '5'), compareResourceVersions('5', bad), compareResourceVersions(bad, bad)]) {
      assert.ok(Number.isNaN(answer), JSON.stringify(bad));
      assert.ok(!(answer < 0) && !(answer <= 0) && !(answer > 0) && !(answer >= 0) && answer !== 0, JSON.stringify(bad));
    }
  }
});
