import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseCpuList, splitCpuSet } from './cpu-split.ts';

describe('--split-cpus', () => {
  it('reads Linux CPU lists, ranges included', () => {
    assert.deepEqual(parseCpuList('0,1\n'), [0, 1]);
    assert.deepEqual(parseCpuList(' 0-3,6,8-9'), [0, 1, 2, 3, 6, 8, 9]);
    assert.deepEqual(parseCpuList('5'), [5]);
    assert.throws(() => parseCpuList('3-1'), /not a CPU list/);
    assert.throws(() => parseCpuList('a'), /not a CPU list/);
  });
  it('two CPUs: the control plane on the first, the benchmark on the second', () => {
    assert.deepEqual(splitCpuSet([1, 0]), { controlPlane: [0], bench: [1] });
  });
  it('refuses a single CPU with a message that says why', () => {
    assert.throws(() => splitCpuSet([3]), /needs at least 2 CPUs; this process may use 1 \(3\)/);
  });
  it('any set of 2 or more CPUs: two disjoint non-empty halves that cover it, the control plane on the lower', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 255 }), { minLength: 2, maxLength: 64 }), (cpus) => {
        const { controlPlane, bench } = splitCpuSet(cpus);
        assert.ok(controlPlane.length >= 1 && bench.length >= 1);
        assert.ok(bench.length - controlPlane.length <= 1);
        assert.deepEqual([...controlPlane, ...bench], [...cpus].sort((a, b) => a - b));
        assert.ok(Math.max(...controlPlane) < Math.min(...bench));
      }),
    );
  });
});
