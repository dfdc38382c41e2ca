/**
 * A child write the API server answers with a refusal that retrying may outlive — a
 * ResourceQuota exceeded (403), a permission missing, an admission webhook failing — is retried
 * with backoff, and the status says so at once: `ApplyFailed`, naming the object and the API
 * server's words. Before, the status said nothing of it: a new generation showed "spec accepted;
 * applying resources" for as long as it lasted, and a Service deleted from a converged
 * Microservice that could not be created again left it `Ready`/`Available`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, ServiceKind, defineKind } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, waitReady, condition } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';
const ResourceQuotaKind = defineKind<KubeObject & { spec?: { hard?: Record<string, string> } }>({ group: '', version: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true });

test('a child write refused by a ResourceQuota is ApplyFailed, explained, retried; the status tells it for a new generation and for a converged one', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  /**
   * A quota of no Services. The local control plane runs no quota controller, and the admission
   * plugin enforces what a quota's status says: the test writes it, as the controller would.
   */
  const quota = async (name: string) => {
    const created = await client.create(ResourceQuotaKind, { metadata: { name, namespace: ns }, spec: { hard: { services: '0' } } });
    await client.replaceStatus(ResourceQuotaKind, { ...created, status: { hard: { services: '0' }, used: { services: '0' } } } as KubeObject);
    // The quota admission plugin judges by its own informer (and, while that has no quota in the
    // namespace, by a live lookup it caches for 30 s): a Service created before it has this quota
    // and its status is let through, and no ApplyFailed would come. In force once a dry-run
    // create is refused for the quota.
    const probe = { metadata: { name: 'quota-probe', namespace: ns }, spec: { ports: [{ port: 80 }] } };
    await eventually(() => client.create(ServiceKind, probe, { dryRun: true }).then(
      () => false,
      (err: unknown) => err instanceof ApiError && err.reason === 'Forbidden' && new RegExp(`exceeded quota: ${name}`).test(err.message),
    ), { what: `the ResourceQuota ${name} in force`, timeoutMs: 30_000 });
  };
  await quota('no-services');
  await client.create(MicroserviceKind, microservice(ns, 'quota', IMAGE, 8080));
  const op = await startOperator(t, ns);

  const failing = await eventually(async () => {
    const ms = await getMs(client, ns, 'quota');
    return condition(ms, 'Ready')?.reason === 'ApplyFailed' ? ms : undefined;
  }, { what: 'Ready reason ApplyFailed', timeoutMs: 30_000 });
  assert.equal(failing.status?.phase, 'Accepted');
  assert.equal(failing.status?.observedGeneration, failing.metadata.generation);
  assert.equal(condition(failing, 'Ready')?.status, 'Unknown');
  assert.match(condition(failing, 'Ready')?.message ?? '', /could not create Service quota: .*exceeded quota: no-services.*; retried with backoff/);
  assert.equal(condition(failing, 'Reconciling')?.status, 'True');
  assert.equal(condition(failing, 'Stalled')?.status, 'False', 'retried by itself: kstatus InProgress, not Failed');
  await eventually(() => op.events.some((e) => e.type === 'Warning' && e.reason === 'ApplyFailed'), { what: 'an ApplyFailed Warning Event', timeoutMs: 10_000 });

  await client.delete(ResourceQuotaKind, { namespace: ns, name: 'no-services' });
  await waitReady(client, ns, 'quota', 90_000);

  // Converged, then its Service deleted while a quota forbids a new one.
  await quota('no-more-services');
  await client.delete(ServiceKind, { namespace: ns, name: 'quota' });
  const lost = await eventually(async () => {
    const ms = await getMs(client, ns, 'quota');
    return condition(ms, 'Ready')?.reason === 'ApplyFailed' ? ms : undefined;
  }, { what: 'Ready reason ApplyFailed after the Service was deleted', timeoutMs: 30_000 });
  assert.equal(condition(lost, 'Ready')?.status, 'Unknown', 'no longer Ready/Available with its Service gone');
  assert.match(condition(lost, 'Ready')?.message ?? '', /could not create Service quota/);

  await client.delete(ResourceQuotaKind, { namespace: ns, name: 'no-more-services' });
  await waitReady(client, ns, 'quota', 120_000);
  assert.ok(await client.get(ServiceKind, { namespace: ns, name: 'quota' }), 'the Service is back');
});
