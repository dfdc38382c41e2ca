import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ratioVerdict } from './compare-rounds.ts';

test("a set of rounds settles the goal only when the median's whole interval is on one side of it", () => {
  // Round 11's two sets of the shipped operator (bench/reports/issue-17-round-11/).
  assert.match(ratioVerdict([0.97, 1.11, 1.2, 1.1, 1.15, 0.9, 1.04])!, /median 1\.1; .* between 0\.9 and 1\.2 with 98\.4 % confidence .*not settled by these rounds/);
  assert.match(ratioVerdict([1.12, 1.21, 1.47, 0.88, 1.39, 1.04, 1.36])!, /median 1\.21; .* between 0\.88 and 1\.47 .*not settled/);
  assert.match(ratioVerdict([1.01, 1.05, 0.98, 1.02, 1.0, 1.03, 0.99])!, /Goal ≤ 1\.1 × \(issue 17\): met/);
  assert.match(ratioVerdict([1.2, 1.3, 1.25, 1.15, 1.4, 1.22, 1.18])!, /: not met: the whole interval is over 1\.1/);
  assert.equal(ratioVerdict([]), undefined);
});
