/**
 * The operator's spelling of resource quantities against the API server's. The platform's default
 * requests and limits are written into every Deployment as `canonicalQuantity` spells them, and
 * "current contains desired" compares that spelling with what the API server stored. Where the
 * API server stores it differently, the comparison is never true and every resync rewrites the
 * Deployment (principle 4). So random quantities of the grammar it accepts (fractions, SI and
 * binary suffixes, values around the 1000 and 1024 boundaries and the int64 limit) are sent to
 * the API server in a dry-run Pod, both as given and as spelled, and:
 * - the spelling comes back unchanged (no write loop);
 * - it is the amount given: the API server's spelling of the input, spelled again, is the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PodKind, type Pod } from '@converge/runtime';
import { canonicalQuantity } from '../../../packages/operators/src/operators/microservice/quantity.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

const SUFFIXES = ['', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;
const whole = fc.oneof(
  fc.constantFrom(0, 1, 2, 5, 7, 8, 10, 999, 1000, 1001, 1023, 1024, 1025, 1125, 1536, 2048, 4096, 1_000_000, 1_048_576, 1_073_741_824),
  fc.nat(5_000),
);
const fraction = fc.oneof(fc.constant(''), fc.stringMatching(/^[0-9]{1,4}$/));
const quantity = fc.oneof(
  fc.tuple(whole, fraction, fc.constantFrom(...SUFFIXES)).map(([w, f, s]) => `${w}${f ? `.${f}` : ''}${s}`),
  fc.constantFrom('7Ei', '8Ei', '9223372036854775807', '9223372036854775808', '9E', '9.3E', '1000000E'),
);

function spelled(q: string): string | undefined {
  try {
    return canonicalQuantity(q);
  } catch {
    return undefined; // refused with a message: never written
  }
}

test('the API server keeps canonicalQuantity\'s spelling unchanged, and it is the amount given', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'quantities');
  const seen = { compared: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(fc.array(quantity, { minLength: 1, maxLength: 12 }), async (batch) => {
      const pairs = batch.flatMap((q) => {
        const ours = spelled(q);
        if (ours === undefined) seen.refused++;
        return ours === undefined ? [] : [{ input: q, ours }];
      });
      if (pairs.length === 0) return;
      const containers = pairs.flatMap(({ input, ours }, i) => [
        { name: `given-${i}`, image: 'example.invalid/app:1', resources: { requests: { cpu: input, memory: input } } },
        { name: `spelled-${i}`, image: 'example.invalid/app:1', resources: { requests: { cpu: ours, memory: ours } } },
      ]);
      const pod: Pod = { metadata: { name: 'q', namespace: ns }, spec: { containers } };
      const stored = await client.create(PodKind, pod, { dryRun: true });
      pairs.forEach(({ input, ours }, i) => {
        for (const resource of ['cpu', 'memory'] as const) {
          const given = stored.spec!.containers[2 * i]!.resources!.requests![resource]!;
          const back = stored.spec!.containers[2 * i + 1]!.resources!.requests![resource]!;
          assert.equal(back, ours, `${input} is spelled ${ours}; as ${resource} the API server stores that as ${back}: every resync would write it again`);
          assert.equal(spelled(given), ours, `${input} is spelled ${ours}, but the API server reads it as ${given} (${resource})`);
        }
        seen.compared++;
      });
    }),
    { numRuns: Number(process.env.CONVERGE_QUANTITY_RUNS ?? 60) },
  );
  t.diagnostic(`quantities compared ${seen.compared}, refused by canonicalQuantity ${seen.refused}`);
  assert.ok(seen.compared > 150, `only ${seen.compared} quantities compared`);
});
