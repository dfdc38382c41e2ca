/**
 * The pure part of storage migration; the migration itself runs against the real API server in
 * test/integration/runtime/storage-migration.test.ts and conversion-webhook.test.ts.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/index.ts';
import { patiently, storageVersionHash } from './storage-migration.ts';

it("storageVersionHash is kube-apiserver's (the hashes its discovery publishes for pods and deployments)", () => {
  assert.equal(storageVersionHash('', 'v1', 'Pod'), 'xPOwRZ+Yhw8=');
  assert.equal(storageVersionHash('apps', 'v1', 'Deployment'), '8aSe+NMegvE=');
});

const busy = (retryAfterMs: number) => new ApiError({ reason: 'TooManyRequests', code: 429, message: 'storage is (re)initializing', causes: [], retryAfterMs });

it('waiting out a 429 ends when the signal aborts, not after the Retry-After (Ctrl-C of converge migrate-storage)', async () => {
  const abort = new AbortController();
  setTimeout(() => abort.abort(new Error('SIGINT')), 50);
  const started = performance.now();
  const err = await patiently(async () => { throw busy(3_000); }, abort.signal).catch((e: unknown) => e);
  const took = performance.now() - started;
  assert.equal((err as Error).message, 'SIGINT');
  assert.ok(took < 1_000, `settled after ${Math.round(took)} ms`);
});

it('a Retry-After of 0 is not a busy loop', async () => {
  let calls = 0;
  const abort = new AbortController();
  setTimeout(() => abort.abort(new Error('stop')), 600);
  await patiently(async () => { calls++; throw busy(0); }, abort.signal).catch(() => undefined);
  assert.ok(calls <= 4, `${calls} attempts in 600 ms`);
});
