/**
 * The overview: per cluster and kind, how many objects are ready, progressing and failed, and
 * the objects unconverged the longest, first. Pure; the server answers `GET /api/v1/overview`
 * with it and the page draws its overview from the same function over the rows it holds.
 * @module
 */
import type { Item, ItemKind, Overview, OverviewCell } from './types.ts';

const KINDS: readonly ItemKind[] = ['Microservice', 'DigitalHumanProvider'];

/** `clusters` lists every cluster to show, also those with no objects (yet). */
export function buildOverview(items: Iterable<Item>, clusters: readonly string[], limit = 10): Overview {
  const cells = new Map<string, OverviewCell>();
  const cellOf = (cluster: string, kind: ItemKind) => {
    const key = `${cluster}\u0000${kind}`;
    let c = cells.get(key);
    if (!c) cells.set(key, (c = { total: 0, ready: 0, progressing: 0, failed: 0 }));
    return c;
  };
  const names = new Set(clusters);
  const unconverged: Overview['longestUnconverged'] = [];
  for (const item of items) {
    names.add(item.cluster);
    const c = cellOf(item.cluster, item.kind);
    c.total += 1;
    c[item.health] += 1;
    if (item.unconvergedSince !== null) {
      unconverged.push({
        key: item.key,
        cluster: item.cluster,
        kind: item.kind,
        namespace: item.namespace,
        name: item.name,
        health: item.health,
        why: item.why,
        unconvergedSince: item.unconvergedSince,
      });
    }
  }
  // Each time parsed once (not at each comparison: this runs for every frame of the page).
  const since = unconverged.map((u) => ({ u, at: Date.parse(u.unconvergedSince) || 0 }));
  since.sort((a, b) => a.at - b.at || (a.u.key < b.u.key ? -1 : a.u.key > b.u.key ? 1 : 0));
  return {
    clusters: [...names].sort().flatMap((cluster) => KINDS.map((kind) => ({ cluster, kind, counts: { ...cellOf(cluster, kind) } }))),
    longestUnconverged: since.slice(0, limit).map(({ u }) => u),
  };
}
