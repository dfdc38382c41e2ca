/**
 * Checklist item 6, "concurrency and conflicts": while the operator works (1 s periodic checks,
 * a slow vendor so provider reconciles are in flight), two other writers edit the same objects
 * the way people and other controllers do — read, modify, PUT with the resourceVersion read,
 * re-read on 409:
 * - "the user" replaces the CRs (new image, port or displayName, plus a label of their own);
 * - "another controller" edits the operator's children: its own annotation and label on the
 *   Deployment and the Service, a pod-template annotation (like `kubectl rollout restart`), and
 *   now and then a hand edit of the container image.
 * Afterwards: every CR has the spec and labels the user last wrote (no lost edit), the other
 * controller's annotations and labels survive on the children (merged, never wiped), hand edits of
 * the image are reverted, no child or vendor instance was created twice, and the conflicts both
 * sides met were resolved by re-reading.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind, ServiceKind, ApiError } from '@converge/runtime';
import type { KubeClient, KubeObject, ResourceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';
import { sleep } from '../support/operator-harness.ts';
import { reliabilityEnv, reliabilityReport, startWitness, waitConverged, describe, Churn, random, LONG } from './support/index.ts';

const N = 6;
const EDIT_MS = LONG ? 60_000 : 15_000;

/** Read-modify-write with the resourceVersion read; re-reads on 409. Returns the conflicts met. */
async function edit<T extends KubeObject>(client: KubeClient, kind: ResourceKind<T>, ns: string, name: string, change: (o: T) => T): Promise<{ conflicts: number; written?: T }> {
  let conflicts = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    const live = await client.get(kind, { namespace: ns, name });
    try {
      return { conflicts, written: await client.replace(kind, change(structuredClone(live))) };
    } catch (err) {
      if (err instanceof ApiError && err.code === 409) { conflicts++; continue; }
      throw err;
    }
  }
  return { conflicts };
}

