/**
 * The status write bound of issue 14 on the local control plane: 50 DigitalHumanProviders whose
 * usage grows at the vendor all the time cost at most one status write per provider per
 * `usageRefreshSeconds` (30 s), and none at all once nothing changes. Writes are counted as the
 * API server's watch events on the objects, so nothing the operator says about itself is trusted.
 *
 * 1 minute of growth by default; 5 minutes with CONVERGE_RELIABILITY_LONG=1 (the figure).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../../packages/operators/src/operators/provider/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, isReady } from './support.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const PROVIDERS = 50;
const GROWTH_MS = (LONG ? 300 : 60) * 1000;
const REFRESH_S = 30;
const IDLE_MS = (LONG ? 60 : 30) * 1000;

test(`${PROVIDERS} providers, usage growing for ${GROWTH_MS / 60_000} min: at most one status write per provider per ${REFRESH_S} s, none once nothing changes`, { timeout: GROWTH_MS + IDLE_MS + 240_000 }, async (t) => {
  const env = await setupProviders(t, { healthIntervalSeconds: 10, provider: { observeIntervalSeconds: 3, usageRefreshSeconds: REFRESH_S }, vendor: { requestsPerSecond: 50, burst: 50 } });
  const names = Array.from({ length: PROVIDERS }, (_, i) => `w-${String(i).padStart(2, '0')}`);
  for (const name of names) await env.client.create(DigitalHumanProviderKind, provider(env.ns, name, env.sim.baseUrl, { limits: { dailyQuota: 1_000_000, requestsPerMinute: 100_000 } }));

  const informer = new Informer<DigitalHumanProvider>({ client: env.client, kind: DigitalHumanProviderKind, namespaces: [env.ns] });
  const abort = new AbortController();
  t.after(() => abort.abort());
  const writes = new Map<string, number[]>();
  let counting = false;
  informer.addHandler((change) => {
    if (!counting || change.type !== 'update') return;
    const name = change.object.metadata.name!;
    writes.set(name, [...(writes.get(name) ?? []), performance.now()]);
  });
  void informer.start(abort.signal).catch(() => undefined);
  await informer.waitForSync();
  await eventually(() => names.every((n) => { const d = informer.store.get({ namespace: env.ns, name: n }); return d && isReady(d) && d.status?.usage !== undefined; }), { timeoutMs: 120_000, what: `${PROVIDERS} providers Ready with usage` });
  const idOf = (name: string) => informer.store.get({ namespace: env.ns, name })!.status!.providerID!;
  const ids = names.map(idOf);

  // Growth: every provider's usage moves every 2 s.
  counting = true;
  const t0 = performance.now();
  let consumed = 0;
  while (performance.now() - t0 < GROWTH_MS) {
    for (const id of ids) env.sim.consume(id, 1);
    consumed++;
    await sleep(2_000);
  }
  const grewMs = performance.now() - t0;
  const bound = Math.floor(grewMs / (REFRESH_S * 1000)) + 1;
  const perProvider = names.map((n) => (writes.get(n) ?? []).filter((at) => at - t0 <= grewMs).length);
  const worst = Math.max(...perProvider);
  t.diagnostic(`growth ${Math.round(grewMs / 1000)} s: status writes per provider min ${Math.min(...perProvider)}, max ${worst}, mean ${(perProvider.reduce((a, b) => a + b, 0) / PROVIDERS).toFixed(2)}; bound ${bound}`);
  assert.ok(worst <= bound, `a provider was written ${worst} times in ${Math.round(grewMs / 1000)} s (bound ${bound})`);
  for (const n of names) {
    const at = writes.get(n) ?? [];
    for (let i = 1; i < at.length; i++) assert.ok(at[i]! - at[i - 1]! >= REFRESH_S * 1000 - 1_000, `${n}: two writes ${Math.round(at[i]! - at[i - 1]!)} ms apart`);
  }
  assert.ok(Math.min(...perProvider) >= 1, 'growing figures are written, not withheld');

  // Nothing changes now: once the last figures are written (within one refresh), no write at all.
  await sleep(REFRESH_S * 1000 + 5_000);
  const settled = new Map(names.map((n) => [n, (writes.get(n) ?? []).length]));
  await sleep(IDLE_MS);
  const idleWrites = names.reduce((sum, n) => sum + (writes.get(n) ?? []).length - settled.get(n)!, 0);
  t.diagnostic(`idle ${IDLE_MS / 1000} s: ${idleWrites} status writes in all`);
  assert.equal(idleWrites, 0, 'no write when nothing changes');
  for (const n of names) assert.equal(informer.store.get({ namespace: env.ns, name: n })!.status!.usage!.callsToday, consumed, `${n}: the last figures were written`);
});
