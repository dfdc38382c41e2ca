/**
 * The event recorder's promise that the API server never refuses an Event for the size of its
 * fields, searched with random reasons, actions, notes and reporting instances of any text (one,
 * two, three and four UTF-8 bytes per character) around the limits kube-apiserver enforces: 128
 * for reason, action and reporting instance, 1,024 for the note, counted in bytes (Go's `len`).
 * Every event recorded must be created; none may fail. The objects they are about have names of
 * up to 253 characters, which the Event's own name (the object's, cut, plus a time) must survive.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ConfigMapKind, type ConfigMap } from '@converge/runtime';
import { createEventRecorder } from '../../../packages/runtime/src/events/index.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

/** Text of 1- to 4-byte characters, a few either side of `around` characters long. */
const text = (around: number) =>
  fc.tuple(fc.constantFrom('a', 'é', '日', '😀', 'x'), fc.integer({ min: Math.max(1, around - 3), max: around + 3 }), fc.string({ maxLength: 3 })).map(([ch, n, tail]) => ch.repeat(n) + tail);

test('every event with any reason, action, note and reporting instance is created, none refused for its size', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const ns = await testNamespace(t, client, 'ev-limits');
  // Names up to 253 characters whose cut (an Event's name keeps the first 236) may end inside
  // a label, at a '-', or at a '.'.
  const subjects: ConfigMap[] = [];
  for (const name of ['subject', `${'a'.repeat(235)}-b`, `${'a'.repeat(235)}.b`, `${'a-'.repeat(118)}${'b'.repeat(17)}`, `${'a.'.repeat(126)}b`]) {
    const cm = await client.create(ConfigMapKind, { metadata: { name, namespace: ns } });
    subjects.push({ ...cm, apiVersion: 'v1', kind: 'ConfigMap' });
  }
  let recorded = 0;
  const totals = { created: 0, failed: 0 };
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(text(128), text(64), text(42), text(32)),
      fc.oneof(text(128), text(64), text(42), fc.constant('Reconcile')),
      fc.option(fc.oneof(text(1024), text(512), text(341), text(256)), { nil: undefined }),
      fc.oneof(text(128), text(64), fc.constant('pod-0')),
      fc.nat(4),
      async (reason, action, note, reportingInstance, which) => {
        const subject = subjects[which]!;
        const recorder = createEventRecorder({ client, reportingController: 'converge.dev/limits-test', reportingInstance, perObject: { qps: 1_000, burst: 1_000 } });
        try {
          recorder.warning(subject, reason, action, note);
          recorded++;
          await recorder.flush();
          const s = recorder.stats();
          totals.created += s.created;
          totals.failed += s.failed;
          assert.equal(s.failed, 0, `refused: about ${subject.metadata.name!.length} characters of name, reason ${Buffer.byteLength(reason)} bytes (${reason.length} UTF-16 units), action ${Buffer.byteLength(action)} bytes, note ${note === undefined ? '-' : Buffer.byteLength(note)} bytes, instance ${Buffer.byteLength(reportingInstance)} bytes`);
          assert.equal(s.created, 1, 'created');
        } finally {
          await recorder.close();
        }
      },
    ),
    { numRuns: Number(process.env.CONVERGE_EVENT_RUNS ?? 80) },
  );
  t.diagnostic(`events recorded ${recorded}, created ${totals.created}, failed ${totals.failed}`);
});
