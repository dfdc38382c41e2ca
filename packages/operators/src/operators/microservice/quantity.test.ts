import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantity } from './quantity.ts';

test('quantities are spelled as the API server stores them', () => {
  const cases: Array<[string, string]> = [
    ['25m', '25m'],
    ['128Mi', '128Mi'],
    ['0', '0'],
    ['0.5', '500m'],
    ['0.025', '25m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['2', '2'],
    ['2000', '2k'],
    ['100M', '100M'],
    ['1.5G', '1500M'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['1Ki', '1Ki'],
    ['0.5Ki', '512'],
    ['1536', '1536'],
    ['128974848', '128974848'],
    ['7Ei', '7Ei'],
    ['9223372036854775807', '9223372036854775807'],
  ];
  for (const [input, expected] of cases) assert.equal(canonicalQuantity(input), expected, input);
});

test('unsupported or too precise quantities are rejected', () => {
  for (const input of ['', '-1', '1e3', '1.', '.5', '1 Mi', '1mi', '0.0001', 'abc', '1.001m', '8Ei', '8192Pi', '9223372036854775808', '1000000E']) {
    assert.throws(() => canonicalQuantity(input), Error, input);
  }
});
