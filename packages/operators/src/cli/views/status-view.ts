/**
 * `converge status` as data: Microservices and DigitalHumanProviders turned into rows (for the
 * table) and into a stable JSON document (for scripts). Pure: objects in, document out; the same
 * objects always give the same document (sorted by namespace, then name; no timestamps of its
 * own), so `--watch` can redraw only on change and tests can compare documents.
 *
 * The document (`-o json` / `-o yaml`), version `converge.dev/v1alpha1`, kind `Status`:
 *
 * ```
 * { apiVersion, kind: "Status",
 *   namespace: "<ns>" | null,                 // null: all namespaces
 *   microservices: [{ namespace, name, uid, generation, observedGeneration|null,
 *       image, port, phase|null,              // Accepted | ResourcesApplied | Failed
 *       reason|null, message|null,            // status.reason/message (why the phase)
 *       replicas: { desired, updated, available, readyEndpoints } | null,   // status.rollout
 *       ready, progressing, stalled: Condition | null,
 *       converged, deleting, createdAt|null,
 *       managedResources: { deployment|null, service|null } }],
 *   providers: [{ namespace, name, uid, generation, observedGeneration|null,
 *       region, endpoint, displayName|null, providerID|null,
 *       ready: Condition | null, finalizer, converged, deleting, createdAt|null,
 *       usage: { callsToday, dailyQuota, quotaRemaining, throttledRequests|null, observedAt|null } | null,
 *       limitedBy|null,                       // Ready's False reason, else RateLimited
 *       recommendation|null }],               // set while ScaleRecommended is True
 *   summary: { microservices: { total, ready }, providers: { total, ready } },
 *   warnings: string[] }                      // e.g. a CRD that is not installed
 * Condition = { status: "True"|"False"|"Unknown", reason, message,
 *               observedGeneration|null, current, lastTransitionTime|null }
 * ```
 * `current` is true when the condition was computed for the object's `metadata.generation`.
 * `converged` is Ready=True, current, with `status.observedGeneration == metadata.generation`
 * (for providers also: a providerID and the cleanup finalizer, and not being deleted).
 * Fields are only ever added to this shape, never renamed or removed, within `v1alpha1`.
 * @module
 */
import type { Condition } from '@converge/runtime';
import type { Microservice } from '../../operators/microservice/api/index.ts';
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { PROVIDER_FINALIZER } from '../../operators/provider/api/constants.ts';
import { formatAge } from './age.ts';
import { renderTable, cell, type Cell, type Column } from './table.ts';
import { terminalSafe } from './terminal-text.ts';
import { conditionColor, plainStyle, type Style } from './style.ts';

export const VIEW_API_VERSION = 'converge.dev/v1alpha1';

export interface ConditionView {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration: number | null;
  /** Computed for the object's current `metadata.generation`. */
  current: boolean;
  lastTransitionTime: string | null;
}

export interface MicroserviceRow {
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  observedGeneration: number | null;
  image: string;
  port: number;
  phase: string | null;
  reason: string | null;
  message: string | null;
  replicas: { desired: number; updated: number; available: number; readyEndpoints: number } | null;
  ready: ConditionView | null;
  progressing: ConditionView | null;
  stalled: ConditionView | null;
  converged: boolean;
  deleting: boolean;
  createdAt: string | null;
  managedResources: { deployment: string | null; service: string | null };
}

export interface ProviderRow {
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  observedGeneration: number | null;
  region: string;
  endpoint: string;
  displayName: string | null;
  providerID: string | null;
  ready: ConditionView | null;
  finalizer: boolean;
  converged: boolean;
  deleting: boolean;
  createdAt: string | null;
  /** The vendor's figures, as `status.usage` has them (written at most every 30 s when only they change). */
  usage: { callsToday: number; dailyQuota: number; quotaRemaining: number; throttledRequests: number | null; observedAt: string | null } | null;
  /** What limits the provider now: Ready's reason while False, else `RateLimited`; null when nothing does. */
  limitedBy: string | null;
  recommendation: string | null;
}

export interface StatusDocument {
  apiVersion: typeof VIEW_API_VERSION;
  kind: 'Status';
  namespace: string | null;
  microservices: MicroserviceRow[];
  providers: ProviderRow[];
  summary: { microservices: { total: number; ready: number }; providers: { total: number; ready: number } };
  warnings: string[];
}

