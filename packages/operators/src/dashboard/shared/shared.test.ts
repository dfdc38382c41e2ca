import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { filterToParams, matchesFilter, parseFilter, sortItems, FilterError } from './filters.ts';
import type { ItemFilter } from './filters.ts';
import { compareProviders, rankProviders } from './ranking.ts';
import { buildOverview } from './overview.ts';
import type { Health, ProviderItem } from './types.ts';

function provider(over: Partial<ProviderItem> & { name: string }): ProviderItem {
  return {
    key: `DigitalHumanProvider/${over.cluster ?? 'a'}/ns/${over.name}`,
    cluster: 'a', kind: 'DigitalHumanProvider', namespace: 'ns', uid: over.name, generation: 1, observedGeneration: 1,
    region: 'eu', endpoint: 'https://v', displayName: null, providerID: 'p', finalizer: true, converged: true, deleting: false,
    createdAt: '2026-01-01T00:00:00Z', health: 'ready', why: 'ProviderReady', whyMessage: null, unconvergedSince: null,
    ready: { status: 'True', reason: 'ProviderReady', message: '', observedGeneration: 1, current: true, lastTransitionTime: '2026-01-01T00:00:00Z' },
    usable: true, quota: null, limitingReason: null, rank: null,
    ...over,
  } as ProviderItem;
}

test('the upstream pick: usable, healthy, not limited, most quota left, Ready the longest, then by name', () => {
  const t = (s: string) => ({ status: 'True' as const, reason: 'ProviderReady', message: '', observedGeneration: 1, current: true, lastTransitionTime: s });
  const ps = [
    provider({ name: 'unusable', usable: false }),
    provider({ name: 'degraded', ready: { ...t('2020-01-01T00:00:00Z'), reason: 'ProviderDegraded' } }),
    provider({ name: 'limited', limitingReason: 'QuotaNearlyExhausted' }),
    provider({ name: 'young', ready: t('2026-06-01T00:00:00Z') }),
    provider({ name: 'old', ready: t('2025-01-01T00:00:00Z') }),
    provider({ name: 'quota-10', quota: { used: 90, limit: 100, left: 10 } }),
    provider({ name: 'quota-50', quota: { used: 50, limit: 100, left: 50 } }),
    provider({ name: 'b-tie' }),
    provider({ name: 'a-tie' }),
  ];
  assert.deepEqual(rankProviders(ps).map((p) => `${p.rank}:${p.name}`), [
    '1:quota-50', '2:quota-10', '3:old', '4:a-tie', '5:b-tie', '6:young', '7:limited', '8:degraded', '9:unusable',
  ]);
  assert.ok(ps.every((p) => p.rank === null), 'the input is not mutated');
});

const arbProvider = fc.record({
  name: fc.constantFrom('a', 'b', 'c', 'd'),
  cluster: fc.constantFrom('x', 'y'),
  usable: fc.boolean(),
  degraded: fc.boolean(),
  limited: fc.boolean(),
  left: fc.option(fc.integer({ min: 0, max: 5 })),
  since: fc.option(fc.integer({ min: 0, max: 3 })),
}).map((r) => provider({
  name: r.name, cluster: r.cluster, usable: r.usable, limitingReason: r.limited ? 'Limited' : null,
  quota: r.left === null ? null : { used: null, limit: null, left: r.left },
  ready: { status: 'True', reason: r.degraded ? 'ProviderDegraded' : 'ProviderReady', message: '', observedGeneration: 1, current: true, lastTransitionTime: r.since === null ? null : `202${r.since}-01-01T00:00:00Z` },
}));

test('the provider order is a total order: antisymmetric and transitive (fast-check)', () => {
  fc.assert(fc.property(arbProvider, arbProvider, arbProvider, (a, b, c) => {
    const sign = (n: number) => Math.sign(n);
    assert.equal(sign(compareProviders(a, b)) + sign(compareProviders(b, a)), 0);
    if (compareProviders(a, b) <= 0 && compareProviders(b, c) <= 0) assert.ok(compareProviders(a, c) <= 0);
  }), { numRuns: 2000 });
});

test('a filter survives the trip to query parameters and back (fast-check)', () => {
  const words = fc.array(fc.stringMatching(/^[a-z0-9-]{1,8}$/), { minLength: 1, maxLength: 3 }).map((xs) => [...new Set(xs)]);
  const filter = fc.record({
    cluster: fc.option(words, { nil: undefined }),
    namespace: fc.option(words, { nil: undefined }),
    region: fc.option(words, { nil: undefined }),
    health: fc.option(fc.uniqueArray(fc.constantFrom<Health>('ready', 'progressing', 'failed'), { minLength: 1 }), { nil: undefined }),
    kind: fc.option(fc.uniqueArray(fc.constantFrom('Microservice' as const, 'DigitalHumanProvider' as const), { minLength: 1 }), { nil: undefined }),
    ready: fc.option(fc.boolean(), { nil: undefined }),
    usable: fc.option(fc.boolean(), { nil: undefined }),
    q: fc.option(fc.stringMatching(/^[a-z]{1,6}$/), { nil: undefined }),
  }, { requiredKeys: [] });
  fc.assert(fc.property(filter, (f) => {
    const clean = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as ItemFilter;
    assert.deepEqual(parseFilter(filterToParams(clean)), clean);
  }));
});

