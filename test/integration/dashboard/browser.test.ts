/**
 * The dashboard in a real browser (headless Chromium driven by playwright-core) over two
 * clusters: the shared control plane and a second one this test starts and stops itself.
 * On the first cluster the Microservice operator runs in-process (real Deployments, Services,
 * Events, a failing rollout and an ownership conflict); on the second, statuses are written
 * directly. The page lists objects of both; a status that breaks one Microservice shows as not Ready
 * without a reload (the latency is a diagnostic); the detail view shows its conditions and timeline; filters and
 * the keyboard work; stopping the second cluster's API server marks it unreachable while the
 * first stays live, and starting it again recovers. Screenshots of every step go to
 * .converge/test-artifacts/dashboard/ (CONVERGE_UPDATE_DOCS_SCREENSHOT=1 also copies the
 * detail view to docs/images/dashboard.png for the README).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, NamespaceKind, ServiceKind, createEventRecorder, loadKubeConfig } from '@converge/runtime';
import type { CustomResourceDefinition } from '@converge/runtime';
import { startControlPlane } from '@converge/envtest';
import type { Page } from 'playwright-core';
import { MicroserviceCrd, MicroserviceKind, registerMicroserviceOperator } from '../../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderCrd } from '../../../packages/operators/src/operators/provider/api/index.ts';
import { startDashboard } from '../../../packages/operators/src/dashboard/index.ts';
import { eventually, kubeconfigPath, startManager, testClient, testLogger, testNamespace } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';
import { artifactsDir, createMicroservice, createProvider, launchChromium, releaseProviders, setMicroserviceReady } from '../../support/dashboard-fixtures.ts';

/** The page's `document` inside functions that run in the browser (the test itself has no DOM types). */
declare const document: { querySelector(s: string): { getAttribute(n: string): string | null; textContent: string | null } | null; querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null }> & Iterable<{ getAttribute(n: string): string | null }> };

const root = fileURLToPath(new URL('../../../', import.meta.url));
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const crds = [MicroserviceCrd, DigitalHumanProviderCrd] as unknown as CustomResourceDefinition[];

