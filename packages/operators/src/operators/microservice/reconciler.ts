/**
 * The Microservice reconciler: one Microservice in, a converged Deployment and Service and a
 * truthful status out. Level-triggered: it reads the cache, closes the gap, and running it again
 * on a converged object makes no API call at all.
 *
 * Order of work (each step only when needed):
 * 1. Skip objects that are gone or being deleted (garbage collection removes the children).
 * 2. Validate the spec: problems → `Failed`/`InvalidSpec`, a Warning Event, no retry.
 * 3. A new generation → the `Accepted …` log line. The status says `Accepted` only when applying
 *    this generation fails for a reason that is retried (a transient error): when the children
 *    are written in the same reconcile, its first status write is `ResourcesApplied` (one write
 *    instead of two; issue 17).
 * 4. Ownership, for both children *before* touching either: a child controlled by someone else
 *    → `Failed`/`OwnershipConflict` (but a child of an older CR of the same name is only waited
 *    for: garbage collection is removing it); an unowned child is adopted only when it carries
 *    the handover annotation naming this CR.
 * 5. Each child whose live state does not already contain the desired state is written: created
 *    when missing (after confirming the owner still exists: by the Accepted write, or one live
 *    read), else updated in place with the resourceVersion that was read (ADR 0003). A write the
 *    API server refuses as invalid (422: an immutable field, a value it rejects) is a permanent
 *    failure, `Failed`/`ApplyRejected` naming the fields and what to do, and is not sent again
 *    until the Microservice or that child changes.
 * 6. Status: `ResourcesApplied` plus Ready/Progressing/Reconciling/Stalled for this generation
 *    (`conditions.ts`; what kstatus reads), written only
 *    when it differs, and only to the same UID and resourceVersion that was read; the conditions
 *    are set on that version's conditions, so other writers' condition types are kept.
 *    Progress-only changes (the `status.rollout` counts and condition messages, with the same
 *    phase, generation, condition statuses and reasons) are written at most once per
 *    `statusProgressIntervalMs` (default 15 s) per Microservice: the reconcile asks to be run
 *    again when that interval has passed, and then writes the latest counts. Any other change
 *    (a condition turning, a new generation, a failure) is written at once.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import {
  DeploymentKind,
  ServiceKind,
  PermanentError,
  TemporaryError,
  isNotFound,
  isInvalid,
  ApiError,
  ownershipOf,
  controllerOf,
  setCondition,
  patchStatus,
  formatKey,
  keyOf,
  toRfc3339,
} from '@converge/runtime';
import type {
  Clock,
  Condition,
  Deployment,
  EndpointSlice,
  KubeClient,
  EventSink,
  Request,
  Result,
  ResourceKind,
  Service,
  Store,
} from '@converge/runtime';
import {
  MicroserviceKind,
  MicroservicePhase,
  MicroserviceReason as Reason,
  MicroserviceConditionType as Cond,
  HANDOVER_ANNOTATION,
  MICROSERVICE_FIELD_MANAGER,
  checkMicroserviceSpec,
  isValidMicroserviceName,
} from './api/schema-free.ts';
import type { Microservice, MicroserviceStatus } from './api/schema-free.ts';
import { renderDesiredState, InvalidSpecError } from './desired-state.ts';
import type { DesiredState } from './desired-state.ts';
import type { PlatformDefaults } from './platform-defaults.ts';
import { containsDesired, differencesForLog } from './contains.ts';
import { assessRollout, countEndpoints } from './rollout.ts';
import { acceptedConditions, failedConditions, rolloutConditions } from './conditions.ts';
import type { ConditionEntry } from './conditions.ts';
import { deploymentUpdate, serviceUpdate } from './update-body.ts';

export interface MicroserviceReconcilerDeps {
  client: KubeClient;
  microservices: Store<Microservice>;
  deployments: Store<Deployment>;
  services: Store<Service>;
  endpointSlices: Store<EndpointSlice>;
  defaults: PlatformDefaults;
  events: EventSink;
  clock: Clock;
  /** Least time between two progress-only status writes of one Microservice (default 15 000 ms). */
  statusProgressIntervalMs?: number;
  /**
   * Test-only fault hook: called (and awaited) at named points; may throw, kill the process, or
   * hold the reconcile there while a test changes the world (an in-process test provoking a race).
   */
  faultPoint?: (name: string) => void | Promise<void>;
}

