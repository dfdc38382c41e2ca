/**
 * What "Ready" counts: ready endpoints are counted once per endpoint, not once per
 * EndpointSlice (a dual-stack Service has one slice per address family listing the same pods),
 * and a Microservice scaled to zero by the platform defaults is Ready once nothing runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointSliceKind } from '@converge/runtime';
import type { EndpointSlice } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, waitReady, condition, getDeployment } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

test('a second address family lists the same pods again: they are not counted twice', { timeout: 150_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'dual', IMAGE, 8080));
  // Ready needs one ready endpoint; the second pod's endpoint is a progress-only change, written
  // within the progress interval (short here), so the count is awaited, not read with Ready.
  await startOperator(t, ns, { statusProgressIntervalMs: 500 });
  await waitReady(client, ns, 'dual');
  const pods = await eventually(async () => {
    const ipv4 = (await client.list(EndpointSliceKind, { namespace: ns, labelSelector: 'kubernetes.io/service-name=dual' })).items;
    const ready = ipv4.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready !== false && e.targetRef);
    const ms = await getMs(client, ns, 'dual');
    return ready.length === 2 && ms.status?.rollout?.readyEndpoints === 2 ? ready : undefined;
  }, { what: 'both pods ready in the IPv4 slice and counted in the status', timeoutMs: 60_000 });
  assert.equal(pods.length, 2);

  // What the EndpointSlice controller writes for the IPv6 family of a dual-stack Service: the
  // same pods (same targetRefs), other addresses. Plus one endpoint only this family has, so the
  // test can tell when the operator has seen the slice.
  const ipv6: EndpointSlice = {
    metadata: { name: 'dual-ipv6', namespace: ns, labels: { 'kubernetes.io/service-name': 'dual', 'endpointslice.kubernetes.io/managed-by': 'converge-test' } },
    addressType: 'IPv6',
    ports: [{ name: '', port: 8080, protocol: 'TCP' }],
    endpoints: [
      ...pods.map((e, i) => ({ addresses: [`fd00::${i + 1}`], conditions: { ready: true }, targetRef: e.targetRef })),
      { addresses: ['fd00::99'], conditions: { ready: true }, targetRef: { kind: 'Pod', namespace: ns, name: 'only-in-ipv6', uid: '00000000-0000-0000-0000-000000000099' } },
    ],
  } as EndpointSlice;
  await client.create(EndpointSliceKind, ipv6);
  const seen = await eventually(async () => {
    const ms = await getMs(client, ns, 'dual');
    return ms.status?.rollout?.readyEndpoints !== 2 ? ms : undefined;
  }, { what: 'the operator counted the IPv6 slice', timeoutMs: 30_000 });
  assert.equal(seen.status?.rollout?.readyEndpoints, 3, 'two pods in both families and one in IPv6 only: three endpoints');
});

test('a platform default of 0 replicas is Ready (ScaledToZero) once no pod is left', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'idle', IMAGE, 8080));
  await startOperator(t, ns, { defaults: { replicas: 0 } });
  const ms = await waitReady(client, ns, 'idle', 60_000);
  assert.equal(condition(ms, 'Ready')?.reason, 'ScaledToZero');
  assert.equal(condition(ms, 'Progressing')?.status, 'False');
  assert.equal(condition(ms, 'Stalled')?.status, 'False');
  assert.equal(ms.status?.rollout?.replicas, 0);
  assert.equal(ms.status?.rollout?.readyEndpoints, 0);
  assert.equal((await getDeployment(client, ns, 'idle'))?.spec?.replicas, 0);
});
