/**
 * The columns of both tables: what each shows, how it sorts, and how early it disappears on a
 * narrow screen (`priority` 1 always shows; 2 goes below 1100 px; 3 below 1350 px). The quota
 * columns appear as soon as any provider carries quota figures (`status.usage.quotaRemaining`
 * and `status.limitedBy`, ADR 0028), and stay blank for providers without them.
 * @module
 */
import type { ComponentChild } from 'preact';
import { formatAge } from '../../cli/views/age.ts';
import type { SortKey } from '../shared/filters.ts';
import type { Health, Item, MicroserviceItem, ProviderItem } from '../shared/types.ts';

export interface Column<T extends Item> {
  id: string;
  label: string;
  /** Width in the fixed table layout (CSS length). */
  width: string;
  sort?: SortKey;
  priority: 1 | 2 | 3;
  render(item: T, now: Date): ComponentChild;
  /** Tooltip of the cell. */
  title?(item: T): string | undefined;
}

const HEALTH_TEXT: Record<Health, string> = { ready: 'Ready', progressing: 'Progressing', failed: 'Failed' };

export function HealthBadge({ health, stale }: { health: Health; stale?: boolean }) {
  return <span class={`badge badge-${health}`} data-health={health}>{HEALTH_TEXT[health]}{stale ? '*' : ''}</span>;
}

const dash = <span class="muted">–</span>;

function since(t: string | null, now: Date): ComponentChild {
  return t ? formatAge(t, now) : dash;
}

const common = {
  cluster: { id: 'cluster', label: 'Cluster', width: '9rem', sort: 'cluster', priority: 1, render: (i: Item) => i.cluster },
  namespace: { id: 'namespace', label: 'Namespace', width: '9rem', sort: 'namespace', priority: 2, render: (i: Item) => i.namespace },
  name: { id: 'name', label: 'Name', width: 'auto', sort: 'name', priority: 1, render: (i: Item) => <span class="name">{i.name}</span> },
  health: {
    id: 'health',
    label: 'Ready',
    width: '8.5rem',
    sort: 'health',
    priority: 1,
    render: (i: Item) => <HealthBadge health={i.health} stale={i.ready !== null && !i.ready.current && !i.deleting} />,
  },
  why: { id: 'why', label: 'Reason', width: '11rem', sort: 'why', priority: 1, render: (i: Item) => (i.deleting ? `Deleting${i.why ? `/${i.why}` : ''}` : i.why ?? dash), title: (i: Item) => i.whyMessage ?? undefined },
  unconverged: { id: 'unconverged', label: 'Unconverged', width: '7rem', sort: 'unconverged', priority: 3, render: (i: Item, now: Date) => since(i.unconvergedSince, now) },
  age: { id: 'age', label: 'Age', width: '5rem', sort: 'age', priority: 2, render: (i: Item, now: Date) => since(i.createdAt, now) },
} satisfies Record<string, Column<Item>>;

export const MICROSERVICE_COLUMNS: Column<MicroserviceItem>[] = [
  common.cluster,
  common.namespace,
  common.name,
  common.health,
  { id: 'phase', label: 'Phase', width: '9rem', sort: 'phase', priority: 2, render: (i) => i.phase ?? dash },
  { id: 'replicas', label: 'Replicas', width: '5.5rem', priority: 3, render: (i) => (i.replicas ? `${i.replicas.available}/${i.replicas.desired}` : dash) },
  common.why,
  { id: 'image', label: 'Image', width: '14rem', priority: 3, render: (i) => <span class="mono">{i.image}</span>, title: (i) => i.image },
  common.unconverged,
  common.age,
];

const quota = (p: ProviderItem) => p.quota?.left ?? null;

export function providerColumns(showQuota: boolean): Column<ProviderItem>[] {
  return [
    { id: 'rank', label: '#', width: '3.5rem', sort: 'rank', priority: 1, render: (p) => (p.rank ?? dash), title: () => 'best first: usable, healthy, not limited, most quota left, Ready the longest' },
    common.cluster,
    common.namespace,
    common.name,
    { id: 'region', label: 'Region', width: '9rem', sort: 'region', priority: 1, render: (p) => p.region },
    common.health,
    common.why,
    { id: 'usable', label: 'Usable', width: '5.5rem', priority: 2, render: (p) => (p.usable ? <span class="ok">yes</span> : <span class="muted">no</span>) },
    ...(showQuota
      ? [
          { id: 'quota', label: 'Quota left', width: '6.5rem', sort: 'quota', priority: 2, render: (p) => quota(p) ?? dash } satisfies Column<ProviderItem>,
          { id: 'limiting', label: 'Limiting reason', width: '10rem', priority: 2, render: (p) => p.limitingReason ?? dash } satisfies Column<ProviderItem>,
        ]
      : []),
    { id: 'provider-id', label: 'Provider ID', width: '12rem', priority: 3, render: (p) => (p.providerID ? <span class="mono">{p.providerID}</span> : dash) },
    common.age,
  ];
}