test('the dashboard page over two clusters: live changes, detail, filters, an unreachable cluster and its recovery', { timeout: 180_000 }, async (t) => {
  const shots = artifactsDir();
  let step = 0;
  const shot = async (page: Page, name: string) => {
    step += 1;
    const path = join(shots, `${String(step).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path, timeout: 15_000 });
    return path;
  };

  // Cluster "eu": the shared control plane, in a namespace of our own.
  const eu = testClient();
  t.after(() => eu.close());
  await ensureCrds(eu);
  const ns = await testNamespace(t, eu, 'shop');
  t.after(() => releaseProviders(eu, ns));

  // Cluster "ap": a control plane of this test's own (stopped at the end, and mid-test for the outage).
  const cp = await startControlPlane({ ...(process.env.CONVERGE_TEST_CONTROL_PLANE_BIN ? { binary: process.env.CONVERGE_TEST_CONTROL_PLANE_BIN } : {}) });
  t.after(() => cp.stop());
  const ap = new KubeClient({ kubeConfig: loadKubeConfig(cp.kubeconfigPath), userAgent: 'converge-test', qps: 0 });
  t.after(() => ap.close());
  await ensureCrds(ap, crds);
  await ap.create(NamespaceKind, { metadata: { name: ns } });

  // eu: the real Microservice operator on this namespace.
  const IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';
  const ms = (name: string, image = IMAGE) => ({ apiVersion: MicroserviceKind.apiVersion, kind: MicroserviceKind.kind, metadata: { name, namespace: ns }, spec: { container: { image, port: 8080 } } }) as Microservice;
  await eu.create(ServiceKind, { metadata: { name: 'payments', namespace: ns, labels: { team: 'legacy-payments' } }, spec: { selector: { app: 'legacy-payments' }, ports: [{ port: 8080, targetPort: 8080 }] } });
  for (const m of [ms('checkout'), ms('catalog'), ms('search', 'example.com/search:fail-1'), ms('payments')]) await eu.create(MicroserviceKind, m);
  let closeEvents: (() => Promise<void>) | undefined;
  await startManager(t, {
    namespaces: [ns],
    configure: (m) => {
      const events = createEventRecorder({ client: m.client, reportingController: 'converge.dev/operators', reportingInstance: 'dashboard-test', log: testLogger() });
      closeEvents = () => events.close(2_000);
      registerMicroserviceOperator(m, { events, resyncPeriodMs: 10_000 });
    },
  });
  t.after(async () => closeEvents?.());
  const readyOf = async (name: string) => (await eu.get(MicroserviceKind, { namespace: ns, name })).status?.conditions?.find((c) => c.type === 'Ready');
  await eventually(async () => (await readyOf('checkout'))?.status === 'True' && (await readyOf('catalog'))?.status === 'True', { timeoutMs: 60_000, what: 'checkout and catalog Ready' });
  await eventually(async () => (await readyOf('payments'))?.reason === 'OwnershipConflict', { timeoutMs: 30_000, what: 'payments OwnershipConflict' });
  await eventually(async () => (await readyOf('search'))?.reason === 'RolloutInProgress', { timeoutMs: 30_000, what: 'search rolling out' });

  // ap: statuses written directly.
  const cart = await createMicroservice(ap, ns, 'cart', { status: 'True', reason: 'Available', lastTransitionTime: ago(3000) });
  await createMicroservice(ap, ns, 'recommendations', { status: 'True', reason: 'Available', lastTransitionTime: ago(1800) });
  await createMicroservice(ap, ns, 'images', { status: 'False', reason: 'EndpointsNotReady', message: 'no ready endpoints behind Service images', lastTransitionTime: ago(120) });
  await createProvider(eu, ns, 'studio-frankfurt', 'eu-central-1', { status: 'True', reason: 'ProviderReady', lastTransitionTime: ago(4000) });
  await createProvider(eu, ns, 'studio-dublin', 'eu-west-1', { status: 'True', reason: 'ProviderDegraded', message: 'vendor reports degraded latency', lastTransitionTime: ago(600) });
  await createProvider(ap, ns, 'studio-tokyo', 'ap-northeast-1', { status: 'True', reason: 'ProviderReady', lastTransitionTime: ago(6000) });
  await createProvider(ap, ns, 'studio-osaka', 'ap-northeast-3', { status: 'False', reason: 'ProviderUnhealthy', message: 'the vendor reports the instance down', lastTransitionTime: ago(300) });

  const dashboard = await startDashboard({
    clusters: [{ name: 'eu', kubeConfig: loadKubeConfig(kubeconfigPath()) }, { name: 'ap', kubeConfig: loadKubeConfig(cp.kubeconfigPath) }],
    listen: '127.0.0.1:0',
  });
  t.after(() => dashboard.close());
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });

  // 1. Objects of both clusters, filtered to this test's namespace (the shared cluster has others).
  await page.goto(`${dashboard.url}#/microservices?namespace=${ns}`);
  await page.waitForSelector(`tr.row[data-cluster="ap"]`, { timeout: 20_000 });
  await page.waitForSelector(`tr.row[data-cluster="eu"]`, { timeout: 20_000 });
  await page.waitForFunction(() => document.querySelectorAll('tr.row').length === 7, null, { timeout: 10_000 });
  assert.equal(await page.locator('.cluster[data-state="reachable"]').count(), 2, 'both clusters live');
  await shot(page, 'both-clusters');

  // 2. Break "cart" on ap: not Ready on the page, no reload. How fast (watch → dashboard → SSE →
  // Chromium, well under a second on an idle machine) is the diagnostic below, not asserted: on a
  // busy machine each of those hops can wait for a CPU. The timeout only bounds a page that never
  // updates (a reload-only page would fail it).
  const key = `Microservice/ap/${ns}/cart`;
  const row = `tr.row[data-key="${key}"]`;
  assert.equal(await page.getAttribute(row, 'data-ready'), 'true');
  const before = Date.now();
  await setMicroserviceReady(ap, cart, { status: 'False', reason: 'RolloutStalled', message: 'Deployment cart exceeded its progress deadline' });
  await page.waitForFunction((sel) => document.querySelector(sel)?.getAttribute('data-ready') === 'false', row, { timeout: 15_000, polling: 'raf' });
  const latencyMs = Date.now() - before;
  t.diagnostic(`status write → page: ${latencyMs} ms (including the write itself)`);
  assert.equal(await page.getAttribute(row, 'data-health'), 'failed');
  await shot(page, 'cart-broken');

  // 3. The detail view: conditions with generations, the timeline of what the dashboard saw.
  await page.click(`${row} td.c-name`);
  await page.waitForSelector('.detail [data-section="conditions"]', { timeout: 10_000 });
  await page.waitForFunction(() => /Available → /.test(document.querySelector('.detail [data-section="timeline"]')?.textContent ?? ''), null, { timeout: 10_000 });
  const conditions = await page.$$eval('.detail [data-section="conditions"] tr[data-condition]', (rows) => rows.map((r) => `${r.getAttribute('data-condition')}=${r.getAttribute('data-status')}`));
  assert.deepEqual(conditions.sort(), ['Progressing=True', 'Ready=False', 'Stalled=False']);
  const timeline = await page.textContent('.detail [data-section="timeline"]');
  assert.match(timeline ?? '', /Ready\s+True\/Available → False\/RolloutStalled/);
  assert.match(await page.textContent('.detail [data-section="yaml"]') ?? '', /kind: Microservice/);
  assert.match(await page.textContent('.detail [data-section="owned"]') ?? '', /Deployment/);
  await shot(page, 'detail-status-written');

  // The detail of an object the operator manages: owned objects, ownership, Events.
  await page.keyboard.press('Escape');
  await page.waitForSelector('.detail', { state: 'detached', timeout: 5_000 });
  await page.click(`tr.row[data-key="Microservice/eu/${ns}/search"] td.c-name`);
  await page.waitForFunction(() => document.querySelectorAll('.detail [data-section="owned"] tr[data-ownership="controlled"]').length === 2, null, { timeout: 15_000 });
  await page.waitForSelector('.detail [data-section="events"]', { timeout: 15_000 });
  assert.match(await page.textContent('.detail [data-section="conditions"]') ?? '', /RolloutInProgress/);
  await page.setViewportSize({ width: 1440, height: 1180 });
  const detailShot = await shot(page, 'detail-operator');
  await page.setViewportSize({ width: 1440, height: 900 });
  if (process.env.CONVERGE_UPDATE_DOCS_SCREENSHOT === '1') {
    mkdirSync(join(root, 'docs', 'images'), { recursive: true });
    copyFileSync(detailShot, join(root, 'docs', 'images', 'dashboard.png'));
  }
  await page.keyboard.press('Escape');
  await page.waitForSelector('.detail', { state: 'detached', timeout: 5_000 });

  // 4. Filters and the keyboard: cluster, health, search; the providers tab and region.
  await page.selectOption('select[name="cluster"]', 'eu');
  await page.waitForFunction(() => [...document.querySelectorAll('tr.row')].every((r) => r.getAttribute('data-cluster') === 'eu') && document.querySelectorAll('tr.row').length === 4, null, { timeout: 5_000 });
  await page.selectOption('select[name="health"]', 'failed');
  await page.waitForFunction(() => document.querySelectorAll('tr.row').length === 1, null, { timeout: 5_000 });
  assert.equal(await page.getAttribute('tr.row', 'data-key'), `Microservice/eu/${ns}/payments`);
  await page.selectOption('select[name="health"]', '');
  await page.selectOption('select[name="cluster"]', '');
  await page.locator('body').press('/');
  await page.keyboard.type('recomm');
  await page.waitForFunction(() => document.querySelectorAll('tr.row').length === 1, null, { timeout: 5_000 });
  assert.equal(await page.getAttribute('tr.row', 'data-key'), `Microservice/ap/${ns}/recommendations`);
  await page.fill('input[name="q"]', '');
  await page.locator('.table-scroll').focus();
  await page.keyboard.press('2');
  await page.waitForSelector('button[data-tab="providers"][aria-selected="true"]', { timeout: 5_000 });
  await page.waitForFunction(() => document.querySelectorAll('tr.row').length === 4, null, { timeout: 5_000 });
  const ranked = await page.$$eval('tr.row', (rows) => rows.map((r) => r.getAttribute('data-key')));
  assert.deepEqual(ranked.map((k) => k?.split('/').slice(1).join('/')), [`ap/${ns}/studio-tokyo`, `eu/${ns}/studio-frankfurt`, `eu/${ns}/studio-dublin`, `ap/${ns}/studio-osaka`], 'providers best first');
  await page.selectOption('select[name="region"]', 'eu-west-1');
  await page.waitForFunction(() => document.querySelectorAll('tr.row').length === 1, null, { timeout: 5_000 });
  await shot(page, 'providers-filtered');
  await page.selectOption('select[name="region"]', '');
  await page.locator('.table-scroll').focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`.detail[data-key="DigitalHumanProvider/eu/${ns}/studio-frankfurt"]`, { timeout: 5_000 });
  await page.keyboard.press('Escape');
  await page.keyboard.press('1');
  await page.waitForFunction(() => document.querySelectorAll('tr.row').length === 7, null, { timeout: 5_000 });

  // 5. ap's API server stops: ap is unreachable, eu stays live (a change there still shows).
  await cp.stopApiServer();
  await page.waitForSelector('.cluster[data-cluster="ap"][data-state="unreachable"]', { timeout: 15_000 });
  assert.equal(await page.getAttribute('.cluster[data-cluster="eu"]', 'data-state'), 'reachable');
  await eu.patch(MicroserviceKind, { namespace: ns, name: 'search' }, { type: 'merge', body: { spec: { container: { image: IMAGE } } } });
  await page.waitForFunction((sel) => document.querySelector(sel)?.getAttribute('data-ready') === 'true', `tr.row[data-key="Microservice/eu/${ns}/search"]`, { timeout: 60_000 });
  assert.ok(await page.locator(`tr.row[data-cluster="ap"]`).count() > 0, "ap's last known objects stay listed");
  await shot(page, 'ap-unreachable');

  // 6. ap comes back by itself.
  await cp.startApiServer();
  await page.waitForSelector('.cluster[data-cluster="ap"][data-state="reachable"]', { timeout: 45_000 });
  await setMicroserviceReady(ap, await ap.get(MicroserviceKind, { namespace: ns, name: 'cart' }), { status: 'True', reason: 'Available' });
  await page.waitForFunction((sel) => document.querySelector(sel)?.getAttribute('data-ready') === 'true', row, { timeout: 15_000 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'ap-recovered-dark');

  // 7. A laptop screen: nothing wider than the window, the detail panel still usable.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.click(`${row} td.c-name`);
  await page.waitForSelector('.detail [data-section="conditions"]', { timeout: 10_000 });
  assert.ok(await page.evaluate(() => (document as unknown as { documentElement: { scrollWidth: number; clientWidth: number } }).documentElement.scrollWidth <= (document as unknown as { documentElement: { clientWidth: number } }).documentElement.clientWidth), 'no horizontal scrolling at 1280 px');
  await shot(page, 'laptop-1280');
  assert.deepEqual(pageErrors, [], 'no errors in the page (CSP violations included)');
});
