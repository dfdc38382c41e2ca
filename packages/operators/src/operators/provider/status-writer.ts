/**
 * What a DigitalHumanProvider's status says, and the one place it is written from.
 *
 * Three kinds of write:
 * - a **finding** (`ProviderFinding`): Ready as the reconcile found it — credentials missing, a
 *   vendor failure, a deletion blocked — with Reconciling and Stalled (`conditions.ts`) and any
 *   other condition the finding sets (`AccountSuspended=True` for a refused create);
 * - an **observation** of a live instance (`observedStatus`): health, limits, usage, account
 *   state, `limitedBy`, `usable`, the recommendation, and `SpecApplied` (whether the vendor holds
 *   this generation's spec: `spec-apply.ts`), written within the write bound;
 * - the **intent to create** (`createRequested`): where an instance may appear, recorded before
 *   the create request is sent (ADR 0018).
 *
 * Guarantees:
 * - Every write goes to the very version read: the cached object at the same UID and generation
 *   as the one the reconcile started from (`latest`, else `Superseded`: the reconcile looks again),
 *   through the status subresource as a merge patch of the fields the operator owns; a write that
 *   changes nothing is not sent (`patchStatus`).
 * - `usable` is true exactly when Ready is True; `limitedBy` names Ready's reason while it is
 *   False; every condition carries the generation read (`observedGeneration`).
 * - Ready, `usable` and `limitedBy` of an observation come from the observation alone: a change
 *   the vendor refused (`SpecApplied=False`) leaves them as the instance is, and is said by
 *   `SpecApplied` and by Stalled (`conditions.ts`).
 * - **The write bound** (`planStatusWrite`): a state change is written at once, usage figures
 *   alone at most every `usageRefreshMs` per provider (measured from the figures' `observedAt`,
 *   which survives restarts, and from this process's last write of that provider).
 *
 * `findingStatus` and `observedStatus` are pure: what is written is what they return.
 * @module
 */
import { TemporaryError, setCondition, patchStatus, toRfc3339 } from '@converge/runtime';
import type { Clock, Condition, FaultPoint, KubeClient, Request, Result, Store } from '@converge/runtime';
import { DigitalHumanProviderKind, PROVIDER_FIELD_MANAGER, ProviderConditionType } from './api/schema-free.ts';
import type { DigitalHumanProvider, DigitalHumanProviderStatus } from './api/schema-free.ts';
import { providerConditions } from './conditions.ts';
import type { ProviderConditionEntry, ProviderReadyStatus, SpecAppliedView } from './conditions.ts';
import { nextTransitionInMs, planStatusWrite, usageStatus } from './usage-status.ts';
import type { InstanceObservation, RecommendationPolicy } from './usage-status.ts';

/** What a reconcile found, short of observing a live instance. */
export interface ProviderFinding {
  ready: ProviderReadyStatus;
  reason: string;
  message: string;
  /** The instance the finding is about, when the status does not name it yet. */
  providerID?: string;
  /** A failure that waits for a change of the object (Stalled), whatever its reason. */
  permanent?: boolean;
  /** Other conditions this finding sets. */
  conditions?: ProviderConditionEntry[];
}

/** The status a finding makes of `latest`'s, at `nowMs` (wall clock). Pure. */
export function findingStatus(latest: DigitalHumanProvider, finding: ProviderFinding, nowMs: number): DigitalHumanProviderStatus {
  const generation = latest.metadata.generation ?? 0;
  const id = finding.providerID ?? latest.status?.providerID;
  // Not usable while Ready is not True; what limits it is Ready's reason.
  const { limitedBy: _l, usable: _u, ...rest } = latest.status ?? {};
  const entries = [...providerConditions(finding.ready, finding.reason, finding.message, finding.permanent ?? false), ...(finding.conditions ?? [])];
  return {
    ...rest,
    ...(finding.ready === 'False' ? { limitedBy: finding.reason } : {}),
    usable: finding.ready === 'True',
    observedGeneration: generation,
    ...(id ? { providerID: id } : {}),
    // An instance without a recorded endpoint (written by an earlier version) lives at the spec's.
    ...(id && !latest.status?.instanceEndpoint ? { instanceEndpoint: latest.spec.endpoint } : {}),
    conditions: withConditions(latest.status?.conditions, entries, generation, nowMs),
  };
}

