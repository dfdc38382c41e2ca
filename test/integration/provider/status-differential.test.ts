/**
 * What a vendor may report against what the provider status may hold. The vendor client accepts
 * any safe integer for counts and limits and any time `Date.parse` reads (`vendor/reports.ts`,
 * applied here to random reports as the client applies it to the vendor's); the status is written
 * through the CRD's schema (int32 limits, `date-time` times, bounded texts). A figure the client
 * accepts but the schema refuses would make every status write of that provider fail: its
 * health, quota and account state would stop reaching the platform. So random observations of
 * what the client lets through are turned into the status the operator writes
 * (`observedStatus`, the status writer's own composition) and dry-run patched onto a real object.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { observedStatus } from '../../../packages/operators/src/operators/provider/status-writer.ts';
import type { InstanceObservation } from '../../../packages/operators/src/operators/provider/usage-status.ts';
import { readLimits, readUsage, vendorText } from '../../../packages/operators/src/operators/provider/vendor/index.ts';
import { ensureCrds } from '../../support/crds.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';
import { provider } from './support.ts';

const count = (min: number) => fc.oneof(fc.integer({ min, max: 1_000 }), fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1), fc.integer({ min, max: Number.MAX_SAFE_INTEGER }));
/** Times `Date.parse` reads, as vendors write them. */
const time = fc.constantFrom(
  '2026-12-06T00:00:00Z', '2026-12-06T00:00:00.123456Z', '2026-12-06T09:00:00+09:00', '2026-12-06', '2026-12-06T00:00:00',
  'Sun, 06 Dec 2026 00:00:00 GMT', '2026-12-06 00:00:00Z', 'December 6, 2026', '2026-12-06T00:00Z',
);
const words = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 300 }), fc.constant('x'.repeat(5_000)));
/** What a vendor may send for an instance, before the client reads it. */
const vendorReport = fc.record({
  instanceId: fc.constantFrom('inst-1', 'i'.repeat(256)),
  region: fc.constantFrom('ap-northeast-1', 'eu'),
  health: fc.record({ status: fc.constantFrom('healthy', 'degraded', 'down'), message: words.map((w) => vendorText(w)) }, { requiredKeys: ['status'] }),
  account: fc.record(
    { id: fc.constantFrom('acct-1'), state: fc.constantFrom('active', 'suspended'), reason: words.map((w) => vendorText(w, undefined, 64)), message: words.map((w) => vendorText(w)), since: time },
    { requiredKeys: ['id', 'state', 'since'] },
  ),
  limits: fc.record({ maxConcurrency: count(1), requestsPerMinute: count(1), dailyQuota: count(1) }),
  usage: fc.record({
    callsToday: count(0), dailyQuota: count(0), quotaRemaining: count(0), refusedToday: count(0), throttledRequests: count(0),
    throttleWindowSeconds: count(0), quotaResetAt: time, observedAt: time,
  }),
});
/** The observation the operator makes of it: limits and usage as the vendor client reads them. */
const observation: fc.Arbitrary<InstanceObservation> = vendorReport.map((r) => ({ ...r, limits: readLimits(r.limits)!, usage: readUsage(r.usage)! }) as InstanceObservation);

test('every status the reconciler composes from an observation the vendor client accepts is one the API server stores', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'dhp-status');
  const created = await client.create(DigitalHumanProviderKind, provider(ns, 'p', 'https://vendor.example'));
  const seen = { written: 0 };
  await fc.assert(
    fc.asyncProperty(observation, async (obs) => {
      const now = Date.UTC(2026, 11, 5, 12);
      const { status } = observedStatus({ ...created, metadata: { ...created.metadata, generation: 1 }, status: undefined }, obs, now, now, { quotaPercent: 80, sustainedThrottlingMs: 300_000 });
      try {
        await client.patch(DigitalHumanProviderKind, { namespace: ns, name: 'p' }, { type: 'merge', body: { status } }, { subresource: 'status', dryRun: true });
      } catch (err) {
        const why = err instanceof ApiError ? err.message : String(err);
        assert.fail(`a status composed from what the vendor client accepts is refused: ${why.slice(0, 600)}\nlimits ${JSON.stringify(obs.limits)}, usage ${JSON.stringify(obs.usage)}`);
      }
      seen.written++;
    }),
    { numRuns: Number(process.env.CONVERGE_STATUS_RUNS ?? 100) },
  );
  t.diagnostic(`statuses accepted ${seen.written}`);
});
