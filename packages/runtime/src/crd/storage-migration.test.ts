/**
 * The pure part of storage migration; the migration itself runs against the real API server in
 * test/integration/runtime/storage-migration.test.ts and conversion-webhook.test.ts.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { storageVersionHash } from './storage-migration.ts';

it("storageVersionHash is kube-apiserver's (the hashes its discovery publishes for pods and deployments)", () => {
  assert.equal(storageVersionHash('', 'v1', 'Pod'), 'xPOwRZ+Yhw8=');
  assert.equal(storageVersionHash('apps', 'v1', 'Deployment'), '8aSe+NMegvE=');
});
