/**
 * `converge explain` as data, the document both kinds share: from the facts read from the
 * cluster (the object, its Events, the objects it owns, the Secret's presence) to an
 * `Explanation` — whether the object is converged, the findings that say why or why not, its
 * conditions with their generations, the owned objects with their state and ownership, and the
 * difference between the desired and the actual children. Pure. Each kind builds its own (`explain-microservice.ts`, `explain-provider.ts`) from
 * the shared parts here; `renderExplanationText` (`explanation-text.ts`) turns one into text.
 *
 * The document (`-o json` / `-o yaml`), version `converge.dev/v1alpha1`, kind `Explanation`:
 *
 * ```
 * { apiVersion, kind: "Explanation",
 *   object: { apiVersion, kind, namespace, name, uid, generation, observedGeneration|null,
 *             createdAt|null, deletionTimestamp|null, finalizers: string[] },
 *   converged: boolean,
 *   verdict: string,                                   // one line
 *   findings: [{ severity: "ok"|"info"|"warning"|"error", message }],
 *   conditions: [{ type, status, reason, message, observedGeneration|null, current, lastTransitionTime|null }],
 *   events: [{ type, reason, action, note, object: "<Kind>/<name>", count, lastTime|null, reportingController }],
 *   microservice?: {                                   // kind Microservice
 *     spec: { container: { image, port, env? (names only) }, replicas? }, phase|null, reason|null, message|null,
 *     managedResources: { deployment|null, service|null },
 *     rollout: { reported: { replicas, updatedReplicas, availableReplicas, readyEndpoints } | null,
 *                assessed: { state, message, summary } | null },   // from the live Deployment now
 *     endpoints: { slices, ready, notReady },
 *     desired: { source, error|null },               // which platform defaults; InvalidSpec problems
 *     children: [{ kind: "Deployment"|"Service", name, exists, uid|null,
 *                  ownership: "controlled"|"missing"|"unowned"|"handover"|"previous-owner"|"foreign",
 *                  controller: { apiVersion, kind, name, uid } | null, handoverTo|null,
 *                  generationStamp|null, state: {…kind-specific…} | null,
 *                  differences: [{ path, expected, actual|null }],   // actual null: the live child lacks the field
 *                  differenceText: string[] }] },
 *   provider?: {                                       // kind DigitalHumanProvider
 *     spec: { endpoint, region, displayName|null, credentials: { secretRef: { name, key } } },
 *     providerID|null, instanceEndpoint|null, createRequestedAt|null, finalizer: { name, present }, deleting,
 *     credentials: { secret, key, secretExists: boolean|null, keyPresent: boolean|null, labelled: boolean|null, error|null },
 *     limits: { desired: { maxConcurrency?, requestsPerMinute?, dailyQuota? }, inForce: {…} | null },
 *     usage: { callsToday, dailyQuota, quotaRemaining, throttledRequests, throttleWindowSeconds, quotaResetAt, observedAt } | null,
 *     limitedBy|null, usable, recommendation|null } }
 * ```
 * Secret values never enter an Explanation: the caller passes only whether the Secret and its key exist.
 * @module
 */
import type { Condition, KubeEvent, KubeObject } from '@converge/runtime';
import type { RolloutAssessment } from '../../operators/microservice/index.ts';
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { VIEW_API_VERSION, conditionView, type ConditionView } from './status-view.ts';

export type Severity = 'ok' | 'info' | 'warning' | 'error';
export interface Finding {
  severity: Severity;
  message: string;
}

export interface ConditionExplanation extends ConditionView {
  type: string;
}

export interface EventView {
  type: string;
  reason: string;
  action: string;
  note: string;
  object: string;
  count: number;
  lastTime: string | null;
  reportingController: string;
}

export type Ownership = 'controlled' | 'missing' | 'unowned' | 'handover' | 'previous-owner' | 'foreign';

export interface DeploymentState {
  generation: number | null;
  observedGeneration: number | null;
  replicas: number | null;
  currentReplicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  unavailableReplicas: number;
  images: string[];
  conditions: { type: string; status: string; reason: string; message: string }[];
}

