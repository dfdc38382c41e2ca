/**
 * The detail panel of one object: what `converge explain` says (verdict, findings, conditions
 * with the generation each was computed for, owned objects and their ownership, recent Events),
 * the condition transitions the dashboard saw since it started, and the object as YAML.
 * Loaded from `/api/v1/{kind}/{cluster}/{namespace}/{name}` and reloaded (at most every 250 ms)
 * while the object changes. Esc closes it.
 * @module
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { formatAge } from '../../cli/views/age.ts';
import type { ChildExplanation } from '../../cli/views/explanation.ts';
import type { Item, ObjectDetail } from '../shared/types.ts';
import { HealthBadge } from './columns.tsx';

export function detailUrl(item: Pick<Item, 'kind' | 'cluster' | 'namespace' | 'name'>): string {
  const kind = item.kind === 'Microservice' ? 'microservices' : 'providers';
  return `/api/v1/${kind}/${[item.cluster, item.namespace, item.name].map(encodeURIComponent).join('/')}`;
}

const OWNERSHIP: Record<ChildExplanation['ownership'], string> = {
  controlled: 'controlled by this Microservice',
  missing: 'missing',
  unowned: 'no controller',
  handover: 'handover annotation names this Microservice',
  'previous-owner': 'controlled by an earlier Microservice of the same name',
  foreign: 'controlled by another object',
};

export function Detail({ item, now, onClose }: { item: Item; now: Date; onClose(): void }) {
  const [detail, setDetail] = useState<ObjectDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const panel = useRef<HTMLElement>(null);
  const itemText = JSON.stringify(item);

  useEffect(() => {
    panel.current?.focus();
  }, [item.key]);

  useEffect(() => {
    const abort = new AbortController();
    const timer = setTimeout(() => {
      fetch(detailUrl(item), { signal: abort.signal, headers: { accept: 'application/json' } })
        .then(async (r) => {
          if (!r.ok) throw new Error(((await r.json().catch(() => ({}))) as { message?: string }).message ?? `HTTP ${r.status}`);
          return (await r.json()) as ObjectDetail;
        })
        .then((d) => {
          setDetail(d);
          setError(null);
        })
        .catch((err: Error) => {
          if (err.name !== 'AbortError') setError(err.message);
        });
    }, detail && detail.item.key === item.key ? 250 : 0);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [itemText]);

  const d = detail?.item.key === item.key ? detail : null;
  const e = d?.explanation;
  return (
    <aside class="detail" ref={panel} tabIndex={-1} aria-label={`${item.kind} ${item.namespace}/${item.name}`} data-key={item.key}
      onKeyDown={(ev) => { if (ev.key === 'Escape') { ev.preventDefault(); onClose(); } }}>
      <header>
        <div>
          <p class="kind">{item.kind} · {item.cluster}</p>
          <h2>{item.namespace}/{item.name}</h2>
        </div>
        <button type="button" class="close" onClick={onClose} aria-label="Close the detail (Esc)">✕</button>
      </header>
      <p class="verdict">
        <HealthBadge health={item.health} /> {e ? e.verdict : item.why ?? ''}
      </p>
      {error && <p class="error">Cannot load the detail: {error}</p>}
      {!d && !error && <p class="muted">Loading…</p>}
      {e && d && (
        <>
          <section>
            <h3>Why</h3>
            <ul class="findings">
              {e.findings.map((f, i) => <li key={i} class={`finding f-${f.severity}`}>{f.message}</li>)}
            </ul>
          </section>
          <section>
            <h3>Conditions</h3>
            {e.conditions.length === 0 ? <p class="muted">none</p> : (
              <table class="small" data-section="conditions">
                <thead><tr><th>Type</th><th>Status</th><th>Reason</th><th>Generation</th><th>Since</th><th>Message</th></tr></thead>
                <tbody>
                  {e.conditions.map((c) => (
                    <tr key={c.type} data-condition={c.type} data-status={c.status}>
                      <td>{c.type}</td>
                      <td class={`st-${c.status}`}>{c.status}</td>
                      <td>{c.reason}</td>
                      <td class={c.current ? '' : 'stale'}>{c.observedGeneration ?? '–'}/{e.object.generation}{c.current ? '' : ' (stale)'}</td>
                      <td>{formatAge(c.lastTransitionTime, now)}</td>
                      <td class="msg">{c.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section>
            <h3>Timeline <span class="muted">(condition transitions since the dashboard started)</span></h3>
            {d.timeline.length === 0 ? <p class="muted">none seen yet</p> : (
              <ol class="timeline" data-section="timeline">
                {[...d.timeline].reverse().map((t, i) => (
                  <li key={i}>
                    <time dateTime={t.seenAt} title={t.seenAt}>{new Date(t.seenAt).toLocaleTimeString()}</time>{' '}
                    <strong>{t.type}</strong>{' '}
                    {t.from ? `${t.from.status}/${t.from.reason || '–'} → ` : 'seen '}
                    {t.to ? <span class={`st-${t.to.status}`}>{t.to.status}/{t.to.reason || '–'}</span> : 'removed'}
                    <span class="muted"> gen {t.generation}</span>
                    {t.to?.message && <div class="msg muted">{t.to.message}</div>}
                  </li>
                ))}
              </ol>
            )}
          </section>
          {e.microservice && (
            <section>
              <h3>Owned objects</h3>
              <table class="small" data-section="owned">
                <thead><tr><th>Kind</th><th>Name</th><th>Ownership</th><th>State</th></tr></thead>
                <tbody>
                  {e.microservice.children.map((c) => (
                    <tr key={c.kind} data-ownership={c.ownership}>
                      <td>{c.kind}</td>
                      <td>{c.name}</td>
                      <td class={c.ownership === 'controlled' ? 'ok' : 'bad'}>{OWNERSHIP[c.ownership]}{c.controller && c.ownership !== 'controlled' ? ` (${c.controller.kind}/${c.controller.name})` : ''}</td>
                      <td class="msg">{childState(c)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p class="muted">EndpointSlices: {e.microservice.endpoints.slices} ({e.microservice.endpoints.ready} ready, {e.microservice.endpoints.notReady} not ready)
                {e.microservice.rollout.assessed ? ` · live rollout: ${e.microservice.rollout.assessed.message}` : ''}</p>
            </section>
          )}
          {e.provider && (
            <section>
              <h3>Vendor instance</h3>
              <p>{e.provider.providerID ?? 'none yet'} · region {e.provider.spec.region} · finalizer {e.provider.finalizer.present ? 'present' : 'absent'}{e.provider.deleting ? ' · deleting' : ''}</p>
            </section>
          )}
          <section>
            <h3>Recent Events</h3>
            {e.events.length === 0 ? <p class="muted">none</p> : (
              <table class="small" data-section="events">
                <thead><tr><th>Last seen</th><th>Type</th><th>Reason</th><th>Object</th><th>Message</th></tr></thead>
                <tbody>
                  {[...e.events].reverse().map((ev, i) => (
                    <tr key={i} class={ev.type === 'Warning' ? 'warn' : ''}>
                      <td>{formatAge(ev.lastTime, now)}</td><td>{ev.type}</td><td>{ev.reason}</td><td>{ev.object}</td>
                      <td class="msg">{ev.count > 1 ? `${ev.note} (×${ev.count})` : ev.note}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section>
            <h3>Object</h3>
            <pre class="yaml" data-section="yaml">{d.yaml}</pre>
          </section>
        </>
      )}
    </aside>
  );
}

function childState(c: ChildExplanation): string {
  if (!c.state) return '–';
  if ('currentReplicas' in c.state) {
    const s = c.state;
    return `${s.availableReplicas}/${s.replicas ?? 1} available, ${s.updatedReplicas} updated; generation ${s.observedGeneration ?? '–'}/${s.generation ?? '–'}`;
  }
  return `${c.state.type ?? 'ClusterIP'} ${c.state.clusterIP ?? '–'}, ports ${c.state.ports.map((p) => `${p.port}→${p.targetPort ?? p.port}`).join(', ') || '–'}`;
}
