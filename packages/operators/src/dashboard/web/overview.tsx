/**
 * The overview band: one card per cluster (reachable or not, when it last heard from its API
 * server, and per kind how many objects are ready / progressing / failed — each count is a
 * link that filters the table), and the objects unconverged the longest.
 * @module
 */
import { formatAge } from '../../cli/views/age.ts';
import type { Overview, ClusterView, Health, ItemKind } from '../shared/types.ts';
import { HealthBadge } from './columns.tsx';

export interface OverviewProps {
  overview: Overview;
  clusters: ClusterView[];
  now: Date;
  onFilter(cluster: string, kind: ItemKind, health: Health | null): void;
  onOpen(key: string): void;
}

const KIND_LABEL: Record<ItemKind, string> = { Microservice: 'Microservices', DigitalHumanProvider: 'Providers' };

export function ClusterCards({ overview, clusters, now, onFilter }: OverviewProps) {
  return (
    <section class="clusters" aria-label="Clusters">
      {clusters.map((c) => (
        <article class={`card cluster state-${c.state}`} key={c.name} data-cluster={c.name} data-state={c.state}>
          <header>
            <span class="dot" aria-hidden="true" />
            <h2>{c.name}</h2>
            <span class="state">{c.state === 'reachable' ? 'live' : c.state}</span>
          </header>
          <p class="meta" title={c.server}>
            {c.state === 'unreachable'
              ? `unreachable${c.lastSync ? `; last heard ${formatAge(c.lastSync, now)} ago` : ''}`
              : c.lastSync
                ? `last event ${formatAge(c.lastSync, now)} ago`
                : 'connecting…'}
          </p>
          {c.error && <p class="error" title={c.error}>{c.error}</p>}
          {c.warnings.map((w) => <p class="warning" key={w} title={w}>{w}</p>)}
          <table class="counts">
            <tbody>
              {overview.clusters.filter((x) => x.cluster === c.name).map((x) => (
                <tr key={x.kind}>
                  <th scope="row">
                    <button type="button" class="link" onClick={() => onFilter(c.name, x.kind, null)}>{KIND_LABEL[x.kind]}</button>
                  </th>
                  {(['ready', 'progressing', 'failed'] as const).map((h) => (
                    <td key={h}>
                      <button type="button" class={`count count-${h}${x.counts[h] ? '' : ' zero'}`} onClick={() => onFilter(c.name, x.kind, h)} aria-label={`${x.counts[h]} ${h} ${KIND_LABEL[x.kind]} in ${c.name}`}>
                        {x.counts[h]}
                      </button>
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <p class="legend" aria-hidden="true"><span class="count-ready">ready</span> · <span class="count-progressing">progressing</span> · <span class="count-failed">failed</span></p>
        </article>
      ))}
    </section>
  );
}

export function LongestUnconverged({ overview, now, onOpen }: OverviewProps) {
  return (
    <section class="card unconverged" aria-label="Longest unconverged">
      <h2>Longest unconverged</h2>
      {overview.longestUnconverged.length === 0 ? (
        <p class="muted">Everything is converged.</p>
      ) : (
        <ol>
          {overview.longestUnconverged.map((u) => (
            <li key={u.key}>
              <button type="button" class="link" onClick={() => onOpen(u.key)} data-key={u.key}>
                <HealthBadge health={u.health} /> <span class="name">{u.cluster}/{u.namespace}/{u.name}</span>
                <span class="muted"> {u.why ?? ''} · {formatAge(u.unconvergedSince, now)}</span>
              </button>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
