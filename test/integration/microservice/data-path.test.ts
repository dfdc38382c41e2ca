/**
 * The Microservice operator's data path under the fault proxy (every watch event cut, inside
 * multi-byte characters when there are some):
 * - the issue 12 acceptance check: a Deployment whose annotations carry 40 KB of non-ASCII text
 *   keeps them byte for byte across repairs (the repair's PUT is built from the cached copy; a
 *   watch decoded chunk by chunk used to turn cut characters into U+FFFD and write them back);
 * - cached EndpointSlices hold only what readiness needs, and cannot be written back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind, EndpointSliceKind, ServiceKind, isPartial } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getDeployment, getService, waitReady } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';
const TEXT = '運用メモ：この注釈は壊れてはいけない — Ünïcödé ✓ 😀🚀 𝄞 — '.repeat(620); // ≈ 40 KB

test('40 KB of non-ASCII annotations survive repairs byte for byte (issue 12 acceptance)', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'utf8', IMAGE, 8080));
  const op = await startOperator(t, ns, { faults: { split: 1, maxPieces: 8 } });
  await waitReady(client, ns, 'utf8');
  assert.ok(Buffer.byteLength(TEXT) >= 40_000);
  const annotations = { 'example.com/notes': TEXT, 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ note: TEXT.slice(0, 2_000) }) };
  await client.patch(DeploymentKind, { namespace: ns, name: 'utf8' }, { type: 'merge', body: { metadata: { annotations } } });
  await client.patch(ServiceKind, { namespace: ns, name: 'utf8' }, { type: 'merge', body: { metadata: { annotations } } });
  const cutsBefore = op.proxy!.stats().cutsInsideCharacters;
  for (let round = 1; round <= 3; round++) {
    // Drift the operator repairs with a PUT of its cached copy.
    await client.patch(DeploymentKind, { namespace: ns, name: 'utf8' }, { type: 'json', body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: `example.com/drift:${round}` }] });
    await client.patch(ServiceKind, { namespace: ns, name: 'utf8' }, { type: 'json', body: [{ op: 'replace', path: '/spec/ports/0/port', value: 9_000 + round }] });
    await eventually(async () => (await getDeployment(client, ns, 'utf8'))?.spec?.template.spec?.containers[0]?.image === IMAGE, { timeoutMs: 20_000, what: `Deployment repaired (round ${round})` });
    await eventually(async () => (await getService(client, ns, 'utf8'))?.spec?.ports?.[0]?.port === 8080, { timeoutMs: 20_000, what: `Service repaired (round ${round})` });
    const liveDep = (await getDeployment(client, ns, 'utf8'))!;
    const liveSvc = (await getService(client, ns, 'utf8'))!;
    for (const [what, live] of [['Deployment', liveDep], ['Service', liveSvc]] as const) {
      for (const [k, v] of Object.entries(annotations)) {
        assert.ok(live.metadata.annotations?.[k] === v, `${what} annotation ${k} changed in round ${round} (U+FFFD at ${live.metadata.annotations?.[k]?.indexOf('\uFFFD')})`);
      }
    }
  }
  assert.ok(op.proxy!.stats().cutsInsideCharacters > cutsBefore, 'the proxy cut events inside characters');
});

test('cached EndpointSlices keep only what readiness needs and cannot be written back', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'slices', IMAGE, 8080));
  const op = await startOperator(t, ns);
  await waitReady(client, ns, 'slices');
  const cached = op.manager.cache.store(EndpointSliceKind).list(ns);
  assert.ok(cached.length >= 1);
  for (const slice of cached) {
    assert.equal((slice as { ports?: unknown }).ports, undefined, 'ports dropped');
    assert.equal(slice.metadata.annotations, undefined, 'annotations dropped');
    assert.equal(slice.metadata.ownerReferences, undefined, 'ownerReferences dropped');
    assert.deepEqual(Object.keys(slice.metadata.labels ?? {}), ['kubernetes.io/service-name']);
    assert.ok(slice.endpoints.every((e) => Object.keys(e).every((k) => ['addresses', 'conditions', 'targetRef'].includes(k))));
    assert.ok(isPartial(slice));
  }
  await assert.rejects(op.manager.client.replace(EndpointSliceKind, cached[0]!), /partial copy from the cache/);
});
