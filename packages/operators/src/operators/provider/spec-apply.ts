/**
 * The apply step of a DigitalHumanProvider's reconcile: what the spec asks of an existing vendor
 * instance that the instance does not hold yet — `spec.displayName`, the fields `spec.limits`
 * sets — is written *after* the instance was looked up and observed, and the outcome is the
 * `SpecApplied` condition, apart from Ready. Ready, `status.usable` and `limitedBy` describe the
 * instance; a refused change never replaces the observation.
 *
 * What a caller can rely on (`SpecApplier.apply`):
 * - Only what differs is written: the display name when the spec sets one the instance lacks, the
 *   limits `planLimits` names (a Normal `LimitsUpdated`, or a Warning `LimitsDriftRepaired` for a
 *   console edit). Nothing to write: `SpecApplied=True/Applied`, whatever was refused before.
 * - A write the vendor refuses (4xx) is `SpecApplied=False/VendorRejected` with the vendor's words
 *   and the field; the observation stands, as the instance serves as it did.
 * - **The re-send gate** (`RefusalGate`): for the generation a refusal was recorded for, the
 *   writes are held back — sent again when the spec changes (a new generation), or after
 *   `rejectedRetryMs` unchanged, as the vendor may accept them later. Only the writes wait:
 *   looking the instance up, observing it and the account watch go on.
 * - A transient failure (5xx, 429, a timeout) is `SpecApplied=False/ApplyFailed` and comes with
 *   `retry`, a `TemporaryError` (with the vendor's Retry-After) the caller throws once the status
 *   is written: retried with backoff. A suspended account is `ApplyFailed` without `retry`: the
 *   account watch wakes the provider when it is resumed; `pending` says so for Ready's message.
 * - What is not about the spec is thrown for the caller: the token refused, the instance gone
 *   (`NotFound`), anything that is not a vendor failure.
 * @module
 */
import { TemporaryError } from '@converge/runtime';
import type { Clock, EventSink, Request } from '@converge/runtime';
import { ProviderConditionType as Cond, ProviderReason as Reason, SpecAppliedReason } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { SpecAppliedView } from './conditions.ts';
import { planLimits } from './limits-plan.ts';
import type { InstanceObservation } from './usage-status.ts';
import { asVendorFailure } from './vendor-api.ts';
import type { VendorApi, VendorFailure, VendorInstance } from './vendor-api.ts';
import { isVendorError } from './vendor/index.ts';

/**
 * Holds back a write the vendor refused, per key, for the generation the refusal was recorded
 * for: `holds` answers true until `retryMs` (monotonic) has passed since this process first saw
 * the refusal — kept from the first sight after a restart, so a restart does not resend at once —
 * then lets one attempt through (refused again, it waits another interval).
 */
export class RefusalGate {
  readonly #since = new Map<string, number>();
  readonly #clock: Pick<Clock, 'monotonic'>;
  readonly #retryMs: number;

  constructor(clock: Pick<Clock, 'monotonic'>, retryMs: number) {
    this.#clock = clock;
    this.#retryMs = retryMs;
  }

  /** Whether `key`'s write waits now; `refused` says whether its status records a refusal of the current generation. */
  holds(key: string, refused: boolean): boolean {
    if (!refused) {
      this.#since.delete(key);
      return false;
    }
    const now = this.#clock.monotonic();
    const since = this.#since.get(key);
    if (since === undefined) this.#since.set(key, now);
    else if (now - since >= this.#retryMs) {
      this.#since.delete(key);
      return false;
    }
    return true;
  }

  forget(key: string): void {
    this.#since.delete(key);
  }
}

export interface SpecApplyDeps {
  clock: Pick<Clock, 'monotonic'>;
  events: Pick<EventSink, 'normal' | 'warning'>;
  /** An instance written to is not read from the account watch's snapshot until its next round. */
  watches?: { forget(instanceId: string): void };
  /** A refused write is sent again this often while the spec is unchanged. */
  rejectedRetryMs: number;
}

export interface SpecApplyOutcome {
  /** The observation, with the limits the vendor answered when they were written. */
  observation: InstanceObservation;
  applied: SpecAppliedView;
  /** What waits for the vendor to allow it (a suspended account), for Ready's message. */
  pending?: string;
  /** Thrown by the caller after the status is written: a transient failure, retried with backoff. */
  retry?: TemporaryError;
  /** The failure of a write, when one failed. */
  failure?: VendorFailure;
}

/**
 * Whether `dhp`'s status records that the vendor refused a *change* of its current generation
 * (to an instance that exists): SpecApplied says VendorRejected while Ready follows the instance.
 * A refusal that Ready carries too was the create's (`createRefused`): an instance created later
 * gets its spec at once.
 */
export function changeRefused(dhp: DigitalHumanProvider): boolean {
  const c = dhp.status?.conditions?.find((x) => x.type === Cond.SpecApplied);
  const ready = dhp.status?.conditions?.find((x) => x.type === 'Ready');
  return c?.status === 'False' && c.reason === SpecAppliedReason.VendorRejected && c.observedGeneration === dhp.metadata.generation
    && ready?.reason !== Reason.VendorRejected;
}

/**
 * Whether the vendor refused `dhp`'s create (or its lookup) for its current generation: Ready and
 * SpecApplied both say VendorRejected. A refused read of an existing instance (Ready alone) is no
 * create refusal: that instance is observed again at the next reconcile.
 */
export function createRefused(dhp: DigitalHumanProvider): boolean {
  const ready = dhp.status?.conditions?.find((c) => c.type === 'Ready');
  const applied = dhp.status?.conditions?.find((c) => c.type === Cond.SpecApplied);
  return ready?.reason === Reason.VendorRejected && ready.observedGeneration === dhp.metadata.generation
    && applied?.reason === SpecAppliedReason.VendorRejected && applied.observedGeneration === dhp.metadata.generation;
}

