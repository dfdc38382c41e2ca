/**
 * The Microservice reconciler: one Microservice in, a converged Deployment and Service and a
 * truthful status out. Level-triggered: it reads the cache, closes the gap, and running it again
 * on a converged object makes no API call at all.
 *
 * Order of work (each step only when needed):
 * 1. Skip objects that are gone or being deleted (garbage collection removes the children), and
 *    for a while those the API server answered for as gone (`gone-owners.ts`).
 * 2. Validate the spec: problems → `Failed`/`InvalidSpec`, a Warning Event, no retry.
 * 3. A new generation → the `Accepted …` log line. The status says `Accepted` only when applying
 *    this generation fails for a reason that is retried (a transient error, but not a Conflict:
 *    that is a cache behind, retried at once, and writes no status): when the children are
 *    written in the same reconcile, its first status write is `ResourcesApplied` (one write
 *    instead of two; issue 17).
 * 4. Ownership, for both children *before* touching either: a child controlled by someone else
 *    → `Failed`/`OwnershipConflict` (but a child of an older CR of the same name is only waited
 *    for: garbage collection is removing it); an unowned child is adopted only when it carries
 *    the handover annotation naming this CR, and only with every other write this reconcile
 *    needs, once a server-side dry run of each was accepted (nothing half-adopted).
 * 5. Each child whose live state does not already contain the desired state is written, both
 *    children concurrently (`child-writes.ts`): created when missing (for a Microservice applied
 *    before, after one live read confirming the owner still exists; for a new one, the status
 *    write that follows confirms it, and deletes what was created if the owner is gone:
 *    `#mustConfirmOwner`), else updated in place with the resourceVersion that was read (ADR
 *    0003). A write the API server refuses as invalid (422: an immutable field, a value it
 *    rejects) is a permanent failure, `Failed`/`ApplyRejected` naming the fields and what to do
 *    (`apply-rejection.ts`), and is not sent again until the Microservice or that child changes
 *    (`child-writes.ts`). One refused or failed in
 *    a way retrying may outlive (a quota, a permission, a webhook) is retried with backoff and told
 *    as `ApplyFailed` (`apply-failure.ts`).
 * 6. Status: `ResourcesApplied` plus Ready/Progressing/Reconciling/Stalled for this generation
 *    (`conditions.ts`; what kstatus reads), written only when it differs, and only to the same
 *    UID and resourceVersion that was read, with other writers' condition types kept
 *    (`status-writer.ts`).
 *    Progress-only changes (the `status.rollout` counts and condition messages, with the same
 *    phase, generation, condition statuses and reasons) are written at most once per
 *    `statusProgressIntervalMs` (default 15 s) per Microservice: the reconcile asks to be run
 *    again when that interval has passed, and then writes the latest counts. Any other change
 *    (a condition turning, a new generation, a failure) is written at once.
 * @module
 */
import type { Logger } from 'pino';
import {
  DeploymentKind,
  ServiceKind,
  PermanentError,
  TemporaryError,
  isNotFound,
  isConflict,
  isFieldManagerConflict,
  ownershipOf,
  controllerOf,
  refersToKind,
} from '@converge/runtime';
import type {
  Clock,
  Deployment,
  EndpointSlice,
  KubeClient,
  EventSink,
  Request,
  Result,
  Service,
  Store,
} from '@converge/runtime';
import {
  MicroserviceKind,
  MicroservicePhase,
  MicroserviceReason as Reason,
  HANDOVER_ANNOTATION,
  checkMicroserviceSpec,
  isValidMicroserviceName,
} from './api/schema-free.ts';
import type { Microservice } from './api/schema-free.ts';
import { renderDesiredState, InvalidSpecError } from './desired-state.ts';
import type { DesiredState } from './desired-state.ts';
import type { PlatformDefaults } from './platform-defaults.ts';
import { assessRollout, countEndpoints } from './rollout.ts';
import { acceptedConditions, applyFailedConditions, failedConditions, rolloutConditions } from './conditions.ts';
import { applyFailureMessage, tellsApplyFailure } from './apply-failure.ts';
import { GoneOwners } from './gone-owners.ts';
import { MicroserviceStatusWriter, OwnerGone } from './status-writer.ts';
import { ChildWrites } from './child-writes.ts';
import type { Child, ChildWrite } from './child-writes.ts';
import { isProgressOnly } from './progress-only.ts';
import type { OwnStatus } from './progress-only.ts';

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
  /** How often a refused write that may be lifted by the cluster is sent again unchanged (default 600 000 ms; checked on the periodic resync). */
  refusalRetryMs?: number;
  /**
   * Test-only fault hook: called (and awaited) at named points; may throw, kill the process, or
   * hold the reconcile there while a test changes the world (an in-process test provoking a race).
   */
  faultPoint?: (name: string) => void | Promise<void>;
}


export class MicroserviceReconciler {
  readonly #d: MicroserviceReconcilerDeps;
  /** The children's writes, and the refused ones held back (`child-writes.ts`). */
  readonly #writes: ChildWrites;
  /** Microservices the API server answered for as gone while the cache still shows them. */
  readonly #gone: GoneOwners;
  readonly #status: MicroserviceStatusWriter;
  /** Failures whose `ApplyFailed` status this process has written: not overwritten by the plain `Accepted`. */
  readonly #explained = new WeakSet<object>();

