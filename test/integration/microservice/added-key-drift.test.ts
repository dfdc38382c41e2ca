/**
 * Hand edits that only *add* something inside what the operator renders are drift too, and are
 * repaired through the watches like any other: a key added to the Service's selector (the Service
 * then selects no pod, and the Microservice sat `EndpointsNotReady` for ever, with no difference
 * shown), a host added to the readiness probe, a command added to the container. Before, the
 * no-op check only asked whether every rendered field was there. Once repaired, nothing more is
 * written: what the API server fills in itself is not a difference.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind, ServiceKind } from '@converge/runtime';
import { MicroserviceKind, describeDifferences, renderDesiredState, defaultPlatformDefaults } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, getDeployment, getService, waitReady } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

test('a key added by hand to the Service selector, a probe or the container is repaired, and then nothing is written', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'web', IMAGE, 8080));
  const op = await startOperator(t, ns, { resyncPeriodMs: 600_000 /* only the watches can repair within the test */ });
  await waitReady(client, ns, 'web');
  const desired = renderDesiredState(await getMs(client, ns, 'web'), defaultPlatformDefaults);

  // kubectl patch svc web -p '{"spec":{"selector":{"app":"web","tier":"x"}}}'
  await client.patch(ServiceKind, { namespace: ns, name: 'web' }, { type: 'merge', body: { spec: { selector: { app: 'web', tier: 'x' } } } });
  const service = await eventually(async () => {
    const s = await getService(client, ns, 'web');
    return s && s.spec?.selector?.tier === undefined ? s : undefined;
  }, { timeoutMs: 15_000, what: 'the added selector key removed' });
  assert.deepEqual(service.spec?.selector, { app: 'web' });

  await client.patch(DeploymentKind, { namespace: ns, name: 'web' }, {
    type: 'strategic',
    body: { spec: { template: { spec: { containers: [{ name: 'app', command: ['sleep', 'infinity'], readinessProbe: { httpGet: { host: 'elsewhere.example.com' } } }] } } } },
  });
  const deployment = await eventually(async () => {
    const d = await getDeployment(client, ns, 'web');
    const c = d?.spec?.template.spec?.containers[0];
    return c && c.command === undefined && c.readinessProbe?.httpGet?.host === undefined ? d : undefined;
  }, { timeoutMs: 15_000, what: 'the added command and probe host removed' });
  assert.deepEqual(describeDifferences(deployment, desired.deployment), []);
  await waitReady(client, ns, 'web');

  // Repaired means converged: the periodic check (every 0.5 s from now on) writes no child.
  await op.stop();
  const again = await startOperator(t, ns, { resyncPeriodMs: 500 });
  await sleep(3_000);
  assert.deepEqual(again.writeLog.filter((w) => w.resource === 'deployments' || w.resource === 'services'), [], 'no child write on a repaired Microservice');
});
