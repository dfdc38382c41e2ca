/**
 * Dashboard: `converge dashboard` (a child process) over two clusters — the session's control
 * plane and a second one started here — with N objects in each (80 % Microservices, 20 %
 * DigitalHumanProviders, statuses written directly: the dashboard only reads). Measured in a real
 * browser (headless Chromium via playwright-core): page load to first full render (navigation
 * start → every row of the snapshot drawn), change-to-page latency under a steady rate of status
 * changes (status write sent → the changed row's DOM updated, seen by a MutationObserver in the
 * page; both clocks are this machine's), and the dashboard process's memory (RSS after a GC).
 * @module
 */
import { readFileSync } from 'node:fs';
import { KubeClient, loadKubeConfig, CustomResourceDefinitionKind, NamespaceKind } from '@converge/runtime';
import type { CustomResourceDefinition } from '@converge/runtime';
import { startControlPlane } from '@converge/envtest';
import { MicroserviceCrd, MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderCrd, DigitalHumanProviderKind, PROVIDER_FINALIZER } from '../../packages/operators/src/operators/provider/api/index.ts';
import { launchChromium } from '../../test/support/dashboard-fixtures.ts';
import { pool } from '../support/fixtures.ts';
import { startChild } from '../support/child-process.ts';
import { convergeScript } from '../support/shipped-cli.ts';
import { percentile, round } from '../support/stats.ts';
import type { Scenario } from './types.ts';

export const DASHBOARD_NAMESPACE = 'bench-dashboard';
/** Objects per cluster whose status changes (kept in view by the page's search filter). */
const HOT = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

declare const document: any;
declare const window: any;

function readyCondition(ok: boolean, message: string, generation: number) {
  return { type: 'Ready', status: ok ? 'True' : 'False', reason: ok ? 'Available' : 'RolloutInProgress', message, observedGeneration: generation, lastTransitionTime: now() };
}

async function populate(client: KubeClient, cluster: string, n: number): Promise<string[]> {
  await client.create(NamespaceKind, { metadata: { name: DASHBOARD_NAMESPACE } }).catch(() => undefined);
  const microservices = Math.round(n * 0.8);
  const names = Array.from({ length: n }, (_, i) => (i < HOT ? `hot-${cluster}-${i}` : i < microservices ? `ms-${String(i).padStart(5, '0')}` : `dhp-${String(i).padStart(5, '0')}`));
  await pool(names, 16, async (name, i) => {
    if (i < microservices) {
      const ms = await client.create(MicroserviceKind, { apiVersion: MicroserviceKind.apiVersion, kind: MicroserviceKind.kind, metadata: { name, namespace: DASHBOARD_NAMESPACE }, spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } } } as never);
      const ok = i % 7 !== 0;
      await client.patch(MicroserviceKind, { namespace: DASHBOARD_NAMESPACE, name }, { type: 'merge', body: { status: { observedGeneration: 1, phase: 'ResourcesApplied', conditions: [readyCondition(ok, ok ? '' : 'rolling out', ms.metadata.generation ?? 1)] } } }, { subresource: 'status' });
    } else {
      await client.create(DigitalHumanProviderKind, { apiVersion: DigitalHumanProviderKind.apiVersion, kind: DigitalHumanProviderKind.kind, metadata: { name, namespace: DASHBOARD_NAMESPACE, finalizers: [PROVIDER_FINALIZER] }, spec: { endpoint: 'https://vendor.example', region: ['eu-west-1', 'ap-northeast-1', 'us-east-1'][i % 3]!, credentials: { secretRef: { name: 'vendor' } } } } as never);
      await client.patch(DigitalHumanProviderKind, { namespace: DASHBOARD_NAMESPACE, name }, { type: 'merge', body: { status: { observedGeneration: 1, providerID: `inst-${i}`, conditions: [{ type: 'Ready', status: 'True', reason: 'ProviderReady', message: '', observedGeneration: 1, lastTransitionTime: now() }] } } }, { subresource: 'status' });
    }
  });
  return names.slice(0, HOT);
}

