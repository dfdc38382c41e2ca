/**
 * `converge explain` as data: from the facts read from the cluster (the object, its Events, the
 * objects it owns, the Secret's presence) to an `Explanation` — whether the object is converged,
 * the findings that say why or why not, its conditions with their generations, the owned
 * objects with their state and ownership, and the difference between the desired and the actual
 * children. Pure; `renderExplanationText` turns it into text.
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
 *                  differences: [{ path, expected, actual }], differenceText: string[] }] },
 *   provider?: {                                       // kind DigitalHumanProvider
 *     spec: { endpoint, region, displayName|null, credentials: { secretRef: { name, key } } },
 *     providerID|null, instanceEndpoint|null, createRequestedAt|null, finalizer: { name, present }, deleting,
 *     credentials: { secret, key, secretExists: boolean|null, keyPresent: boolean|null, error|null },
 *     limits: { desired: { maxConcurrency?, requestsPerMinute?, dailyQuota? }, inForce: {…} | null },
 *     usage: { callsToday, dailyQuota, quotaRemaining, throttledRequests, throttleWindowSeconds, quotaResetAt, observedAt } | null,
 *     limitedBy|null, usable, recommendation|null } }
 * ```
 * Secret values never enter an Explanation: the caller passes only whether the Secret and its key exist.
 * @module
 */
import type { Condition, Deployment, EndpointSlice, KubeEvent, KubeObject, Pod, Service } from '@converge/runtime';
import { controllerOf } from '@converge/runtime';
// The operator's modules one by one, not its index (which registers the controller and builds
// the CRDs): `converge explain` loads only what it renders (issue 17, goal 5).
import { GENERATION_ANNOTATION, HANDOVER_ANNOTATION, MICROSERVICE_API_VERSION, MICROSERVICE_GROUP, MICROSERVICE_KIND } from '../../operators/microservice/api/constants.ts';
import { assessRollout, countEndpoints as countDistinctEndpoints } from '../../operators/microservice/rollout.ts';
import { describeDifferences, findDifferences } from '../../operators/microservice/contains.ts';
import { renderDesiredState, InvalidSpecError } from '../../operators/microservice/desired-state.ts';
import type { Microservice, PlatformDefaults, RolloutAssessment, Difference } from '../../operators/microservice/index.ts';
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { ABANDON_ANNOTATION, DEFAULT_CREDENTIALS_KEY, PROVIDER_API_VERSION, PROVIDER_FINALIZER, PROVIDER_KIND } from '../../operators/provider/api/constants.ts';
import { VIEW_API_VERSION, conditionView, type ConditionView } from './status-view.ts';
import { formatAge } from './age.ts';
import { describePodProblems, podProblems } from './pod-problems.ts';
import { renderTable, cell } from './table.ts';
import { conditionColor, plainStyle, type Color, type Style } from './style.ts';

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
  differences: Difference[];
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
  credentials: { secret: string; key: string; secretExists: boolean | null; keyPresent: boolean | null; error: string | null };
  /** spec.limits, and the limits in force at the vendor as last observed. */
  limits: { desired: Partial<Record<LimitName, number>>; inForce: Record<LimitName, number> | null };
  usage: NonNullable<DigitalHumanProvider['status']>['usage'] | null;
  limitedBy: string | null;
  usable: boolean;
  recommendation: string | null;
}

type LimitName = 'maxConcurrency' | 'requestsPerMinute' | 'dailyQuota';
const LIMIT_NAMES: readonly LimitName[] = ['maxConcurrency', 'requestsPerMinute', 'dailyQuota'];

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

function conditionsOf(conditions: readonly Condition[] | undefined, generation: number): ConditionExplanation[] {
  return (conditions ?? []).map((c) => ({ type: c.type, ...conditionView(conditions, c.type, generation)! }));
}

