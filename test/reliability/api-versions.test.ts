/**
 * Issue 13 on a control plane of its own: the upgrade from the previous build (v1alpha1 only,
 * from git history) to v1 with conversion, a rolling upgrade and rollback under churn, storage
 * migration of 1,000 objects, the webhook stopped, and the full rollback with the way forward again.
 *
 * 1. Before: the previous CRDs (v1alpha1, storage v1alpha1, no conversion) and the previous build
 *    converge Microservices and providers; 1,000 more Microservices sit in a namespace no operator
 *    watches. etcd holds v1alpha1.
 * 2. Upgrade: today's CRDs (v1 storage, v1alpha1 deprecated, a conversion webhook — the operators'
 *    converters, standing for the new replicas' webhook); the new build reads everything as v1 and
 *    writes **nothing** to the children; `kubectl get <kind>.v1alpha1…` and `.v1…` agree.
 * 3. Rolling upgrade and rollback under churn: previous, new, previous, new build in turn while
 *    users edit through both versions (v1-only fields too): after each turn's edits stop, the
 *    operator writes nothing more (no loop between the builds); at the end every object is Ready
 *    and no field a user wrote is lost.
 * 4. `converge migrate-storage` during churn, stopped after 3 pages and resumed: every object
 *    stored as v1 in etcd, each rewritten once, `storedVersions` `["v1"]`; `--to v1alpha1` refused.
 * 5. The webhook stopped: what fails, what keeps working; back: everything works, no manual step.
 * 6. Rollback: storage v1alpha1, migrate back, the v1alpha1-only CRDs, the previous build: Ready,
 *    no child written, v1-only fields kept in their annotation; forward again: they come back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { DeploymentKind, KubeClient, NamespaceKind, SecretKind, ServiceKind, loadKubeConfig } from '@converge/runtime';
import { freePorts, readAuditLog, auditLogSize, startControlPlane } from '@converge/envtest';
import type { AuditEvent } from '@converge/envtest';
import {
  DigitalHumanProviderKind,
  DigitalHumanProviderV1alpha1Kind,
  MICROSERVICE_V1_FIELDS_ANNOTATION,
  MicroserviceKind,
  MicroserviceV1alpha1Kind,
  startStandaloneConversionWebhook,
} from '../../packages/operators/src/index.ts';
import type { Microservice } from '../../packages/operators/src/index.ts';
import { startVendorSimulator } from '../../packages/operators/src/vendor-sim/index.ts';
import { startCommand } from '../support/operator-process.ts';
import type { OperatorReplica } from '../support/operator-process.ts';
import { eventually, sleep } from '../support/operator-harness.ts';
import { IMAGE, random, reliabilityReport } from './support/index.ts';
import { currentCrds, previousBuild, replaceCrds, storageBackToV1alpha1, storedApiVersions, storedVersions, v1alpha1Only } from './support/upgrade.ts';

const execFileP = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../packages/operators/src/cli/main.ts', import.meta.url));
const APPS = 'apps';
const BULK = 'bulk';
const BULK_COUNT = Number(process.env.CONVERGE_UPGRADE_BULK ?? 1000);
const MS_COUNT = 10;
const DHP_COUNT = 3;
const MS_CRD = 'microservices.platform.example.io';
const DHP_CRD = 'digitalhumanproviders.dhp.example.com';

type Ready = { status?: { conditions?: { type: string; status: string; observedGeneration?: number }[] }; metadata: { generation?: number } };
const isReady = (o: Ready) => o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True' && (c.observedGeneration === undefined || c.observedGeneration === o.metadata.generation)) ?? false;

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

test('API versions: upgrade from the previous build, rolling upgrade and rollback under churn, storage migration, webhook outage, rollback and forward again', { timeout: 900_000 }, async (t) => {
  const report = reliabilityReport(t, 9, 'API versions: upgrade, rolling upgrade/rollback, migration, webhook outage');
  const cp = await startControlPlane({ auditLog: true, ...(process.env.CONVERGE_TEST_CONTROL_PLANE_BIN ? { binary: process.env.CONVERGE_TEST_CONTROL_PLANE_BIN } : {}) });
  t.after(() => cp.stop());
  const client = new KubeClient({ kubeConfig: loadKubeConfig(cp.kubeconfigPath), userAgent: 'converge-test', qps: 0 });
  t.after(() => client.close());
  const previous = await previousBuild();
  t.after(() => previous.cleanup());
  const work = mkdtempSync(join(tmpdir(), 'converge-upgrade-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const token = `tok-${randomBytes(8).toString('hex')}`;
  const sim = await startVendorSimulator({ token });
  t.after(() => sim.stop());
  const configPath = join(work, 'config.json');
  writeFileSync(configPath, JSON.stringify({ microservice: { resyncPeriodSeconds: 3, defaults: { replicas: 1 } }, provider: { healthIntervalSeconds: 5, vendor: { caFile: sim.caPath, timeoutSeconds: 2 } }, shutdownGraceSeconds: 3 }));
  const auditLog = cp.auditLogPath!;
  const writesSince = async (offset: number, filter: (e: AuditEvent) => boolean = () => true) =>
    (await readAuditLog(auditLog, { fromOffset: offset, writesOnly: true, userAgent: 'converge-operator' })).filter(filter);
  const childWrite = (e: AuditEvent) => ['deployments', 'services'].includes(e.objectRef?.resource ?? '');

  const operators: OperatorReplica[] = [];
  t.after(async () => { for (const o of operators) o.kill('SIGKILL'); await Promise.all(operators.map((o) => o.exited)); });
  const start = async (which: 'previous' | 'new', name: string): Promise<OperatorReplica> => {
    const args = ['run', '--kubeconfig', cp.kubeconfigPath, '--namespace', APPS, '--config', configPath, '--metrics-bind-address', '0', '--health-probe-bind-address', '0'];
    const op = startCommand(name, which === 'previous' ? previous.main : MAIN, which === 'new' ? [...args, '--webhook-bind-address=0'] : args);
    operators.push(op);
    await op.waitFor((l) => l.msg === 'starting workers', 90_000);
    return op;
  };
  const stop = async (op: OperatorReplica) => { op.kill('SIGTERM'); assert.equal(await op.exited, 0, `${op.name} stopped gracefully`); };
  /** Every object Ready, read through v1 (or v1alpha1 where that is all the CRDs serve). */
  const allReady = async (what: string, through: 'v1' | 'v1alpha1' = 'v1') => eventually(async () => {
    const ms = await client.list((through === 'v1' ? MicroserviceKind : MicroserviceV1alpha1Kind) as typeof MicroserviceKind, { namespace: APPS });
    const dhp = await client.list((through === 'v1' ? DigitalHumanProviderKind : DigitalHumanProviderV1alpha1Kind) as typeof DigitalHumanProviderKind, { namespace: APPS });
    return ms.items.length === MS_COUNT && dhp.items.length === DHP_COUNT && [...ms.items, ...dhp.items].every(isReady);
  }, { what, timeoutMs: 180_000, intervalMs: 250 });
  /** Every Deployment of the apps has rolled out what it was last given (nothing left to report). */
  const settled = async (what: string) => eventually(async () => {
    const { items } = await client.list(DeploymentKind, { namespace: APPS });
    return items.length === MS_COUNT && items.every((d) => {
      const s = d.status ?? {};
      const want = d.spec?.replicas ?? 1;
      return s.observedGeneration === d.metadata.generation && (s.updatedReplicas ?? 0) === want && (s.availableReplicas ?? 0) === want && (s.replicas ?? 0) === want;
    });
  }, { what: `${what}: every rollout done`, timeoutMs: 120_000, intervalMs: 250 });
  /**
   * No write loop: once every rollout is done, the operator's writes die down to a 6 s window
   * with none (2 periodic checks). Status catching up with the last pods and endpoints may take a
   * window or two after a turn; a loop between the builds never stops, so 10 windows with writes
   * fail, naming the writes of the last one.
   */
  const quietAfter: string[] = [];
  const quiet = async (what: string) => {
    await settled(what);
    const started = performance.now();
    let last: Awaited<ReturnType<typeof writesSince>> = [];
    for (let window = 0; window < 10; window++) {
      const offset = await auditLogSize(auditLog);
      await sleep(6_000);
      last = await writesSince(offset);
      if (last.length === 0) {
        quietAfter.push(`${what}: ${Math.round((performance.now() - started) / 1000)} s`);
        return;
      }
    }
    assert.fail(`${what}: the operator kept writing for 60 s after every rollout was done; the last 6 s: ${last.map((w) => `${w.verb} ${w.objectRef?.resource} ${w.objectRef?.name}`).join(', ')}`);
  };

  // ---- 1. before the upgrade ----
  await replaceCrds(client, previous.crds);
  for (const ns of [APPS, BULK]) await client.create(NamespaceKind, { metadata: { name: ns } });
  await client.create(SecretKind, { metadata: { name: 'creds', namespace: APPS, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token } });
  for (let i = 0; i < MS_COUNT; i++) await client.create(MicroserviceV1alpha1Kind, { metadata: { name: `ms-${i}`, namespace: APPS }, spec: { image: IMAGE, port: 8080 } });
  for (let i = 0; i < DHP_COUNT; i++) await client.create(DigitalHumanProviderV1alpha1Kind, { metadata: { name: `dhp-${i}`, namespace: APPS }, spec: { endpoint: sim.baseUrl, region: 'ap-northeast-1', credentialsSecretRef: { name: 'creds', key: 'token' } } });
  const bulkNames = Array.from({ length: BULK_COUNT }, (_, i) => `bulk-${i}`);
  await inBatches(bulkNames, 25, (name) => client.create(MicroserviceV1alpha1Kind, { metadata: { name, namespace: BULK }, spec: { image: IMAGE, port: 8080 } }));
  let op = await start('previous', 'previous-1');
  await allReady('the previous build converges everything', 'v1alpha1');
  await stop(op);
  const stored = await storedApiVersions(cp.etcdUrl, 'platform.example.io', 'microservices');
  assert.equal([...stored.values()].filter((v) => v === 'platform.example.io/v1alpha1').length, MS_COUNT + BULK_COUNT, 'stored as v1alpha1 before the upgrade');
  const children = async () => new Map([...(await client.list(DeploymentKind, { namespace: APPS })).items, ...(await client.list(ServiceKind, { namespace: APPS })).items].map((o) => [`${o.kind}/${o.metadata.name}`, `${o.metadata.uid}@${o.metadata.resourceVersion}`]));
  const before = await children();

  // ---- 2. the upgrade ----
  const [webhookPort] = await freePorts(1);
  const caDir = join(work, 'webhook');
  let webhook = await startStandaloneConversionWebhook({ caDir, port: webhookPort! });
  t.after(() => webhook.stop());
  await replaceCrds(client, currentCrds(webhook.url, webhook.caPem));
  assert.deepEqual(await storedVersions(client, MS_CRD), ['v1', 'v1alpha1']);
  let mark = await auditLogSize(auditLog);
  const upgradedAt = performance.now();
  op = await start('new', 'new-1');
  await allReady('the new build reads everything as v1');
  report.ms('converged after the upgrade (new build started → all Ready)', performance.now() - upgradedAt);
  await quiet('after the upgrade');
  const upgradeWrites = await writesSince(mark);
  assert.deepEqual(upgradeWrites.filter(childWrite).map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name}`), [], 'no child written by the upgrade');
  assert.deepEqual(await children(), before, 'children untouched (same UID and resourceVersion)');
  report.count('operator writes on the upgrade (children)', upgradeWrites.filter(childWrite).length);
  report.count('operator writes on the upgrade (status of Microservices / providers)', upgradeWrites.filter((w) => !childWrite(w)).length);
  for (const kind of ['microservices', 'digitalhumanproviders']) {
    const group = kind === 'microservices' ? 'platform.example.io' : 'dhp.example.com';
    const get = async (version: string) => JSON.parse((await execFileP('kubectl', ['--kubeconfig', cp.kubeconfigPath, 'get', `${kind}.${version}.${group}`, '-n', APPS, '-o', 'json'])).stdout) as { items: { metadata: { name: string; uid: string }; spec: Record<string, unknown> }[] };
    const [v1, old] = [await get('v1'), await get('v1alpha1')];
    assert.deepEqual(v1.items.map((o) => o.metadata.uid), old.items.map((o) => o.metadata.uid), `kubectl get ${kind}.v1 and .v1alpha1 list the same objects`);
    if (kind === 'microservices') {
      for (const [i, o] of v1.items.entries()) assert.deepEqual((o.spec as { container: { image: string; port: number } }).container, { image: old.items[i]!.spec.image, port: old.items[i]!.spec.port });
    }
  }

  // Conversion latency as a client sees it: the API server converts between the stored version
  // and the requested one, so a v1alpha1-stored object read through v1 goes through the webhook,
  // and read through v1alpha1 does not.
  const timed = async (fn: () => Promise<unknown>, n = 200) => {
    const samples: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      await fn();
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    return { p50: samples[Math.floor(n * 0.5)]!, p99: samples[Math.floor(n * 0.99)]! };
  };
  const converted = await timed(() => client.get(MicroserviceKind, { namespace: APPS, name: 'ms-1' }));
  const direct = await timed(() => client.get(MicroserviceV1alpha1Kind, { namespace: APPS, name: 'ms-1' }));
  report.text('GET latency, converted by the webhook (v1 of a v1alpha1-stored object) / not converted, p50 / p99', `${converted.p50.toFixed(1)} / ${converted.p99.toFixed(1)} ms vs ${direct.p50.toFixed(1)} / ${direct.p99.toFixed(1)} ms`);

  // ---- 3. rolling upgrade and rollback under churn ----
  await stop(op);
  const rng = random.seeded(Number(process.env.CONVERGE_TEST_SEED ?? 13));
  const expected = new Map<string, { image: string; replicas?: number; env?: { name: string; value: string }[] }>();
  for (let i = 0; i < MS_COUNT; i++) expected.set(`ms-${i}`, { image: IMAGE });
  let version = 0;
  const turnWrites: number[] = [];
  for (const [turn, which] of (['previous', 'new', 'previous', 'new'] as const).entries()) {
    mark = await auditLogSize(auditLog);
    op = await start(which, `${which}-turn-${turn}`);
    const until = performance.now() + 12_000;
    while (performance.now() < until) {
      const name = `ms-${rng.int(0, MS_COUNT - 1)}`;
      const e = expected.get(name)!;
      const roll = rng.next();
      if (roll < 0.4) {
        const image = `ghcr.io/yrw9281/it30-todo-api:0.3.${++version}`;
        await client.patch(MicroserviceV1alpha1Kind, { namespace: APPS, name }, { type: 'merge', body: { spec: { image } } });
        e.image = image;
      } else if (roll < 0.7) {
        const image = `ghcr.io/yrw9281/it30-todo-api:0.4.${++version}`;
        await client.patch(MicroserviceKind, { namespace: APPS, name }, { type: 'merge', body: { spec: { container: { image } } } });
        e.image = image;
      } else if (roll < 0.85) {
        const replicas = rng.int(1, 3);
        await client.patch(MicroserviceKind, { namespace: APPS, name }, { type: 'merge', body: { spec: { replicas } } });
        e.replicas = replicas;
      } else {
        const env = [{ name: 'TURN', value: String(turn) }];
        await client.patch(MicroserviceKind, { namespace: APPS, name }, { type: 'merge', body: { spec: { container: { env } } } });
        e.env = env;
      }
      await sleep(250);
    }
    await eventually(async () => {
      for (const [name, e] of expected) {
        const d = await client.get(DeploymentKind, { namespace: APPS, name });
        if (d.spec?.template.spec?.containers[0]?.image !== e.image) return false;
      }
      return true;
    }, { what: `turn ${turn} (${which}): every Deployment runs the image last written`, timeoutMs: 90_000 });
    await quiet(`turn ${turn} (${which})`);
    turnWrites.push((await writesSince(mark)).length);
    await stop(op);
  }
  report.text('operator writes per turn (previous, new, previous, new; edits ≈ 12 s of churn each)', turnWrites.join(', '));
  op = await start('new', 'new-final');
  await allReady('every object Ready at the end of the rolling turns');
  for (const [name, e] of expected) {
    const ms = await client.get(MicroserviceKind, { namespace: APPS, name });
    assert.equal(ms.spec.container.image, e.image, `${name}: image`);
    assert.equal(ms.spec.replicas, e.replicas, `${name}: replicas (v1 only) survived the previous build and v1alpha1 edits`);
    assert.deepEqual(ms.spec.container.env, e.env, `${name}: env (v1 only) survived`);
    assert.equal(ms.metadata.annotations?.[MICROSERVICE_V1_FIELDS_ANNOTATION], undefined, 'the stash never shows through v1');
    const d = await client.get(DeploymentKind, { namespace: APPS, name });
    assert.equal(d.spec?.replicas, e.replicas ?? 1, `${name}: the new build applied replicas`);
    void d;
  }
  assert.equal(sim.instances().length, DHP_COUNT, 'exactly one vendor instance per provider across every build');

  // ---- 4. storage migration of the bulk during churn, stopped and resumed ----
  mark = await auditLogSize(auditLog);
  const churned = new Set<string>();
  let churning = true;
  const churn = (async () => {
    while (churning) {
      const name = bulkNames[rng.int(0, bulkNames.length - 1)]!;
      await client.patch(MicroserviceKind, { namespace: BULK, name }, { type: 'merge', body: { metadata: { labels: { touched: 'yes' } } } });
      churned.add(name);
      await sleep(100);
    }
  })();
  const migrate = (args: string[]) => execFileP(process.execPath, [MAIN, 'migrate-storage', '--kubeconfig', cp.kubeconfigPath, '--qps', '100', ...args]).then((r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr, out: `${r.stdout}${r.stderr}` }), (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr, out: `${e.stdout}${e.stderr}` }));
  const migratedAt = performance.now();
  const first = await migrate(['--kind', 'microservices', '--max-pages', '3']);
  assert.equal(first.code, 1, first.out);
  // A failure (exit 1): said on stderr, like every other command's failures.
  assert.match(first.stderr, /converge migrate-storage: .*stopped early/);
  assert.doesNotMatch(first.stdout, /stopped early/);
  assert.deepEqual(await storedVersions(client, MS_CRD), ['v1', 'v1alpha1'], 'not pruned while incomplete');
  const rest = await migrate(['--kind', 'all']);
  churning = false;
  await churn;
  assert.equal(rest.code, 0, rest.out);
  assert.match(rest.out, /resumed/);
  report.ms(`migrate-storage of ${MS_COUNT + BULK_COUNT} Microservices (stopped after 3 pages, resumed) and ${DHP_COUNT} providers, during churn`, performance.now() - migratedAt);
  assert.deepEqual(await storedVersions(client, MS_CRD), ['v1']);
  assert.deepEqual(await storedVersions(client, DHP_CRD), ['v1']);
  const afterMigration = await storedApiVersions(cp.etcdUrl, 'platform.example.io', 'microservices');
  assert.deepEqual([...new Set(afterMigration.values())], ['platform.example.io/v1'], 'every Microservice stored as v1');
  const updates = (await readAuditLog(auditLog, { fromOffset: mark, userAgent: 'converge-migrate-storage' })).filter((e) => e.verb === 'update' && e.objectRef?.namespace === BULK);
  const perObject = new Map<string, number>();
  for (const u of updates) perObject.set(u.objectRef!.name!, (perObject.get(u.objectRef!.name!) ?? 0) + 1);
  assert.equal(perObject.size + [...churned].filter((n) => !perObject.has(n)).length >= BULK_COUNT, true, 'every object rewritten (or rewritten by a concurrent edit)');
  assert.deepEqual([...perObject].filter(([, n]) => n > 1), [], 'no object rewritten twice: the resumed run went on from the recorded page');
  report.count('objects rewritten by migrate-storage (bulk)', perObject.size);
  report.count('bulk objects edited during the migration', churned.size);
  const refused = await migrate(['--to', 'v1alpha1']);
  assert.equal(refused.code, 1);
  assert.match(refused.out, /storage version of .* is v1, not v1alpha1/);

  // ---- 5. the webhook stopped ----
  await webhook.stop();
  const outage: Record<string, string> = {};
  const attempt = async (what: string, fn: () => Promise<unknown>) => { outage[what] = await fn().then(() => 'ok', (e: Error) => e.message.slice(0, 140)); };
  await attempt('v1 get', () => client.get(MicroserviceKind, { namespace: APPS, name: 'ms-0' }));
  await attempt('v1 list', () => client.list(MicroserviceKind, { namespace: BULK, limit: 50 }));
  await attempt('v1 spec edit', () => client.patch(MicroserviceKind, { namespace: APPS, name: 'ms-0' }, { type: 'merge', body: { spec: { container: { image: `${IMAGE.split(':')[0]}:0.9.9` } } } }));
  await attempt('v1alpha1 get', () => client.get(MicroserviceV1alpha1Kind, { namespace: APPS, name: 'ms-0' }));
  await attempt('v1alpha1 create', () => client.create(MicroserviceV1alpha1Kind, { metadata: { name: 'during-outage', namespace: APPS }, spec: { image: IMAGE, port: 80 } }));
  report.text('webhook down (everything stored as v1)', Object.entries(outage).map(([k, v]) => `${k}: ${v}`).join('; '));
  assert.equal(outage['v1 get'], 'ok');
  assert.equal(outage['v1 list'], 'ok');
  assert.equal(outage['v1 spec edit'], 'ok');
  assert.match(outage['v1alpha1 get']!, /conversion webhook/);
  assert.match(outage['v1alpha1 create']!, /conversion webhook/);
  await eventually(async () => (await client.get(DeploymentKind, { namespace: APPS, name: 'ms-0' })).spec?.template.spec?.containers[0]?.image === `${IMAGE.split(':')[0]}:0.9.9`, { what: 'the operator converges v1 edits without the webhook' });
  expected.get('ms-0')!.image = `${IMAGE.split(':')[0]}:0.9.9`;
  webhook = await startStandaloneConversionWebhook({ caDir, port: webhookPort! });
  const backAt = performance.now();
  await eventually(() => client.get(MicroserviceV1alpha1Kind, { namespace: APPS, name: 'ms-0' }).then(() => true, () => false), { what: 'v1alpha1 served again once the webhook is back' });
  report.ms('webhook back → v1alpha1 served again', performance.now() - backAt);

  // ---- 6. rollback to the previous build, and forward again ----
  const crdsNow = currentCrds(webhook.url, webhook.caPem);
  await replaceCrds(client, storageBackToV1alpha1(crdsNow));
  const back = await migrate(['--kind', 'all', '--to', 'v1alpha1']);
  assert.equal(back.code, 0, back.out);
  assert.deepEqual(await storedVersions(client, MS_CRD), ['v1alpha1']);
  await stop(op);
  await replaceCrds(client, v1alpha1Only(crdsNow));
  const beforeRollback = await children();
  mark = await auditLogSize(auditLog);
  op = await start('previous', 'previous-after-rollback');
  await allReady('the previous build after the rollback', 'v1alpha1');
  await quiet('after the rollback');
  report.text('first 6 s without an operator write, counted from every rollout done (loop check)', quietAfter.join('; '));
  assert.deepEqual((await writesSince(mark)).filter(childWrite).filter((w) => !expected.get(w.objectRef!.name!)?.replicas && !expected.get(w.objectRef!.name!)?.env).map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name}`), [], 'the previous build rewrites only children whose v1-only fields it does not know');
  const stash = (await client.get(MicroserviceV1alpha1Kind, { namespace: APPS, name: [...expected].find(([, e]) => e.replicas)![0] })).metadata.annotations?.[MICROSERVICE_V1_FIELDS_ANNOTATION];
  assert.match(stash ?? '', /"replicas":/, 'v1-only fields kept in the annotation while only v1alpha1 exists');
  void beforeRollback;
  await stop(op);
  await replaceCrds(client, crdsNow);
  const forward = await migrate(['--kind', 'all']);
  assert.equal(forward.code, 0, forward.out);
  op = await start('new', 'new-forward-again');
  await allReady('forward again');
  for (const [name, e] of expected) {
    const ms = await client.get(MicroserviceKind, { namespace: APPS, name });
    assert.equal(ms.spec.replicas, e.replicas, `${name}: replicas back after rollback and forward`);
    assert.deepEqual(ms.spec.container.env, e.env, `${name}: env back`);
    assert.equal(ms.spec.container.image, e.image, `${name}: image`);
  }
  await stop(op);
  const ms0 = await client.get(MicroserviceKind, { namespace: APPS, name: 'ms-0' }) as Microservice;
  assert.ok(ms0.spec.container.image);
});