export interface ServiceState {
  type: string | null;
  clusterIP: string | null;
  ports: { name: string | null; port: number; targetPort: string | number | null; protocol: string | null }[];
  selector: Record<string, string>;
}

/**
 * A difference between the desired and the live child, as the documents carry it (the operator's
 * `Difference`, env values hidden). `actual` is always there: null when the live child lacks the
 * field (or holds null; `differenceText` tells them apart), never a missing key. `expected` is null
 * where the field should not be there at all (a key added by hand to what the operator owns
 * outright, e.g. a Service selector's; `differenceText` says `want absent`).
 */
export interface DifferenceView {
  /** e.g. `spec.template.spec.containers[0].image`, `metadata.labels["app.kubernetes.io/name"]`. */
  path: string;
  expected: unknown;
  actual: NonNullable<unknown> | null;
}

export interface ChildExplanation {
  kind: 'Deployment' | 'Service';
  name: string;
  exists: boolean;
  uid: string | null;
  ownership: Ownership;
  controller: { apiVersion: string; kind: string; name: string; uid: string } | null;
  handoverTo: string | null;
  generationStamp: string | null;
  state: DeploymentState | ServiceState | null;
  differences: DifferenceView[];
  differenceText: string[];
}

export interface MicroserviceExplanation {
  spec: { container: { image: string; port: number; env?: string[] }; replicas?: number };
  phase: string | null;
  reason: string | null;
  message: string | null;
  managedResources: { deployment: string | null; service: string | null };
  rollout: {
    reported: { replicas: number; updatedReplicas: number; availableReplicas: number; readyEndpoints: number } | null;
    assessed: RolloutAssessment | null;
  };
  endpoints: { slices: number; ready: number; notReady: number };
  desired: { source: string; error: string | null };
  children: ChildExplanation[];
}

export interface ProviderExplanation {
  spec: { endpoint: string; region: string; displayName: string | null; credentials: { secretRef: { name: string; key: string } } };
  providerID: string | null;
  /** Where the instance lives (or a create was sent), and when a create was last requested. */
  instanceEndpoint: string | null;
  createRequestedAt: string | null;
  finalizer: { name: string; present: boolean };
  deleting: boolean;
  /** `labelled`: whether the Secret carries `dhp.example.com/vendor-credentials=true` (null: not known). */
  credentials: { secret: string; key: string; secretExists: boolean | null; keyPresent: boolean | null; labelled: boolean | null; error: string | null };
  /** spec.limits, and the limits in force at the vendor as last observed. */
  limits: { desired: Partial<Record<LimitName, number>>; inForce: Record<LimitName, number> | null };
  usage: NonNullable<DigitalHumanProvider['status']>['usage'] | null;
  limitedBy: string | null;
  usable: boolean;
  recommendation: string | null;
}

export type LimitName = 'maxConcurrency' | 'requestsPerMinute' | 'dailyQuota';
export const LIMIT_NAMES: readonly LimitName[] = ['maxConcurrency', 'requestsPerMinute', 'dailyQuota'];

export interface Explanation {
  apiVersion: typeof VIEW_API_VERSION;
  kind: 'Explanation';
  object: {
    apiVersion: string;
    kind: string;
    namespace: string;
    name: string;
    uid: string;
    generation: number;
    observedGeneration: number | null;
    createdAt: string | null;
    deletionTimestamp: string | null;
    finalizers: string[];
  };
  converged: boolean;
  verdict: string;
  findings: Finding[];
  conditions: ConditionExplanation[];
  events: EventView[];
  microservice?: MicroserviceExplanation;
  provider?: ProviderExplanation;
}

/** How many Events an explanation keeps (the most recent). */
export const MAX_EVENTS = 15;

// ---------------------------------------------------------------------------------------------
// Events

type EventLike = KubeEvent & {
  deprecatedLastTimestamp?: string | null;
  deprecatedFirstTimestamp?: string | null;
  deprecatedSource?: { component?: string };
};

function eventTime(e: EventLike): string | null {
  return e.series?.lastObservedTime ?? e.deprecatedLastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? null;
}

