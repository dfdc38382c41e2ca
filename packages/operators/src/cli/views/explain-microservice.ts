/**
 * `converge explain` for a Microservice: its status, its two children (ownership, state, the
 * difference from the desired state rendered as the operator would render it), its endpoints and
 * the live rollout, as an `Explanation` (`explanation.ts`). Pure: the facts come from the caller.
 * @module
 */
import type { Condition, Deployment, EndpointSlice, KubeEvent, KubeObject, Pod, Service } from '@converge/runtime';
import { controllerOf } from '@converge/runtime';
// The operator's modules one by one, not its index (which registers the controller and builds
// the CRDs): `converge explain` loads only what it renders (issue 17, goal 5).
import { GENERATION_ANNOTATION, HANDOVER_ANNOTATION, MICROSERVICE_API_VERSION, MICROSERVICE_GROUP, MICROSERVICE_KIND } from '../../operators/microservice/api/constants.ts';
import { assessRollout, countEndpoints as countDistinctEndpoints } from '../../operators/microservice/rollout.ts';
import { describeDifferences, findDifferencesShown } from '../../operators/microservice/contains.ts';
import { renderDesiredState, InvalidSpecError } from '../../operators/microservice/desired-state.ts';
import type { Microservice, PlatformDefaults } from '../../operators/microservice/index.ts';
import { describePodProblems, podProblems } from './pod-problems.ts';
import { conditionsOf, explanation, generationFindings, objectHeader, readyFinding } from './explanation.ts';
import type { ChildExplanation, DeploymentState, DifferenceView, Explanation, Finding, Ownership, ServiceState } from './explanation.ts';

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
  /** Why the pods could not be read (the reader may not list them: 403), when it could not. */
  podsUnreadable?: string;
  /** Why the Events could not be read (the reader may not list them: 403), when it could not. */
  eventsUnreadable?: string;
  /** Kinds the reader cannot read now, and why: what it holds of them is what it last saw. */
  unreadable?: Partial<Record<'Deployment' | 'Service' | 'EndpointSlice', string>>;
  defaults: PlatformDefaults;
  /** Where `defaults` came from, e.g. `built-in platform defaults` or `--config ops.yaml`. */
  defaultsSource: string;
}

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
  if (ref.apiVersion.startsWith(`${MICROSERVICE_GROUP}/`) && ref.kind === MICROSERVICE_KIND && ref.name === ms.metadata.name) return { ownership: 'previous-owner', controller, handoverTo };
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
    // An ApplyRejected message says itself when the write is sent again (a refusal the cluster may lift is, every 10 minutes).
    const until = ms.status.reason === 'ApplyRejected' ? '' : `; not retried until ${ms.status.reason === 'InvalidSpec' ? 'the spec changes' : 'the spec or the object in the way changes'}`;
    findings.push({ severity: 'error', message: `phase Failed (${ms.status.reason || 'no reason'}): ${ms.status.message ?? ''}${until}` });
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
    // `actual` null when absent, `expected` null where the field should be absent (a key added to
    // what the operator owns outright): an undefined would vanish from -o json / -o yaml and the dashboard's detail.
    const differences: DifferenceView[] = current && want ? findDifferencesShown(current, want).map((d) => ({ path: d.path, expected: d.expected === undefined ? null : d.expected, actual: d.actual ?? null })) : [];
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
    const unknown = facts.unreadable?.[kind];
    if (unknown && !current) {
      findings.push({ severity: 'warning', message: `${what}: not known here: ${unknown}; whether it exists cannot be told` });
      continue;
    }
    if (unknown) findings.push({ severity: 'info', message: `${what} as last seen: ${unknown}` });
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
  // EndpointSlices the reader cannot read and holds none of: their count is unknown, not zero.
  const endpointsUnknown = facts.unreadable?.EndpointSlice !== undefined && facts.endpointSlices.length === 0;
  if (facts.unreadable?.EndpointSlice) findings.push({ severity: 'info', message: `${endpointsUnknown ? 'endpoints not known here' : 'endpoints as last seen'}: ${facts.unreadable.EndpointSlice}` });
  if (facts.eventsUnreadable) findings.push({ severity: 'info', message: `Events not read: ${facts.eventsUnreadable}` });
  let assessed = facts.deployment ? assessRollout(facts.deployment, generation, endpoints.ready) : null;
  if (assessed?.state === 'EndpointsNotReady' && endpointsUnknown) assessed = { ...assessed, message: 'pods are available; whether the Service has ready endpoints is not known here' };
  if (assessed && children[0]!.ownership === 'controlled' && assessed.state !== 'Available' && assessed.state !== 'ScaledToZero' && !(assessed.state === 'EndpointsNotReady' && endpointsUnknown)) {
    findings.push({ severity: assessed.state === 'Stalled' ? 'error' : 'warning', message: `live rollout: ${assessed.message}` });
    // The cause, in the pods' words: what the Deployment's counts cannot say.
    const pods = facts.pods && podProblems(facts.pods);
    if (pods) findings.push({ severity: assessed.state === 'Stalled' ? 'error' : 'warning', message: `pods: ${describePodProblems(pods)}` });
    if (facts.podsUnreadable) findings.push({ severity: 'info', message: `pods not read: ${facts.podsUnreadable}; what they say about the rollout is missing here` });
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
      reason: ms.status?.reason || null, // empty: no reason, as the text shows it
      message: ms.status?.message || null,
      managedResources: { deployment: ms.status?.managedResources?.deployment ?? null, service: ms.status?.managedResources?.service ?? null },
      rollout: { reported: rollout ? { ...rollout } : null, assessed },
      endpoints,
      desired: { source: facts.defaultsSource, error: desiredError },
      children,
    },
  };
}