type Child = { kind: ResourceKind<Deployment> | ResourceKind<Service>; current: Deployment | Service | undefined; desired: Deployment | Service };
/** The status fields the operator writes; conditions are merged into whatever the object has. */
type OwnStatus = Omit<MicroserviceStatus, 'conditions'>;

export class MicroserviceReconciler {
  readonly #d: MicroserviceReconcilerDeps;
  /**
   * Writes the API server refused as invalid (422), per Microservice key: what was refused (the
   * Microservice generation and the child's UID and resourceVersion) and the explanation. The
   * same write is not sent again until one of them changes (a spec edit, the child edited or
   * deleted); a restart sends it once more. In memory only: it saves refused requests, it decides
   * nothing the status does not already say.
   */
  readonly #refused = new Map<string, { fingerprint: string; message: string }>();
  /** When each Microservice's status was last written by this process (monotonic ms). */
  readonly #statusWrittenAt = new Map<string, number>();
  /**
   * The logger of the reconcile in progress, per key, for the status writer's debug line. Safe:
   * the work queue never runs two reconciles of one key at once.
   */
  readonly #logs = new Map<string, Logger>();

  constructor(deps: MicroserviceReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    this.#logs.set(request.key, request.log);
    try {
      return await this.#reconcile(request, signal);
    } catch (err) {
      if (!(err instanceof OwnerGone)) throw err;
      // The cache still shows an object the API server no longer has; its delete event is on the
      // way. Retrying now would act on the stale copy again (e.g. re-create collected children).
      request.log.debug({ err: err.message }, 'Microservice is gone; waiting for the cache to catch up');
      return {};
    } finally {
      this.#logs.delete(request.key);
    }
  }

  async #reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    const log = request.log;
    let ms = this.#d.microservices.get(request.key);
    if (!ms || ms.metadata.deletionTimestamp) {
      this.#refused.delete(request.key);
      this.#statusWrittenAt.delete(request.key);
      log.debug(ms ? 'Microservice is being deleted; garbage collection removes its children: nothing to do' : 'Microservice not in the cache (deleted): nothing to do');
      return {};
    }
    const generation = ms.metadata.generation ?? 0;

    const problems = [...checkMicroserviceSpec(ms.spec)];
    if (!isValidMicroserviceName(request.name)) problems.push('metadata.name must be a DNS-1035 label of at most 63 characters');
    if (problems.length > 0) return this.#fail(ms, Reason.InvalidSpec, problems.join('; '), log, signal);

