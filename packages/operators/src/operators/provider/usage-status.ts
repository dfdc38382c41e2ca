/**
 * What a DigitalHumanProvider's status says about its vendor instance, computed from one
 * observation (health, account, limits, usage) — the conditions the upstream reads, the one-word
 * `limitedBy`, the recommendation — and when such a status is worth a write (ADR 0028). Pure.
 *
 * Guarantees:
 * - `Ready` is True exactly when the instance is healthy or degraded, the account is active and
 *   quota is left. When several things hold it False its reason is the first of
 *   `AccountSuspended`, `ProviderUnhealthy`, `QuotaExhausted`, and its message names the others.
 *   Throttling never makes a provider unready (`RateLimited` says it).
 * - `ScaleRecommended` is a recommendation, never an action: nothing here changes a limit.
 * - `planStatusWrite` writes at once when the *state* changed (a condition's status or reason,
 *   `limitedBy`, `usable`, `providerID`, `observedGeneration`, the limits in force) and writes
 *   *details* (figures, messages) only when the figures in status are at least `refreshMs` old,
 *   reading that age from `status.usage.observedAt`, so the bound holds across restarts.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { Condition } from '@converge/runtime';
import { ProviderConditionType as QuotaCondition, ProviderReason, QuotaReason } from './api/schema-free.ts';
import type { VendorAccount, VendorLimits, VendorUsage } from './vendor/index.ts';
import type { VendorHealthDetail } from './vendor-api.ts';

/** What the operator saw of one instance, from the account watch or from direct calls. */
export interface InstanceObservation {
  instanceId: string;
  region: string;
  health: VendorHealthDetail;
  account: VendorAccount;
  limits: VendorLimits;
  usage: VendorUsage;
}

export interface RecommendationPolicy {
  /** `ScaleRecommended` once today's calls reach this share of the daily quota (1–100). */
  quotaPercent: number;
  /** …or once `RateLimited` has been True this long. */
  sustainedThrottlingMs: number;
}

