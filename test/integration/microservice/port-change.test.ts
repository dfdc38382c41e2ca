/**
 * A port change is never half-applied on the data path. The Service reaches the pods by the
 * container port's name (`http`), not by its number, so it keeps sending traffic to the port the
 * running pods declare: when the Deployment's write is refused while the Service's is accepted
 * (here a cluster admission policy refusing the new image, 422 → `Failed`/`ApplyRejected`), and
 * in every port-change rollout while the old pods still listen on the old port. With a numeric
 * targetPort the Service switched to the new port at once and selected pods that do not listen
 * there: its EndpointSlice listed the new port.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointSliceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, getDeployment, getService, waitReady, deploymentPolicy } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';
const REFUSED_IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.2.0';

test('a port change whose Deployment write is refused leaves the Service reaching the running pods on their port', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'web', IMAGE, 8080));
  await startOperator(t, ns, { resyncPeriodMs: 1_000 });
  await waitReady(client, ns, 'web');

  // A registry policy: the new image is refused (422), the Service's write is not.
  await deploymentPolicy(t, client, ns, `registry-${ns}`, { validate: `object.spec.template.spec.containers.all(c, c.image != '${REFUSED_IMAGE}')`, message: 'image not from an approved registry' }, REFUSED_IMAGE);

  const ms = await getMs(client, ns, 'web');
  await client.replace(MicroserviceKind, { ...ms, spec: { container: { image: REFUSED_IMAGE, port: 9090 } } });
  const failed = await eventually(async () => {
    const m = await getMs(client, ns, 'web');
    return m.status?.reason === 'ApplyRejected' && m.status.observedGeneration === m.metadata.generation ? m : undefined;
  }, { what: 'Failed/ApplyRejected for the new generation', timeoutMs: 30_000 });
  assert.match(failed.status?.message ?? '', /approved registry/);

  // The Service took the new port; the pods did not change.
  const moved = await eventually(async () => {
    const s = await getService(client, ns, 'web');
    return s?.spec?.ports?.[0]?.port === 9090 ? s : undefined;
  }, { what: 'the Service on the new port', timeoutMs: 10_000 });
  assert.deepEqual((await getDeployment(client, ns, 'web'))!.spec?.template.spec?.containers[0]?.ports?.map((p) => p.containerPort), [8080]);
  // The EndpointSlice resolves the name against the pods: their port, 8080, with ready endpoints.
  const slice = await eventually(async () => {
    const slices = await client.list(EndpointSliceKind, { namespace: ns, labelSelector: 'kubernetes.io/service-name=web' });
    const ready = slices.items.filter((s) => s.endpoints?.some((e) => e.conditions?.ready));
    return ready.length > 0 && ready.every((s) => s.ports?.length) ? ready : undefined;
  }, { what: 'an EndpointSlice with ready endpoints', timeoutMs: 30_000 });
  assert.deepEqual([...new Set(slice.flatMap((s) => (s.ports ?? []).map((p) => p.port)))], [8080], 'traffic to the Service still reaches the port the running pods listen on');
  assert.equal(moved.spec?.ports?.[0]?.targetPort, 'http', 'by the container port\'s name');
});