test('filters: repeated and comma-separated values are OR-ed, parameters AND-ed; bad values are refused', () => {
  const f = parseFilter(new URLSearchParams('cluster=a&cluster=b,c&kind=dhp&ready=true'));
  assert.deepEqual(f, { cluster: ['a', 'b', 'c'], kind: ['DigitalHumanProvider'], ready: true });
  assert.ok(matchesFilter(provider({ name: 'x', cluster: 'b' }), f));
  assert.ok(!matchesFilter(provider({ name: 'x', cluster: 'd' }), f));
  assert.ok(!matchesFilter(provider({ name: 'x', cluster: 'a', converged: false, usable: false }), f));
  // `?region=R&ready=true` is the upstream's pick: a converged provider that cannot take work
  // (its cluster unreachable, its quota exhausted) is not in it, and is in `ready=false`.
  assert.ok(!matchesFilter(provider({ name: 'x', cluster: 'b', usable: false }), f), 'converged but not usable: not ready');
  assert.ok(matchesFilter(provider({ name: 'x', cluster: 'b', usable: false }), { ready: false }));
  assert.ok(!matchesFilter(provider({ name: 'x', cluster: 'b' }), { ready: false }));
  assert.ok(matchesFilter(provider({ name: 'studio', region: 'ap-northeast-1' }), { q: 'NORTHEAST' }), 'q looks at the region');
  assert.ok(!matchesFilter(provider({ name: 'p' }), { region: ['us'] }));
  for (const bad of ['ready=yes', 'health=ok', 'kind=pod', 'usable=2']) assert.throws(() => parseFilter(new URLSearchParams(bad)), FilterError, bad);
});

test('sorting is total: ties break by cluster, namespace, name', () => {
  const ps = [provider({ name: 'b', cluster: 'y' }), provider({ name: 'a', cluster: 'y' }), provider({ name: 'c', cluster: 'x' })];
  assert.deepEqual(sortItems(ps, { key: 'region', descending: false }).map((p) => `${p.cluster}/${p.name}`), ['x/c', 'y/a', 'y/b']);
  assert.deepEqual(sortItems(ps, { key: 'name', descending: true }).map((p) => p.name), ['c', 'b', 'a']);
});

test('the overview counts per cluster and kind, lists clusters without objects, and puts the longest unconverged first', () => {
  const o = buildOverview([
    provider({ name: 'ok' }),
    provider({ name: 'late', health: 'failed', converged: false, unconvergedSince: '2026-01-01T00:00:00Z' }),
    provider({ name: 'later', health: 'progressing', converged: false, unconvergedSince: '2026-02-01T00:00:00Z' }),
  ], ['a', 'empty']);
  assert.deepEqual(o.clusters.find((c) => c.cluster === 'a' && c.kind === 'DigitalHumanProvider')!.counts, { total: 3, ready: 1, progressing: 1, failed: 1 });
  assert.deepEqual(o.clusters.find((c) => c.cluster === 'empty' && c.kind === 'Microservice')!.counts, { total: 0, ready: 0, progressing: 0, failed: 0 });
  assert.deepEqual(o.longestUnconverged.map((u) => u.name), ['late', 'later']);
});

test('ordering by time parses each time once, not at every comparison (the page re-sorts every frame while events arrive; 10,000 rows took 50–70 ms)', () => {
  const n = 2_000;
  const items = Array.from({ length: n }, (_, i) => {
    const at = new Date(Date.UTC(2026, 0, 1) + ((i * 7_919) % n) * 1_000).toISOString();
    return provider({ name: `p-${i}`, createdAt: at, unconvergedSince: at, ready: { status: 'True', reason: 'ProviderReady', message: '', observedGeneration: 1, current: true, lastTransitionTime: at } });
  });
  const parse = Date.parse;
  let calls = 0;
  Date.parse = (s: string) => (calls++, parse(s));
  try {
    const counted = (what: string, run: () => unknown) => {
      calls = 0;
      run();
      assert.ok(calls <= 2 * n, `${what}: ${calls} parses for ${n} items`);
    };
    counted('sortItems by age', () => sortItems(items, { key: 'age', descending: false }));
    counted('sortItems by unconverged', () => sortItems(items, { key: 'unconverged', descending: true }));
    counted('rankProviders', () => rankProviders(items));
    counted('buildOverview', () => buildOverview(items, ['a']));
  } finally {
    Date.parse = parse;
  }
  const byAge = sortItems(items, { key: 'age', descending: false });
  assert.ok(byAge.every((it, i) => i === 0 || Date.parse(byAge[i - 1]!.createdAt ?? '') >= Date.parse(it.createdAt ?? '')), 'youngest first');
});
