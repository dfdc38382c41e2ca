import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { ephemeralPortRange, freePorts } from './free-ports.ts';

test('free ports are distinct, bindable, and below the kernel ephemeral range (which outgoing connections take ports from)', async () => {
  const range = ephemeralPortRange();
  for (let round = 0; round < 20; round++) {
    const ports = await freePorts(5);
    assert.equal(new Set(ports).size, 5);
    if (range) for (const p of ports) assert.ok(p >= 1024 && p < range.low, `port ${p} is not below the ephemeral range ${range.low}–${range.high}`);
    // Each can be bound right away.
    for (const p of ports) {
      await new Promise<void>((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(p, '127.0.0.1', () => s.close(() => resolve()));
      });
    }
  }
});

test('ephemeralPortRange reads the kernel file and refuses what is not a range', () => {
  assert.deepEqual(ephemeralPortRange(() => '32768\t60999\n'), { low: 32768, high: 60999 });
  assert.equal(ephemeralPortRange(() => 'x y'), undefined);
  assert.equal(ephemeralPortRange(() => '60999 32768'), undefined);
  assert.equal(ephemeralPortRange(() => { throw new Error('ENOENT'); }), undefined);
});

test('a port handed out is not handed out again by a later call in this process (its component may not have bound it yet)', async (t) => {
  // The worst luck: every random choice the same.
  t.mock.method(Math, 'random', () => 0.5);
  const [first] = await freePorts(1);
  const [second] = await freePorts(1);
  assert.notEqual(second, first);
});
