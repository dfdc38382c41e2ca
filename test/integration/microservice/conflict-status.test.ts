/**
 * A Conflict (409) on a child write means only that the operator's cache was behind: the write is
 * retried at once with the newer version, and the status says nothing of it. Before, a conflict on
 * the Deployment's update for a new generation wrote `Accepted` (an extra status write, the phase
 * flickering ResourcesApplied → Accepted → ResourcesApplied). The conflict is provoked
 * deterministically: another writer changes the Deployment just before the operator's update.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../../packages/operators/src/operators/microservice/index.ts';
import { setup, startOperator, microservice, getMs, getDeployment, waitReady } from './support.ts';
import type { OperatorUnderTest } from './support.ts';

const IMAGE = 'ghcr.io/yrw9281/it30-todo-api';

test('a conflict on a child write of a new generation writes no Accepted status', { timeout: 150_000 }, async (t) => {
  const { client, ns } = await setup(t);
  let armed = false;
  let touched = 0;
  const faultPoint = async (point: string): Promise<void> => {
    if (point !== 'microservice:before-apply-deployment' || !armed) return;
    armed = false;
    // Another writer: the operator's update now carries a resourceVersion that is no longer current.
    await client.patch(DeploymentKind, { namespace: ns, name: 'busy' }, { type: 'merge', body: { metadata: { annotations: { 'others.example.com/touched': 'yes' } } } });
    touched++;
  };
  await client.create(MicroserviceKind, microservice(ns, 'busy', `${IMAGE}:0.1.0`, 8080));
  const op: OperatorUnderTest = await startOperator(t, ns, { faultPoint });
  await waitReady(client, ns, 'busy');

  const conflicts: string[] = [];
  const written: { phase: string | undefined; generation: number | undefined }[] = [];
  op.manager.client.observe({
    onRequest: (r) => { if (r.code === 409) conflicts.push(`${r.verb} ${r.resource}`); },
    onWrite: (kind, o: KubeObject) => {
      if (kind.kind !== MicroserviceKind.kind) return;
      const ms = o as Microservice;
      written.push({ phase: ms.status?.phase, generation: ms.status?.observedGeneration });
    },
  });
  armed = true;
  const ms = await getMs(client, ns, 'busy');
  await client.replace(MicroserviceKind, { ...ms, spec: { container: { image: `${IMAGE}:0.2.0`, port: 8080 } } });
  const ready = await waitReady(client, ns, 'busy');
  assert.equal(ready.metadata.generation, 2);
  assert.equal(touched, 1, 'the other writer changed the Deployment before the operator\'s update');
  assert.ok(conflicts.includes('update deployments'), `the update met a conflict: ${JSON.stringify(conflicts)}`);
  assert.equal((await getDeployment(client, ns, 'busy'))?.spec?.template.spec?.containers[0]?.image, `${IMAGE}:0.2.0`, 'the update was sent again and landed');
  assert.deepEqual(written.filter((w) => w.phase !== 'ResourcesApplied'), [], `status writes of the new generation: ${JSON.stringify(written)}`);
});
