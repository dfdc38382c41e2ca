/**
 * Filters and sorting for both tables, shared by the API (query parameters) and the page (its
 * filter bar and URL), so `?region=eu&ready=true` means the same in both. Pure.
 *
 * Query parameters (each but `q` may repeat or hold a comma-separated list; values within one
 * parameter are OR-ed, parameters are AND-ed): `cluster`, `namespace`, `kind` (`Microservice`/`ms`,
 * `DigitalHumanProvider`/`dhp`), `region` (providers only), `health` (`ready`, `progressing`,
 * `failed`), `ready` (`true` = ready to take work: a Microservice converged, a provider usable —
 * converged, its cluster reachable, quota left — so `?region=R&ready=true` is the upstream's pick;
 * `false` = the others), `usable` (`true`/`false`, providers),
 * `q` (one text, commas included, the first `q` given: case-insensitive substring of namespace/name,
 * or of image/region/reason).
 * @module
 */
import type { Health, Item, ItemKind } from './types.ts';

export interface ItemFilter {
  cluster?: string[];
  namespace?: string[];
  kind?: ItemKind[];
  region?: string[];
  health?: Health[];
  ready?: boolean;
  usable?: boolean;
  q?: string;
}

export class FilterError extends Error {
  override readonly name = 'FilterError';
}

const HEALTHS: readonly Health[] = ['ready', 'progressing', 'failed'];
const KIND_NAMES: Record<string, ItemKind> = {
  microservice: 'Microservice',
  microservices: 'Microservice',
  ms: 'Microservice',
  digitalhumanprovider: 'DigitalHumanProvider',
  digitalhumanproviders: 'DigitalHumanProvider',
  dhp: 'DigitalHumanProvider',
  provider: 'DigitalHumanProvider',
  providers: 'DigitalHumanProvider',
};

export const FILTER_PARAMS = ['cluster', 'namespace', 'kind', 'region', 'health', 'ready', 'usable', 'q'] as const;

