/**
 * AccountWatches stops with its signal whenever a provider registers: an account first used in the
 * moment the operator is told to stop (the signal aborted, `start` not yet back from its wait), or
 * before `start` ran with a signal aborted already, is never polled, and `start` settles.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '@converge/runtime';
import { AccountWatches } from './account-watches.ts';
import type { VendorApi } from './vendor-api.ts';

function watchesReadingNothing() {
  const reads = { count: 0 };
  const api = {
    getAccount: async () => {
      reads.count++;
      throw new Error('the vendor is not there');
    },
    listInstanceStates: async () => ({ items: [] }),
  } as unknown as VendorApi;
  const watches = new AccountWatches({
    vendors: { forEndpoint: () => api, sweepIdle() {} },
    clock: systemClock,
    intervalMs: 20,
    usageRefreshMs: 1_000,
    keysForInstance: () => [],
    enqueue() {},
  });
  return { watches, reads };
}

/** 'stopped' when `running` settles within 1 s, else 'still running'; the 1 s timer is cleared either way. */
async function settles(running: Promise<void>): Promise<string> {
  const bound = new AbortController();
  try {
    return await Promise.race([running.then(() => 'stopped'), sleep(1_000, 'still running', { signal: bound.signal })]);
  } finally {
    bound.abort();
  }
}

test('an account first used just as the stop begins is never polled, and start settles', async () => {
  const { watches, reads } = watchesReadingNothing();
  const stop = new AbortController();
  const running = watches.start(stop.signal);
  await sleep(10);
  stop.abort();
  watches.use('https://vendor.example', 'token-1', 'ns/a'); // a reconcile still running, in the same tick
  assert.equal(await settles(running), 'stopped');
  const after = reads.count;
  await sleep(200);
  assert.equal(reads.count, after, `the account was read ${reads.count - after} times after the stop`);
});

test('a start whose signal aborted before it ran polls none of the accounts registered before it', async () => {
  const { watches, reads } = watchesReadingNothing();
  watches.use('https://vendor.example', 'token-1', 'ns/a');
  assert.equal(await settles(watches.start(AbortSignal.abort())), 'stopped');
  await sleep(200);
  assert.equal(reads.count, 0);
});

test('the last user leaving stops its watch; a stop ends the others', async () => {
  const { watches, reads } = watchesReadingNothing();
  const stop = new AbortController();
  const running = watches.start(stop.signal);
  watches.use('https://vendor.example', 'token-1', 'ns/a');
  await sleep(100);
  assert.ok(reads.count > 0, 'a used account is polled');
  watches.release('ns/a');
  await sleep(30);
  const left = reads.count;
  await sleep(100);
  assert.equal(reads.count, left, 'an account with no user is not polled');
  watches.use('https://vendor.example', 'token-2', 'ns/b');
  stop.abort();
  assert.equal(await settles(running), 'stopped');
});