export function conditionView(conditions: readonly Condition[] | undefined, type: string, generation: number): ConditionView | null {
  const c = conditions?.find((x) => x.type === type);
  if (!c) return null;
  const observedGeneration = typeof c.observedGeneration === 'number' ? c.observedGeneration : null;
  return {
    status: c.status,
    reason: c.reason ?? '',
    message: c.message ?? '',
    observedGeneration,
    current: observedGeneration === generation,
    lastTransitionTime: c.lastTransitionTime ?? null,
  };
}

export function microserviceRow(ms: Microservice): MicroserviceRow {
  const generation = ms.metadata.generation ?? 0;
  const status = ms.status;
  const observedGeneration = typeof status?.observedGeneration === 'number' ? status.observedGeneration : null;
  const ready = conditionView(status?.conditions as Condition[] | undefined, 'Ready', generation);
  const rollout = status?.rollout;
  const deleting = Boolean(ms.metadata.deletionTimestamp);
  return {
    namespace: ms.metadata.namespace ?? '',
    name: ms.metadata.name ?? '',
    uid: ms.metadata.uid ?? '',
    generation,
    observedGeneration,
    image: ms.spec?.container?.image ?? '',
    port: ms.spec?.container?.port ?? 0,
    phase: status?.phase ?? null,
    reason: status?.reason || null, // empty: no reason, as the text shows it
    message: status?.message || null,
    replicas: rollout
      ? { desired: rollout.replicas, updated: rollout.updatedReplicas, available: rollout.availableReplicas, readyEndpoints: rollout.readyEndpoints }
      : null,
    ready,
    progressing: conditionView(status?.conditions as Condition[] | undefined, 'Progressing', generation),
    stalled: conditionView(status?.conditions as Condition[] | undefined, 'Stalled', generation),
    converged: !deleting && ready?.status === 'True' && ready.current && observedGeneration === generation,
    deleting,
    createdAt: ms.metadata.creationTimestamp ?? null,
    managedResources: { deployment: status?.managedResources?.deployment ?? null, service: status?.managedResources?.service ?? null },
  };
}

export function providerRow(p: DigitalHumanProvider): ProviderRow {
  const generation = p.metadata.generation ?? 0;
  const status = p.status;
  const observedGeneration = typeof status?.observedGeneration === 'number' ? status.observedGeneration : null;
  const ready = conditionView(status?.conditions as Condition[] | undefined, 'Ready', generation);
  const deleting = Boolean(p.metadata.deletionTimestamp);
  const finalizer = (p.metadata.finalizers ?? []).includes(PROVIDER_FINALIZER);
  const providerID = status?.providerID || null;
  return {
    namespace: p.metadata.namespace ?? '',
    name: p.metadata.name ?? '',
    uid: p.metadata.uid ?? '',
    generation,
    observedGeneration,
    region: p.spec?.region ?? '',
    endpoint: p.spec?.endpoint ?? '',
    displayName: p.spec?.displayName ?? null,
    providerID,
    ready,
    finalizer,
    converged: !deleting && ready?.status === 'True' && ready.current && observedGeneration === generation && providerID !== null && finalizer,
    deleting,
    createdAt: p.metadata.creationTimestamp ?? null,
    usage: status?.usage
      ? {
          callsToday: status.usage.callsToday,
          dailyQuota: status.usage.dailyQuota,
          quotaRemaining: status.usage.quotaRemaining,
          // A cluster whose CRD does not require these may lack them: null, never a missing key.
          throttledRequests: status.usage.throttledRequests ?? null,
          observedAt: status.usage.observedAt ?? null,
        }
      : null,
    limitedBy: status?.limitedBy || null,
    recommendation: status?.recommendation || null,
  };
}

const byKey = <T extends { namespace: string; name: string }>(a: T, b: T) =>
  a.namespace === b.namespace ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.namespace < b.namespace ? -1 : 1;

export interface StatusInput {
  /** The namespace listed, or null for all namespaces. */
  namespace: string | null;
  microservices: readonly Microservice[];
  providers: readonly DigitalHumanProvider[];
  warnings?: readonly string[];
}

