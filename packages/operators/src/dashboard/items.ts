/**
 * Cached objects → the rows the dashboard serves: `converge status`'s rows (the same pure
 * `microserviceRow` / `providerRow`) plus the cluster, the health at a glance, the reason to
 * show, since when the object is unconverged, and for providers whether they are usable and
 * their quota. Pure.
 *
 * Quota: read from `status.usage` (`callsToday`, `dailyQuota`, `quotaRemaining`, ADR 0028), the
 * limiting reason from `status.limitedBy` (Ready's False reason, else `RateLimited`); both null
 * when absent (a provider not observed yet, or an older operator).
 * @module
 */
import type { Microservice } from '../operators/microservice/api/index.ts';
import type { DigitalHumanProvider } from '../operators/provider/api/index.ts';
import { microserviceRow, providerRow } from '../cli/views/status-view.ts';
import type { ConditionView } from '../cli/views/status-view.ts';
import { microserviceHealth, providerHealth } from './shared/health.ts';
import type { ItemKind, MicroserviceItem, ProviderItem, QuotaView } from './shared/types.ts';

export function itemKey(kind: ItemKind, cluster: string, namespace: string, name: string): string {
  return `${kind}/${cluster}/${namespace}/${name}`;
}

/**
 * Since when an object is unconverged: Ready's lastTransitionTime when Ready is not True, the
 * creation time when there is no Ready yet, else `seenAt` (when the dashboard first saw it
 * unconverged: a stale generation, or deleting, has no time of its own in the object).
 */
export function unconvergedSince(converged: boolean, ready: ConditionView | null, createdAt: string | null, seenAt: string): string | null {
  if (converged) return null;
  if (ready && ready.status !== 'True' && ready.lastTransitionTime) return ready.lastTransitionTime;
  if (!ready && createdAt) return createdAt;
  return seenAt;
}

export function microserviceItem(cluster: string, ms: Microservice, seenUnconvergedAt: string): MicroserviceItem {
  const row = microserviceRow(ms);
  const failedPhase = row.phase === 'Failed';
  return {
    ...row,
    key: itemKey('Microservice', cluster, row.namespace, row.name),
    cluster,
    kind: 'Microservice',
    health: microserviceHealth(row),
    // An empty status reason or message (`""`) is none: the fallback, as when it is absent.
    why: (failedPhase && row.reason) || row.ready?.reason || row.reason || null,
    whyMessage: (failedPhase && row.message) || row.ready?.message || row.message || null,
    unconvergedSince: unconvergedSince(row.converged, row.ready, row.createdAt, seenUnconvergedAt),
  };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function quotaOf(p: DigitalHumanProvider): { quota: QuotaView | null; limitingReason: string | null } {
  const usage = p.status?.usage as Record<string, unknown> | undefined;
  let quota: QuotaView | null = null;
  if (usage && typeof usage === 'object') {
    const used = num(usage.callsToday);
    const limit = num(usage.dailyQuota);
    const left = num(usage.quotaRemaining) ?? (used !== null && limit !== null ? Math.max(0, limit - used) : null);
    if (used !== null || limit !== null || left !== null) quota = { used, limit, left };
  }
  const limitedBy = p.status?.limitedBy;
  return { quota, limitingReason: typeof limitedBy === 'string' && limitedBy !== '' ? limitedBy : null };
}

export function providerItem(cluster: string, p: DigitalHumanProvider, clusterReachable: boolean, seenUnconvergedAt: string): ProviderItem {
  const row = providerRow(p);
  const { quota, limitingReason } = quotaOf(p);
  return {
    ...row,
    key: itemKey('DigitalHumanProvider', cluster, row.namespace, row.name),
    cluster,
    kind: 'DigitalHumanProvider',
    health: providerHealth(row),
    why: row.ready?.reason || null,
    whyMessage: row.ready?.message || null,
    unconvergedSince: unconvergedSince(row.converged, row.ready, row.createdAt, seenUnconvergedAt),
    usable: row.converged && clusterReachable && quota?.left !== 0,
    quota,
    limitingReason,
    rank: null,
  };
}
