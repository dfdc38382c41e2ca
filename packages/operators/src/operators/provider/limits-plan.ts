/**
 * `planLimits`: what to write to the vendor so its limits match `spec.limits`, and what to say
 * about it — on create or after a spec change a Normal `LimitsUpdated`, without a spec change (the
 * status already recorded these limits for this generation, so someone changed them in the vendor
 * console) a Warning `LimitsDriftRepaired` naming what was found. Pure.
 *
 * Guarantees: only fields `spec.limits` sets are ever written, and only those that differ; an
 * absent field is left as the vendor has it; equal limits give no patch.
 * @module
 */
import type { ProviderLimits } from './api/schema-free.ts';
import type { VendorLimits } from './vendor/index.ts';

const FIELDS = ['maxConcurrency', 'requestsPerMinute', 'dailyQuota'] as const;

export interface LimitsPlan {
  patch: Partial<VendorLimits>;
  /** True when the difference is drift (the spec did not change since the limits were converged). */
  drift: boolean;
  /** For the Event. */
  message: string;
}

/**
 * `recorded` is `status.limits` and `recordedGeneration` the status's observedGeneration: what the
 * operator last saw in force, for which spec.
 */
export function planLimits(
  desired: ProviderLimits | undefined,
  observed: VendorLimits,
  recorded: Partial<VendorLimits> | undefined,
  recordedGeneration: number | undefined,
  generation: number,
  instanceId: string,
): LimitsPlan | undefined {
  const differing = FIELDS.filter((f) => desired?.[f] !== undefined && desired[f] !== observed[f]);
  if (differing.length === 0) return undefined;
  const patch = Object.fromEntries(differing.map((f) => [f, desired![f]])) as Partial<VendorLimits>;
  // Drift: this generation's limits were in force once (recorded), and now they are not.
  const drift = recordedGeneration === generation && differing.every((f) => recorded?.[f] === desired![f]);
  const message = drift
    ? `limits of ${instanceId} changed outside the cluster: ${differing.map((f) => `${f} was ${observed[f]} at the vendor, set back to ${desired![f]}`).join('; ')}`
    : `limits of ${instanceId} set to spec.limits: ${differing.map((f) => `${f} ${observed[f]} → ${desired![f]}`).join(', ')}`;
  return { patch, drift, message };
}
