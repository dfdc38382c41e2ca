/**
 * The vendor API simulator: a real HTTPS server implementing `openapi.yaml` (the digital-human
 * vendor's instance API) on loopback, with faults switchable per test. It is what the
 * DigitalHumanProvider operator's tests and benchmarks talk to; it is never a Kubernetes fake.
 *
 * What a caller can rely on:
 * - `startVendorSimulator({ token, host?, port?, adminToken?, stateFile?, dir?, faults? })`
 *   resolves once the server listens; `baseUrl` (no trailing slash) and `caPath` (PEM of a
 *   self-signed CA that signed the server certificate for localhost/127.0.0.1/::1) are then valid.
 *   `stop()` closes every connection, hanging ones included, and is idempotent. A start that
 *   fails (a busy port, faults it refuses, an unreadable state file) removes the temporary
 *   folder it made, so no private key is left behind.
 * - /v1 follows `openapi.yaml`: bearer auth (401), Idempotency-Key on create (same key → same
 *   live instance, 200 + `Idempotent-Replayed: true`; a deleted instance frees its key),
 *   region immutable (422 `ImmutableField`), DELETE of a missing instance → 404, every failure
 *   has the body `{ error: { code, message, field?, requestId } }`.
 * - Faults (`Faults`, set through `/admin/faults` or the `VendorSimulator` methods) strike /v1
 *   only, in this order per request: outage → hang → latency → auth → burst429 → rate limit →
 *   errors → handler (→ a slow create, applied even after its client gave up → lose the create
 *   response). Counted faults (burst429, lost creates) and
 *   the error share are deterministic; only latency jitter is random.
 * - With `stateFile` the instances survive a restart (rewritten atomically after each change);
 *   the CA in `dir` is reused, so clients keep trusting the restarted server. Faults and
 *   statistics are not persisted.
 * - `stats()` / `GET /admin/stats` count requests per "METHOD route", answers per status,
 *   writes, 429s, creates and live instances.
 * - `createVendorSimAdmin` drives /admin of a simulator in another process.
 *
 * @module
 */
export { startVendorSimulator, type VendorSimulator, type VendorSimulatorOptions, type AdminInstance, type ResetOptions } from './server.ts';
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