/** What an observation of a live instance makes of `latest`'s status, and when to look again. Pure. */
export interface ObservedStatus {
  status: DigitalHumanProviderStatus;
  /** Ready as written (`pending` included). */
  ready: { status: ProviderReadyStatus; reason: string };
  /** When a condition would change with time alone (a sustained throttling, a quota day), if ever. */
  nextTransitionInMs: number | undefined;
}

/** What an observation's status says besides the observation itself. */
export interface ObservedExtras {
  /** Added to a False Ready's message (what waits for the vendor to allow it). */
  pending?: string;
  /** `SpecApplied` for this generation; without it the condition is left as it is. */
  applied?: SpecAppliedView;
}

/**
 * The status an observation makes: conditions (Ready, the vendor's, `SpecApplied`, Reconciling and
 * Stalled after Ready and SpecApplied), usage (read at `observedAtMs`), limits, `limitedBy`,
 * `usable`, the recommendation.
 */
export function observedStatus(latest: DigitalHumanProvider, obs: InstanceObservation, observedAtMs: number, nowMs: number, policy: RecommendationPolicy, extras: ObservedExtras = {}): ObservedStatus {
  const { pending, applied } = extras;
  const generation = latest.metadata.generation ?? 0;
  const computed = usageStatus(obs, policy, latest.status?.conditions, nowMs);
  const ready = pending && computed.ready.status === 'False' ? { ...computed.ready, message: `${computed.ready.message}; ${pending}` } : computed.ready;
  const kstatus = providerConditions(ready.status, ready.reason, ready.message, false, applied).slice(1);
  const entries: ProviderConditionEntry[] = [
    [ready.type, ready.status, ready.reason, ready.message],
    ...computed.conditions.map((c): ProviderConditionEntry => [c.type, c.status, c.reason, c.message]),
    ...(applied ? [[ProviderConditionType.SpecApplied, applied.status, applied.reason, applied.message] satisfies ProviderConditionEntry] : []),
    ...kstatus,
  ];
  const conditions = withConditions(latest.status?.conditions, entries, generation, nowMs);
  const { limitedBy: _l, recommendation: _r, ...rest } = latest.status ?? {};
  const status: DigitalHumanProviderStatus = {
    ...rest,
    observedGeneration: generation,
    providerID: obs.instanceId,
    ...(!latest.status?.instanceEndpoint ? { instanceEndpoint: latest.spec.endpoint } : {}),
    conditions,
    usage: { ...computed.usage, observedAt: new Date(observedAtMs).toISOString() },
    limits: computed.limits,
    usable: ready.status === 'True',
    ...(computed.limitedBy ? { limitedBy: computed.limitedBy } : {}),
    ...(computed.recommendation ? { recommendation: computed.recommendation } : {}),
  };
  return { status, ready, nextTransitionInMs: nextTransitionInMs(computed, policy, conditions, nowMs) };
}

function withConditions(previous: Condition[] | undefined, entries: readonly ProviderConditionEntry[], generation: number, nowMs: number): Condition[] {
  const now = toRfc3339(new Date(nowMs));
  return entries.reduce<Condition[] | undefined>((conditions, [type, status, reason, message]) => setCondition(conditions, { type, status, reason, message, observedGeneration: generation }, now), previous) ?? [];
}

export interface ProviderStatusWriterDeps {
  client: KubeClient;
  providers: Store<DigitalHumanProvider>;
  clock: Clock;
  faultPoint?: FaultPoint;
  /** Usage figures alone are written at most this often per provider. Default 30 s. */
  usageRefreshMs?: number;
  recommendation?: RecommendationPolicy;
}

export class ProviderStatusWriter {
  readonly #d: ProviderStatusWriterDeps;
  /** When this process last wrote each provider's status from an observation (monotonic ms), for the write bound. */
  readonly #lastWrites = new Map<string, number>();

  constructor(deps: ProviderStatusWriterDeps) {
    this.#d = deps;
  }

