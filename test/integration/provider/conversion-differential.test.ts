/**
 * The DigitalHumanProvider v1 ↔ v1alpha1 conversion through the API server and the suite's
 * conversion webhook, for random providers: a v1alpha1 client that reads a provider (its status
 * included) and writes it back unchanged leaves the v1 object exactly as it was (its credentials,
 * its limits, kept in ADR 0024's stash, its display name in any script). The pure round trips are
 * property-tested in `api/conversion.test.ts`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError } from '@converge/runtime';
import { DigitalHumanProviderKind, type DigitalHumanProvider } from '../../../packages/operators/src/operators/provider/index.ts';
import { ensureCrds } from '../../support/crds.ts';
import { writeBackAsRead } from '../../support/old-version-round-trip.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

const spec = fc.record(
  {
    endpoint: fc.constantFrom('https://vendor.example', 'https://api.vendor.example:8443/v1/', 'https://[::1]:9443'),
    region: fc.constantFrom('ap-northeast-1', 'eu', 'x9'),
    displayName: fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 60 }).map((s) => [...s].slice(0, 256).join(''))),
    credentials: fc.record({ secretRef: fc.record({ name: fc.constantFrom('creds', 'a.b'), key: fc.constantFrom('token', 'api-key') }, { requiredKeys: ['name'] }) }),
    limits: fc.record({ maxConcurrency: fc.integer({ min: 1, max: 10_000 }), requestsPerMinute: fc.integer({ min: 1, max: 1_000_000 }), dailyQuota: fc.integer({ min: 1, max: 1_000_000_000 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: ['endpoint', 'region', 'credentials'] },
);

test('a v1alpha1 client that writes back the provider it read leaves the v1 object as it was', { timeout: 240_000 }, async (t) => {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'dhp-conv');
  const seen = { roundTrips: 0, refusedAtCreate: 0 };
  let n = 0;
  await fc.assert(
    fc.asyncProperty(spec, async (s) => {
      const name = `conv-${n++}`;
      let created: DigitalHumanProvider;
      try {
        created = await client.create(DigitalHumanProviderKind, { apiVersion: 'dhp.example.com/v1', kind: 'DigitalHumanProvider', metadata: { name, namespace: ns }, spec: s } as DigitalHumanProvider);
      } catch (err) {
        if (err instanceof ApiError && err.code === 422) {
          seen.refusedAtCreate++;
          return;
        }
        throw err;
      }
      await writeBackAsRead(client, `/apis/dhp.example.com/v1alpha1/namespaces/${ns}/digitalhumanproviders/${name}`);
      const after = await client.get(DigitalHumanProviderKind, { namespace: ns, name });
      assert.deepEqual(after.spec, created.spec, 'the v1 spec changed');
      assert.deepEqual(after.metadata.annotations, created.metadata.annotations, 'the annotations changed');
      seen.roundTrips++;
      await client.delete(DigitalHumanProviderKind, { namespace: ns, name });
    }),
    { numRuns: Number(process.env.CONVERGE_CONVERSION_RUNS ?? 40) },
  );
  t.diagnostic(`round trips ${seen.roundTrips}, refused at create ${seen.refusedAtCreate}`);
  assert.ok(seen.roundTrips > 20, `only ${seen.roundTrips} round trips`);
});