function objectHeader(obj: KubeObject, apiVersion: string, kind: string, observedGeneration: number | undefined): Explanation['object'] {
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
function generationFindings(header: Explanation['object'], conditions: ConditionExplanation[], findings: Finding[]): void {
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

function readyFinding(ready: ConditionExplanation | undefined, findings: Finding[]): void {
  if (!ready) return;
  const text = `Ready=${ready.status} (${ready.reason || 'no reason'})${ready.message ? `: ${ready.message}` : ''}`;
  findings.push({ severity: ready.status === 'True' ? (ready.current ? 'ok' : 'warning') : ready.status === 'False' ? 'error' : 'warning', message: text });
}

function verdictOf(converged: boolean, ready: ConditionExplanation | undefined, findings: Finding[]): string {
  if (converged) return `converged: Ready=True (${ready?.reason ?? ''}) for the current generation`;
  const first = findings.find((f) => f.severity === 'error') ?? findings.find((f) => f.severity === 'warning');
  return `not converged: ${first?.message ?? 'no Ready condition yet'}`;
}

/** What every explanation starts with, whatever the kind. */
function explanation(
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

// ---------------------------------------------------------------------------------------------
// Microservice

export interface MicroserviceFacts {
  microservice: Microservice;
  deployment: Deployment | undefined;
  service: Service | undefined;
  /** EndpointSlices labelled `kubernetes.io/service-name=<name>`. */
  endpointSlices: readonly EndpointSlice[];
  /** Events regarding the Microservice, its Deployment and its Service. */
  events: readonly KubeEvent[];
  /** Pods of the Deployment (a sample), when the reader can list them: they say why a rollout waits. */
  pods?: readonly Pod[];
  defaults: PlatformDefaults;
  /** Where `defaults` came from, e.g. `built-in platform defaults` or `--config ops.yaml`. */
  defaultsSource: string;
}

/** Ready endpoints counted as the operator counts them: an address whose `ready` is not false. */
/** Endpoints counted as the operator counts them (each once, across address families), and the slices. */
export function countEndpoints(slices: readonly EndpointSlice[]): { slices: number; ready: number; notReady: number } {
  return { slices: slices.length, ...countDistinctEndpoints(slices) };
}

export function ownershipOfChild(child: KubeObject | undefined, ms: Microservice): { ownership: Ownership; controller: ChildExplanation['controller']; handoverTo: string | null } {
  if (!child) return { ownership: 'missing', controller: null, handoverTo: null };
  const handoverTo = child.metadata.annotations?.[HANDOVER_ANNOTATION] ?? null;
  const ref = controllerOf(child);
  if (!ref) return { ownership: handoverTo === ms.metadata.name ? 'handover' : 'unowned', controller: null, handoverTo };
  const controller = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid };
  if (ref.uid === ms.metadata.uid && ref.apiVersion.startsWith(`${MICROSERVICE_GROUP}/`) && ref.kind === MICROSERVICE_KIND) return { ownership: 'controlled', controller, handoverTo };
  if (ref.kind === MICROSERVICE_KIND && ref.name === ms.metadata.name) return { ownership: 'previous-owner', controller, handoverTo };
  return { ownership: 'foreign', controller, handoverTo };
}

function deploymentState(d: Deployment): DeploymentState {
  const s = d.status ?? {};
  return {
    generation: d.metadata.generation ?? null,
    observedGeneration: s.observedGeneration ?? null,
    replicas: d.spec?.replicas ?? null,
    currentReplicas: s.replicas ?? 0,
    updatedReplicas: s.updatedReplicas ?? 0,
    readyReplicas: s.readyReplicas ?? 0,
    availableReplicas: s.availableReplicas ?? 0,
    unavailableReplicas: s.unavailableReplicas ?? 0,
    images: (d.spec?.template?.spec?.containers ?? []).map((c) => c.image ?? ''),
    conditions: (s.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason ?? '', message: c.message ?? '' })),
  };
}

function serviceState(svc: Service): ServiceState {
  return {
    type: svc.spec?.type ?? null,
    clusterIP: svc.spec?.clusterIP ?? null,
    ports: (svc.spec?.ports ?? []).map((p) => ({ name: p.name ?? null, port: p.port, targetPort: (p.targetPort as string | number | undefined) ?? null, protocol: p.protocol ?? null })),
    selector: { ...(svc.spec?.selector ?? {}) },
  };
}

const OWNERSHIP_TEXT: Record<Ownership, string> = {
  controlled: 'controlled by this Microservice',
  missing: 'missing',
  unowned: 'no controller',
  handover: 'no controller, handover annotation names this Microservice',
  'previous-owner': 'controlled by an earlier Microservice of the same name',
  foreign: 'controlled by another object',
};