export interface ConditionView {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** `status.usage` as written. */
export interface StatusUsage {
  callsToday: number;
  dailyQuota: number;
  quotaRemaining: number;
  throttledRequests: number;
  throttleWindowSeconds: number;
  quotaResetAt: string;
  observedAt: string;
}

export interface UsageStatus {
  ready: ConditionView;
  /** QuotaExhausted, RateLimited, AccountSuspended, ScaleRecommended, in this order. */
  conditions: ConditionView[];
  limitedBy?: string;
  recommendation?: string;
  usage: StatusUsage;
  limits: VendorLimits;
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/**
 * The status for one observation. `previous` is the conditions the status has now (for how long
 * `RateLimited` has held); `nowMs` the wall clock.
 */
export function usageStatus(obs: InstanceObservation, policy: RecommendationPolicy, previous: readonly Condition[] | undefined, nowMs: number): UsageStatus {
  const { instanceId: id, usage, limits, account, health } = obs;
  const suspended = account.state === 'suspended';
  const exhausted = usage.quotaRemaining === 0;
  const throttled = usage.throttledRequests > 0;
  const down = health.status === 'down';
  const words = health.message ? `: ${health.message}` : '';

  const accountWhy = `vendor account ${account.id} is suspended (${account.reason ?? 'no reason given'}${account.message ? `: ${account.message}` : ''}); the vendor takes no new work until it is resumed`;
  const quotaWhy = `0 of ${fmt(usage.dailyQuota)} calls left today; the quota resets at ${usage.quotaResetAt}`;
  const downWhy = `instance ${id} reports down${words}`;
  const holding: [string, string][] = [];
  if (suspended) holding.push([ProviderReason.AccountSuspended, accountWhy]);
  if (down) holding.push([ProviderReason.ProviderUnhealthy, downWhy]);
  if (exhausted) holding.push([ProviderReason.QuotaExhausted, quotaWhy]);
  const ready: ConditionView = holding.length
    ? { type: 'Ready', status: 'False', reason: holding[0]![0], message: holding.map(([, m], i) => (i === 0 ? m : `also ${m}`)).join('; ') }
    : health.status === 'degraded'
      ? { type: 'Ready', status: 'True', reason: ProviderReason.ProviderDegraded, message: `instance ${id} is degraded${words}` }
      : { type: 'Ready', status: 'True', reason: ProviderReason.ProviderReady, message: `instance ${id} is healthy` };

  const quota: ConditionView = exhausted
    ? { type: QuotaCondition.QuotaExhausted, status: 'True', reason: QuotaReason.QuotaExhausted, message: quotaWhy }
    : { type: QuotaCondition.QuotaExhausted, status: 'False', reason: QuotaReason.QuotaAvailable, message: `${fmt(usage.quotaRemaining)} of ${fmt(usage.dailyQuota)} calls left today` };
  const rate: ConditionView = throttled
    ? { type: QuotaCondition.RateLimited, status: 'True', reason: QuotaReason.Throttled, message: `${fmt(usage.throttledRequests)} calls throttled in the last ${usage.throttleWindowSeconds} s (limit ${fmt(limits.requestsPerMinute)} per minute)` }
    : { type: QuotaCondition.RateLimited, status: 'False', reason: QuotaReason.NotThrottled, message: `no calls throttled in the last ${usage.throttleWindowSeconds} s` };
  const acct: ConditionView = suspended
    ? { type: QuotaCondition.AccountSuspended, status: 'True', reason: account.reason === 'NonPayment' ? QuotaReason.NonPayment : QuotaReason.Suspended, message: accountWhy }
    : { type: QuotaCondition.AccountSuspended, status: 'False', reason: QuotaReason.AccountActive, message: `vendor account ${account.id} is active` };

  // Recommendations: what a person could do; the operator does none of it.
  const why: string[] = [];
  const todo: string[] = [];
  const reasons: string[] = [];
  const share = usage.dailyQuota > 0 ? (usage.callsToday / usage.dailyQuota) * 100 : 0;
  if (share >= policy.quotaPercent) {
    reasons.push(QuotaReason.QuotaNearlyUsed);
    why.push(`${Math.floor(share)} % of the daily quota used (${fmt(usage.callsToday)} of ${fmt(usage.dailyQuota)}; threshold ${policy.quotaPercent} %)`);
    todo.push(`raise spec.limits.dailyQuota above ${fmt(limits.dailyQuota)}`);
  }
  const since = previous?.find((c) => c.type === QuotaCondition.RateLimited && c.status === 'True')?.lastTransitionTime;
  const throttledForMs = throttled && since ? nowMs - Date.parse(since) : 0;
  if (throttled && throttledForMs >= policy.sustainedThrottlingMs) {
    reasons.push(QuotaReason.SustainedThrottling);
    why.push(`throttled for ${Math.floor(throttledForMs / 60_000)} min (limit ${fmt(limits.requestsPerMinute)} per minute)`);
    todo.push(`raise spec.limits.requestsPerMinute above ${fmt(limits.requestsPerMinute)}`);
  }
  const recommendation = reasons.length
    ? `${why.join('; ')}: ${todo.join(' and ')}, or move work to another provider in ${obs.region}. The operator does not change limits or create instances by itself.`
    : undefined;
  const scale: ConditionView = reasons.length
    ? { type: QuotaCondition.ScaleRecommended, status: 'True', reason: reasons[0]!, message: why.join('; ') }
    : { type: QuotaCondition.ScaleRecommended, status: 'False', reason: QuotaReason.WithinLimits, message: `usage is within the limits (${Math.floor(share)} % of the daily quota)` };

  const limitedBy = ready.status === 'False' ? ready.reason : throttled ? QuotaCondition.RateLimited : undefined;
  return {
    ready,
    conditions: [quota, rate, acct, scale],
    ...(limitedBy ? { limitedBy } : {}),
    ...(recommendation ? { recommendation } : {}),
    usage: {
      callsToday: usage.callsToday,
      dailyQuota: usage.dailyQuota,
      quotaRemaining: usage.quotaRemaining,
      throttledRequests: usage.throttledRequests,
      throttleWindowSeconds: usage.throttleWindowSeconds,
      quotaResetAt: usage.quotaResetAt,
      observedAt: usage.observedAt,
    },
    limits: { ...limits },
  };
}

/** When a time-based condition will flip without anything else changing (sustained throttling). */
export function nextTransitionInMs(status: UsageStatus, policy: RecommendationPolicy, previous: readonly Condition[] | undefined, nowMs: number): number | undefined {
  const of = (type: string) => status.conditions.find((c) => c.type === type);
  if (of(QuotaCondition.RateLimited)?.status !== 'True' || of(QuotaCondition.ScaleRecommended)?.reason === QuotaReason.SustainedThrottling) return undefined;
  const since = previous?.find((c) => c.type === QuotaCondition.RateLimited && c.status === 'True')?.lastTransitionTime;
  const start = since ? Date.parse(since) : nowMs;
  return Math.max(1, start + policy.sustainedThrottlingMs - nowMs);
}

/** The parts of a provider status whose change is written at once. */
export interface StatusLike {
  observedGeneration?: number;
  providerID?: string;
  conditions?: readonly { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }[];
  limitedBy?: string;
  usable?: boolean;
  limits?: unknown;
  usage?: { observedAt?: string };
}

/**
 * What counts as a state change: the conditions' status and reason, and Ready's message — it
 * carries health and the vendor's words, which change behind an unchanged reason (down while
 * the account is suspended, degraded with new words) and holds no figure that moves with usage.
 * The other conditions' messages do (calls left, throttled counts): figures, not state.
 */
export function stateKey(s: StatusLike | undefined): unknown {
  return {
    g: s?.observedGeneration,
    id: s?.providerID,
    c: [...(s?.conditions ?? [])].map((c) => [c.type, c.status, c.reason, c.observedGeneration, c.type === 'Ready' ? (c.message ?? '') : '']).sort(),
    l: s?.limitedBy,
    u: s?.usable,
    lim: s?.limits,
  };
}

export type WritePlan = { write: true } | { write: false; requeueAfterMs?: number };

/**
 * Write now, or not (and when to look again): a state change is written at once; a change of
 * details only once the figures in `current` are `refreshMs` old and the last write of this
 * provider (`sinceLastWriteMs`, when the caller knows it) is `refreshMs` ago; nothing, when
 * nothing differs. The figures are read before they are written (the account watch's round, the
 * queue), so their age alone would let two writes come closer than `refreshMs`; the age is what
 * survives a restart or a change of leader, the time since the last write is exact meanwhile.
 */
export function planStatusWrite(current: StatusLike | undefined, desired: StatusLike, nowMs: number, refreshMs: number, sinceLastWriteMs = Number.POSITIVE_INFINITY): WritePlan {
  // When the figures were read is no change by itself.
  if (isDeepStrictEqual(withoutObservedAt(current ?? {}), withoutObservedAt(desired))) return { write: false };
  if (!isDeepStrictEqual(stateKey(current), stateKey(desired))) return { write: true };
  const at = current?.usage?.observedAt ? Date.parse(current.usage.observedAt) : Number.NaN;
  // A time of reading after now (a wall clock stepped back, a replica whose clock ran ahead) says
  // nothing about the age: this process's own last write decides, or the figures are written.
  const age = Math.min(Number.isFinite(at) && at <= nowMs ? nowMs - at : Number.POSITIVE_INFINITY, sinceLastWriteMs);
  return age >= refreshMs ? { write: true } : { write: false, requeueAfterMs: Math.max(1, Math.ceil(refreshMs - age)) };
}

function withoutObservedAt(s: StatusLike): StatusLike {
  if (!s.usage) return s;
  const { observedAt: _at, ...usage } = s.usage;
  return { ...s, usage };
}
