/**
 * A write the cluster's admission changes is not sent again on every periodic check. Here a
 * MutatingAdmissionPolicy pins each Deployment's image tag to a digest (what image-policy
 * admission commonly does): the Deployment the API server stores never equals what the operator
 * rendered, and before this was remembered every resync sent the same PUT (and an Event) for ever
 * — at no change to the object, since admission made each one a no-op. The operator accepts what
 * admission made of its own write, says so once in the write's Event, and writes again when the
 * Microservice or the Deployment changes: a new image, or a hand edit, is still converged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind } from '@converge/runtime';
import type { KubeClient } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import type { OperatorUnderTest } from './support.ts';
import { setup, startOperator, microservice, getMs, getDeployment, waitReady, deploymentPolicy } from './support.ts';

const REPO = 'ghcr.io/yrw9281/it30-todo-api';
const DIGESTS: Record<string, string> = { '0.1.0': 'a'.repeat(64), '0.2.0': 'b'.repeat(64) };
const pinned = (tag: string): string => `${REPO}@sha256:${DIGESTS[tag]}`;

/** CEL: the first container's `repo:tag` becomes `repo@sha256:…` (known tags only); a digest is left alone. */
const IMAGE = 'object.spec.template.spec.containers[0].image';
const PIN_DIGEST = `${IMAGE}.contains('@') || !(${IMAGE}.substring(${IMAGE}.lastIndexOf(':') + 1) in ${JSON.stringify(DIGESTS).replaceAll('"', "'")}) ? [] : [JSONPatch{op: 'replace', path: '/spec/template/spec/containers/0/image', value: ${IMAGE}.substring(0, ${IMAGE}.lastIndexOf(':')) + '@sha256:' + ${JSON.stringify(DIGESTS).replaceAll('"', "'")}[${IMAGE}.substring(${IMAGE}.lastIndexOf(':') + 1)]}]`;

const deploymentWrites = (op: OperatorUnderTest): number => op.writeLog.filter((w) => w.resource === 'deployments').length;

/** Deployment writes during `ms` of periodic checks (every 250 ms here), after the writes in flight settle. */
async function writesWhileIdle(op: OperatorUnderTest, ms: number): Promise<number> {
  await sleep(1_000);
  const before = deploymentWrites(op);
  await sleep(ms);
  return deploymentWrites(op) - before;
}

async function waitImage(client: KubeClient, ns: string, image: string): Promise<void> {
  await eventually(async () => (await getDeployment(client, ns, 'web'))?.spec?.template.spec?.containers[0]?.image === image, { what: `the Deployment running ${image}`, timeoutMs: 30_000 });
}

test('a Deployment write that admission changes (tag pinned to a digest) is not sent again on every resync; changes are still converged', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await deploymentPolicy(t, client, ns, `pin-digests-${ns}`, { jsonPatch: PIN_DIGEST }, `${REPO}:0.1.0`);
  const op = await startOperator(t, ns, { resyncPeriodMs: 250, statusProgressIntervalMs: 250, faults: false });

  await client.create(MicroserviceKind, microservice(ns, 'web', `${REPO}:0.1.0`, 8080));
  await waitReady(client, ns, 'web');
  await waitImage(client, ns, pinned('0.1.0'));
  assert.equal(await writesWhileIdle(op, 4_000), 0, 'no Deployment write on the periodic checks (16 here) once admission pinned the image');
  const told = op.events.filter((e) => /admission/i.test(e.note ?? ''));
  assert.equal(told.length, 1, `admission's change told once, in the write's Event: ${JSON.stringify(op.events)}`);
  assert.match(told[0]!.note!, /spec\.template\.spec\.containers\[0\]\.image/);

  // A new image is a new write (the Microservice changed), pinned in turn, then quiet again.
  const ms = await getMs(client, ns, 'web');
  await client.replace(MicroserviceKind, { ...ms, spec: { container: { image: `${REPO}:0.2.0`, port: 8080 } } });
  await waitImage(client, ns, pinned('0.2.0'));
  await waitReady(client, ns, 'web');
  assert.equal(await writesWhileIdle(op, 4_000), 0, 'quiet again after the new image');

  // A hand edit of what the operator owns is still repaired (the Deployment changed).
  const dep = (await getDeployment(client, ns, 'web'))!;
  const [container] = dep.spec!.template.spec!.containers;
  await client.replace(DeploymentKind, { ...dep, spec: { ...dep.spec!, template: { ...dep.spec!.template, spec: { ...dep.spec!.template.spec!, containers: [{ ...container!, command: ['/bin/sh', '-c', 'sleep 1d'] }] } } } });
  await eventually(async () => {
    const d = await getDeployment(client, ns, 'web');
    return d?.spec?.template.spec?.containers[0]?.command === undefined && d?.spec?.template.spec?.containers[0]?.image === pinned('0.2.0');
  }, { what: 'the hand-added command removed', timeoutMs: 30_000 });
  assert.equal(await writesWhileIdle(op, 4_000), 0, 'quiet again after the repair');
});
