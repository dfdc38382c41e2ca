/**
 * What a provider's spec may say against what the vendor accepts. The CRD bounds
 * `spec.displayName` at 256 characters as the API server counts them (code points); the vendor's
 * contract (`vendor-sim/openapi.yaml`, JSON Schema `maxLength: 256`) counts the same way. A name
 * the API server stores but the vendor refuses would leave a valid provider `VendorRejected`. So
 * random names (any script, up to and past 256 characters) are dry-run created on the control
 * plane, and every one it accepts must be accepted by the simulator's create and update.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError, EndpointLimiter } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { createVendorClient, isVendorError } from '../../../packages/operators/src/operators/provider/vendor/index.ts';
import { startVendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import { ensureCrds } from '../../support/crds.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';
import { provider } from './support.ts';

const TOKEN = 'display-name-token-0123456789';
const name = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.constantFrom('😀'.repeat(256), '😀'.repeat(257), 'é'.repeat(256), 'a'.repeat(256), 'a'.repeat(257), '日本'.repeat(128), `${'𝄞'.repeat(200)}x`),
);

test('every display name the API server accepts, the vendor accepts too', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'dhp-names');
  const sim = await startVendorSimulator({ token: TOKEN });
  t.after(() => sim.stop());
  const vendor = createVendorClient({ endpoint: sim.baseUrl, token: TOKEN, ca: sim.caPem, limiter: new EndpointLimiter(), timeoutMs: 5_000 });
  t.after(() => vendor.close());
  const seen = { accepted: 0, refusedByApiServer: 0 };
  let n = 0;
  await fc.assert(
    fc.asyncProperty(name, async (displayName) => {
      const accepted = await client.create(DigitalHumanProviderKind, provider(ns, `p-${n}`, 'https://vendor.example', { displayName }), { dryRun: true }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof ApiError && err.code === 422) return false;
          throw err;
        },
      );
      if (!accepted) {
        seen.refusedByApiServer++;
        return;
      }
      const where = `a display name of ${[...displayName].length} characters (${displayName.length} UTF-16 units)`;
      const created = await vendor.createInstance({ region: 'eu', displayName }, `k-${n++}`).catch((err: unknown) => assert.fail(`the API server stores ${where}; the vendor refuses the create: ${isVendorError(err) ? err.message : String(err)}`));
      await vendor.updateInstance(created.instance.id, { displayName }).catch((err: unknown) => assert.fail(`the vendor refuses an update to ${where}: ${isVendorError(err) ? err.message : String(err)}`));
      seen.accepted++;
    }),
    { numRuns: Number(process.env.CONVERGE_NAME_RUNS ?? 60) },
  );
  t.diagnostic(`names accepted by both ${seen.accepted}, refused by the API server ${seen.refusedByApiServer}`);
});