/** The most recent Events (at most `max`), oldest first, as views. */
export function eventViews(events: readonly KubeEvent[], max = MAX_EVENTS): EventView[] {
  const views = (events as readonly EventLike[]).map((e) => ({
    type: e.type ?? 'Normal',
    reason: e.reason ?? '',
    action: e.action ?? '',
    note: e.note ?? '',
    object: `${e.regarding?.kind ?? '?'}/${e.regarding?.name ?? '?'}`,
    count: e.series?.count ?? e.deprecatedCount ?? 1,
    lastTime: eventTime(e),
    reportingController: e.reportingController || e.deprecatedSource?.component || '',
  }));
  const ms = (t: string | null) => (t ? Date.parse(t) || 0 : 0);
  views.sort((a, b) => ms(a.lastTime) - ms(b.lastTime));
  return views.slice(-max);
}

export function conditionsOf(conditions: readonly Condition[] | undefined, generation: number): ConditionExplanation[] {
  return (conditions ?? []).map((c) => ({ type: c.type, ...conditionView(conditions, c.type, generation)! }));
}

export function objectHeader(obj: KubeObject, apiVersion: string, kind: string, observedGeneration: number | undefined): Explanation['object'] {
  return {
    apiVersion,
    kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name ?? '',
    uid: obj.metadata.uid ?? '',
    generation: obj.metadata.generation ?? 0,
    observedGeneration: typeof observedGeneration === 'number' ? observedGeneration : null,
    createdAt: obj.metadata.creationTimestamp ?? null,
    deletionTimestamp: obj.metadata.deletionTimestamp ?? null,
    finalizers: [...(obj.metadata.finalizers ?? [])],
  };
}

/** Findings shared by both kinds: status present, generation caught up, conditions current. */
export function generationFindings(header: Explanation['object'], conditions: ConditionExplanation[], findings: Finding[]): void {
  if (header.observedGeneration === null) {
    findings.push({ severity: 'error', message: 'no status yet: the operator has not processed this object (is it running? `converge run`, or `converge dev`)' });
  } else if (header.observedGeneration < header.generation) {
    findings.push({
      severity: 'warning',
      message: `status describes generation ${header.observedGeneration}, the spec is at generation ${header.generation}: the operator has not caught up yet`,
    });
  }
  const stale = conditions.filter((c) => !c.current);
  if (stale.length > 0 && header.observedGeneration !== null) {
    const gens = [...new Set(stale.map((c) => c.observedGeneration ?? '?'))].join(', ');
    const names = stale.map((c) => c.type).join(', ');
    findings.push({
      severity: 'warning',
      message: `condition${stale.length === 1 ? '' : 's'} ${names} ${stale.length === 1 ? 'was' : 'were'} computed for generation ${gens}, the spec is at generation ${header.generation}`,
    });
  }
}

export function readyFinding(ready: ConditionExplanation | undefined, findings: Finding[]): void {
  if (!ready) return;
  const text = `Ready=${ready.status} (${ready.reason || 'no reason'})${ready.message ? `: ${ready.message}` : ''}`;
  findings.push({ severity: ready.status === 'True' ? (ready.current ? 'ok' : 'warning') : ready.status === 'False' ? 'error' : 'warning', message: text });
}

function verdictOf(converged: boolean, ready: ConditionExplanation | undefined, findings: Finding[]): string {
  if (converged) return oneLine(`converged: Ready=True (${ready?.reason ?? ''}) for the current generation`);
  const first = findings.find((f) => f.severity === 'error') ?? findings.find((f) => f.severity === 'warning');
  return oneLine(`not converged: ${first?.message ?? 'no Ready condition yet'}`);
}

/** The verdict is one line: a message it quotes (a condition's, an API server error) may have several. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

/** What every explanation starts with, whatever the kind. */
export function explanation(
  header: Explanation['object'],
  converged: boolean,
  ready: ConditionExplanation | undefined,
  findings: Finding[],
  conditions: ConditionExplanation[],
  events: readonly KubeEvent[],
): Explanation {
  return {
    apiVersion: VIEW_API_VERSION,
    kind: 'Explanation',
    object: header,
    converged,
    verdict: verdictOf(converged, ready, findings),
    findings,
    conditions,
    events: eventViews(events),
  };
}
