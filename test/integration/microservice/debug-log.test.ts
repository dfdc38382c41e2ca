/**
 * `--log-level debug` tells each reconcile's decisions (issue 18, item 11; ADR 0031): what was
 * read, what matched or differed (bounded, env values hidden), what was written or skipped and
 * why, one `reconcile done` per reconcile — for both operators, on the local control plane, with
 * a canary in an env value and in the vendor token that must never appear in any line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { DeploymentKind, createLogger } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { MicroserviceKind, registerMicroserviceOperator, defaultPlatformDefaults } from '../../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { eventually, startManager } from '../../support/operator-harness.ts';
import { setup, waitReady } from './support.ts';
import { setupProviders, provider, waitFor, isReady } from '../provider/support.ts';

type Line = Record<string, unknown> & { msg: string; level: string; reconcileID?: string };

/** The lines of reconciles, grouped by reconcile ID, oldest first. */
function reconciles(lines: readonly Line[]): Line[][] {
  const groups = new Map<string, Line[]>();
  for (const l of lines) if (l.reconcileID) groups.set(l.reconcileID, [...(groups.get(l.reconcileID) ?? []), l]);
  return [...groups.values()];
}
const msgs = (group: readonly Line[]) => group.map((l) => l.msg);
const debugOnly = (group: readonly Line[]) => group.filter((l) => l.level === 'debug');

test('Microservice at debug: read, matched or differed, written or skipped; bounded; no env value', { timeout: 180_000 }, async (t) => {
  const { client, ns } = await setup(t);
  const canary = `hunter2-${randomBytes(6).toString('hex')}`;
  const lines: Line[] = [];
  const destination = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Line); cb(); } });
  const noEvents = { normal: (_o: KubeObject) => {}, warning: (_o: KubeObject) => {} };
  await startManager(t, {
    namespaces: [ns],
    log: createLogger({ level: 'debug', destination }),
    configure: (m) => registerMicroserviceOperator(m, { events: noEvents, defaults: defaultPlatformDefaults, resyncPeriodMs: 1_000 }),
  });
  const ms: Microservice = {
    metadata: { name: 'web', namespace: ns },
    spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080, env: [{ name: 'DB_PASSWORD', value: canary }] } },
  };
  await client.create(MicroserviceKind, ms);
  await waitReady(client, ns, 'web');

  // A periodic check of the converged object: every decision is a skip, and says so.
  // (Not merely the first unchanged status: a resync during the rollout also leaves an unchanged,
  // not yet Ready status.)
  const isConvergedCheck = (g: readonly Line[]) =>
    msgs(g).includes('reconcile done') && g.some((l) => l.msg === 'status unchanged; not written' && (l.conditions as Record<string, string> | undefined)?.Ready === 'True/Available');
  const converged = await eventually(() => reconciles(lines).find(isConvergedCheck), { what: 'a converged reconcile', timeoutMs: 30_000 }).catch((err: Error) => {
    // Say what the reconciles did instead (a failure seen once with two whole suites running at once).
    const last = reconciles(lines).slice(-4).map((g) => g.map((l) => `${l.level} ${l.msg}${l.conditions ? ` ${JSON.stringify(l.conditions)}` : ''}`).join(' | '));
    throw new Error(`${err.message}; the last reconciles:\n  ${last.join('\n  ') || '(none)'}`);
  });
  assert.deepEqual(msgs(debugOnly(converged)), [
    `read ${ns}/web and its children from the cache`,
    'Deployment matches the desired state; not written',
    'Service matches the desired state; not written',
    'status unchanged; not written',
    'reconcile done',
  ]);
  const read = converged[0]!;
  assert.equal(typeof read.generation, 'number');
  assert.equal(typeof read.deployment, 'string', 'the resourceVersion of the Deployment read');
  assert.deepEqual((converged.find((l) => l.msg === 'status unchanged; not written') as Line).conditions, {
    Ready: 'True/Available', Progressing: 'False/RolloutComplete', Reconciling: 'False/RolloutComplete', Stalled: 'False/NotStalled',
  });

  // Drift: the decision names what differed, then the write.
  const seen = lines.length;
  await client.patch(DeploymentKind, { namespace: ns, name: 'web' }, { type: 'strategic', body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'example.com/drift:1' }] } } } } }, { fieldManager: 'drifter' });
  const repaired = await eventually(() => reconciles(lines.slice(seen)).find((g) => msgs(g).includes('Deployment differs from the desired state; updating')), { what: 'the drift noticed', timeoutMs: 30_000 });
  const differs = repaired.find((l) => l.msg === 'Deployment differs from the desired state; updating')!;
  assert.ok((differs.differences as string[]).includes('spec.template.spec.containers[0].image: want "ghcr.io/yrw9281/it30-todo-api:0.1.0", have "example.com/drift:1"'), JSON.stringify(differs));
  assert.equal(differs.more, 0);

  // A new env value: the decision says the env differs, never what it was or becomes.
  const canary2 = `hunter3-${randomBytes(6).toString('hex')}`;
  // A merge patch, not a read-modify-write: the operator may write this object's status between a
  // read and a PUT (a 409 seen in CI).
  await client.patch(MicroserviceKind, { namespace: ns, name: 'web' }, { type: 'merge', body: { spec: { container: { env: [{ name: 'DB_PASSWORD', value: canary2 }] } } } });
  const changed = await eventually(() => reconciles(lines).find((g) => g.some((l) => l.msg === 'Deployment differs from the desired state; updating' && JSON.stringify(l).includes('value hidden'))), { what: 'the env change', timeoutMs: 30_000 });
  assert.ok(changed.find((l) => l.msg === 'Deployment differs from the desired state; updating' && (l.differences as string[]).some((d) => /env\[\d+\]\.value: differs \(value hidden\)$/.test(d))));
  await waitReady(client, ns, 'web');

  for (const line of lines) {
    const text = JSON.stringify(line);
    assert.ok(!text.includes(canary) && !text.includes(canary2), `an env value in a log line: ${text}`);
    assert.ok(text.length < 4_096, `a log line of ${text.length} bytes`);
  }
  for (const group of reconciles(lines)) assert.ok(debugOnly(group).length <= 10, `a reconcile wrote ${debugOnly(group).length} debug lines: ${msgs(group).join(' | ')}`);
});

test('DigitalHumanProvider at debug: read, credentials, vendor lookups, health, status; never the token', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t);
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'studio', env.sim.baseUrl));
  await waitFor(env.client, env.ns, 'studio', isReady, 'studio Ready', 60_000);
  const lines = () => env.logs.flatMap((chunk) => chunk.split('\n')).filter(Boolean).map((l) => JSON.parse(l) as Line);
  const periodic = await eventually(() => reconciles(lines()).find((g) => msgs(g).includes('vendor instance found by providerID') && msgs(g).includes('reconcile done')), { what: 'a periodic health check', timeoutMs: 30_000 });
  assert.deepEqual(msgs(debugOnly(periodic)), [
    `read ${env.ns}/studio from the cache`,
    'credentials read from Secret creds key token',
    'vendor instance found by providerID',
    // Observed before anything is written to it (spec-apply.ts): a refused write never hides the instance.
    'vendor reports healthy',
    'vendor instance matches the spec; not updated',
    'status unchanged; not written',
    'reconcile done',
  ]);
  const first = reconciles(lines()).find((g) => msgs(g).includes('no vendor instance with the idempotency key; creating'));
  assert.ok(first, 'the first reconcile says why it creates');
  for (const line of lines()) assert.ok(!JSON.stringify(line).includes(env.token), 'the vendor token in a log line');
});