  constructor(deps: MicroserviceReconcilerDeps) {
    this.#d = deps;
    this.#status = new MicroserviceStatusWriter(deps);
    this.#gone = new GoneOwners(deps.clock);
    this.#writes = new ChildWrites(deps);
  }

  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    try {
      return await this.#reconcile(request, signal);
    } catch (err) {
      if (!(err instanceof OwnerGone)) throw err;
      // The cache still shows an object the API server says it no longer has; its delete event is
      // on the way. Retrying now would act on the stale copy again (e.g. re-create collected
      // children); a live read looks again later, should the object be there after all.
      const requeueAfterMs = this.#gone.mark(request.key, err.uid, this.#d.microservices.get(request.key));
      request.log.debug({ err: err.message }, 'Microservice is gone; waiting for the cache to catch up');
      return { requeueAfterMs };
    }
  }

  async #reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    const log = request.log;
    let ms = this.#d.microservices.get(request.key);
    if (!ms || ms.metadata.deletionTimestamp) {
      this.#writes.forget(request.key);
      this.#status.forget(request.key);
      this.#gone.forget(request.key);
      log.debug(ms ? 'Microservice is being deleted; garbage collection removes its children: nothing to do' : 'Microservice not in the cache (deleted): nothing to do');
      return {};
    }
    const gone = this.#gone.judge(request.key, ms);
    if (gone && 'waitMs' in gone) {
      log.debug('Microservice is gone from the API server; waiting for the cache to see its deletion');
      return { requeueAfterMs: gone.waitMs };
    }
    if (gone) {
      await this.#confirmLive(ms, signal); // still gone: OwnerGone, marked again
      log.info({ waitedMs: Math.round(gone.waitedMs) }, 'Microservice answered for as gone is there after all; reconciling it');
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
      // Not for a Conflict: the cache was behind, the write is retried at once with the newer
      // version, and `Accepted` would only make the phase flicker (and cost a status write).
      if (newGeneration && !(err instanceof PermanentError) && !(err instanceof OwnerGone) && !isCacheBehind(err) && !signal.aborted && !this.#explained.has(err as object)) {
        await this.#status.write(ms, { phase: MicroservicePhase.Accepted, observedGeneration: generation }, acceptedConditions(), log, signal).catch(() => undefined);
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
        if (ref && refersToKind(ref, MicroserviceKind) && ref.name === request.name && ref.uid !== ms.metadata.uid) {
          throw new TemporaryError('WaitingForGarbageCollection', `${what} belongs to a deleted Microservice of the same name; waiting for it to be collected`, { retryAfterMs: 1000 });
        }
        return this.#fail(ms, Reason.OwnershipConflict, `${what} exists and is controlled by ${ref?.kind ?? 'another object'} ${ref?.name ?? ''}; it will not be modified`, log, signal);
      }
      if (child.current.metadata.annotations?.[HANDOVER_ANNOTATION] !== request.name) {
        return this.#fail(ms, Reason.OwnershipConflict, `${what} exists and has no controller; annotate it with ${HANDOVER_ANNOTATION}=${request.name} to hand it over`, log, signal);
      }
      adopt.push(child);
    }

    // Decide every write before sending any: the children are written concurrently.
    const { writes, refusals } = this.#writes.plan(ms, request.key, children, adopt, log);

    // An adoption changes an object that was someone else's: it is sent only with every other write
    // this reconcile needs, and only once a server-side dry run of each was accepted, so that a
    // refusal leaves both children as they were (nothing half-applied).
    if (writes.some((w) => w.adopting)) {
      if (refusals.length === 0) refusals.push(...(await this.#writes.dryRun(writes, request.key, request.name, signal)));
      if (refusals.length > 0) return this.#fail(ms, Reason.ApplyRejected, refusals.join('; '), log, signal);
    }

    // A missing child is created only for an owner the API server still has (see #mustConfirmOwner).
    const creating = writes.some((w) => !w.before);
    if (creating && this.#mustConfirmOwner(ms, request.key)) await this.#confirmLive(ms, signal);

    const sent = await this.#writes.send(writes, request.key, request.name, signal, log);
    refusals.push(...sent.refusals);
    // One Event for what this reconcile wrote (not one per child): Events are API writes too. Also
    // when the other child's write failed: what was written is not written again, nor told again.
    if (sent.applied.length > 0) {
      const reason = [Reason.Adopted, Reason.Created, Reason.Updated].find((r) => sent.actions.has(r)) ?? Reason.Updated;
      this.#d.events.normal(ms, reason, 'Apply', sent.applied.join('; '));
    }
    // A transient failure is retried (with the refusals kept: they are not sent again); otherwise
    // a refusal waits for a change.
    if (sent.failure !== undefined) {
      await this.#applyFailed(ms, sent.failure.err, sent.failure.write, request.name, log, signal);
      throw sent.failure.err;
    }
    if (refusals.length > 0) return this.#fail(ms, Reason.ApplyRejected, refusals.join('; '), log, signal);

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
      const since = this.#d.clock.monotonic() - (this.#status.lastWrittenAt(request.key) ?? -Infinity);
      const interval = this.#d.statusProgressIntervalMs ?? 15_000;
      if (since < interval) return { requeueAfterMs: Math.ceil(interval - since) };
    }
    // A status write that finds the owner gone (the cache had not seen its deletion) throws
    // OwnerGone. The children this reconcile created then carry a controller reference to a UID
    // that no longer exists, and garbage collection removes them: the operator may not delete
    // children (its RBAC grants create and update only, ADR 0003), so it does not try.
    await this.#status.write(ms, status, conditions, log, signal);
    return {};
  }

  /**
   * Whether a missing child may be created only after a live read of the owner. The cache can
   * show a Microservice whose deletion it has not seen yet while garbage collection (seen sooner
   * on the child's watch) has already removed the children; re-creating them then would loop
   * (issue found by the kill storm). That needs children that existed, so the read is made when
   * this Microservice was ever applied: its status names the managed resources, or this process
   * wrote its status. A Microservice never applied (a cold start, a new object) skips the read:
   * the status write that follows is conditional on its UID and resourceVersion, and if it finds
   * the owner gone, garbage collection removes the children just created, and the owner is
   * not reconciled again (#gone). One request less on the path of every new Microservice.
   */
  #mustConfirmOwner(ms: Microservice, key: string): boolean {
    return ms.status?.managedResources !== undefined || this.#status.lastWrittenAt(key) !== undefined;
  }

  /**
   * Says in the status that a child write failed in a way retrying may outlive (`tellsApplyFailure`):
   * phase `Accepted`, `ApplyFailed` with the object and the API server's words, a Warning Event
   * when that is news. The write is retried with backoff by the caller's throw. A status write
   * that fails is left to the retry, except a finding that the owner is gone.
   */
  async #applyFailed(ms: Microservice, err: unknown, write: ChildWrite, name: string, log: Logger, signal: AbortSignal): Promise<void> {
    if (!tellsApplyFailure(err) || signal.aborted) return;
    const message = applyFailureMessage(err, write.child.kind.kind, name, write.before !== undefined, write.adopting);
    const { managedResources, rollout } = ms.status ?? {};
    const own: OwnStatus = {
      phase: MicroservicePhase.Accepted,
      observedGeneration: ms.metadata.generation ?? 0,
      reason: Reason.ApplyFailed,
      message,
      ...(managedResources ? { managedResources } : {}),
      ...(rollout ? { rollout } : {}),
    };
    try {
      const written = await this.#status.write(ms, own, applyFailedConditions(message), log, signal);
      this.#explained.add(err);
      if (written) this.#d.events.warning(ms, Reason.ApplyFailed, 'Apply', message);
    } catch (statusErr) {
      if (statusErr instanceof OwnerGone) throw statusErr;
    }
  }

  /** Reports a failure that waits for a spec change: status `Failed`, a Warning Event, no retry. */
  async #fail(ms: Microservice, reason: string, message: string, log: Logger, signal: AbortSignal): Promise<never> {
    const generation = ms.metadata.generation ?? 0;
    const status: OwnStatus = { phase: MicroservicePhase.Failed, observedGeneration: generation, reason, message };
    const written = await this.#status.write(ms, status, failedConditions(reason, message), log, signal);
    if (written) {
      log.warn({ reason }, message);
      this.#d.events.warning(ms, reason, 'Reconcile', message);
    }
    throw new PermanentError(reason, message);
  }

  /** Throws `OwnerGone` unless the API server has this very Microservice (same UID), not being deleted. */
  async #confirmLive(ms: Microservice, signal: AbortSignal): Promise<void> {
    const key = { namespace: ms.metadata.namespace ?? '', name: ms.metadata.name ?? '' };
    let live: Microservice;
    try {
      live = await this.#d.client.get(MicroserviceKind, key, { signal });
    } catch (err) {
      if (isNotFound(err)) throw new OwnerGone(`${MicroserviceKind.kind} ${key.namespace}/${key.name} was deleted`, ms.metadata.uid ?? '');
      throw err;
    }
    if (live.metadata.uid !== ms.metadata.uid || live.metadata.deletionTimestamp) {
      throw new OwnerGone(`${MicroserviceKind.kind} ${key.namespace}/${key.name} (uid ${ms.metadata.uid}) is being deleted or was replaced`, ms.metadata.uid ?? '');
    }
  }

}

/** An optimistic-lock conflict (409): the cache was behind; the runtime retries at once. */
function isCacheBehind(err: unknown): boolean {
  return isConflict(err) && !isFieldManagerConflict(err);
}

/** EndpointSlices indexed by `namespace/service-name`. */
export const SERVICE_NAME_INDEX = 'service-name';
export function endpointSliceServiceIndex(slice: EndpointSlice): string[] {
  const service = slice.metadata.labels?.['kubernetes.io/service-name'];
  return service ? [`${slice.metadata.namespace ?? ''}/${service}`] : [];
}
