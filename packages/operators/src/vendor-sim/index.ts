/**
 * The vendor API simulator: a real HTTPS server implementing `openapi.yaml` (the digital-human
 * vendor's instance API) on loopback, with faults switchable per test. It is what the
 * DigitalHumanProvider operator's tests and benchmarks talk to; it is never a Kubernetes fake.
 *
 * What a caller can rely on:
 * - `startVendorSimulator({ token, accounts?, host?, port?, adminToken?, stateFile?, dir?, faults?, usageWindowSeconds? })`
 *   resolves once the server listens; `baseUrl` (no trailing slash) and `caPath` (PEM of a
 *   self-signed CA that signed the server certificate for localhost/127.0.0.1/::1) are then valid.
 *   `stop()` closes every connection, hanging ones included, and is idempotent. A start that
 *   fails (a busy port, faults it refuses, an unreadable state file) removes the temporary
 *   folder it made, so no private key is left behind.
 * - /v1 follows `openapi.yaml`: bearer auth (401), Idempotency-Key on create (same key → same
 *   live instance, 200 + `Idempotent-Replayed: true`; a deleted instance frees its key),
 *   region immutable (422 `ImmutableField`), DELETE of a missing instance → 404, every failure
 *   has the body `{ error: { code, message, field?, requestId } }`.
 * - Accounts (`accounts.ts`): `token` is the `default` account's, `accounts` adds more; each sees
 *   only its own instances. A suspended account keeps reads and deletes; creates, updates, limit
 *   changes and billable calls get 403 `AccountSuspended`.
 * - Metering (`metering.ts`): per-instance limits (`/v1/instances/{id}/limits`, vendor defaults
 *   for new instances), usage per quota day (`/usage`), billable calls (`POST …/calls`, or
 *   `consume(id, n)` for n at once) decided quota → minute limit → accepted, throttled calls
 *   visible for `usageWindowSeconds`; `advanceQuotaDay()` starts the next day at once.
 *   `GET /v1/instances?view=full` reports health, limits and usage of a whole account in pages.
 *   All of it is exact and deterministic: no randomness, every outcome counted in
 *   `stats().metering`.
 * - Faults (`Faults`, set through `/admin/faults` or the `VendorSimulator` methods) strike /v1
 *   only, in this order per request: outage → hang → latency → auth → burst429 → rate limit →
 *   errors → handler (→ a slow create, applied even after its client gave up → lose the create
 *   response). Counted faults (burst429, lost creates) and
 *   the error share are deterministic; only latency jitter is random.
 * - With `stateFile` the instances (and their limits) survive a restart (rewritten atomically
 *   after each change); the CA in `dir` is reused, so clients keep trusting the restarted server.
 *   Faults, statistics, usage and account states are not persisted.
 * - `stats()` / `GET /admin/stats` count requests per "METHOD route", answers per status,
 *   writes, 429s, creates and live instances.
 * - `createVendorSimAdmin` drives /admin of a simulator in another process.
 *
 * @module
 */
export {
  startVendorSimulator,
  type VendorSimulator,
  type VendorSimulatorOptions,
  type AdminInstance,
  type ResetOptions,
  type Usage,
  type ConsumeResult,
  type QuotaDay,
} from './server.ts';
export { DEFAULT_ACCOUNT, AccountValidationError, type Account, type AccountState, type AccountConfig } from './accounts.ts';
export { DEFAULT_LIMITS, LIMIT_BOUNDS, LIMIT_NAMES, LimitValidationError, type Limits, type LimitName } from './metering.ts';
export {
  FaultValidationError,
  VENDOR_OPERATIONS,
  type Faults,
  type FaultsPatch,
  type VendorOperation,
  type LatencyFault,
  type ErrorsFault,
  type Burst429Fault,
  type RateLimitFault,
  type HangFault,
  type OutageFault,
  type LoseCreateResponsesFault,
  type SlowCreatesFault,
} from './faults.ts';
export type { SimStats } from './stats.ts';
export type { Instance, HealthStatus } from './store.ts';
export { createVendorSimAdmin, type VendorSimAdmin, type VendorSimAdminOptions } from './admin-client.ts';