test('concurrent writers on the same CRs and children: no lost edit, no duplicate, conflicts resolved', { timeout: LONG ? 400_000 : 180_000 }, async (t) => {
  const fig = reliabilityReport(t, 6, 'Concurrency and conflicts');
  const env = await reliabilityEnv(t, 'rel-conflict', { resyncSeconds: 1, healthIntervalSeconds: 1 });
  const witness = await startWitness(env.client, env.ns, env.sim);
  t.after(() => witness.stop());
  const churn = new Churn({ client: env.client, ns: env.ns, rng: random.seeded(6), endpoint: env.sim.baseUrl });
  for (let i = 0; i < N; i++) {
    await churn.createMicroservice(`ms-${i}`);
    await churn.createProvider(`dhp-${i}`);
  }
  const op = await env.startInProcess();
  const operatorConflicts: string[] = [];
  op.manager.client.observe({ onRequest: (r) => { if (r.code === 409) operatorConflicts.push(`${r.verb} ${r.resource}`); } });
  const first = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 90_000 });
  assert.ok(first.converged, describe(first));
  env.sim.patchFaults({ latency: { ms: 150, jitterMs: 300 } });

  const rng = random.seeded(66);
  const userLabels = new Map<string, string>();
  const childNotes = new Map<string, string>();
  let userConflicts = 0;
  let controllerConflicts = 0;
  let userEdits = 0;
  let childEdits = 0;
  let handEdits = 0;
  let version = 100;
  const stopAt = Date.now() + EDIT_MS;

  const user = (async () => {
    while (Date.now() < stopAt) {
      const i = rng.int(0, N - 1);
      const label = `v${++version}`;
      if (rng.next() < 0.5) {
        const name = `ms-${i}`;
        const r = await edit(env.client, MicroserviceKind, env.ns, name, (o) => {
          o.metadata.labels = { ...o.metadata.labels, 'team.example.com/edit': label };
          if (rng.next() < 0.7) o.spec.container.image = `ghcr.io/yrw9281/it30-todo-api:0.2.${version}`;
          else o.spec.container.port = rng.int(8000, 8999);
          return o;
        });
        userConflicts += r.conflicts;
        if (r.written) { churn.expect.microservices.set(name, { container: { image: r.written.spec.container.image, port: r.written.spec.container.port } }); userLabels.set(`ms/${name}`, label); userEdits++; }
      } else {
        const name = `dhp-${i}`;
        const r = await edit(env.client, DigitalHumanProviderKind, env.ns, name, (o) => {
          o.metadata.labels = { ...o.metadata.labels, 'team.example.com/edit': label };
          o.spec.displayName = `presenter ${label}`;
          return o;
        });
        userConflicts += r.conflicts;
        if (r.written) { churn.expect.providers.set(name, r.written.spec); userLabels.set(`dhp/${name}`, label); userEdits++; }
      }
      await sleep(rng.int(20, 120));
    }
  })();

  const otherController = (async () => {
    while (Date.now() < stopAt) {
      const name = `ms-${rng.int(0, N - 1)}`;
      const note = `n${++version}`;
      const hand = rng.next() < 0.2;
      const d = await edit(env.client, DeploymentKind, env.ns, name, (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, 'other.example.com/note': note };
        o.metadata.labels = { ...o.metadata.labels, 'other.example.com/seen': 'yes' };
        o.spec!.template.metadata = { ...o.spec!.template.metadata, annotations: { ...o.spec!.template.metadata?.annotations, 'other.example.com/restartedAt': note } };
        if (hand) o.spec!.template.spec!.containers[0]!.image = 'docker.io/library/nginx:hand-edit';
        return o;
      });
      const s = await edit(env.client, ServiceKind, env.ns, name, (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, 'other.example.com/note': note };
        o.metadata.labels = { ...o.metadata.labels, 'other.example.com/seen': 'yes' };
        return o;
      });
      controllerConflicts += d.conflicts + s.conflicts;
      if (d.written && s.written) { childNotes.set(name, note); childEdits++; if (hand) handEdits++; }
      await sleep(rng.int(20, 120));
    }
  })();
  await Promise.all([user, otherController]);
  env.sim.clearFaults();

  const result = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 120_000 });
  // What the user and the other controller wrote outside the spec must still be there.
  let lostLabels = 0;
  let lostNotes = 0;
  for (const [id, label] of userLabels) {
    const [kind, name] = id.split('/') as ['ms' | 'dhp', string];
    const live = kind === 'ms' ? await env.client.get(MicroserviceKind, { namespace: env.ns, name }) : await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name });
    if (live.metadata.labels?.['team.example.com/edit'] !== label) lostLabels++;
  }
  for (const [name, note] of childNotes) {
    const d = await env.client.get(DeploymentKind, { namespace: env.ns, name });
    const s = await env.client.get(ServiceKind, { namespace: env.ns, name });
    if (d.metadata.annotations?.['other.example.com/note'] !== note || s.metadata.annotations?.['other.example.com/note'] !== note) lostNotes++;
    if (d.spec?.template.metadata?.annotations?.['other.example.com/restartedAt'] !== note) lostNotes++;
    if (d.metadata.labels?.['other.example.com/seen'] !== 'yes' || s.metadata.labels?.['other.example.com/seen'] !== 'yes') lostNotes++;
  }

  fig.ms('concurrent editing', EDIT_MS);
  fig.count('user edits of CRs', userEdits);
  fig.count('edits of children by another writer', childEdits);
  fig.count('hand edits of the image (to be reverted)', handEdits);
  fig.count('409 Conflicts met by the operator', operatorConflicts.length);
  fig.count('409 Conflicts met by the other writers', userConflicts + controllerConflicts);
  fig.ms('converged after the writers stopped', result.tookMs);
  fig.lost('lost spec edits', result.lostEdits);
  fig.lost('lost labels / annotations of other writers', lostLabels + lostNotes);
  fig.duplicates('duplicate children', witness.duplicateChildren());
  fig.duplicates('duplicate vendor instances', witness.duplicateInstances());
  fig.orphans('orphans', result.orphanChildren + result.orphanInstances);

  assert.ok(result.converged, describe(result));
  assert.equal(lostLabels, 0, 'labels the user wrote on the CRs survive');
  assert.equal(lostNotes, 0, "the other writer's annotations and labels on the children survive");
  assert.equal(witness.duplicateChildren(), 0);
  assert.equal(witness.duplicateInstances(), 0);
  assert.ok(userEdits > 10 && childEdits > 5, `enough concurrent edits (${userEdits}, ${childEdits})`);
  assert.ok(operatorConflicts.length + userConflicts + controllerConflicts > 0, 'the writers actually collided');
  await op.stop();
});