    const newGeneration = ms.status?.observedGeneration !== generation;
    if (newGeneration) {
      log.info(`Accepted ${request.key}: image=${ms.spec.container.image} port=${ms.spec.container.port}${ms.spec.replicas !== undefined ? ` replicas=${ms.spec.replicas}` : ""}`);
    }
    try {
      return await this.#apply(request, ms, signal);
    } catch (err) {
      // Applying this generation failed and will be retried: say at least that it was received.
      if (newGeneration && !(err instanceof PermanentError) && !(err instanceof OwnerGone) && !signal.aborted) {
        await this.#writeStatus(ms, { phase: MicroservicePhase.Accepted, observedGeneration: generation }, acceptedConditions(), signal).catch(() => undefined);
      }
      throw err;
    }
  }

  async #apply(request: Request, ms: Microservice, signal: AbortSignal): Promise<Result> {
    const log = request.log;
    const generation = ms.metadata.generation ?? 0;

    let desired: DesiredState;
    try {
      desired = renderDesiredState(ms, this.#d.defaults);
    } catch (err) {
      if (err instanceof InvalidSpecError) return this.#fail(ms, Reason.InvalidSpec, err.message, log, signal);
      throw err;
    }
    const children: Child[] = [
      { kind: DeploymentKind, current: this.#d.deployments.get(request.key), desired: desired.deployment },
      { kind: ServiceKind, current: this.#d.services.get(request.key), desired: desired.service },
    ];

    log.debug(
      {
        generation,
        observedGeneration: ms.status?.observedGeneration ?? null,
        resourceVersion: ms.metadata.resourceVersion,
        deployment: children[0]!.current?.metadata.resourceVersion ?? 'absent',
        service: children[1]!.current?.metadata.resourceVersion ?? 'absent',
      },
      `read ${request.key} and its children from the cache`,
    );

    // Ownership of both children is settled before either is touched.
    const adopt: Child[] = [];
    for (const child of children) {
      if (!child.current) continue;
      const ownership = ownershipOf(child.current, ms, MicroserviceKind);
      if (ownership === 'owned') continue;
      const what = `${child.kind.kind} ${request.key}`;
      if (ownership === 'foreign') {
        const ref = controllerOf(child.current);
        if (ref?.kind === MicroserviceKind.kind && ref.name === request.name && ref.uid !== ms.metadata.uid) {
          throw new TemporaryError('WaitingForGarbageCollection', `${what} belongs to a deleted Microservice of the same name; waiting for it to be collected`, { retryAfterMs: 1000 });
        }
        return this.#fail(ms, Reason.OwnershipConflict, `${what} exists and is controlled by ${ref?.kind ?? 'another object'} ${ref?.name ?? ''}; it will not be modified`, log, signal);
      }
      if (child.current.metadata.annotations?.[HANDOVER_ANNOTATION] !== request.name) {
        return this.#fail(ms, Reason.OwnershipConflict, `${what} exists and has no controller; annotate it with ${HANDOVER_ANNOTATION}=${request.name} to hand it over`, log, signal);
      }
      adopt.push(child);
    }

    // A missing child is created only for an owner the API server still has: the cache can show
    // a Microservice whose deletion it has not seen yet while garbage collection (seen sooner on
    // the child's watch) has already removed the children. One live read, only when a child must
    // be created.
    if (children.some((c) => !c.current)) await this.#confirmLive(ms, signal);

    const applied: string[] = [];
    const actions = new Set<string>();
    for (const child of children) {
      // Converged when the update we would send changes nothing: the same function that builds
      // the write decides whether one is needed, so they can never disagree (e.g. about other
      // writers' ownerReferences or labels, which the update keeps).
      if (child.current && !adopt.includes(child) && containsDesired(child.current, this.#updateBody(child))) {
        log.debug(`${child.kind.kind} matches the desired state; not written`);
        continue;
      }
      // A write the API server refused as invalid is not sent again unchanged (see #refused).
      const fingerprint = `${ms.metadata.uid}/${generation}/${child.kind.kind}/${child.current?.metadata.uid ?? '-'}/${child.current?.metadata.resourceVersion ?? '-'}`;
      const refused = this.#refused.get(request.key);
      if (refused?.fingerprint === fingerprint) {
        log.debug(`${child.kind.kind} not sent again: the API server refused the same write before`);
        return this.#fail(ms, Reason.ApplyRejected, refused.message, log, signal);
      }
      if (!child.current) log.debug(`${child.kind.kind} ${request.name} is missing; creating`);
      else if (adopt.includes(child)) log.debug(`${child.kind.kind} ${request.name} carries ${HANDOVER_ANNOTATION}=${request.name}; adopting`);
      else log.debug(differencesForLog(child.current, this.#updateBody(child)), `${child.kind.kind} differs from the desired state; updating`);
      await this.#d.faultPoint?.(`microservice:before-apply-${child.kind.kind.toLowerCase()}`);
      const existed = child.current !== undefined;
      const before = child.current;
      try {
        child.current = await this.#write(child, signal);
      } catch (err) {
        if (!isInvalid(err)) throw err;
        const message = rejectionMessage(err as ApiError, child.kind.kind, request.name, existed, adopt.includes(child));
        this.#refused.set(request.key, { fingerprint, message });
        return this.#fail(ms, Reason.ApplyRejected, message, log, signal);
      }
      this.#refused.delete(request.key);
      await this.#d.faultPoint?.(`microservice:after-apply-${child.kind.kind.toLowerCase()}`);
      const action = adopt.includes(child) ? Reason.Adopted : existed ? Reason.Updated : Reason.Created;
      log.info({ child: child.kind.kind, action, ...(existed && !adopt.includes(child) ? { differences: differencesForLog(before, this.#updateBody({ ...child, current: before })).differences } : {}) }, `${child.kind.kind} ${action.toLowerCase()}`);
      applied.push(`${child.kind.kind} ${request.name} ${action.toLowerCase()}`);
      actions.add(action);
    }
    // One Event for what this reconcile wrote (not one per child): Events are API writes too.
    if (applied.length > 0) {
      const reason = [Reason.Adopted, Reason.Created, Reason.Updated].find((r) => actions.has(r)) ?? Reason.Updated;
      this.#d.events.normal(ms, reason, 'Apply', applied.join('; '));
    }

    const deployment = children[0]!.current as Deployment;
    const slices = this.#d.endpointSlices.byIndex(SERVICE_NAME_INDEX, `${request.namespace}/${request.name}`);
    const rollout = assessRollout(deployment, generation, countEndpoints(slices).ready);
    const status: OwnStatus = {
      phase: MicroservicePhase.ResourcesApplied,
      observedGeneration: generation,
      managedResources: { deployment: request.name, service: request.name },
      rollout: rollout.summary,
    };
    const conditions = rolloutConditions(rollout);
    const latest = this.#d.microservices.get(request.key);
    if (latest && isProgressOnly(latest.status, status, conditions)) {
      const since = this.#d.clock.monotonic() - (this.#statusWrittenAt.get(request.key) ?? -Infinity);
      const interval = this.#d.statusProgressIntervalMs ?? 15_000;
      if (since < interval) return { requeueAfterMs: Math.ceil(interval - since) };
    }
    await this.#writeStatus(ms, status, conditions, signal);
    return {};
  }

  /**
   * Creates a missing child (POST: fails with AlreadyExists if someone else created it since the
   * cache was read, and the next attempt re-checks ownership) or updates it in place (PUT with
   * the resourceVersion read: a Conflict re-reads and retries). Never delete-and-recreate.
   */
  async #write(child: Child, signal: AbortSignal): Promise<Deployment | Service> {
    const opts = { fieldManager: MICROSERVICE_FIELD_MANAGER, signal };
    if (child.kind === DeploymentKind) {
      return child.current
        ? this.#d.client.replace(DeploymentKind, this.#updateBody(child) as Deployment, opts)
        : this.#d.client.create(DeploymentKind, child.desired as Deployment, opts);
    }
    return child.current
      ? this.#d.client.replace(ServiceKind, this.#updateBody(child) as Service, opts)
      : this.#d.client.create(ServiceKind, child.desired as Service, opts);
  }

  /** The in-place update of an existing child (see `update-body.ts`). */
  #updateBody(child: Child): Deployment | Service {
    return child.kind === DeploymentKind
      ? deploymentUpdate(child.current as Deployment, child.desired as Deployment)
      : serviceUpdate(child.current as Service, child.desired as Service);
  }

  /** Reports a failure that waits for a spec change: status `Failed`, a Warning Event, no retry. */
  async #fail(ms: Microservice, reason: string, message: string, log: Logger, signal: AbortSignal): Promise<never> {
    const generation = ms.metadata.generation ?? 0;
    const status: OwnStatus = { phase: MicroservicePhase.Failed, observedGeneration: generation, reason, message };
    const written = await this.#writeStatus(ms, status, failedConditions(reason, message), signal);
    if (written) {
      log.warn({ reason }, message);
      this.#d.events.warning(ms, reason, 'Reconcile', message);
    }
    throw new PermanentError(reason, message);
  }

  /**
   * Writes status when it differs, to the very version read (UID and resourceVersion), and only
   * if the cache still shows the same generation and no deletion: otherwise a newer event is
   * already queued and this status would describe the past.
   *
   * The conditions are set on the conditions of that very version (the one the patch is
   * conditional on), not on the copy the reconcile started from: a condition type another writer
   * added meanwhile is kept, and a write that would drop one cannot land (its resourceVersion
   * would not match).
   */
  async #writeStatus(ms: Microservice, own: OwnStatus, conditions: ConditionEntry[], signal: AbortSignal): Promise<Microservice | undefined> {
    const latest = this.#d.microservices.get({ namespace: ms.metadata.namespace ?? '', name: ms.metadata.name ?? '' });
    if (!latest || latest.metadata.uid !== ms.metadata.uid || latest.metadata.generation !== ms.metadata.generation || latest.metadata.deletionTimestamp) {
      throw new TemporaryError('Superseded', 'the Microservice changed while it was reconciled; looking again', { retryAfterMs: 0 });
    }
    const status: MicroserviceStatus = { ...own, conditions: this.#conditions(latest, conditions) };
    await this.#d.faultPoint?.('microservice:before-status');
    try {
      const written = await patchStatus(this.#d.client, MicroserviceKind, latest, status, { fieldManager: MICROSERVICE_FIELD_MANAGER, signal });
      if (written) this.#statusWrittenAt.set(`${ms.metadata.namespace ?? ''}/${ms.metadata.name ?? ''}`, this.#d.clock.monotonic());
      this.#logs.get(formatKey(keyOf(latest)))?.debug(
        { phase: own.phase, conditions: Object.fromEntries(conditions.map(([type, s, reason]) => [type, `${s}/${reason}`])) },
        written ? 'status written' : 'status unchanged; not written',
      );
      return written;
    } catch (err) {
      if (isNotFound(err)) throw new OwnerGone(`${MicroserviceKind.kind} ${ms.metadata.namespace}/${ms.metadata.name} was deleted`);
      throw err;
    }
  }

  /** Throws `OwnerGone` unless the API server has this very Microservice (same UID), not being deleted. */
  async #confirmLive(ms: Microservice, signal: AbortSignal): Promise<void> {
    const key = { namespace: ms.metadata.namespace ?? '', name: ms.metadata.name ?? '' };
    let live: Microservice;
    try {
      live = await this.#d.client.get(MicroserviceKind, key, { signal });
    } catch (err) {
      if (isNotFound(err)) throw new OwnerGone(`${MicroserviceKind.kind} ${key.namespace}/${key.name} was deleted`);
      throw err;
    }
    if (live.metadata.uid !== ms.metadata.uid || live.metadata.deletionTimestamp) {
      throw new OwnerGone(`${MicroserviceKind.kind} ${key.namespace}/${key.name} (uid ${ms.metadata.uid}) is being deleted or was replaced`);
    }
  }

  /** `entries` set on `ms`'s conditions (other condition types kept as they are). */
  #conditions(ms: Microservice, entries: ConditionEntry[]): Condition[] {
    const now = toRfc3339(new Date(this.#d.clock.now()));
    let conditions = (ms.status?.conditions ?? []) as Condition[];
    for (const [type, status, reason, message] of entries) {
      conditions = setCondition(conditions, { type, status, reason, message, observedGeneration: ms.metadata.generation ?? 0 }, now);
    }
    return conditions;
  }

}

/**
 * The explanation of a write the API server refused as invalid (422): which object, which fields
 * and why (from the answer's causes), and what the user can do about it.
 */
export function rejectionMessage(err: ApiError, kind: string, name: string, existed: boolean, adopting: boolean): string {
  const causes = err.causes.filter((c) => c.field || c.message);
  const fields = [...new Set(causes.map((c) => c.field).filter((f): f is string => !!f))];
  const details = causes.length
    ? causes.map((c) => `${c.field ? `${c.field}: ` : ''}${shortCause(c.message ?? c.reason ?? '')}`).join('; ')
    : err.message;
  const immutable = causes.some((c) => /immutable/i.test(c.message ?? '')) || /immutable/i.test(err.message);
  const what = `${kind} ${name}`;
  const verb = existed ? (adopting ? 'adopt (update)' : 'update') : 'create';
  const advice = immutable && existed
    ? `The operator cannot change ${fields.length ? fields.join(', ') : 'it'} in place: delete ${what} and the operator creates it anew with the desired state${adopting ? `, or remove the ${HANDOVER_ANNOTATION} annotation from it and give the Microservice another name` : ''}`
    : `The operator tries again when the Microservice or ${what} changes`;
  return `the API server refused to ${verb} ${what}: ${details}. ${advice}`;
}

/** "Invalid value: v1.LabelSelector{…}: field is immutable" → "field is immutable" (values can be long). */
function shortCause(message: string): string {
  const m = /^Invalid value: .*: ([^:]+)$/s.exec(message);
  const text = m ? m[1]!.trim() : message;
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The Microservice read from the cache no longer exists on the API server (or is being deleted). */
class OwnerGone extends Error {}

/** EndpointSlices indexed by `namespace/service-name`. */
export const SERVICE_NAME_INDEX = 'service-name';
export function endpointSliceServiceIndex(slice: EndpointSlice): string[] {
  const service = slice.metadata.labels?.['kubernetes.io/service-name'];
  return service ? [`${slice.metadata.namespace ?? ''}/${service}`] : [];
}

/**
 * Whether going from `prev` to the status (`own` + `conditions`) changes only progress: the same
 * phase, generation, reason, message and managed resources, every condition set with the same
 * status and reason (its message may differ), and something else (the rollout counts, a
 * message) different.
 *
 * One change of reason is progress too: the last step of every rollout, from `RolloutInProgress`
 * to `EndpointsNotReady` (pods available, the Service's endpoints not yet published), while Ready
 * stays False and nothing stalls. It lasts well under a second when all is well, and written at
 * once it made a cold start cost a third status write whenever a reconcile fell into it (issue 17:
 * 15 patches instead of 12 for 6 Microservices in one run of `write-budget.test.ts`). Held up, it
 * is written with the next change or after the progress interval, so a rollout stuck there shows
 * its reason within that interval.
 */
export function isProgressOnly(prev: MicroserviceStatus | undefined, own: OwnStatus, conditions: ConditionEntry[]): boolean {
  if (!prev || prev.phase !== own.phase || prev.observedGeneration !== own.observedGeneration) return false;
  if (prev.reason !== own.reason || prev.message !== own.message) return false;
  if (!isDeepStrictEqual(prev.managedResources, own.managedResources)) return false;
  const byType = new Map((prev.conditions ?? []).map((c) => [c.type, c]));
  const tail = isRolloutTail(byType.get(Cond.Ready), conditions.find(([type]) => type === Cond.Ready));
  return conditions.every(([type, status, reason]) => {
    const c = byType.get(type);
    if (c === undefined || c.observedGeneration !== own.observedGeneration) return false;
    if (tail && (type === Cond.Ready || type === Cond.Progressing || type === Cond.Reconciling)) return true;
    return c.status === status && c.reason === reason;
  });
}

/** Ready False `RolloutInProgress` → Ready False `EndpointsNotReady`: the last step of a rollout. */
function isRolloutTail(prev: { status: string; reason?: string } | undefined, next: ConditionEntry | undefined): boolean {
  return prev?.status === 'False' && prev.reason === Reason.RolloutInProgress && next?.[1] === 'False' && next[2] === Reason.EndpointsNotReady;
}