  /** The cached version of `dhp`, when it is still the same object at the same generation; else `Superseded`. */
  latest(dhp: DigitalHumanProvider): DigitalHumanProvider {
    const latest = this.#d.providers.get({ namespace: dhp.metadata.namespace ?? '', name: dhp.metadata.name ?? '' });
    if (!latest || latest.metadata.uid !== dhp.metadata.uid || latest.metadata.generation !== dhp.metadata.generation) {
      throw new TemporaryError('Superseded', 'the object changed while it was reconciled; looking again', { retryAfterMs: 0 });
    }
    return latest;
  }

  /** Writes a finding (see `findingStatus`). */
  async finding(dhp: DigitalHumanProvider, finding: ProviderFinding, signal: AbortSignal, log?: Request['log']): Promise<void> {
    const latest = this.latest(dhp);
    const status = findingStatus(latest, finding, this.#d.clock.now());
    this.#d.faultPoint?.('provider:before-status');
    const written = await patchStatus(this.#d.client, DigitalHumanProviderKind, latest, status, { fieldManager: PROVIDER_FIELD_MANAGER, signal });
    log?.debug({ ready: `${finding.ready}/${finding.reason}` }, written ? 'status written' : 'status unchanged; not written');
  }

  /**
   * Writes an observation (see `observedStatus`) within the write bound; the result asks to look
   * again when figures held back are due or a condition changes with time.
   */
  async observed(dhp: DigitalHumanProvider, obs: InstanceObservation, observedAtMs: number, request: Request, signal: AbortSignal, extras: ObservedExtras = {}): Promise<Result> {
    const latest = this.latest(dhp);
    const nowMs = this.#d.clock.now();
    const { status, ready, nextTransitionInMs: transition } = observedStatus(latest, obs, observedAtMs, nowMs, this.#d.recommendation ?? { quotaPercent: 80, sustainedThrottlingMs: 300_000 }, extras);
    const lastWrite = this.#lastWrites.get(request.key);
    const sinceLastWrite = lastWrite === undefined ? Number.POSITIVE_INFINITY : this.#d.clock.monotonic() - lastWrite;
    const plan = planStatusWrite(latest.status, status, nowMs, this.#d.usageRefreshMs ?? 30_000, sinceLastWrite);
    if (plan.write) {
      this.#d.faultPoint?.('provider:before-status');
      await patchStatus(this.#d.client, DigitalHumanProviderKind, latest, status, { fieldManager: PROVIDER_FIELD_MANAGER, signal });
      this.#lastWrites.set(request.key, this.#d.clock.monotonic());
      request.log.debug({ ready: `${ready.status}/${ready.reason}`, limitedBy: status.limitedBy ?? null }, 'status written');
    } else if (plan.requeueAfterMs !== undefined) {
      request.log.debug({ requeueAfterMs: plan.requeueAfterMs }, 'usage figures changed; written within the refresh bound');
    } else {
      request.log.debug({ ready: `${ready.status}/${ready.reason}` }, 'status unchanged; not written');
    }
    const next = [plan.write ? undefined : plan.requeueAfterMs, transition].filter((ms): ms is number => ms !== undefined);
    return next.length ? { requeueAfterMs: Math.min(...next) } : {};
  }

  /**
   * Records, before a create request is sent, where an instance may appear from now on
   * (`status.instanceEndpoint`, `status.createRequestedAt`). The write is conditional on the
   * version read, so a CR deleted or edited meanwhile gets no create (`Superseded`). Returns the
   * time written.
   */
  async createRequested(dhp: DigitalHumanProvider, signal: AbortSignal): Promise<string> {
    const latest = this.latest(dhp);
    // Milliseconds: the settle wait of a deletion is measured from it.
    const requestedAt = new Date(this.#d.clock.now()).toISOString();
    const status: DigitalHumanProviderStatus = { ...latest.status, instanceEndpoint: dhp.spec.endpoint, createRequestedAt: requestedAt };
    const written = await patchStatus(this.#d.client, DigitalHumanProviderKind, latest, status, { fieldManager: PROVIDER_FIELD_MANAGER, signal });
    if (written?.metadata.deletionTimestamp) throw new TemporaryError('Superseded', 'the object is being deleted; no create', { retryAfterMs: 0 });
    return requestedAt;
  }

  /** The provider `key` is gone: its write bound is forgotten. */
  forget(key: string): void {
    this.#lastWrites.delete(key);
  }
}
