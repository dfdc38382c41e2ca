/**
 * Microservice operator on the local control plane: create → Accepted → ResourcesApplied →
 * Ready with every platform default in place; image and port changes update the same objects
 * and report Ready only for the new generation; drift and deletions are repaired through the
 * watches; a restart on converged objects makes no write.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DeploymentKind, ServiceKind, PodKind } from '@converge/runtime';
import { MicroserviceKind, GENERATION_ANNOTATION } from '../../../packages/operators/src/operators/microservice/index.ts';
import { eventually, kubeconfigPath, sleep } from '../../support/operator-harness.ts';
import { setup, startOperator, microservice, getMs, getDeployment, getService, waitReady, condition } from './support.ts';

const execFileAsync = promisify(execFile);
const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

test('create → Accepted → ResourcesApplied → Ready, with every platform default', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'todo-api', IMAGE, 8080));
  const phases = new Set<string>();
  const op = await startOperator(t, ns);
  // The seed's own command keeps working.
  const wait = execFileAsync('kubectl', ['--kubeconfig', kubeconfigPath(), '-n', ns, 'wait', 'microservice/todo-api', '--for=jsonpath={.status.phase}=ResourcesApplied', '--timeout=60s']);
  const watchPhases = (async () => {
    for (let i = 0; i < 200 && !phases.has('ResourcesApplied'); i++) {
      const p = (await getMs(client, ns, 'todo-api')).status?.phase;
      if (p) phases.add(p);
      await sleep(20);
    }
  })();
  await wait;
  await watchPhases;
  const ms = await waitReady(client, ns, 'todo-api');
  assert.equal(ms.status?.phase, 'ResourcesApplied');
  assert.deepEqual(ms.status?.managedResources, { deployment: 'todo-api', service: 'todo-api' });
  assert.ok(phases.has('ResourcesApplied'));
  for (const type of ['Ready', 'Progressing', 'Stalled']) assert.equal(condition(ms, type)?.observedGeneration, ms.metadata.generation, `${type} carries observedGeneration`);
  assert.equal(condition(ms, 'Stalled')?.status, 'False');
  assert.equal(ms.status?.rollout?.availableReplicas, 2);
  assert.ok((ms.status?.rollout?.readyEndpoints ?? 0) >= 1);

  const dep = (await getDeployment(client, ns, 'todo-api'))!;
  const svc = (await getService(client, ns, 'todo-api'))!;
  const owner = dep.metadata.ownerReferences?.[0];
  assert.deepEqual({ kind: owner?.kind, uid: owner?.uid, controller: owner?.controller, block: owner?.blockOwnerDeletion }, { kind: 'Microservice', uid: ms.metadata.uid, controller: true, block: true });
  assert.equal(svc.metadata.ownerReferences?.[0]?.uid, ms.metadata.uid);
  assert.equal(dep.metadata.labels?.app, 'todo-api');
  assert.equal(dep.metadata.labels?.['app.kubernetes.io/managed-by'], 'converge');
  assert.equal(dep.metadata.annotations?.[GENERATION_ANNOTATION], String(ms.metadata.generation));
  assert.equal(dep.spec?.replicas, 2);
  const c = dep.spec?.template.spec?.containers[0]!;
  assert.equal(c.image, IMAGE);
  assert.deepEqual(c.ports?.map((p) => p.containerPort), [8080]);
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
  assert.equal(env.ASPNETCORE_URLS, 'http://+:8080');
  assert.equal(env.OTEL_SERVICE_NAME, 'todo-api');
  assert.equal(env.OTEL_SERVICE_VERSION, IMAGE);
  assert.ok(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  assert.equal(c.readinessProbe?.httpGet?.path, '/health/ready');
  assert.equal(c.livenessProbe?.httpGet?.path, '/health/live');
  assert.equal(c.readinessProbe?.httpGet?.port, 8080);
  assert.deepEqual(c.resources?.requests, { cpu: '25m', memory: '128Mi' });
  assert.equal(svc.spec?.type, 'ClusterIP');
  assert.deepEqual(svc.spec?.selector, { app: 'todo-api' });
  assert.deepEqual(svc.spec?.ports?.map((p) => [p.port, p.targetPort]), [[8080, 'http']], 'the Service reaches the container port by its name');
  assert.ok(op.events.some((e) => e.reason === 'Created'));
});

test('image and port changes update the same objects; Ready only from the new pods', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'svc', IMAGE, 8080));
  await startOperator(t, ns);
  await waitReady(client, ns, 'svc');
  const uid = (await getDeployment(client, ns, 'svc'))!.metadata.uid;

  const ms = await getMs(client, ns, 'svc');
  const image2 = 'ghcr.io/yrw9281/it30-todo-api:0.2.0';
  await client.replace(MicroserviceKind, { ...ms, spec: { container: { image: image2, port: 9090 } } });
  const ready = await waitReady(client, ns, 'svc');
  assert.equal(ready.metadata.generation, 2);
  const dep = (await getDeployment(client, ns, 'svc'))!;
  assert.equal(dep.metadata.uid, uid, 'updated in place, not recreated');
  const c = dep.spec!.template.spec!.containers[0]!;
  assert.equal(c.image, image2);
  assert.deepEqual(c.ports?.map((p) => p.containerPort), [9090]);
  assert.equal(c.readinessProbe?.httpGet?.port, 9090);
  assert.equal(c.livenessProbe?.httpGet?.port, 9090);
  assert.equal(c.env?.find((e) => e.name === 'ASPNETCORE_URLS')?.value, 'http://+:9090');
  assert.equal(c.env?.find((e) => e.name === 'OTEL_SERVICE_VERSION')?.value, image2);
  const svc = (await getService(client, ns, 'svc'))!;
  assert.deepEqual(svc.spec?.ports?.map((p) => [p.port, p.targetPort]), [[9090, 'http']]);
  // When Ready=True for generation 2 was reported, the pods behind it run the new image.
  const pods = await client.list(PodKind, { namespace: ns, labelSelector: 'app=svc' });
  const readyPods = pods.items.filter((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'));
  assert.ok(readyPods.length >= 2);
  assert.ok(readyPods.every((p) => p.spec?.containers[0]?.image === image2), 'no old pod counted as ready');
});

test('drift and deletions are repaired through the watches', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'heal', IMAGE, 8080));
  await startOperator(t, ns, { resyncPeriodMs: 600_000 /* only watches can repair within the test */ });
  await waitReady(client, ns, 'heal');

  const svc = (await getService(client, ns, 'heal'))!;
  await client.delete(ServiceKind, { namespace: ns, name: 'heal' });
  const recreated = await eventually(async () => {
    const s = await getService(client, ns, 'heal');
    return s && s.metadata.uid !== svc.metadata.uid ? s : undefined;
  }, { timeoutMs: 10_000, what: 'Service recreated' });
  assert.deepEqual(recreated.spec?.ports?.map((p) => p.port), [8080]);

  const dep = (await getDeployment(client, ns, 'heal'))!;
  const tampered = structuredClone(dep);
  tampered.spec!.template.spec!.containers[0]!.image = 'example.com/hacked:1';
  await client.replace(DeploymentKind, tampered);
  await eventually(async () => (await getDeployment(client, ns, 'heal'))?.spec?.template.spec?.containers[0]?.image === IMAGE, { timeoutMs: 10_000, what: 'image reverted' });

  await client.delete(DeploymentKind, { namespace: ns, name: 'heal' });
  await eventually(async () => {
    const d = await getDeployment(client, ns, 'heal');
    return d && d.metadata.uid !== dep.metadata.uid;
  }, { timeoutMs: 10_000, what: 'Deployment recreated' });
  await waitReady(client, ns, 'heal');
});

test('a restarted operator processes converged objects again and makes zero writes', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'calm', IMAGE, 8080));
  const first = await startOperator(t, ns);
  await waitReady(client, ns, 'calm');
  // Converged means the status says everything: the last counts (both endpoints ready) may
  // follow Ready by up to the progress interval (progress-only changes are coalesced; issue 17).
  await eventually(async () => (await getMs(client, ns, 'calm')).status?.rollout?.readyEndpoints === 2, { timeoutMs: 30_000, what: 'the final rollout counts in the status' });
  await first.stop();
  const second = await startOperator(t, ns, { resyncPeriodMs: 500 });
  await sleep(3_000); // the start-up pass plus several periodic checks
  assert.deepEqual(second.writeLog, [], 'no write after restart on a converged object');
  const reconciles = (await second.manager.metrics.registry.getSingleMetric('controller_runtime_reconcile_total')?.get())?.values.reduce((n, v) => n + v.value, 0) ?? 0;
  assert.ok(reconciles >= 2, `processed again (${reconciles} reconciles)`);
});
