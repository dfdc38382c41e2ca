/**
 * Checklist item 5, "expired watch": the operator (in this process) reaches the API server
 * through a TCP proxy. The proxy is cut (a network partition), objects are created, changed and
 * deleted meanwhile — a child Service too — and etcd is compacted so the resourceVersions the
 * operator's watches hold are gone. The API server is then restarted, because its watch cache
 * would otherwise keep serving events from before the compaction for a while (it keeps at least
 * the last 75 s); a fresh cache starts after the compaction, like a real API server after a long
 * partition. When the partition heals, the watches get 410 Gone and relist: every change is seen
 * (nothing missed) and only the changed objects are reconciled (no reconcile storm; counted per
 * object key through the runtime's reconcile spans).
 *
 * Serial: it restarts the API server every other test file shares.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceKind, loadKubeConfig } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { testCluster } from '../support/cluster.ts';
import { kubeconfigPath, sleep } from '../support/operator-harness.ts';
import { startTcpProxy } from '../integration/leader-election/tcp-proxy.ts';
import { reliabilityEnv, reliabilityReport, waitConverged, describe, Churn, random, counter, recordReconciles, LONG } from './support/index.ts';

const N_MS = LONG ? 60 : 20;
const N_DHP = LONG ? 30 : 10;

test('after a partition and etcd compaction the operator relists, misses nothing and reconciles only what changed', { timeout: 240_000 }, async (t) => {
  const fig = reliabilityReport(t, 5, 'Expired watch (compaction → 410 → relist)');
  const reconciles = recordReconciles();
  const cluster = await testCluster();
  // Periodic checks far away, and progress-only status written at once (not held back for the
  // 15 s interval, whose deferred write would land after the heal): every reconcile after the
  // heal is caused by a change event.
  const env = await reliabilityEnv(t, 'rel-expired', { resyncSeconds: 3_600, healthIntervalSeconds: 3_600, statusProgressIntervalSeconds: 0 });
  const proxy = await startTcpProxy(cluster.server);
  t.after(() => proxy.close());
  const kc = loadKubeConfig(kubeconfigPath());
  const current = kc.getCurrentCluster()!;
  kc.clusters = kc.clusters.map((c) => (c.name === current.name ? { ...c, server: proxy.url } : c));

  const churn = new Churn({ client: env.client, ns: env.ns, rng: random.seeded(5), endpoint: env.sim.baseUrl });
  for (let i = 0; i < N_MS; i++) await churn.createMicroservice(`ms-${i}`);
  for (let i = 0; i < N_DHP; i++) await churn.createProvider(`dhp-${i}`);
  const op = await env.startInProcess({ kubeConfig: kc });
  const first = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 120_000 });
  assert.ok(first.converged, describe(first));
  await sleep(2_000); // rollouts finished, their last events handled
  const relistsBefore = await counter(op.manager, 'converge_watch_relists_total');
  const goneBefore = await counter(op.manager, 'converge_watch_restarts_total', { reason: 'gone' });
  const before = (await env.client.list(MicroserviceKind, { namespace: env.ns })).metadata.resourceVersion!;

  // Partition, then change things the operator cannot see.
  proxy.partition();
  const partitionedAt = Date.now();
  const changed = new Set<string>();
  for (const i of [0, 1, 2]) { await churn.updateMicroservice(`ms-${i}`); changed.add(`microservice ${env.ns}/ms-${i}`); }
  for (const i of [3, 4]) { await churn.deleteMicroservice(`ms-${i}`); changed.add(`microservice ${env.ns}/ms-${i}`); }
  for (const name of ['ms-new-a', 'ms-new-b']) { await churn.createMicroservice(name); changed.add(`microservice ${env.ns}/${name}`); }
  await env.client.delete(ServiceKind, { namespace: env.ns, name: 'ms-5' });
  changed.add(`microservice ${env.ns}/ms-5`);
  for (const i of [0, 1]) { await churn.updateProvider(`dhp-${i}`); changed.add(`digitalhumanprovider ${env.ns}/dhp-${i}`); }
  await churn.deleteProvider('dhp-2');
  changed.add(`digitalhumanprovider ${env.ns}/dhp-2`);
  await churn.createProvider('dhp-new');
  changed.add(`digitalhumanprovider ${env.ns}/dhp-new`);

  // Compact, restart the API server (fresh watch cache), and wait until it answers 410 for the
  // version the operator last saw.
  const revision = await cluster.compactEtcd();
  await cluster.stopApiServer();
  await cluster.startApiServer();
  const expiredAfter = Date.now();
  for (;;) {
    const r = await cluster.request('GET', `/apis/platform.example.io/v1alpha1/namespaces/${env.ns}/microservices?resourceVersion=${before}&resourceVersionMatch=Exact`);
    if (r.status === 410) break;
    assert.ok(Date.now() - expiredAfter < 60_000, `the old resourceVersion never expired (last answer ${r.status})`);
    await sleep(500);
  }
  reconciles.reset();
  const healedAt = Date.now();
  proxy.heal();

  // The operator's part: status and children of every live object, for the current generation.
  // (Ready rollouts and garbage collection wait for kube-controller-manager, whose own watches
  // take a while to recover from the API server restart above; that is not what this test is about.)
  const result = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, operatorOnly: true, timeoutMs: 120_000 });
  const convergedAt = Date.now();
  await sleep(3_000); // anything a storm would still add
  const relists = (await counter(op.manager, 'converge_watch_relists_total')) - relistsBefore;
  const gone = (await counter(op.manager, 'converge_watch_restarts_total', { reason: 'gone' })) - goneBefore;
  const reconciledKeys = [...reconciles.counts.keys()];
  const unchangedReconciled = reconciledKeys.filter((k) => !changed.has(k));
  const total = N_MS + N_DHP + 3;

  fig.ms('partition', healedAt - partitionedAt);
  fig.count('etcd compacted to revision', revision);
  fig.count('objects', total);
  fig.count('objects changed during the partition', changed.size);
  fig.count('watches answered 410 Gone', gone);
  fig.count('relists', relists);
  fig.ms('heal to every change applied (status and children of every live object)', result.converged ? convergedAt - healedAt : -1);
  fig.count('reconciles after the heal', reconciles.total());
  fig.count('objects reconciled after the heal', reconciledKeys.length);
  fig.count('unchanged objects reconciled (storm)', unchangedReconciled.length);
  fig.lost('missed changes', result.converged ? 0 : result.unconverged);
  fig.orphans('orphaned vendor instances', result.orphanInstances);
  fig.count('children of deleted Microservices still awaiting garbage collection', result.orphanChildren);
  fig.stuck('stuck Terminating', result.stuckTerminating);

  if (process.env.CONVERGE_RELIABILITY_DEBUG === '1') process.stderr.write(op.logs.filter((l) => /"msg":"[^"]*(watch|relist|expired)/.test(l)).join(''));
  assert.ok(result.converged, `missed a change: ${describe(result)}`);
  assert.ok(gone >= 1, `a watch was answered 410 Gone (${gone})`);
  assert.ok(relists >= 1, `the operator relisted (${relists})`);
  assert.deepEqual(unchangedReconciled, [], 'no unchanged object was reconciled');
  await op.stop();
});
