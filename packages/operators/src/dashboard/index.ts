/**
 * The dashboard: one live view over the Microservices and DigitalHumanProviders of every
 * cluster — a web page and a read-only JSON API (`/api/v1`, OpenAPI in `openapi.yaml`) with a
 * server-sent-events stream of changes. `converge dashboard` runs it; `converge dev` starts it
 * on the local control plane.
 *
 * Layout: `cluster-source.ts` (one informer cache per cluster, reachability from the watches'
 * health: `cluster-state.ts`) → `model.ts` (rows from `items.ts`, condition timelines from
 * `timeline.ts`) → `http-server.ts` (API, `sse.ts`, `detail.ts` = `converge explain` from the
 * cache via `cache-reader.ts`; `security.ts`, `listen.ts`) and the page in `web/` (Preact,
 * bundled by `assets.ts`). `shared/` holds the pure code and types both sides use (filters,
 * sorting, the provider ranking, the overview).
 *
 * Guarantees: read-only (list/watch towards clusters; GET/HEAD towards browsers); never reads
 * Secrets; loopback by default, and a non-loopback listen needs a bearer token.
 * @module
 */
export { startDashboard } from './dashboard.ts';
export type { DashboardOptions, RunningDashboard } from './dashboard.ts';
export { buildDashboardAssets, loadDashboardAssets } from './assets.ts';
export type { ClusterSpec } from './cluster-source.ts';
export { DEFAULT_LISTEN, ListenError, parseListen } from './listen.ts';
export type * from './shared/types.ts';
