/**
 * The conditions a DigitalHumanProvider's status carries besides `Ready`: what kstatus (Flux,
 * kpt, cli-utils) reads to tell working from stuck. Pure; the reconciler writes all three
 * together, each with `observedGeneration`.
 *
 * - `Reconciling=True` while the operator works towards a Ready instance on its own: the vendor
 *   is unreachable or failing (retried with backoff), reports the instance down, or a deletion
 *   waits for it (kstatus: InProgress); also while a change of the spec waits to be applied
 *   (`SpecApplied=False/ApplyFailed`: retried) even though the instance serves.
 * - `Stalled=True` when progress needs a person (kstatus: Failed): the vendor rejected the token
 *   (`Unauthorized`), the Secret or its key is missing (`CredentialsMissing`), the endpoint was
 *   changed away from where the instance lives (`EndpointChanged`), or the vendor refused the
 *   input for good (`VendorRejected`, or any failure marked permanent).
 * - **A refused change** (`SpecApplied=False/VendorRejected` for this generation) is
 *   `Stalled=True/VendorRejected` whatever Ready says: the instance may serve (Ready True) while
 *   the generation asked for is Failed. This is the one case where Ready True goes with Stalled.
 * - `AccountSuspended` and `QuotaExhausted` are Reconciling: they clear at the vendor (paid,
 *   resumed, the next quota day) and the account watch notices, with no change to the object.
 * - Otherwise both False once Ready is True (kstatus: Current). They are never True together.
 * @module
 */
import { ProviderConditionType as Cond, ProviderReason as Reason, SpecAppliedReason } from './api/schema-free.ts';

export type ProviderReadyStatus = 'True' | 'False' | 'Unknown';
/** type, status, reason, message (observedGeneration is added by the writer). */
export type ProviderConditionEntry = [type: string, status: ProviderReadyStatus, reason: string, message: string];

/** `SpecApplied` as found for the generation being written (`spec-apply.ts`). */
export interface SpecAppliedView {
  status: 'True' | 'False';
  reason: SpecAppliedReason;
  message: string;
}

/** Ready reasons that wait for a person whatever happens at the vendor. */
export const STALLED_REASONS: readonly string[] = [Reason.Unauthorized, Reason.CredentialsMissing, Reason.CredentialsNotAllowed, Reason.CredentialsInvalid, Reason.EndpointChanged, Reason.EndpointNotAllowed, Reason.VendorRejected];

/**
 * Ready as given, plus Reconciling and Stalled. `permanent` marks a failure that is not retried
 * until the object changes (e.g. the vendor refused the spec), whatever its reason. `applied`,
 * when given, is `SpecApplied` for the same generation: a refusal makes it Stalled, a change
 * still being applied Reconciling.
 */
export function providerConditions(ready: ProviderReadyStatus, reason: string, message: string, permanent = false, applied?: SpecAppliedView): ProviderConditionEntry[] {
  const entries: ProviderConditionEntry[] = [[Cond.Ready, ready, reason, message]];
  if (applied?.status === 'False' && applied.reason === SpecAppliedReason.VendorRejected) {
    entries.push([Cond.Reconciling, 'False', applied.reason, applied.message], [Cond.Stalled, 'True', applied.reason, applied.message]);
  } else if (ready === 'True' && applied?.status === 'False') {
    entries.push([Cond.Reconciling, 'True', applied.reason, applied.message], [Cond.Stalled, 'False', Reason.NotStalled, '']);
  } else if (ready === 'True') {
    entries.push([Cond.Reconciling, 'False', reason, message], [Cond.Stalled, 'False', Reason.NotStalled, '']);
  } else if (permanent || STALLED_REASONS.includes(reason)) {
    entries.push([Cond.Reconciling, 'False', reason, message], [Cond.Stalled, 'True', reason, message]);
  } else {
    entries.push([Cond.Reconciling, 'True', reason, message], [Cond.Stalled, 'False', Reason.NotStalled, '']);
  }
  return entries;
}