export function buildStatusDocument(input: StatusInput): StatusDocument {
  const microservices = input.microservices.map(microserviceRow).sort(byKey);
  const providers = input.providers.map(providerRow).sort(byKey);
  return {
    apiVersion: VIEW_API_VERSION,
    kind: 'Status',
    namespace: input.namespace,
    microservices,
    providers,
    summary: {
      microservices: { total: microservices.length, ready: microservices.filter((m) => m.converged).length },
      providers: { total: providers.length, ready: providers.filter((p) => p.converged).length },
    },
    warnings: [...(input.warnings ?? [])],
  };
}

export interface TableOptions {
  wide?: boolean;
  /** Show the NAMESPACE column (all-namespaces listing). */
  showNamespace?: boolean;
  style?: Style;
  now: Date;
}

/** The Ready cell: status, `*` when computed for an older generation, `-` when absent. */
function readyCell(c: ConditionView | null, deleting: boolean): Cell {
  if (deleting) return cell(c ? `${c.status}` : '-', 'yellow');
  if (!c) return cell('-', 'yellow');
  if (!c.current) return cell(`${c.status}*`, 'yellow');
  return cell(c.status, conditionColor(c.status));
}

function reasonCell(c: ConditionView | null, deleting: boolean, phaseFailedReason?: string | null): Cell {
  const reason = c?.reason || phaseFailedReason || '-';
  if (deleting) return cell(`Deleting${reason !== '-' ? `/${reason}` : ''}`, 'yellow');
  return cell(reason, c?.status === 'True' && c.current ? undefined : c?.status === 'False' ? 'red' : 'yellow');
}

function countCell(have: number | undefined, want: number | undefined): Cell {
  if (have === undefined || want === undefined) return cell('-');
  return cell(`${have}/${want}`, have === want ? undefined : 'yellow');
}

function generationCell(observed: number | null, generation: number): Cell {
  return cell(`${observed ?? '-'}/${generation}`, observed === generation ? undefined : 'yellow');
}

function phaseCell(phase: string | null): Cell {
  if (!phase) return cell('-', 'yellow');
  return cell(phase, phase === 'Failed' ? 'red' : undefined);
}

export function renderMicroserviceTable(rows: readonly MicroserviceRow[], options: TableOptions): string {
  const { wide = false, showNamespace = false, style = plainStyle, now } = options;
  const columns: Column[] = [
    ...(showNamespace ? [{ header: 'namespace' }] : []),
    { header: 'name' },
    { header: 'image', maxWidth: wide ? undefined : 48 },
    { header: 'port' },
    { header: 'phase' },
    { header: 'replicas' },
    ...(wide ? [{ header: 'updated' }] : []),
    { header: 'endpoints' },
    { header: 'ready' },
    { header: 'reason' },
    { header: 'age' },
    ...(wide ? [{ header: 'generation' }, { header: 'message', maxWidth: 100 }] : []),
  ];
  const body = rows.map((r) => [
    ...(showNamespace ? [r.namespace] : []),
    r.name,
    r.image,
    r.port,
    phaseCell(r.phase),
    countCell(r.replicas?.available, r.replicas?.desired),
    ...(wide ? [countCell(r.replicas?.updated, r.replicas?.desired)] : []),
    r.replicas ? cell(r.replicas.readyEndpoints, r.replicas.readyEndpoints > 0 ? undefined : 'yellow') : cell('-'),
    readyCell(r.ready, r.deleting),
    reasonCell(r.ready, r.deleting, r.reason),
    formatAge(r.createdAt, now),
    ...(wide ? [generationCell(r.observedGeneration, r.generation), r.ready?.message || r.message || ''] : []),
  ]);
  return renderTable(columns, body, style);
}

