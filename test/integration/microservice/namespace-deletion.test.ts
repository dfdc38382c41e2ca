/**
 * Deleting a namespace that holds a Microservice is an expected state, not a failure: a write the
 * API server refuses because the namespace is being terminated ends the reconcile quietly (one
 * debug line), with no warning, no error, no stack trace and no backoff retry (issue 18, item 9).
 *
 * Deterministic: the reconcile is held just before it creates the Service (a fault point) until
 * the namespace is Terminating, so the create is the one the API server refuses.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { NamespaceKind, createLogger, isNotFound } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { MicroserviceKind, registerMicroserviceOperator, defaultPlatformDefaults } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually, startManager, testClient } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';
import { getDeployment, microservice } from './support.ts';

test('a namespace being deleted under a Microservice: the refused create is done quietly, without a retry', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  await ensureCrds(client);
  const ns = `term-${randomBytes(4).toString('hex')}`;
  await client.create(NamespaceKind, { metadata: { name: ns, labels: { 'converge.test/namespace': 'true' } } });
  t.after(async () => {
    try {
      await client.delete(NamespaceKind, { namespace: '', name: ns });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  });

  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>); cb(); } });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held = false;
  const noEvents = { normal: (_o: KubeObject) => {}, warning: (_o: KubeObject) => {} };
  await startManager(t, {
    // Direct, without the fault proxy: its injected watch breaks log warnings of their own,
    // and this test counts warnings.
    faults: false,
    namespaces: [ns],
    log: createLogger({ level: 'debug', destination }),
    configure: (m) =>
      registerMicroserviceOperator(m, {
        events: noEvents,
        defaults: defaultPlatformDefaults,
        resyncPeriodMs: 1_000,
        faultPoint: async (name) => {
          if (name !== 'microservice:before-apply-service' || held) return;
          held = true;
          await released;
        },
      }),
  });

  await client.create(MicroserviceKind, microservice(ns, 'web', 'ghcr.io/yrw9281/it30-todo-api:0.1.0', 8080));
  await eventually(async () => held && (await getDeployment(client, ns, 'web')), { what: 'the Deployment created, the Service create held' });
  await client.delete(NamespaceKind, { namespace: '', name: ns });
  await eventually(async () => (await client.get(NamespaceKind, { namespace: '', name: ns })).status?.phase === 'Terminating', { what: 'the namespace Terminating' });
  release();

  await eventually(() => lines.some((l) => l.msg === 'the namespace is being terminated; nothing more to do' && l.namespace === ns && l.level === 'debug'), {
    what: 'the debug line about the terminating namespace',
    timeoutMs: 30_000,
  });
  await eventually(async () => {
    try {
      await client.get(NamespaceKind, { namespace: '', name: ns });
      return false;
    } catch (err) {
      return isNotFound(err);
    }
  }, { what: 'the namespace gone', timeoutMs: 120_000 });
  await new Promise((r) => setTimeout(r, 2_000)); // a retry would have come by now (the backoff starts at 5 ms)

  const loud = lines.filter((l) => ['warn', 'error', 'fatal'].includes(String(l.level)) && JSON.stringify(l).includes(ns));
  assert.deepEqual(loud.map((l) => JSON.stringify(l)), [], 'no warning or error about the terminating namespace');
  // Other events (the children being deleted, the periodic check) may try once more until the
  // Microservice itself is gone from the cache: each is told the same, at debug; none backs off.
  const refusals = lines.filter((l) => l.msg === 'the namespace is being terminated; nothing more to do');
  assert.ok(refusals.every((l) => l.level === 'debug'));
  assert.deepEqual(lines.filter((l) => /retry/.test(String(l.msg)) && l.namespace === ns).map((l) => l.msg), [], 'no retry with backoff');
});