function values(params: URLSearchParams, name: string): string[] | undefined {
  const all = params.getAll(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return all.length ? [...new Set(all)] : undefined;
}

/** Like the lists: repeated or comma-separated values are OR-ed, so `true` and `false` together filter nothing. */
function bool(params: URLSearchParams, name: string): boolean | undefined {
  const all = values(params, name);
  if (!all) return undefined;
  const seen = new Set(all.map((v) => {
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw new FilterError(`${name} must be true or false, got ${JSON.stringify(v)}`);
  }));
  return seen.size === 1 ? [...seen][0] : undefined;
}

/** Reads a filter from query parameters; throws `FilterError` on a value it cannot understand. */
export function parseFilter(params: URLSearchParams): ItemFilter {
  const f: ItemFilter = {};
  const cluster = values(params, 'cluster');
  if (cluster) f.cluster = cluster;
  const namespace = values(params, 'namespace');
  if (namespace) f.namespace = namespace;
  const region = values(params, 'region');
  if (region) f.region = region;
  const kinds = values(params, 'kind');
  if (kinds) {
    f.kind = kinds.map((k) => {
      const word = k.toLowerCase();
      const kind = Object.hasOwn(KIND_NAMES, word) ? KIND_NAMES[word] : undefined;
      if (!kind) throw new FilterError(`unknown kind ${JSON.stringify(k)}; use Microservice (ms) or DigitalHumanProvider (dhp)`);
      return kind;
    });
  }
  const health = values(params, 'health');
  if (health) {
    for (const h of health) if (!HEALTHS.includes(h as Health)) throw new FilterError(`health must be one of ${HEALTHS.join(', ')}, got ${JSON.stringify(h)}`);
    f.health = health as Health[];
  }
  const ready = bool(params, 'ready');
  if (ready !== undefined) f.ready = ready;
  const usable = bool(params, 'usable');
  if (usable !== undefined) f.usable = usable;
  const q = params.get('q')?.trim();
  if (q) f.q = q;
  return f;
}

/** The filter as query parameters (the inverse of `parseFilter`, canonical order). */
export function filterToParams(f: ItemFilter): URLSearchParams {
  const p = new URLSearchParams();
  for (const name of ['cluster', 'namespace', 'kind', 'region', 'health'] as const) {
    const v = f[name];
    if (v?.length) p.set(name, v.join(','));
  }
  if (f.ready !== undefined) p.set('ready', String(f.ready));
  if (f.usable !== undefined) p.set('usable', String(f.usable));
  if (f.q) p.set('q', f.q);
  return p;
}

/** What `q` searches, field by field: a match never spans two fields (`web img` is no match for `ns/web` and `img:1`). */
function searchFields(item: Item): string[] {
  const extra = item.kind === 'Microservice' ? [item.image] : [item.region, item.providerID ?? ''];
  return [`${item.namespace}/${item.name}`, ...extra, item.why ?? ''].map((s) => s.toLowerCase());
}

export function matchesFilter(item: Item, f: ItemFilter): boolean {
  if (f.cluster && !f.cluster.includes(item.cluster)) return false;
  if (f.namespace && !f.namespace.includes(item.namespace)) return false;
  if (f.kind && !f.kind.includes(item.kind)) return false;
  if (f.region && (item.kind !== 'DigitalHumanProvider' || !f.region.includes(item.region))) return false;
  if (f.health && !f.health.includes(item.health)) return false;
  if (f.ready !== undefined && (item.kind === 'DigitalHumanProvider' ? item.usable : item.converged) !== f.ready) return false;
  if (f.usable !== undefined && (item.kind !== 'DigitalHumanProvider' || item.usable !== f.usable)) return false;
  if (f.q) {
    const q = f.q.toLowerCase();
    if (!searchFields(item).some((s) => s.includes(q))) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Sorting

/** Columns a table can be sorted by. `rank` is the best-first order of providers. */
export type SortKey = 'cluster' | 'namespace' | 'name' | 'health' | 'why' | 'age' | 'unconverged' | 'region' | 'phase' | 'rank' | 'quota';
export interface Sort {
  key: SortKey;
  descending: boolean;
}

const HEALTH_ORDER: Record<Health, number> = { failed: 0, progressing: 1, ready: 2 };

function timeMs(t: string | null): number {
  const ms = t ? Date.parse(t) : Number.NaN;
  return Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byIdentity(a: Item, b: Item): number {
  return compareText(a.cluster, b.cluster) || compareText(a.namespace, b.namespace) || compareText(a.name, b.name) || compareText(a.kind, b.kind);
}

function compareBy(key: SortKey, a: Item, b: Item, time: (t: string | null) => number = timeMs): number {
  switch (key) {
    case 'cluster':
      return compareText(a.cluster, b.cluster);
    case 'namespace':
      return compareText(a.namespace, b.namespace);
    case 'name':
      return compareText(a.name, b.name);
    case 'health':
      return HEALTH_ORDER[a.health] - HEALTH_ORDER[b.health];
    case 'why':
      return compareText(a.why ?? '', b.why ?? '');
    case 'age':
      // Oldest first when ascending by age means largest age first; keep "ascending = youngest first".
      return time(b.createdAt) - time(a.createdAt);
    case 'unconverged':
      return time(a.unconvergedSince) - time(b.unconvergedSince);
    case 'region':
      return compareText(a.kind === 'DigitalHumanProvider' ? a.region : '', b.kind === 'DigitalHumanProvider' ? b.region : '');
    case 'phase':
      return compareText(a.kind === 'Microservice' ? (a.phase ?? '') : '', b.kind === 'Microservice' ? (b.phase ?? '') : '');
    case 'rank':
      return (a.kind === 'DigitalHumanProvider' ? (a.rank ?? Infinity) : Infinity) - (b.kind === 'DigitalHumanProvider' ? (b.rank ?? Infinity) : Infinity);
    case 'quota': {
      const q = (i: Item) => (i.kind === 'DigitalHumanProvider' && typeof i.quota?.left === 'number' ? i.quota.left : -1);
      return q(a) - q(b);
    }
  }
}

/** Sorted copy; ties are broken by cluster, namespace, name, so the order is total and stable. */
export function sortItems<T extends Item>(items: readonly T[], sort: Sort): T[] {
  const sign = sort.descending ? -1 : 1;
  // Each time parsed once per sort, not at each comparison (the page sorts every frame).
  const parsed = new Map<string | null, number>();
  const time = (t: string | null): number => {
    let ms = parsed.get(t);
    if (ms === undefined) parsed.set(t, (ms = timeMs(t)));
    return ms;
  };
  return [...items].sort((a, b) => sign * compareBy(sort.key, a, b, time) || byIdentity(a, b));
}