export function explainMicroservice(facts: MicroserviceFacts): Explanation {
  const ms = facts.microservice;
  const name = ms.metadata.name ?? '';
  const header = objectHeader(ms, MICROSERVICE_API_VERSION, MICROSERVICE_KIND, ms.status?.observedGeneration);
  const generation = header.generation;
  const conditions = conditionsOf(ms.status?.conditions as Condition[] | undefined, generation);
  const findings: Finding[] = [];
  const deleting = header.deletionTimestamp !== null;
  if (deleting) findings.push({ severity: 'warning', message: 'being deleted: garbage collection removes its Deployment and Service' });

  generationFindings(header, conditions, findings);
  if (ms.status?.phase === 'Failed') {
    const until = ms.status.reason === 'InvalidSpec' ? 'the spec changes' : 'the spec or the object in the way changes';
    findings.push({ severity: 'error', message: `phase Failed (${ms.status.reason ?? 'no reason'}): ${ms.status.message ?? ''}; not retried until ${until}` });
  }
  const ready = conditions.find((c) => c.type === 'Ready');
  readyFinding(ready, findings);
  const stalled = conditions.find((c) => c.type === 'Stalled');
  if (stalled?.status === 'True' && stalled.reason !== ms.status?.reason) {
    findings.push({ severity: 'error', message: `Stalled=True (${stalled.reason}): ${stalled.message}` });
  }

  // Desired state, rendered as the operator would.
  let desired: ReturnType<typeof renderDesiredState> | undefined;
  let desiredError: string | null = null;
  try {
    desired = renderDesiredState(ms, facts.defaults);
  } catch (err) {
    desiredError = err instanceof InvalidSpecError ? err.problems.join('; ') : (err as Error).message;
    findings.push({ severity: 'error', message: `the spec cannot be rendered into a Deployment and Service: ${desiredError}` });
  }

  const children: ChildExplanation[] = [];
  for (const [kind, current, want] of [
    ['Deployment', facts.deployment, desired?.deployment],
    ['Service', facts.service, desired?.service],
  ] as const) {
    const own = ownershipOfChild(current, ms);
    const differences = current && want ? findDifferences(current, want) : [];
    const child: ChildExplanation = {
      kind,
      name: current?.metadata.name ?? name,
      exists: current !== undefined,
      uid: current?.metadata.uid ?? null,
      ...own,
      generationStamp: current?.metadata.annotations?.[GENERATION_ANNOTATION] ?? null,
      state: current ? (kind === 'Deployment' ? deploymentState(current as Deployment) : serviceState(current as Service)) : null,
      differences,
      differenceText: current && want ? describeDifferences(current, want) : [],
    };
    children.push(child);
    const what = `${kind} ${child.name}`;
    switch (own.ownership) {
      case 'missing':
        if (!deleting && desired) findings.push({ severity: 'error', message: `${what} does not exist; the operator creates it` });
        break;
      case 'foreign':
        findings.push({
          severity: 'error',
          message: `${what} is controlled by ${own.controller!.kind} ${own.controller!.name} (uid ${own.controller!.uid}): the operator never modifies it (OwnershipConflict); delete or rename it to let this Microservice create its own`,
        });
        break;
      case 'unowned':
        findings.push({
          severity: 'error',
          message: `${what} exists without a controller (OwnershipConflict): hand it over with \`kubectl annotate ${kind.toLowerCase()} ${child.name} ${HANDOVER_ANNOTATION}=${name}\`, or delete it`,
        });
        break;
      case 'handover':
        findings.push(
          ms.status?.reason === 'ApplyRejected' && ms.status.phase === 'Failed'
            ? { severity: 'error', message: `${what} carries ${HANDOVER_ANNOTATION}=${name}, but the API server refused to adopt it (ApplyRejected, above)` }
            : { severity: 'info', message: `${what} carries ${HANDOVER_ANNOTATION}=${name}: the operator adopts it` },
        );
        break;
      case 'previous-owner':
        findings.push({ severity: 'warning', message: `${what} belongs to an earlier Microservice of the same name (uid ${own.controller!.uid}); garbage collection is removing it, then the operator creates a new one` });
        break;
      case 'controlled':
        if (differences.length > 0) {
          findings.push({ severity: 'warning', message: `${what} differs from the desired state in ${differences.length} field${differences.length === 1 ? '' : 's'} (${facts.defaultsSource}); the operator updates it in place` });
        } else {
          findings.push({ severity: 'ok', message: `${what} is controlled by this Microservice and contains the desired state` });
        }
        if (child.generationStamp !== null && child.generationStamp !== String(generation)) {
          findings.push({ severity: 'warning', message: `${what} was written for generation ${child.generationStamp}, the spec is at generation ${generation}` });
        }
        break;
    }
  }

  const endpoints = countEndpoints(facts.endpointSlices);
  const assessed = facts.deployment ? assessRollout(facts.deployment, generation, endpoints.ready) : null;
  if (assessed && children[0]!.ownership === 'controlled' && assessed.state !== 'Available' && assessed.state !== 'ScaledToZero') {
    findings.push({ severity: assessed.state === 'Stalled' ? 'error' : 'warning', message: `live rollout: ${assessed.message}` });
    // The cause, in the pods' words: what the Deployment's counts cannot say.
    const pods = facts.pods && podProblems(facts.pods);
    if (pods) findings.push({ severity: assessed.state === 'Stalled' ? 'error' : 'warning', message: `pods: ${describePodProblems(pods)}` });
  }

  const childrenOk = children.every((c) => c.ownership === 'controlled' && c.differences.length === 0);
  const converged =
    !deleting &&
    ready?.status === 'True' &&
    ready.current &&
    header.observedGeneration === generation &&
    desiredError === null &&
    childrenOk;

  const rollout = ms.status?.rollout;
  return {
    ...explanation(header, converged, ready, findings, conditions, facts.events),
    microservice: {
      spec: {
        container: { image: ms.spec?.container?.image ?? '', port: ms.spec?.container?.port ?? 0, ...(ms.spec?.container?.env?.length ? { env: ms.spec.container.env.map((e) => e.name) } : {}) },
        ...(ms.spec?.replicas !== undefined ? { replicas: ms.spec.replicas } : {}),
      },
      phase: ms.status?.phase ?? null,
      reason: ms.status?.reason ?? null,
      message: ms.status?.message ?? null,
      managedResources: { deployment: ms.status?.managedResources?.deployment ?? null, service: ms.status?.managedResources?.service ?? null },
      rollout: { reported: rollout ? { ...rollout } : null, assessed },
      endpoints,
      desired: { source: facts.defaultsSource, error: desiredError },
      children,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// DigitalHumanProvider

export interface ProviderFacts {
  provider: DigitalHumanProvider;
  /** Whether the credentials Secret and its key exist; `null` when they could not be read (`error` says why). Never the values. */
  credentials: { secretExists: boolean | null; keyPresent: boolean | null; error?: string };
  events: readonly KubeEvent[];
}

export function explainProvider(facts: ProviderFacts): Explanation {
  const p = facts.provider;
  const header = objectHeader(p, PROVIDER_API_VERSION, PROVIDER_KIND, p.status?.observedGeneration);
  const generation = header.generation;
  const conditions = conditionsOf(p.status?.conditions as Condition[] | undefined, generation);
  const ready = conditions.find((c) => c.type === 'Ready');
  const findings: Finding[] = [];
  const deleting = header.deletionTimestamp !== null;
  const finalizer = header.finalizers.includes(PROVIDER_FINALIZER);
  const providerID = p.status?.providerID || null;
  const secret = p.spec?.credentials?.secretRef?.name ?? '';
  const key = p.spec?.credentials?.secretRef?.key ?? DEFAULT_CREDENTIALS_KEY;

  if (deleting) {
    findings.push({
      severity: 'warning',
      message: finalizer
        ? `being deleted: the finalizer ${PROVIDER_FINALIZER} stays until the vendor instance${providerID ? ` ${providerID}` : ''} is deleted${ready?.reason === 'DeletionBlocked' ? ` (blocked: ${ready.message})` : ''}`
        : 'being deleted: the finalizer is gone, the API server removes the object',
    });
  }
  generationFindings(header, conditions, findings);
  readyFinding(ready, findings);
  const creds = facts.credentials;
  if (creds.secretExists === false) {
    findings.push({ severity: 'error', message: `Secret ${secret} does not exist in namespace ${header.namespace} (CredentialsMissing); the operator retries when it appears` });
  } else if (creds.secretExists && creds.keyPresent === false) {
    findings.push({ severity: 'error', message: `Secret ${secret} has no key "${key}" (CredentialsMissing)` });
  } else if (creds.secretExists === null) {
    findings.push({ severity: 'info', message: `could not check Secret ${secret}: ${creds.error ?? 'unknown error'}` });
  } else {
    findings.push({ severity: 'ok', message: `Secret ${secret} exists with key "${key}" (value not shown)` });
  }
  if (!deleting && !finalizer && header.observedGeneration !== null) {
    findings.push({ severity: 'warning', message: `the finalizer ${PROVIDER_FINALIZER} is missing: the operator adds it before any vendor call` });
  }
  const instanceEndpoint = p.status?.instanceEndpoint ?? null;
  const createRequestedAt = p.status?.createRequestedAt ?? null;
  if (providerID) {
    findings.push({ severity: 'ok', message: `vendor instance ${providerID}${instanceEndpoint ? ` at ${instanceEndpoint}` : ''}` });
  } else if (createRequestedAt) {
    findings.push({ severity: 'warning', message: `a create was sent to ${instanceEndpoint ?? p.spec?.endpoint} at ${createRequestedAt}, no instance recorded yet: deletion asks the vendor before the finalizer goes` });
  } else if (!deleting) {
    findings.push({ severity: 'warning', message: 'no vendor instance recorded yet (status.providerID is empty); no create was sent' });
  } else {
    findings.push({ severity: 'info', message: 'no create was ever sent: the deletion needs no vendor call' });
  }
  quotaFindings(p, conditions, findings);
  const abandon = p.metadata.annotations?.[ABANDON_ANNOTATION];
  if (abandon !== undefined) {
    findings.push({ severity: 'warning', message: `${ABANDON_ANNOTATION}=${abandon}: on deletion the instance named is given up without cleanup (if it names status.providerID, or the UID when none is recorded)` });
  }

  const converged = !deleting && ready?.status === 'True' && ready.current && header.observedGeneration === generation && finalizer && providerID !== null;
  return {
    ...explanation(header, converged, ready, findings, conditions, facts.events),
    provider: {
      spec: { endpoint: p.spec?.endpoint ?? '', region: p.spec?.region ?? '', displayName: p.spec?.displayName ?? null, credentials: { secretRef: { name: secret, key } } },
      providerID,
      instanceEndpoint,
      createRequestedAt,
      finalizer: { name: PROVIDER_FINALIZER, present: finalizer },
      deleting,
      credentials: { secret, key, secretExists: creds.secretExists, keyPresent: creds.keyPresent, error: creds.error ?? null },
      limits: { desired: { ...p.spec?.limits }, inForce: p.status?.limits ? { ...p.status.limits } : null },
      usage: p.status?.usage ?? null,
      limitedBy: p.status?.limitedBy ?? null,
      usable: p.status?.usable === true,
      recommendation: p.status?.recommendation ?? null,
    },
  };
}

/** What limits the provider, what the vendor refused, what a person could do (issue 14, issue 18 item 7). */
function quotaFindings(p: DigitalHumanProvider, conditions: readonly { type: string; status: string; reason: string; message: string }[], findings: Finding[]): void {
  const holds = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready?.reason === 'VendorRejected') {
    findings.push({ severity: 'error', message: `the vendor refused what it was sent (VendorRejected): ${ready.message}. Nothing is retried until the spec changes${/region/.test(ready.message) ? '; spec.region is immutable, so create a new DigitalHumanProvider with a region the vendor accepts' : ''}` });
  }
  const suspended = holds('AccountSuspended');
  if (suspended) findings.push({ severity: 'error', message: `${suspended.message} (AccountSuspended/${suspended.reason}): pay or resolve it with the vendor; the operator notices the resumption within seconds` });
  const quota = holds('QuotaExhausted');
  if (quota) findings.push({ severity: 'error', message: `${quota.message} (QuotaExhausted): the upstream should use another provider until then, or raise spec.limits.dailyQuota` });
  const rate = holds('RateLimited');
  if (rate) findings.push({ severity: 'warning', message: `${rate.message} (RateLimited): calls are slowed, the provider stays usable` });
  if (holds('ScaleRecommended') && p.status?.recommendation) findings.push({ severity: 'info', message: `recommendation (never acted on): ${p.status.recommendation}` });
  const inForce = p.status?.limits;
  const differ = LIMIT_NAMES.filter((n) => p.spec?.limits?.[n] !== undefined && inForce && inForce[n] !== p.spec.limits![n]);
  if (differ.length) findings.push({ severity: 'warning', message: `limits differ from spec.limits at the last look: ${differ.map((n) => `${n} ${inForce![n]} (spec ${p.spec.limits![n]})`).join(', ')}; the operator sets them at its next look` });
}

// ---------------------------------------------------------------------------------------------
// Text

const MARK: Record<Severity, { text: string; color: Color | undefined }> = {
  ok: { text: '✓', color: 'green' },
  info: { text: '·', color: undefined },
  warning: { text: '!', color: 'yellow' },
  error: { text: '✗', color: 'red' },
};

function indent(text: string, by = '  '): string {
  return text.split('\n').map((l) => (l ? by + l : l)).join('\n');
}

function deploymentSummary(s: DeploymentState): string {
  const want = s.replicas ?? 1;
  const progressing = s.conditions.find((c) => c.type === 'Progressing');
  return [
    `${s.availableReplicas}/${want} available, ${s.updatedReplicas}/${want} updated, ${s.readyReplicas}/${want} ready`,
    `observedGeneration ${s.observedGeneration ?? '-'}/${s.generation ?? '-'}`,
    ...(progressing ? [`Progressing=${progressing.status} (${progressing.reason})`] : []),
    ...(s.images.length ? [`image ${s.images.join(', ')}`] : []),
  ].join('; ');
}

function serviceSummary(s: ServiceState): string {
  const ports = s.ports.map((p) => `${p.port}→${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}`).join(', ');
  return `${s.type ?? 'ClusterIP'} ${s.clusterIP ?? '-'}, ports ${ports || '-'}`;
}

export function renderExplanationText(e: Explanation, options: { style?: Style; now: Date }): string {
  const style = options.style ?? plainStyle;
  const { now } = options;
  const o = e.object;
  const out: string[] = [];
  out.push(`${style.paint(`${o.kind} ${o.namespace}/${o.name}`, 'bold')}  uid ${o.uid}, generation ${o.generation}, age ${formatAge(o.createdAt, now)}`);
  out.push(`${e.converged ? style.paint('Converged', 'green') : style.paint('Not converged', 'red')}: ${e.verdict.replace(/^(not )?converged: /, '')}`);

  out.push('', style.paint('Why', 'bold'));
  for (const f of e.findings) out.push(`  ${style.paint(MARK[f.severity].text, MARK[f.severity].color)} ${f.message}`);

  if (e.microservice) {
    const m = e.microservice;
    out.push('', style.paint('Spec and status', 'bold'));
    out.push(`  image ${m.spec.container.image}, port ${m.spec.container.port}`);
    out.push(
      `  phase ${m.phase ?? '-'}, observedGeneration ${o.observedGeneration ?? '-'}/${o.generation}` +
        (m.reason ? `, reason ${m.reason}` : '') +
        (m.message && m.phase === 'Failed' ? `: ${m.message}` : ''),
    );
    const r = m.rollout.reported;
    out.push(`  rollout (reported): ${r ? `${r.availableReplicas}/${r.replicas} available, ${r.updatedReplicas}/${r.replicas} updated, ${r.readyEndpoints} ready endpoints` : '-'}`);
    if (m.rollout.assessed) out.push(`  rollout (live now): ${m.rollout.assessed.state}: ${m.rollout.assessed.message}`);
  }
  if (e.provider) {
    const p = e.provider;
    out.push('', style.paint('Spec and status', 'bold'));
    out.push(`  endpoint ${p.spec.endpoint}, region ${p.spec.region}${p.spec.displayName ? `, displayName ${JSON.stringify(p.spec.displayName)}` : ''}`);
    out.push(`  providerID ${p.providerID ?? '-'}, observedGeneration ${o.observedGeneration ?? '-'}/${o.generation}`);
    out.push(`  instance lives at ${p.instanceEndpoint ?? '- (no create sent)'}${p.createRequestedAt ? `, last create requested ${p.createRequestedAt}` : ''}`);
    out.push(`  finalizer ${p.finalizer.name}: ${p.finalizer.present ? 'present' : 'absent'}${p.deleting ? ' (deleting)' : ''}`);
    const c = p.credentials;
    const secretText = c.secretExists === null ? `unknown (${c.error ?? 'not checked'})` : c.secretExists ? (c.keyPresent ? `present, key "${c.key}" present` : `present, key "${c.key}" MISSING`) : 'MISSING';
    out.push(`  credentials Secret ${c.secret}: ${secretText}`);
    const lim = (l: Partial<Record<LimitName, number>> | null) => (l ? LIMIT_NAMES.filter((n) => l[n] !== undefined).map((n) => `${n} ${l[n]}`).join(', ') || 'none set' : '-');
    out.push(`  limits: spec ${lim(p.limits.desired)}; in force ${lim(p.limits.inForce)}`);
    const u = p.usage;
    out.push(u ? `  usage: ${u.callsToday} of ${u.dailyQuota} calls today, ${u.quotaRemaining} left (resets ${u.quotaResetAt}); ${u.throttledRequests} throttled in the last ${u.throttleWindowSeconds} s; observed ${u.observedAt}` : '  usage: - (not observed yet)');
    out.push(`  usable: ${p.usable ? 'yes' : 'no'}${p.limitedBy ? `, limited by ${p.limitedBy}` : ''}`);
    if (p.recommendation) out.push(`  recommendation: ${p.recommendation}`);
  }

  out.push('', style.paint('Conditions', 'bold'));
  if (e.conditions.length === 0) out.push('  none');
  else {
    const rows = e.conditions.map((c) => [
      c.type,
      cell(c.status, c.type === 'Ready' ? conditionColor(c.status) : c.type === 'Stalled' ? conditionColor(c.status, false) : undefined),
      c.reason,
      cell(c.current ? `${c.observedGeneration}/${o.generation}` : `${c.observedGeneration ?? '-'}/${o.generation} (stale)`, c.current ? undefined : 'yellow'),
      formatAge(c.lastTransitionTime, now),
      c.message,
    ]);
    out.push(indent(renderTable(['type', 'status', 'reason', 'generation', 'since', { header: 'message', maxWidth: 120 }], rows, style)));
  }

  if (e.microservice) {
    const m = e.microservice;
    out.push('', style.paint('Owned objects', 'bold'));
    const rows = m.children.map((c) => [
      c.kind,
      c.name,
      cell(OWNERSHIP_TEXT[c.ownership] + (c.controller && c.ownership !== 'controlled' ? ` ${c.controller.kind}/${c.controller.name}` : ''), c.ownership === 'controlled' ? 'green' : c.ownership === 'handover' ? 'yellow' : 'red'),
      c.state ? ('currentReplicas' in c.state ? deploymentSummary(c.state) : serviceSummary(c.state)) : '-',
    ]);
    out.push(indent(renderTable(['kind', 'name', 'ownership', 'state'], rows, style)));
    out.push(`  EndpointSlices: ${m.endpoints.slices} (${m.endpoints.ready} ready endpoint${m.endpoints.ready === 1 ? '' : 's'}, ${m.endpoints.notReady} not ready)`);

    out.push('', `${style.paint('Desired vs actual', 'bold')} (${m.desired.source})`);
    if (m.desired.error) out.push(`  cannot render the desired state: ${m.desired.error}`);
    for (const c of m.children) {
      if (!c.exists) {
        out.push(`  ${c.kind} ${c.name}: missing${m.desired.error ? '' : ' (would be created)'}`);
      } else if (m.desired.error) {
        continue;
      } else if (c.differenceText.length === 0) {
        out.push(`  ${c.kind} ${c.name}: ${style.paint('contains the desired state', 'green')}`);
      } else {
        const note = c.ownership === 'controlled' ? '' : ' (not written: not controlled by this Microservice)';
        out.push(`  ${c.kind} ${c.name}: ${style.paint(`${c.differenceText.length} difference${c.differenceText.length === 1 ? '' : 's'}`, 'yellow')}${note}`);
        for (const d of c.differenceText) out.push(`    ${d}`);
      }
    }
  }

  out.push('', style.paint('Events', 'bold') + (e.events.length ? ' (oldest first)' : ''));
  if (e.events.length === 0) out.push('  none');
  else {
    const rows = e.events.map((ev) => [
      formatAge(ev.lastTime, now),
      cell(ev.type, ev.type === 'Warning' ? 'yellow' : undefined),
      ev.reason,
      ev.object,
      ev.count > 1 ? `${ev.note} (x${ev.count})` : ev.note,
    ]);
    out.push(indent(renderTable(['last seen', 'type', 'reason', 'object', { header: 'message', maxWidth: 120 }], rows, style)));
  }
  return out.join('\n');
}
