/**
 * `converge status -o json` and `converge explain`, run as child processes (as a person would)
 * against the shared control plane, checked against states the Microservice operator produced:
 * a converged Microservice, an OwnershipConflict, a rollout whose image cannot be pulled, a
 * DigitalHumanProvider no operator has seen, and the usage errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DeploymentKind, ServiceKind, createEventRecorder, SecretKind } from '@converge/runtime';
import { registerMicroserviceOperator, MicroserviceKind, HANDOVER_ANNOTATION } from '../../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/api/index.ts';
import type { KubeClient } from '@converge/runtime';
import type { StatusDocument, Explanation } from '../../../packages/operators/src/cli/views/index.ts';
import { kubeconfigPath, startManager, testClient, testLogger, testNamespace, eventually } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';
import { microservice, waitReady, getMs } from '../microservice/support.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';

interface CliResult { code: number; stdout: string; stderr: string }

/** Runs `converge <args> --kubeconfig <shared cluster>` as a child process (not a TTY: no colours). */
function converge(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['packages/operators/src/cli/main.ts', ...args, '--kubeconfig', kubeconfigPath()], { cwd: root, env: { ...process.env, FORCE_COLOR: '' }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function json<T>(...args: string[]): Promise<T> {
  const r = await converge(...args);
  assert.equal(r.code, 0, `converge ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** The Microservice operator in-process, watching `ns`, writing real Events (explain reads them). */
async function startOperator(t: import('node:test').TestContext, ns: string): Promise<void> {
  let close: (() => Promise<void>) | undefined;
  await startManager(t, {
    namespaces: [ns],
    configure: (m) => {
      const events = createEventRecorder({ client: m.client, reportingController: 'converge.dev/operators', reportingInstance: 'cli-test', log: testLogger() });
      close = () => events.close(2_000);
      registerMicroserviceOperator(m, { events, resyncPeriodMs: 10_000 });
    },
  });
  t.after(async () => close?.());
}

async function setup(t: import('node:test').TestContext): Promise<{ client: KubeClient; ns: string }> {
  const client = testClient();
  t.after(() => client.close());
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'cli');
  return { client, ns };
}

test('status -o json and explain describe a converged Microservice', { timeout: 150_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'web', IMAGE, 8080));
  await startOperator(t, ns);
  const ms = await waitReady(client, ns, 'web');

  const doc = await json<StatusDocument>('status', '-o', 'json', '-n', ns);
  assert.equal(doc.apiVersion, 'converge.dev/v1alpha1');
  assert.equal(doc.kind, 'Status');
  assert.equal(doc.namespace, ns);
  assert.deepEqual(doc.warnings, []);
  assert.equal(doc.microservices.length, 1);
  const row = doc.microservices[0]!;
  assert.equal(row.name, 'web');
  assert.equal(row.uid, ms.metadata.uid);
  assert.equal(row.generation, ms.metadata.generation);
  assert.equal(row.observedGeneration, ms.metadata.generation);
  assert.equal(row.image, IMAGE);
  assert.equal(row.port, 8080);
  assert.equal(row.phase, 'ResourcesApplied');
  assert.equal(row.ready?.status, 'True');
  assert.equal(row.ready?.reason, 'Available');
  assert.equal(row.ready?.current, true);
  assert.equal(row.stalled?.status, 'False');
  assert.equal(row.converged, true);
  assert.equal(row.replicas?.desired, 2);
  assert.equal(row.replicas?.updated, 2);
  assert.equal(row.replicas?.available, 2);
  assert.ok((row.replicas?.readyEndpoints ?? 0) >= 1);
  assert.deepEqual(row.managedResources, { deployment: 'web', service: 'web' });
  assert.deepEqual(doc.summary.microservices, { total: 1, ready: 1 });
  assert.deepEqual(doc.providers, []);

  // The table says the same, without colours (stdout is not a terminal).
  const table = await converge('status', '-n', ns);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^web\s+ghcr\.io\/yrw9281\/it30-todo-api:0\.1\.0\s+8080\s+ResourcesApplied\s+2\/2\s+\d+\s+True\s+Available\s+\S+$/m);
  assert.ok(!table.stdout.includes('\u001b['), 'no colours off a terminal');
  const yaml = await converge('status', '-o', 'yaml', '-n', ns);
  assert.match(yaml.stdout, /^kind: Status$/m);

  // explain: converged, both children controlled and containing the desired state, the operator's Events.
  const e = await eventually(async () => {
    const x = await json<Explanation>('explain', 'ms/web', '-n', ns, '-o', 'json');
    return x.events.some((ev) => ev.reason === 'Created' && ev.object === 'Microservice/web') ? x : undefined;
  }, { what: 'explain shows the Created events', timeoutMs: 30_000 });
  assert.equal(e.kind, 'Explanation');
  assert.equal(e.converged, true, JSON.stringify(e.findings));
  assert.equal(e.object.uid, ms.metadata.uid);
  assert.deepEqual(e.microservice!.children.map((c) => [c.kind, c.ownership, c.differences.length]), [['Deployment', 'controlled', 0], ['Service', 'controlled', 0]]);
  assert.equal(e.microservice!.rollout.assessed?.state, 'Available');
  assert.ok(e.microservice!.endpoints.ready >= 1);
  assert.ok(e.conditions.every((c) => c.current && c.observedGeneration === ms.metadata.generation));
  assert.ok(e.events.every((ev) => ['Microservice/web', 'Deployment/web', 'Service/web'].includes(ev.object)), 'only events about the object and its children');

  const text = await converge('explain', 'microservice', 'web', '-n', ns);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Converged: Ready=True \(Available\)/m);
  assert.match(text.stdout, /Deployment web: contains the desired state/);
  assert.match(text.stdout, /Service web: contains the desired state/);

  // A spec change the operator cannot finish (pods never ready): not converged, and why.
  await client.patch(MicroserviceKind, { namespace: ns, name: 'web' }, { type: 'merge', body: { spec: { container: { image: 'example.com/web:fail' } } } });
  const stuck = await eventually(async () => {
    const x = await json<Explanation>('explain', 'ms/web', '-n', ns, '-o', 'json');
    return x.object.observedGeneration === x.object.generation && x.conditions.find((c) => c.type === 'Ready')?.reason === 'RolloutInProgress' ? x : undefined;
  }, { what: 'explain shows the rollout in progress', timeoutMs: 60_000 });
  assert.equal(stuck.converged, false);
  assert.match(stuck.verdict, /Ready=False \(RolloutInProgress\)/);
  assert.equal(stuck.microservice!.rollout.assessed?.state, 'InProgress');
  const after = await json<StatusDocument>('status', '-o', 'json', '-n', ns);
  assert.equal(after.microservices[0]!.converged, false);
  assert.equal(after.microservices[0]!.ready?.reason, 'RolloutInProgress');
  assert.equal(after.microservices[0]!.image, 'example.com/web:fail');
});

test('an OwnershipConflict is explained, with the handover command', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(ServiceKind, { metadata: { name: 'taken', namespace: ns, labels: { owner: 'someone-else' } }, spec: { selector: { legacy: 'yes' }, ports: [{ port: 1234, targetPort: 1234 }] } });
  await client.create(MicroserviceKind, microservice(ns, 'taken', IMAGE, 8080));
  await startOperator(t, ns);
  await eventually(async () => (await getMs(client, ns, 'taken')).status?.phase === 'Failed', { what: 'Failed' });

  const doc = await json<StatusDocument>('status', '-o', 'json', '-n', ns);
  const row = doc.microservices.find((m) => m.name === 'taken')!;
  assert.equal(row.phase, 'Failed');
  assert.equal(row.reason, 'OwnershipConflict');
  assert.equal(row.ready?.status, 'False');
  assert.equal(row.ready?.reason, 'OwnershipConflict');
  assert.equal(row.stalled?.status, 'True');
  assert.equal(row.converged, false);
  assert.equal(row.replicas, null);
  assert.deepEqual(doc.summary.microservices, { total: 1, ready: 0 });

  const e = await json<Explanation>('explain', 'ms/taken', '-n', ns, '-o', 'json');
  assert.equal(e.converged, false);
  assert.match(e.verdict, /phase Failed \(OwnershipConflict\)/);
  const [deployment, service] = e.microservice!.children;
  assert.equal(deployment!.ownership, 'missing');
  assert.equal(service!.ownership, 'unowned');
  assert.ok(service!.differenceText.some((d) => d.startsWith('spec.ports[0].port: want 8080, have 1234')), service!.differenceText.join('\n'));
  assert.ok(e.findings.some((f) => f.severity === 'error' && f.message.includes(`kubectl annotate service taken ${HANDOVER_ANNOTATION}=taken`)));

  const text = await eventually(async () => {
    const r = await converge('explain', 'ms/taken', '-n', ns);
    assert.equal(r.code, 0, r.stderr);
    return /Warning\s+OwnershipConflict/.test(r.stdout) ? r : undefined;
  }, { what: 'explain shows the OwnershipConflict Event', timeoutMs: 30_000 });
  assert.match(text.stdout, /^Not converged: phase Failed \(OwnershipConflict\)/m);
  assert.match(text.stdout, /Service\s+taken\s+no controller/);
  assert.match(text.stdout, /Deployment taken: missing/);
  assert.match(text.stdout, /Warning\s+OwnershipConflict\s+Microservice\/taken/);
});

test('an update the API server refuses is explained: Failed/ApplyRejected, the field, what to do, the Warning Event', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(DeploymentKind, {
    metadata: { name: 'legacy', namespace: ns, annotations: { [HANDOVER_ANNOTATION]: 'legacy' } },
    spec: { replicas: 1, selector: { matchLabels: { tier: 'legacy' } }, template: { metadata: { labels: { tier: 'legacy' } }, spec: { containers: [{ name: 'app', image: 'example.com/legacy:1' }] } } },
  });
  await client.create(MicroserviceKind, microservice(ns, 'legacy', IMAGE, 8080));
  await startOperator(t, ns);
  await eventually(async () => (await getMs(client, ns, 'legacy')).status?.phase === 'Failed', { what: 'Failed' });

  const e = await json<Explanation>('explain', 'ms/legacy', '-n', ns, '-o', 'json');
  assert.equal(e.converged, false);
  assert.match(e.verdict, /phase Failed \(ApplyRejected\)/);
  assert.ok(e.findings.some((f) => f.severity === 'error' && /spec\.selector: field is immutable/.test(f.message) && /delete Deployment legacy/.test(f.message)), JSON.stringify(e.findings));
  const text = await eventually(async () => {
    const r = await converge('explain', 'ms/legacy', '-n', ns);
    assert.equal(r.code, 0, r.stderr);
    return /Warning\s+ApplyRejected/.test(r.stdout) ? r : undefined;
  }, { what: 'explain shows the ApplyRejected Event', timeoutMs: 30_000 });
  assert.match(text.stdout, /^Not converged: phase Failed \(ApplyRejected\)/m);
  assert.match(text.stdout, /refused to adopt/);
});

test('a rollout whose image cannot be pulled: explain names the cause from the pods and how long until RolloutStalled', { timeout: 120_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(MicroserviceKind, microservice(ns, 'broken', 'example.com/todo:fail', 8080));
  await startOperator(t, ns);
  // The node simulator keeps a container whose tag starts with "fail" Waiting (ErrImagePull).
  const e = await eventually(async () => {
    const doc = await json<Explanation>('explain', 'ms/broken', '-n', ns, '-o', 'json');
    return doc.findings.some((f) => f.message.startsWith('pods:')) ? doc : undefined;
  }, { what: 'explain names the pods\' problem', timeoutMs: 60_000 });
  assert.equal(e.converged, false);
  assert.ok(e.findings.some((f) => /^live rollout: rolling out: .*RolloutStalled after 600 s without progress \(progressDeadlineSeconds\)/.test(f.message)), JSON.stringify(e.findings));
  assert.ok(e.findings.some((f) => /^pods: \d\/2 pods not ready: container app: ErrImagePull — .*example\.com\/todo:fail/.test(f.message)), JSON.stringify(e.findings));
  const text = await converge('explain', 'ms/broken', '-n', ns);
  assert.match(text.stdout, /pods: \d\/2 pods not ready: container app: ErrImagePull/);
});

test('explain a DigitalHumanProvider that no operator has seen: no status, Secret missing, never Secret data', { timeout: 60_000 }, async (t) => {
  const { client, ns } = await setup(t);
  await client.create(DigitalHumanProviderKind, {
    metadata: { name: 'studio', namespace: ns },
    spec: { endpoint: 'https://127.0.0.1:9', region: 'eu-west-1', credentials: { secretRef: { name: 'creds', key: 'token' } } },
  });
  let e = await json<Explanation>('explain', 'dhp/studio', '-n', ns, '-o', 'json');
  assert.equal(e.converged, false);
  assert.match(e.verdict, /no status yet/);
  assert.equal(e.provider!.credentials.secretExists, false);
  assert.equal(e.provider!.finalizer.present, false);

  await client.create(SecretKind, { metadata: { name: 'creds', namespace: ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: 'very-secret-value' } });
  const text = await converge('explain', 'digitalhumanprovider/studio', '-n', ns);
  const yaml = await converge('explain', 'dhp/studio', '-n', ns, '-o', 'yaml');
  e = await json<Explanation>('explain', 'dhp/studio', '-n', ns, '-o', 'json');
  assert.equal(e.provider!.credentials.secretExists, true);
  assert.equal(e.provider!.credentials.keyPresent, true);
  for (const out of [text.stdout, yaml.stdout, JSON.stringify(e)]) {
    assert.ok(!out.includes('very-secret-value') && !out.includes(Buffer.from('very-secret-value').toString('base64')), 'the Secret value never appears');
  }
  assert.match(text.stdout, /credentials Secret creds: present, key "token" present/);

  const doc = await json<StatusDocument>('status', '-o', 'json', '-n', ns);
  assert.equal(doc.providers.length, 1);
  assert.equal(doc.providers[0]!.region, 'eu-west-1');
  assert.equal(doc.providers[0]!.providerID, null);
  assert.equal(doc.providers[0]!.converged, false);
});

test('usage errors exit 2, a missing object exits 1, both on stderr', { timeout: 60_000 }, async (t) => {
  const { ns } = await setup(t);
  const missing = await converge('explain', 'ms/nope', '-n', ns);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /microservice "nope" not found in namespace/);
  assert.equal(missing.stdout, '');
  const badKind = await converge('explain', 'pod/x');
  assert.equal(badKind.code, 2);
  assert.match(badKind.stderr, /expected <kind>\/<name>/);
  const badOutput = await converge('status', '-o', 'xml');
  assert.equal(badOutput.code, 2);
  const both = await converge('status', '-A', '-n', ns);
  assert.equal(both.code, 2);
  // Named like Object.prototype's properties: unknown commands like any other.
  for (const name of ['toString', 'constructor', '__proto__']) {
    const unknown = await converge(name);
    assert.equal(unknown.code, 2, name);
    assert.match(unknown.stderr, new RegExp(`unknown command "${name}"`));
  }
  const help = await converge('status', '--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: converge status/);
  const all = await json<StatusDocument>('status', '-A', '-o', 'json');
  assert.equal(all.namespace, null);
});