async function releaseProviders(client: KubeClient): Promise<void> {
  const { items } = await client.listAll(DigitalHumanProviderKind, { namespace: DASHBOARD_NAMESPACE });
  await pool(items, 16, async (p) => {
    await client.patch(DigitalHumanProviderKind, { namespace: DASHBOARD_NAMESPACE, name: p.metadata.name! }, { type: 'merge', body: { metadata: { finalizers: null } } }).catch(() => undefined);
  });
  await client.delete(NamespaceKind, { namespace: '', name: DASHBOARD_NAMESPACE }).catch(() => undefined);
}

async function waitForUrl(logPath: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(logPath, 'utf8');
    } catch {
      // the log file is opened asynchronously
    }
    const m = /converge dashboard: (http:\/\/\S+)/.exec(text);
    if (m) return m[1]!;
    if (Date.now() > deadline) throw new Error(`the dashboard printed no URL within ${timeoutMs} ms (see ${logPath})`);
    await sleep(100);
  }
}

export const dashboard: Scenario = {
  name: 'dashboard',
  title: 'Dashboard',
  description:
    'converge dashboard (a child process) over two clusters (the session\'s control plane, with whatever earlier scenarios left in it, and a second one) with N objects each, 80 % Microservices and 20 % DigitalHumanProviders, statuses written directly. In headless Chromium: page load to first full render (navigation start until every row of the snapshot is drawn; median of 3 loads), change-to-page latency while Ready messages of 10 objects per cluster change at a steady rate (write sent until the row\'s DOM changed, seen by a MutationObserver in the page), and the dashboard\'s RSS after a forced GC.',
  async run(ctx) {
    const { session, options } = ctx;
    const n = options.dashboardObjects;
    const rate = options.dashboardChangeRate;
    const durationS = options.dashboardChangeSeconds;
    const cp2 = await startControlPlane({ binary: session.controlPlane.binary });
    const client2 = new KubeClient({ kubeConfig: loadKubeConfig(cp2.kubeconfigPath), userAgent: 'converge-bench/0.1', qps: 0 });
    let child: ReturnType<typeof startChild> | undefined;
    let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
    try {
      for (const crd of [MicroserviceCrd, DigitalHumanProviderCrd] as unknown as CustomResourceDefinition[]) {
        await client2.apply(CustomResourceDefinitionKind, crd, { fieldManager: 'converge-bench', force: true });
      }
      for (;;) {
        const ok = await Promise.all([MicroserviceCrd, DigitalHumanProviderCrd].map(async (crd) => {
          const live = await client2.get(CustomResourceDefinitionKind, { namespace: '', name: crd.metadata.name! });
          return ((live.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
        }));
        if (ok.every(Boolean)) break;
        await sleep(200);
      }
      const t0 = performance.now();
      const [hotA, hotB] = await Promise.all([populate(session.client, 'a', n), populate(client2, 'b', n)]);
      const populateS = (performance.now() - t0) / 1000;

      child = startChild({
        name: 'dashboard',
        script: await convergeScript(),
        args: ['dashboard', '--kubeconfig', `a=${session.kubeconfigPath}`, '--kubeconfig', `b=${cp2.kubeconfigPath}`, '--listen', '127.0.0.1:0'],
        outDir: session.outDir,
      });
      const url = await waitForUrl(child.logPath, 60_000);
      const expectedMs = 2 * Math.round(n * 0.8);
      browser = await launchChromium();
      const page = await browser.context.newPage();

      // Page load to first full render (the first load also builds the assets' cache: discarded).
      const loads: number[] = [];
      for (let i = 0; i < 4; i++) {
        await page.goto(`${url}?load=${i}#/microservices?namespace=${DASHBOARD_NAMESPACE}`, { waitUntil: 'commit' });
        await page.waitForFunction((want: number) => document.documentElement.dataset.firstRenderMs && Number(document.querySelector('.shown')?.dataset.shown) === want, expectedMs, { timeout: 120_000, polling: 50 });
        const ms = Number(await page.evaluate(() => document.documentElement.dataset.firstRenderMs));
        if (i > 0) loads.push(ms);
      }
      const afterLoad = await child.memory();

      // Change-to-page latency: the hot rows are in view (search "hot-"), their Ready message changes.
      await page.goto(`${url}#/microservices?namespace=${DASHBOARD_NAMESPACE}&q=hot-`);
      await page.waitForFunction((want: number) => document.querySelectorAll('tr.row').length === want, 2 * HOT, { timeout: 60_000, polling: 50 });
      await page.evaluate(() => {
        window.__seen = {};
        new window.MutationObserver((records: any[]) => {
          const at = Date.now();
          for (const r of records) {
            const m = /seq-(\d+)/.exec(r.target.getAttribute?.('title') ?? '');
            if (m && window.__seen[m[1]!] === undefined) window.__seen[m[1]!] = at;
          }
        }).observe(document.querySelector('table.grid tbody'), { subtree: true, attributes: true, attributeFilter: ['title'] });
      });
      const sent: number[] = [];
      const hot = [...hotA.map((name) => ({ client: session.client, name })), ...hotB.map((name) => ({ client: client2, name }))];
      const total = Math.round(rate * durationS);
      const start = Date.now();
      const writes: Promise<unknown>[] = [];
      for (let seq = 0; seq < total; seq++) {
        const due = start + (seq * 1000) / rate;
        if (due > Date.now()) await sleep(due - Date.now());
        const target = hot[seq % hot.length]!;
        sent[seq] = Date.now();
        writes.push(target.client.patch(MicroserviceKind, { namespace: DASHBOARD_NAMESPACE, name: target.name }, { type: 'merge', body: { status: { conditions: [readyCondition(seq % 2 === 0, `seq-${seq}`, 1)] } } }, { subresource: 'status' }));
      }
      await Promise.all(writes);
      await sleep(2_000);
      const seen = (await page.evaluate(() => window.__seen)) as Record<string, number>;
      const latencies = sent.map((t, seq) => (seen[seq] === undefined ? Number.NaN : seen[seq]! - t)).filter((x) => Number.isFinite(x));
      const missed = total - latencies.length;
      const afterChurn = await child.memory();
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      const loadMedian = percentile(loads, 50);
      const mib = (b: number) => round(b / 1024 / 1024, 1);
      return {
        headline: `2 × ${n} objects: first full render ${Math.round(loadMedian)} ms; change → page p50 ${Math.round(p50)} ms, p99 ${Math.round(p99)} ms at ${rate}/s; RSS ${mib(afterChurn.rss)} MiB`,
        figures: {
          objects_per_cluster: n,
          clusters: 2,
          first_render_ms_p50: round(loadMedian, 0),
          first_render_ms_max: round(Math.max(...loads), 0),
          change_rate_per_s: rate,
          changes: total,
          changes_not_seen: missed,
          change_to_page_ms_p50: round(p50, 0),
          change_to_page_ms_p99: round(p99, 0),
          change_to_page_ms_max: round(Math.max(...latencies), 0),
          rss_mib_after_load: mib(afterLoad.rss),
          rss_mib_after_changes: mib(afterChurn.rss),
          heap_used_mib_after_changes: mib(afterChurn.heapUsed),
          dashboard_cpu_s: round(afterChurn.cpuMs / 1000, 1),
          populate_s: round(populateS, 1),
        },
        tables: [
          {
            title: 'Dashboard over two clusters',
            columns: ['measure', 'value'],
            rows: [
              ['objects per cluster (Microservices / providers)', `${n} (${Math.round(n * 0.8)} / ${n - Math.round(n * 0.8)})`],
              ['page load → first full render, median of 3 (ms)', round(loadMedian, 0)],
              ['page load → first full render, slowest (ms)', round(Math.max(...loads), 0)],
              [`change → page p50 at ${rate}/s (ms)`, round(p50, 0)],
              [`change → page p99 at ${rate}/s (ms)`, round(p99, 0)],
              ['changes sent / not seen on the page', `${total} / ${missed}`],
              ['dashboard RSS after load (MiB)', mib(afterLoad.rss)],
              ['dashboard RSS after the changes (MiB)', mib(afterChurn.rss)],
              ['dashboard heap used after the changes (MiB)', mib(afterChurn.heapUsed)],
            ],
          },
        ],
        charts: [],
        notes: [
          'Latency is measured from just before the status write is sent, so it includes the write, the watch event, the dashboard\'s SSE push and the page\'s render.',
          'First render is timed by the page itself (performance.now() when every row of the snapshot is drawn); the table draws only the rows in view, so the figure is about the data, not the DOM size.',
        ],
      };
    } finally {
      await browser?.close();
      await child?.stop(10_000);
      await releaseProviders(session.client).catch(() => undefined);
      await client2.close();
      await cp2.stop();
    }
  },
};