export class SpecApplier {
  readonly #d: SpecApplyDeps;
  readonly #gate: RefusalGate;

  constructor(deps: SpecApplyDeps) {
    this.#d = deps;
    this.#gate = new RefusalGate(deps.clock, deps.rejectedRetryMs);
  }

  /** Writes what `instance` (as looked up) and `obs` (as observed) lack of `dhp`'s spec; see the module. */
  async apply(dhp: DigitalHumanProvider, vendor: VendorApi, instance: VendorInstance, obs: InstanceObservation, request: Request, signal: AbortSignal): Promise<SpecApplyOutcome> {
    const generation = dhp.metadata.generation ?? 0;
    const rename = dhp.spec.displayName !== undefined && instance.displayName !== dhp.spec.displayName;
    const plan = planLimits(dhp.spec.limits, obs.limits, dhp.status?.limits, dhp.status?.observedGeneration, generation, obs.instanceId);
    const applied: SpecAppliedView = { status: 'True', reason: SpecAppliedReason.Applied, message: `the vendor holds the spec of generation ${generation}` };
    if (!rename && !plan) {
      this.#gate.forget(request.key);
      request.log.debug({ providerID: instance.id }, 'vendor instance matches the spec; not updated');
      return { observation: obs, applied };
    }
    if (this.#gate.holds(request.key, changeRefused(dhp))) {
      const previous = dhp.status!.conditions!.find((c) => c.type === Cond.SpecApplied)!;
      request.log.debug({ providerID: instance.id }, 'the vendor refused this generation\'s change; not sent again before the spec changes or the retry interval passes');
      return { observation: obs, applied: { status: 'False', reason: SpecAppliedReason.VendorRejected, message: previous.message } };
    }
    let step = 'displayName update';
    try {
      if (rename) {
        request.log.debug({ providerID: instance.id }, 'vendor instance displayName differs; updating');
        this.#d.watches?.forget(instance.id);
        await vendor.updateInstance(instance.id, { displayName: dhp.spec.displayName! }, signal);
        request.log.info({ providerID: instance.id }, 'vendor instance updated');
        this.#d.events.normal(dhp, Reason.Updated, 'UpdateInstance', `displayName of ${instance.id} updated`);
      }
      if (!plan) return { observation: obs, applied };
      step = 'limits';
      this.#d.watches?.forget(obs.instanceId);
      const limits = await vendor.setLimits(obs.instanceId, plan.patch, signal);
      request.log.info({ providerID: obs.instanceId, limits: plan.patch, drift: plan.drift }, plan.drift ? 'vendor limits drifted; set back' : 'vendor limits set');
      if (plan.drift) this.#d.events.warning(dhp, Reason.LimitsDriftRepaired, 'UpdateLimits', plan.message);
      else this.#d.events.normal(dhp, Reason.LimitsUpdated, 'UpdateLimits', plan.message);
      const quotaRemaining = Math.max(0, limits.dailyQuota - obs.usage.callsToday);
      return { observation: { ...obs, limits, usage: { ...obs.usage, dailyQuota: limits.dailyQuota, quotaRemaining } }, applied };
    } catch (err) {
      if (!isVendorError(err)) throw err;
      const failure = asVendorFailure(err);
      if (failure.kind === 'Unauthorized' || failure.kind === 'NotFound') throw err;
      return this.#failed(dhp, obs, failure, step, request);
    }
  }

  /** The provider `key` is gone. */
  forget(key: string): void {
    this.#gate.forget(key);
  }

  #failed(dhp: DigitalHumanProvider, obs: InstanceObservation, failure: VendorFailure, step: string, request: Request): SpecApplyOutcome {
    const generation = dhp.metadata.generation ?? 0;
    if (failure.kind === 'Invalid') {
      const path = failure.field ? (step === 'limits' ? `spec.limits.${failure.field}` : `spec.${failure.field}`) : undefined;
      const message = `the vendor refused the ${step} of generation ${generation}: ${failure.message}${path ? ` (the vendor names ${path})` : ''}; instance ${obs.instanceId} keeps serving as it was. Sent again when the spec changes, and every ${Math.round(this.#d.rejectedRetryMs / 1000)} s while it does not (the vendor may accept it later)`;
      request.log.info({ providerID: obs.instanceId, field: failure.field ?? null }, `the vendor refused the ${step}; held back until the spec changes or the retry interval passes`);
      return { observation: obs, applied: { status: 'False', reason: SpecAppliedReason.VendorRejected, message }, failure };
    }
    if (failure.kind === 'AccountSuspended') {
      // The vendor refuses changes while the account is suspended: the account watch wakes the
      // provider once it is resumed, and the observation says it is suspended.
      const pending = `spec.${step === 'limits' ? 'limits are' : 'displayName is'} applied once the account is resumed`;
      const observation = obs.account.state === 'suspended' ? obs : { ...obs, account: { ...obs.account, state: 'suspended' as const, reason: 'Suspended', message: failure.message } };
      return { observation, applied: { status: 'False', reason: SpecAppliedReason.ApplyFailed, message: `the vendor refused the ${step}: ${failure.message}; ${pending}` }, pending, failure };
    }
    const message = `${step} failed: ${failure.message}; retrying with backoff`;
    const retry = new TemporaryError(SpecAppliedReason.ApplyFailed, failure.message, failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs });
    return { observation: obs, applied: { status: 'False', reason: SpecAppliedReason.ApplyFailed, message }, retry, failure };
  }
}
