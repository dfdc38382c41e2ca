/**
 * The page: header (clusters' live state, the stream's state, theme), overview, the filter bar,
 * the table of the chosen kind and the detail panel. State lives in the `Store` (data) and the
 * URL hash (what is shown: `route.ts`).
 *
 * Keyboard: `/` search, `1`/`2` Microservices/Providers, `t` theme, `?` shortcuts, `Esc` close;
 * in the table ↑/↓ (j/k), Enter.
 * @module
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { matchesFilter, sortItems } from '../shared/filters.ts';
import type { ItemFilter, Sort } from '../shared/filters.ts';
import { buildOverview } from '../shared/overview.ts';
import { rankProviders } from '../shared/ranking.ts';
import type { Health, Item, ItemKind, MicroserviceItem, ProviderItem } from '../shared/types.ts';
import { MICROSERVICE_COLUMNS, providerColumns } from './columns.tsx';
import { Detail } from './detail.tsx';
import { ClusterCards, LongestUnconverged } from './overview.tsx';
import { formatRoute, parseRoute } from './route.ts';
import type { Route, Tab } from './route.ts';
import type { Store } from './store.ts';
import { Table } from './table.tsx';

type Theme = 'auto' | 'light' | 'dark';
const THEME_KEY = 'converge-dashboard-theme';

function useStore(store: Store): number {
  const [, setVersion] = useState(store.version);
  useEffect(() => store.subscribe(() => setVersion(store.version)), [store]);
  return store.version;
}

function useRoute(): [Route, (r: Route, replace?: boolean) => void] {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const go = (r: Route, replace = false) => {
    const hash = formatRoute(r);
    if (replace) history.replaceState(null, '', hash);
    else history.pushState(null, '', hash);
    setRoute(parseRoute(hash));
  };
  return [route, go];
}

function useNow(): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const t = setInterval(() => setNow(new Date()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

function applyTheme(theme: Theme): void {
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

const uniq = (xs: string[]) => [...new Set(xs)].sort();

function MultiSelect({ label, name, options, value, onChange }: { label: string; name: string; options: string[]; value: string[] | undefined; onChange(v: string[] | undefined): void }) {
  return (
    <label class="field">
      <span>{label}</span>
      <select name={name} value={value?.[0] ?? ''} onChange={(e) => {
        const v = (e.currentTarget as HTMLSelectElement).value;
        onChange(v ? [v] : undefined);
      }}>
        <option value="">all</option>
        {options.map((o) => <option key={o} value={o}>{o}</option>)}
      </select>
    </label>
  );
}

export function App({ store }: { store: Store }) {
  const version = useStore(store);
  const [route, go] = useRoute();
  const now = useNow();
  const [theme, setTheme] = useState<Theme>(() => (localStorage.getItem(THEME_KEY) as Theme | null) ?? 'auto');
  const [selected, setSelected] = useState(0);
  const [help, setHelp] = useState(false);
  const search = useRef<HTMLInputElement>(null);

  useEffect(() => {
    applyTheme(theme);
    localStorage.setItem(THEME_KEY, theme);
  }, [theme]);

  // The namespace filter scopes the whole page (overview and tab counts too); the others apply to the table.
  const scope = route.filter.namespace;
  const all = useMemo(() => [...store.items.values()].filter((i) => !scope || scope.includes(i.namespace)), [version, scope?.join(',')]);
  const everyNamespace = useMemo(() => uniq([...store.items.values()].map((i) => i.namespace)), [version]);
  const clusterNames = store.clusters.map((c) => c.name);
  const overview = useMemo(() => buildOverview(all, clusterNames, 8), [version, scope?.join(',')]);
  const kind: ItemKind = route.tab === 'providers' ? 'DigitalHumanProvider' : 'Microservice';
  const ofKind = useMemo(() => all.filter((i) => i.kind === kind), [all, kind]);
  const filter: ItemFilter = { ...route.filter, kind: undefined };
  const filterText = JSON.stringify(filter);
  const rows = useMemo(() => {
    const matching = ofKind.filter((i) => matchesFilter(i, filter));
    if (kind === 'DigitalHumanProvider') {
      const ranked = rankProviders(matching as ProviderItem[]);
      return route.sort ? sortItems(ranked, route.sort) : ranked;
    }
    return sortItems(matching as MicroserviceItem[], route.sort ?? { key: 'cluster', descending: false });
  }, [ofKind, kind, filterText, route.sort?.key, route.sort?.descending]);
  const showQuota = kind === 'DigitalHumanProvider' && ofKind.some((p) => p.kind === 'DigitalHumanProvider' && (p.quota !== null || p.limitingReason !== null));
  const openItem = route.open ? store.items.get(route.open) : undefined;

  // Benchmarks and tests read when the first snapshot was fully drawn.
  useEffect(() => {
    if (store.snapshotAt !== null && !document.documentElement.dataset.firstRenderMs) {
      requestAnimationFrame(() => (document.documentElement.dataset.firstRenderMs = String(Math.round(performance.now()))));
    }
  }, [version]);

  const setFilter = (f: ItemFilter) => {
    setSelected(0);
    go({ ...route, filter: f }, true);
  };
  const setTab = (tab: Tab) => {
    setSelected(0);
    go({ ...route, tab, sort: null });
  };
  const open = (i: Item | string) => {
    const key = typeof i === 'string' ? i : i.key;
    const item = store.items.get(key);
    const tab: Tab = item?.kind === 'DigitalHumanProvider' ? 'providers' : item ? 'microservices' : route.tab;
    go({ ...route, tab, open: key });
  };
  const close = () => go({ ...route, open: null });

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t.closest('input, select, textarea') || e.ctrlKey || e.metaKey || e.altKey) {
        if (e.key === 'Escape' && t === search.current) search.current?.blur();
        return;
      }
      if (e.key === '/') {
        e.preventDefault();
        search.current?.focus();
      } else if (e.key === '1') setTab('microservices');
      else if (e.key === '2') setTab('providers');
      else if (e.key === 't') setTheme((x) => (x === 'auto' ? 'dark' : x === 'dark' ? 'light' : 'auto'));
      else if (e.key === '?') setHelp((h) => !h);
      else if (e.key === 'Escape') {
        if (help) setHelp(false);
        else if (route.open) close();
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });

  const namespaces = everyNamespace;
  const regions = uniq(all.filter((i): i is ProviderItem => i.kind === 'DigitalHumanProvider').map((p) => p.region));
  const health = route.filter.health?.[0] ?? '';
  const counts = { microservices: all.filter((i) => i.kind === 'Microservice').length, providers: all.filter((i) => i.kind === 'DigitalHumanProvider').length };

  return (
    <div class={`layout${openItem ? ' with-detail' : ''}`}>
      <header class="top">
        <h1>Converge <span class="muted">dashboard</span></h1>
        <p class={`conn conn-${store.connection}`} role="status" aria-live="polite" data-connection={store.connection}>
          <span class="dot" aria-hidden="true" />{store.connection === 'live' ? 'live' : store.connection === 'connecting' ? 'connecting…' : 'reconnecting…'}
        </p>
        <div class="spacer" />
        <button type="button" class="ghost" onClick={() => setHelp(!help)} aria-expanded={help} title="Keyboard shortcuts (?)">Keys</button>
        <button type="button" class="ghost" onClick={() => setTheme(theme === 'auto' ? 'dark' : theme === 'dark' ? 'light' : 'auto')} title="Theme (t)" data-theme-choice={theme}>
          Theme: {theme}
        </button>
      </header>
      {help && (
        <section class="card help" aria-label="Keyboard shortcuts">
          <p><kbd>/</kbd> search · <kbd>1</kbd> Microservices · <kbd>2</kbd> Providers · <kbd>↑</kbd><kbd>↓</kbd> or <kbd>j</kbd><kbd>k</kbd> select · <kbd>Enter</kbd> open · <kbd>Esc</kbd> close · <kbd>t</kbd> theme · <kbd>?</kbd> this help</p>
        </section>
      )}
      <main class="main">
        <div class="overview">
          <ClusterCards overview={overview} clusters={store.clusters} now={now} onOpen={open}
            onFilter={(cluster, k, h) => go({ ...route, tab: k === 'Microservice' ? 'microservices' : 'providers', sort: null, filter: { cluster: [cluster], ...(scope ? { namespace: scope } : {}), ...(h ? { health: [h] } : {}) } })} />
          <LongestUnconverged overview={overview} clusters={store.clusters} now={now} onOpen={open} onFilter={() => {}} />
        </div>
        <nav class="tabs" role="tablist" aria-label="Kinds">
          <button type="button" role="tab" aria-selected={route.tab === 'microservices'} onClick={() => setTab('microservices')} data-tab="microservices">
            Microservices <span class="muted">{counts.microservices}</span>
          </button>
          <button type="button" role="tab" aria-selected={route.tab === 'providers'} onClick={() => setTab('providers')} data-tab="providers">
            DigitalHumanProviders <span class="muted">{counts.providers}</span>
          </button>
        </nav>
        <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
          <MultiSelect label="Cluster" name="cluster" options={clusterNames} value={route.filter.cluster} onChange={(v) => setFilter({ ...route.filter, cluster: v })} />
          <MultiSelect label="Namespace" name="namespace" options={namespaces} value={route.filter.namespace} onChange={(v) => setFilter({ ...route.filter, namespace: v })} />
          <label class="field">
            <span>Ready</span>
            <select name="health" value={health} onChange={(e) => {
              const v = (e.currentTarget as HTMLSelectElement).value as Health | '';
              setFilter({ ...route.filter, health: v ? [v] : undefined });
            }}>
              <option value="">all</option>
              <option value="ready">ready</option>
              <option value="progressing">progressing</option>
              <option value="failed">failed</option>
            </select>
          </label>
          {route.tab === 'providers' && (
            <MultiSelect label="Region" name="region" options={regions} value={route.filter.region} onChange={(v) => setFilter({ ...route.filter, region: v })} />
          )}
          <label class="field grow">
            <span>Search</span>
            <input ref={search} type="search" name="q" placeholder="name, image, region, reason  ( / )" value={route.filter.q ?? ''}
              onInput={(e) => setFilter({ ...route.filter, q: (e.currentTarget as HTMLInputElement).value || undefined })} />
          </label>
          <p class="shown" aria-live="polite" data-shown={rows.length}>{rows.length} shown</p>
        </form>
        {route.tab === 'providers' ? (
          <Table label="DigitalHumanProviders" columns={providerColumns(showQuota)} rows={rows as ProviderItem[]} sort={route.sort} onSort={(s: Sort) => go({ ...route, sort: s }, true)}
            selected={selected} onSelect={setSelected} onOpen={open} openKey={route.open} now={now} />
        ) : (
          <Table label="Microservices" columns={MICROSERVICE_COLUMNS} rows={rows as MicroserviceItem[]} sort={route.sort ?? { key: 'cluster', descending: false }} onSort={(s: Sort) => go({ ...route, sort: s }, true)}
            selected={selected} onSelect={setSelected} onOpen={open} openKey={route.open} now={now} />
        )}
      </main>
      {openItem && <Detail item={openItem} now={now} onClose={close} />}
      {route.open && !openItem && store.snapshotAt !== null && (
        <aside class="detail"><p class="muted">{route.open} is gone (deleted, or its cluster was removed).</p><button type="button" onClick={close}>Close</button></aside>
      )}
    </div>
  );
}