export function renderProviderTable(rows: readonly ProviderRow[], options: TableOptions): string {
  const { wide = false, showNamespace = false, style = plainStyle, now } = options;
  const columns: Column[] = [
    ...(showNamespace ? [{ header: 'namespace' }] : []),
    { header: 'name' },
    { header: 'region' },
    { header: 'provider-id' },
    { header: 'ready' },
    { header: 'reason' },
    { header: 'quota-left' },
    { header: 'limited-by' },
    { header: 'age' },
    ...(wide ? [{ header: 'endpoint' }, { header: 'generation' }, { header: 'message', maxWidth: 100 }] : []),
  ];
  const body = rows.map((r) => [
    ...(showNamespace ? [r.namespace] : []),
    r.name,
    r.region,
    r.providerID ?? cell('-', 'yellow'),
    readyCell(r.ready, r.deleting),
    reasonCell(r.ready, r.deleting),
    r.usage ? cell(`${r.usage.quotaRemaining}/${r.usage.dailyQuota}`, r.usage.quotaRemaining === 0 ? 'red' : undefined) : cell('-'),
    r.limitedBy ? cell(r.limitedBy, 'yellow') : cell('-'),
    formatAge(r.createdAt, now),
    ...(wide ? [r.endpoint, generationCell(r.observedGeneration, r.generation), r.ready?.message ?? ''] : []),
  ]);
  return renderTable(columns, body, style);
}

/**
 * The whole status as text: a titled table per kind (or a "none" line), a footnote when a
 * condition is older than its object's spec, and the warnings. Ends without a newline. Text from
 * the cluster is shown terminal-safe (`terminalText`).
 */
export function renderStatusText(input: StatusDocument, options: TableOptions): string {
  const doc = terminalSafe(input);
  const style = options.style ?? plainStyle;
  const showNamespace = options.showNamespace ?? doc.namespace === null;
  const where = doc.namespace === null ? 'in any namespace' : `in namespace ${doc.namespace}`;
  const title = (text: string, s: { total: number; ready: number }) =>
    `${style.paint(text, 'bold')} ${style.paint(`(${s.ready}/${s.total} ready)`, s.ready === s.total ? 'green' : 'yellow')}`;
  const parts: string[] = [];
  parts.push(
    doc.microservices.length > 0
      ? `${title('Microservices', doc.summary.microservices)}\n${renderMicroserviceTable(doc.microservices, { ...options, showNamespace })}`
      : `${style.paint('Microservices', 'bold')}: none ${where}`,
  );
  parts.push(
    doc.providers.length > 0
      ? `${title('DigitalHumanProviders', doc.summary.providers)}\n${renderProviderTable(doc.providers, { ...options, showNamespace })}`
      : `${style.paint('DigitalHumanProviders', 'bold')}: none ${where}`,
  );
  const stale = [...doc.microservices, ...doc.providers].some((r) => r.ready && !r.ready.current && !r.deleting);
  if (stale) parts.push(style.paint('* Ready was computed for an older generation: the operator has not caught up with the latest spec yet.', 'dim'));
  for (const w of doc.warnings) parts.push(style.paint(`warning: ${w}`, 'yellow'));
  return parts.join('\n\n');
}

/** One line per object, for logs and headless output; changes exactly when the object's state does. */
export function statusLines(input: StatusDocument): Map<string, string> {
  const doc = terminalSafe(input);
  const lines = new Map<string, string>();
  // One line each: a provider ID or a reason (the vendor's or anyone's words) may hold line breaks,
  // which would split the line and could pass for another object's.
  const set = (key: string, line: string) => lines.set(key, line.replace(/\s*\n\s*/g, ' '));
  for (const r of doc.microservices) {
    const replicas = r.replicas ? ` replicas=${r.replicas.available}/${r.replicas.desired} endpoints=${r.replicas.readyEndpoints}` : '';
    set(
      `Microservice ${r.namespace}/${r.name}`,
      `Microservice ${r.namespace}/${r.name}: phase=${r.phase ?? '-'} ready=${conditionText(r.ready)}${replicas} image=${r.image} generation=${r.observedGeneration ?? '-'}/${r.generation}${r.deleting ? ' deleting' : ''}`,
    );
  }
  for (const r of doc.providers) {
    set(
      `DigitalHumanProvider ${r.namespace}/${r.name}`,
      `DigitalHumanProvider ${r.namespace}/${r.name}: ready=${conditionText(r.ready)} providerID=${r.providerID ?? '-'} region=${r.region}${r.limitedBy ? ` limitedBy=${r.limitedBy}` : ''} generation=${r.observedGeneration ?? '-'}/${r.generation}${r.deleting ? ' deleting' : ''}`,
    );
  }
  return lines;
}

function conditionText(c: ConditionView | null): string {
  if (!c) return '-';
  return `${c.status}${c.reason ? `/${c.reason}` : ''}${c.current ? '' : '(stale)'}`;
}
