/**
 * The `provider` section of the operator configuration:
 *
 * ```yaml
 * provider:
 *   healthIntervalSeconds: 10     # health re-check (the periodic check), jittered ±10 %
 *   maxConcurrentReconciles: 4
 *   maxRetryDelaySeconds: 30      # cap of the per-object backoff after vendor errors, jittered (see below)
 *   recoveryProbeSeconds: 5       # while a vendor endpoint is down, one waiting CR retries this often; 0 = off
 *   observeIntervalSeconds: 3     # each vendor account (endpoint + token) is read this often, whole (ADR 0028)
 *   usageRefreshSeconds: 30       # usage figures alone are written at most this often per provider
 *   lateCreateWindowSeconds: 900  # a deleted provider's idempotency key is looked up this long after its last create (late-creates.ts)
 *   rejectedRetrySeconds: 600     # input the vendor refused (VendorRejected) is sent again this often while the spec is unchanged
 *   recommendation:
 *     quotaPercent: 80            # ScaleRecommended once today's calls reach this share of the quota
 *     sustainedThrottlingSeconds: 300   # …or once RateLimited has held this long
 *   vendor:
 *     requestsPerSecond: 5        # per vendor endpoint, shared by every CR that uses it
 *     burst: 10
 *     maxConcurrency: 4           # requests in flight per endpoint
 *     timeoutSeconds: 10
 *     caFile: /etc/converge/vendor-ca.pem   # trusted in addition to the system CAs
 *     allowedEndpoints: []        # base URLs a provider may name (and its token be sent to); empty: any
 * ```
 *
 * Why a 30 s cap when controllers default to 1000 s: nothing in the cluster changes when a vendor
 * recovers, so no watch event cuts a long backoff short; a deletion blocked by a vendor outage
 * would otherwise wait minutes after the vendor is back. The shared per-endpoint limiter, not the
 * backoff, is what protects the vendor from retry storms. Each delay is jittered down by up to
 * half (15–30 s at the cap), so CRs that failed together do not retry together. And the backoff
 * is not what ends the wait after an outage: once an endpoint is down (3 calls in a row without
 * an answer), one waiting CR is retried every `recoveryProbeSeconds` as a probe, and the first
 * answer from the endpoint wakes every CR waiting on it (`vendor-recovery.ts`).
 * @module
 */
import type { Static } from '@sinclair/typebox';
import { inSection, checkedProblems } from '../config-problems.ts';
import type { ProviderConfigSchema } from './provider-config-schema.ts';
import { allowedEndpointProblems } from './allowed-endpoints.ts';


export interface ProviderConfig {
  healthIntervalMs: number;
  maxConcurrentReconciles: number;
  maxRetryDelayMs: number;
  recoveryProbeMs: number;
  observeIntervalMs: number;
  usageRefreshMs: number;
  lateCreateWindowMs: number;
  rejectedRetryMs: number;
  recommendation: { quotaPercent: number; sustainedThrottlingMs: number };
  vendor: { requestsPerSecond: number; burst: number; maxConcurrency: number; timeoutMs: number; caFile?: string; allowedEndpoints: string[] };
}

export const defaultProviderConfig: ProviderConfig = {
  healthIntervalMs: 10_000,
  maxConcurrentReconciles: 4,
  maxRetryDelayMs: 30_000,
  recoveryProbeMs: 5_000,
  observeIntervalMs: 3_000,
  usageRefreshMs: 30_000,
  lateCreateWindowMs: 900_000,
  rejectedRetryMs: 600_000,
  recommendation: { quotaPercent: 80, sustainedThrottlingMs: 300_000 },
  vendor: { requestsPerSecond: 5, burst: 10, maxConcurrency: 4, timeoutMs: 10_000, allowedEndpoints: [] },
};

/** Every problem of a `provider` section, as `path: what` lines with paths inside the section (`vendor.timeoutSeconds: …`). */
export function providerConfigProblems(raw: unknown): string[] {
  const problems = checkedProblems('providerConfig', raw ?? {});
  if (problems.length) return problems;
  const allowed = (raw as Static<typeof ProviderConfigSchema> | undefined)?.vendor?.allowedEndpoints ?? [];
  return allowedEndpointProblems(allowed).map((p) => `vendor.${p}`);
}

export function parseProviderConfig(raw: unknown, source = 'provider'): ProviderConfig {
  const errors = providerConfigProblems(raw).map((p) => inSection(source, p));
  if (errors.length) throw new Error(`invalid configuration: ${errors.join('; ')}`);
  const c = raw as Static<typeof ProviderConfigSchema>;
  const d = defaultProviderConfig;
  return {
    healthIntervalMs: (c.healthIntervalSeconds ?? d.healthIntervalMs / 1000) * 1000,
    maxConcurrentReconciles: c.maxConcurrentReconciles ?? d.maxConcurrentReconciles,
    maxRetryDelayMs: (c.maxRetryDelaySeconds ?? d.maxRetryDelayMs / 1000) * 1000,
    recoveryProbeMs: (c.recoveryProbeSeconds ?? d.recoveryProbeMs / 1000) * 1000,
    observeIntervalMs: (c.observeIntervalSeconds ?? d.observeIntervalMs / 1000) * 1000,
    usageRefreshMs: (c.usageRefreshSeconds ?? d.usageRefreshMs / 1000) * 1000,
    lateCreateWindowMs: (c.lateCreateWindowSeconds ?? d.lateCreateWindowMs / 1000) * 1000,
    rejectedRetryMs: (c.rejectedRetrySeconds ?? d.rejectedRetryMs / 1000) * 1000,
    recommendation: {
      quotaPercent: c.recommendation?.quotaPercent ?? d.recommendation.quotaPercent,
      sustainedThrottlingMs: (c.recommendation?.sustainedThrottlingSeconds ?? d.recommendation.sustainedThrottlingMs / 1000) * 1000,
    },
    vendor: {
      requestsPerSecond: c.vendor?.requestsPerSecond ?? d.vendor.requestsPerSecond,
      burst: c.vendor?.burst ?? d.vendor.burst,
      maxConcurrency: c.vendor?.maxConcurrency ?? d.vendor.maxConcurrency,
      timeoutMs: (c.vendor?.timeoutSeconds ?? d.vendor.timeoutMs / 1000) * 1000,
      ...(c.vendor?.caFile ? { caFile: c.vendor.caFile } : {}),
      allowedEndpoints: [...(c.vendor?.allowedEndpoints ?? d.vendor.allowedEndpoints)],
    },
  };
}
