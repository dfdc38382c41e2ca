/**
 * `converge status` by someone who may read one of the two kinds and not the other (an app team
 * allowed its Microservices only): the kind it may read is shown, the other is a warning; only
 * when both are refused does the command fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@converge/runtime';
import type { KubeClient, ResourceKind } from '@converge/runtime';
import { readStatus } from './status-reader.ts';

function clientRefusing(refused: readonly string[], missing: readonly string[] = []): KubeClient {
  return {
    listAll: async (kind: ResourceKind) => {
      if (missing.includes(kind.plural)) throw new ApiError({ reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' });
      if (refused.includes(kind.plural)) throw new ApiError({ reason: 'Forbidden', code: 403, message: `${kind.plural}.${kind.group} is forbidden: User "app-team" cannot list resource "${kind.plural}"` });
      return { items: kind.plural === 'microservices' ? [{ apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'web', namespace: 'ns', uid: 'u', generation: 1 }, spec: { container: { image: 'example.com/web:1', port: 8080 } } }] : [] };
    },
  } as unknown as KubeClient;
}

test('a kind the caller may not list is a warning; the other kind is shown', async () => {
  const doc = await readStatus(clientRefusing(['digitalhumanproviders']), 'ns');
  assert.equal(doc.microservices.length, 1);
  assert.ok(doc.warnings.some((w) => /not allowed to list DigitalHumanProviders.*cannot list resource "digitalhumanproviders"/.test(w)), JSON.stringify(doc.warnings));
});

test('both kinds refused: the command fails with the API server\'s words', async () => {
  await assert.rejects(readStatus(clientRefusing(['digitalhumanproviders', 'microservices']), 'ns'), /forbidden/);
});

test('one kind refused and the other\'s CRD not installed: nothing could be listed, so the command fails', async () => {
  await assert.rejects(readStatus(clientRefusing(['microservices'], ['digitalhumanproviders']), 'ns'), /forbidden/);
});

test('neither CRD installed: an empty table with both warnings, as before', async () => {
  const doc = await readStatus(clientRefusing([], ['microservices', 'digitalhumanproviders']), 'ns');
  assert.equal(doc.warnings.length, 2);
});
