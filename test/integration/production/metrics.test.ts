/**
 * Observability of a running operator process: every documented series is on /metrics from the
 * start, before any object exists; counters and gauges move as reconciles succeed, fail and
 * retry; the longest-unconverged gauge (and /debug/unconverged) rises for an object that cannot
 * converge and falls when it does; /readyz passes once caches are synced.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceKind, loadKubeConfig } from '@converge/runtime';
import type { Manager } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { runOperatorProcess } from '../../../packages/operators/src/operators/operator-process.ts';
import { defaultOperatorConfig } from '../../../packages/operators/src/operators/operator-config.ts';
import { eventually, kubeconfigPath, testClient, testNamespace, testLogger } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';

function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** The series the README's "Operating it" section documents, per controller / queue / watched kind. */
const DOCUMENTED = [
  ...['success', 'error', 'requeue', 'requeue_after'].map((result) => `controller_runtime_reconcile_total{controller="microservice",result="${result}"}`),
  'controller_runtime_reconcile_errors_total{controller="microservice"}',
  'controller_runtime_reconcile_time_seconds_count{controller="microservice"}',
  'controller_runtime_max_concurrent_reconciles{controller="microservice"}',
  'controller_runtime_active_workers{controller="microservice"}',
  ...['depth', 'adds_total', 'queue_duration_seconds_count', 'work_duration_seconds_count', 'retries_total', 'unfinished_work_seconds', 'longest_running_processor_seconds']
    .flatMap((s) => [`workqueue_${s}{name="microservice"}`, `workqueue_${s}{name="digitalhumanprovider"}`]),
  'leader_election_master_status{name="converge-operators"}',
  'rest_client_requests_total{',
  'converge_watch_last_event_age_seconds{kind="Microservice"',
  'converge_watch_healthy{kind="Microservice"',
  ...['quiet', 'error', 'gone', 'closed'].map((reason) => `converge_watch_restarts_total{kind="Microservice",reason="${reason}"}`),
  'converge_watch_relists_total{kind="Microservice"}',
  ...['created', 'series_update', 'deduplicated', 'dropped', 'failed'].map((outcome) => `converge_events_total{outcome="${outcome}"}`),
  'converge_events_gave_way_total ',
  'converge_longest_unconverged_seconds{controller="microservice"}',
  'converge_longest_unconverged_seconds{controller="digitalhumanprovider"}',
  'converge_vendor_requests_total{operation="createInstance",outcome="ok"}',
  'converge_vendor_request_duration_seconds_count{operation="createInstance"}',
  'converge_vendor_endpoints_down ',
  'converge_vendor_waiting_objects ',
  'converge_vendor_recovery_wakes_total ',
  'converge_vendor_late_create_keys ',
];

test('a freshly started operator process shows every documented series before any reconcile', { timeout: 120_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'fresh-metrics');
  let manager: Manager | undefined;
  const abort = new AbortController();
  const running = runOperatorProcess(
    {
      kubeConfig: loadKubeConfig(kubeconfigPath()),
      namespaces: [ns],
      leaderElection: { namespace: ns },
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      log: testLogger(),
      onManager: (m) => { manager = m; },
    },
    abort.signal,
  );
  t.after(async () => { abort.abort(); await running; });
  await eventually(() => manager, { what: 'manager built' });
  const [metricsAddr, probeAddr] = await manager!.serverAddresses();
  await eventually(async () => (await fetch(`http://${probeAddr}/readyz`)).status === 200, { what: '/readyz ok once synced' });
  const text = await (await fetch(`http://${metricsAddr}/metrics`)).text();
  assert.equal(metric(text, 'controller_runtime_reconcile_total'), 0, 'no reconcile yet: the namespace is empty');
  const missing = DOCUMENTED.filter((series) => !text.split('\n').some((line) => line.startsWith(series)));
  assert.deepEqual(missing, [], 'documented series missing from /metrics at start');
});

test('metrics move with reconciles, errors and retries; longest-unconverged rises and falls', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'metrics');
  // The first status write of every object fails once: an ordinary error, retried with backoff.
  process.env.CONVERGE_FAULTS = 'microservice:before-status=throw@1';
  let manager: Manager | undefined;
  const abort = new AbortController();
  const running = runOperatorProcess(
    {
      kubeConfig: loadKubeConfig(kubeconfigPath()),
      namespaces: [ns],
      operators: ['microservice'],
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      config: { ...defaultOperatorConfig, microservice: { ...defaultOperatorConfig.microservice, resyncPeriodMs: 1_000 } },
      log: testLogger(),
      onManager: (m) => { manager = m; },
    },
    abort.signal,
  );
  t.after(async () => { abort.abort(); await running; delete process.env.CONVERGE_FAULTS; });
  await eventually(() => manager, { what: 'manager built' });
  const [metricsAddr, probeAddr] = await manager!.serverAddresses();
  const scrape = async () => (await fetch(`http://${metricsAddr}/metrics`)).text();
  await eventually(async () => (await fetch(`http://${probeAddr}/readyz`)).status === 200, { what: '/readyz ok once synced' });

  // A service that cannot converge: its Service name is taken by someone else.
  await client.create(ServiceKind, { metadata: { name: 'blocked', namespace: ns }, spec: { ports: [{ port: 80 }] } });
  await client.create(MicroserviceKind, { metadata: { name: 'blocked', namespace: ns }, spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } } });
  await client.create(MicroserviceKind, { metadata: { name: 'fine', namespace: ns }, spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } } });

  const text = await eventually(async () => {
    const s = await scrape();
    return metric(s, 'controller_runtime_reconcile_total', { controller: 'microservice', result: 'success' }) > 0 &&
      metric(s, 'controller_runtime_reconcile_errors_total', { controller: 'microservice' }) >= 2 &&
      metric(s, 'workqueue_retries_total', { name: 'microservice' }) >= 1 &&
      metric(s, 'converge_longest_unconverged_seconds', { controller: 'microservice' }) >= 1 ? s : undefined;
  }, { timeoutMs: 60_000, what: 'counters moved and the unconverged gauge rose' });
  for (const name of ['controller_runtime_reconcile_time_seconds_count', 'workqueue_adds_total', 'workqueue_queue_duration_seconds_count', 'workqueue_work_duration_seconds_count', 'rest_client_requests_total', 'converge_watch_relists_total', 'controller_runtime_max_concurrent_reconciles']) {
    assert.ok(metric(text, name) > 0, `${name} present and non-zero`);
  }
  assert.ok(text.includes('workqueue_depth{name="microservice"}'));
  assert.ok(text.includes('converge_watch_last_event_age_seconds{kind="Microservice"'));
  const debug = (await (await fetch(`http://${metricsAddr}/debug/unconverged`)).json()) as Record<string, { top: { key: string; reason: string }[] }>;
  assert.ok(debug.microservice?.top.some((e) => e.key === `${ns}/blocked` && e.reason === 'OwnershipConflict'), JSON.stringify(debug));

  // Remove the obstacle: the object converges and the gauge falls back to zero.
  await client.delete(ServiceKind, { namespace: ns, name: 'blocked' });
  await eventually(async () => metric(await scrape(), 'converge_longest_unconverged_seconds', { controller: 'microservice' }) === 0, { timeoutMs: 60_000, what: 'gauge back to 0' });
});
