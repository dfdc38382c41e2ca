import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, type KubeObject } from '@converge/runtime';
import { GoneOwners } from './gone-owners.ts';

const ms = (uid: string, resourceVersion: string): KubeObject => ({ metadata: { namespace: 'ns', name: 'web', uid, resourceVersion } });

test('the version found gone waits, then is confirmed by a live read; each verdict ends or keeps the mark as documented', () => {
  const clock = new FakeClock();
  const gone = new GoneOwners(clock, 5_000);
  assert.equal(gone.judge('ns/web', ms('u1', '7')), undefined, 'nothing marked: reconcile');
  assert.equal(gone.mark('ns/web', 'u1', ms('u1', '7')), 5_000);
  clock.advance(2_000);
  assert.deepEqual(gone.judge('ns/web', ms('u1', '7')), { waitMs: 3_000 });
  clock.advance(3_000);
  assert.deepEqual(gone.judge('ns/web', ms('u1', '7')), { confirm: true, waitedMs: 5_000 });
  assert.equal(gone.size, 0, 'confirming ends the mark; the caller marks again if the read finds it gone');
});

test('a later version of the same UID, or another UID, ends the mark at once', () => {
  const clock = new FakeClock();
  const gone = new GoneOwners(clock, 5_000);
  gone.mark('ns/web', 'u1', ms('u1', '7'));
  assert.equal(gone.judge('ns/web', ms('u1', '8')), undefined, 'the watch showed it changed: it is there');
  assert.equal(gone.size, 0);
  gone.mark('ns/web', 'u1', ms('u1', '8'));
  assert.equal(gone.judge('ns/web', ms('u2', '9')), undefined, 'recreated under another UID');
  assert.equal(gone.size, 0);
});

test('found gone while the cache already shows another object (or none): that object is not held back', () => {
  const clock = new FakeClock();
  const gone = new GoneOwners(clock, 5_000);
  gone.mark('ns/web', 'u1', ms('u2', '9'));
  assert.equal(gone.judge('ns/web', ms('u2', '9')), undefined);
  gone.mark('ns/web', 'u1', undefined);
  gone.forget('ns/web');
  assert.equal(gone.size, 0);
});
