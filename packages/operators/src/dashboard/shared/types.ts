/**
 * The dashboard API's documents (version `converge.dev/v1alpha1`), shared by the server that
 * builds them and the page that reads them. Types only: importing this file costs nothing in
 * either place. `openapi.yaml` beside the server describes the same shapes for other clients.
 *
 * Within `v1alpha1` fields are only added, never renamed or removed (as for `converge status`).
 * Absent values are `null`, never missing keys.
 * @module
 */
import type { ConditionView, MicroserviceRow, ProviderRow } from '../../cli/views/status-view.ts';
import type { Explanation } from '../../cli/views/explanation.ts';

export type { ConditionView };

export const DASHBOARD_API_VERSION = 'converge.dev/v1alpha1';

/** At a glance: converged, on its way, or in need of a person (see `shared/health.ts`). */
export type Health = 'ready' | 'progressing' | 'failed';
export type ItemKind = 'Microservice' | 'DigitalHumanProvider';

/** What every row of either table carries besides its kind's own fields. */
export interface ItemCommon {
  /** `<kind>/<cluster>/<namespace>/<name>`: unique across clusters. */
  key: string;
  cluster: string;
  kind: ItemKind;
  health: Health;
  /** The reason shown in the tables: the Ready condition's, else the status reason, else null. */
  why: string | null;
  /** The message that goes with `why`. */
  whyMessage: string | null;
  /**
   * Since when the object has not been converged (ISO time), null when converged: the Ready
   * condition's lastTransitionTime when Ready is not True, else when the dashboard first saw it
   * unconverged (creation time when it has no Ready condition at all).
   */
  unconvergedSince: string | null;
}

export type MicroserviceItem = ItemCommon & MicroserviceRow & { kind: 'Microservice' };

/** Quota figures from `status.usage` (callsToday, dailyQuota, quotaRemaining); null before the operator observed them. */
export interface QuotaView {
  used: number | null;
  limit: number | null;
  /** limit − used, when both are known. */
  left: number | null;
}

export type ProviderItem = ItemCommon & ProviderRow & {
  kind: 'DigitalHumanProvider';
  /** Converged and its cluster reachable and (when known) quota left: the upstream may send work here. */
  usable: boolean;
  quota: QuotaView | null;
  /** What limits the provider (`status.limitedBy`: Ready's False reason, else RateLimited), null when nothing does. */
  limitingReason: string | null;
  /**
   * 1-based position in the best-first order among the providers a `GET /api/v1/providers`
   * returned (see `shared/ranking.ts`); null elsewhere (the stream, the detail).
   */
  rank: number | null;
};

export type Item = MicroserviceItem | ProviderItem;

export type ClusterState = 'connecting' | 'reachable' | 'unreachable';

export interface ClusterView {
  name: string;
  /** The API server's URL. */
  server: string;
  state: ClusterState;
  /** `state === 'reachable'`. */
  reachable: boolean;
  /** When every watch of the cluster first completed its list (ISO), null before. */
  syncedAt: string | null;
  /** The last time any watch of this cluster delivered something: a list, an event or a bookmark (ISO). */
  lastSync: string | null;
  /** Why the cluster is unreachable (the last watch error), null otherwise. */
  error: string | null;
  /** Things that are wrong but do not make the cluster unreachable (e.g. a CRD that is not installed). */
  warnings: string[];
  /**
   * Kinds the API server refuses to this dashboard now (`Forbidden`, `NotFound`): their rows are
   * what was last seen, and a provider of such a kind is not usable. Absent in older answers.
   */
  unreadableKinds?: string[];
}

/** One condition transition the dashboard saw (since it started). */
export interface TimelineEntry {
  /** When the dashboard saw it (ISO). */
  seenAt: string;
  type: string;
  /** Null for the first sight of a condition. */
  from: { status: string; reason: string } | null;
  /** Null when the condition was removed. */
  to: { status: string; reason: string; message: string; observedGeneration: number | null; lastTransitionTime: string | null } | null;
  /** The object's metadata.generation at that moment. */
  generation: number;
}

export interface ObjectDetail {
  apiVersion: typeof DASHBOARD_API_VERSION;
  kind: 'ObjectDetail';
  item: Item;
  /** What `converge explain` shows, computed from the dashboard's cache. */
  explanation: Explanation;
  timeline: TimelineEntry[];
  /** The object as cached (no managedFields), as YAML. */
  yaml: string;
}

export interface OverviewCell {
  total: number;
  ready: number;
  progressing: number;
  failed: number;
}

export interface Overview {
  /** Per cluster and kind. */
  clusters: { cluster: string; kind: ItemKind; counts: OverviewCell }[];
  /** Unconverged objects, longest first (at most `limit`). */
  longestUnconverged: { key: string; cluster: string; kind: ItemKind; namespace: string; name: string; health: Health; why: string | null; unconvergedSince: string }[];
}

/** What `GET /api/v1/events` streams (the SSE `event:` field is `type`). */
export type ServerEvent =
  | { type: 'snapshot'; clusters: ClusterView[]; microservices: MicroserviceItem[]; providers: ProviderItem[] }
  | { type: 'upsert'; item: Item }
  | { type: 'delete'; key: string; cluster: string; kind: ItemKind }
  | { type: 'cluster'; cluster: ClusterView };
