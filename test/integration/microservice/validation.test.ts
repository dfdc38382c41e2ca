/**
 * Bad input is stopped by the API server with a readable message (schema and CEL), so it never
 * reaches the operator; a failing image ends Stalled with a stable reason, and fixing it
 * recovers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@converge/runtime';
import { MicroserviceKind, MicroserviceV1alpha1Kind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, getDeployment, waitReady, condition } from './support.ts';

test('port 0, port 70000 and an empty image are rejected with a readable message', async (t) => {
  const { client, ns } = await setup(t);
  const cases: [string, unknown, RegExp][] = [
    ['port-zero', { container: { image: 'nginx:1', port: 0 } }, /spec\.container\.port/],
    ['port-big', { container: { image: 'nginx:1', port: 70000 } }, /spec\.container\.port/],
    ['empty-image', { container: { image: '', port: 8080 } }, /spec\.container\.image/],
    ['bad-image', { container: { image: 'Not An Image!', port: 8080 } }, /image must be a valid image reference/],
    ['no-port', { container: { image: 'nginx:1' } }, /spec\.container\.port/],
    ['string-port', { container: { image: 'nginx:1', port: '8080' } }, /spec\.container\.port/],
    ['platform-env', { container: { image: 'nginx:1', port: 80, env: [{ name: 'OTEL_SERVICE_NAME', value: 'x' }] } }, /the platform sets ASPNETCORE_URLS, OTEL_SERVICE_NAME/],
    ['env-both', { container: { image: 'nginx:1', port: 80, env: [{ name: 'A', value: '1', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] } }, /give exactly one of value and valueFrom/],
    ['replicas-big', { container: { image: 'nginx:1', port: 80 }, replicas: 1000 }, /spec\.replicas/],
  ];
  for (const [name, spec, message] of cases) {
    await assert.rejects(
      client.create(MicroserviceKind, { metadata: { name, namespace: ns }, spec } as never),
      (err: unknown) => err instanceof ApiError && err.reason === 'Invalid' && message.test(err.message),
      name,
    );
  }
  // The deprecated v1alpha1 says the same in its own field names.
  for (const [name, spec, message] of [['old-port-zero', { image: 'nginx:1', port: 0 }, /spec\.port/], ['old-bad-image', { image: 'Not An Image!', port: 8080 }, /image must be a valid image reference/]] as [string, unknown, RegExp][]) {
    await assert.rejects(
      client.create(MicroserviceV1alpha1Kind, { metadata: { name, namespace: ns }, spec } as never),
      (err: unknown) => err instanceof ApiError && err.reason === 'Invalid' && message.test(err.message),
      name,
    );
  }
});

test('a failing image stalls with RolloutStalled after the platform\'s progress deadline; fixing the image makes it Ready', { timeout: 240_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'broken', 'example.com/app:fail', 8080));
  // The platform default, not a hand edit of the Deployment (the operator owns the field now).
  // A 1 s progress-status interval: with the default 15 s, the 'rolling out' message (a
  // progress-only change of 'waiting for the Deployment controller') would be coalesced away
  // before a 5 s deadline stalls the rollout.
  await startOperator(t, ns, { resyncPeriodMs: 2_000, statusProgressIntervalMs: 1_000, defaults: { progressDeadlineSeconds: 5 } });
  const deployment = await eventually(() => getDeployment(client, ns, 'broken'), { what: 'Deployment created' });
  assert.equal(deployment.spec?.progressDeadlineSeconds, 5);
  const rolling = await eventually(async () => {
    const ms = await getMs(client, ns, 'broken');
    return condition(ms, 'Ready')?.reason === 'RolloutInProgress' && /^rolling out/.test(condition(ms, 'Ready')?.message ?? '') ? ms : undefined;
  }, { timeoutMs: 60_000, what: 'RolloutInProgress, rolling out' });
  assert.match(condition(rolling, 'Ready')?.message ?? '', /RolloutStalled after 5 s without progress \(progressDeadlineSeconds\)/, 'says how long it waits');
  const stalled = await eventually(async () => {
    const ms = await getMs(client, ns, 'broken');
    return condition(ms, 'Stalled')?.status === 'True' ? ms : undefined;
  }, { timeoutMs: 120_000, what: 'Stalled' });
  assert.equal(condition(stalled, 'Ready')?.status, 'False');
  assert.equal(condition(stalled, 'Ready')?.reason, 'RolloutStalled');
  assert.equal(condition(stalled, 'Stalled')?.reason, 'RolloutStalled');
  assert.match(condition(stalled, 'Stalled')?.message ?? '', /\(no progress for 5 s, the progressDeadlineSeconds\)$/);
  assert.equal(stalled.status?.phase, 'ResourcesApplied', 'configuration was applied; the workload is what fails');

  const ms = await getMs(client, ns, 'broken');
  await client.replace(MicroserviceKind, { ...ms, spec: { ...ms.spec, container: { ...ms.spec.container, image: 'example.com/app:1.0.1' } } });
  const ready = await waitReady(client, ns, 'broken', 120_000);
  assert.equal(condition(ready, 'Stalled')?.status, 'False');
});
