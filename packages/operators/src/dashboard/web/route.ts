/**
 * The page's address: which table, which filter, which sort, which object is open — all in the
 * URL hash (`#/providers?region=eu&ready=true&sort=-age&open=<key>`), so a view can be
 * bookmarked or shared and the browser's back button works. Pure.
 * @module
 */
import { filterToParams, parseFilter } from '../shared/filters.ts';
import type { ItemFilter, Sort, SortKey } from '../shared/filters.ts';

export type Tab = 'microservices' | 'providers';

export interface Route {
  tab: Tab;
  filter: ItemFilter;
  sort: Sort | null;
  /** Key of the object whose detail is open. */
  open: string | null;
}

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const q = text.indexOf('?');
  const path = q >= 0 ? text.slice(0, q) : text;
  const params = new URLSearchParams(q >= 0 ? text.slice(q + 1) : '');
  let filter: ItemFilter = {};
  try {
    filter = parseFilter(params);
  } catch {
    // a hand-edited hash with a bad value: show everything rather than nothing
  }
  const sortText = params.get('sort');
  const sort: Sort | null = sortText ? { key: sortText.replace(/^-/, '') as SortKey, descending: sortText.startsWith('-') } : null;
  return { tab: path === 'providers' ? 'providers' : 'microservices', filter, sort, open: params.get('open') };
}

export function formatRoute(r: Route): string {
  const p = filterToParams(r.filter);
  if (r.sort) p.set('sort', `${r.sort.descending ? '-' : ''}${r.sort.key}`);
  if (r.open) p.set('open', r.open);
  const qs = p.toString();
  return `#/${r.tab}${qs ? `?${qs}` : ''}`;
}
