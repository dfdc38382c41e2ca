/**
 * The DigitalHumanProvider operator's client for the vendor API (`packages/operators/src/vendor-sim/openapi.yaml`).
 *
 * What a caller (the reconciler) can rely on:
 * - One call = one HTTP exchange. The client never retries: a failure is a `VendorError` whose
 *   `kind` is one of NotFound | Unauthorized | AccountSuspended | QuotaExhausted |
 *   InstanceThrottled | RateLimited | Invalid | Server | Timeout | Network (`errors.ts` has the
 *   table) and whose `transient` says whether retrying unchanged may help (requeue with backoff)
 *   or something must change first. A caller's aborted signal rejects with `signal.reason`
 *   instead, counted as 'Aborted'.
 * - Limits, usage and the account: `getLimits`/`setLimits` (only the given fields are sent),
 *   `getUsage`, `getAccount`, and `listInstanceStates` (one page of the account's instances with
 *   health, limits and usage: how a whole fleet is watched with a few calls).
 * - The vendor's own words (health and account messages, error details) come through bounded
 *   and redacted (`vendorText`): one line, at most 200 characters, never the token. Its limits
 *   and usage come through checked, with times as RFC 3339 (`reports.ts`).
 * - `createInstance(input, key)` sends `Idempotency-Key: key`; repeating it after a lost answer,
 *   a crash or a timeout returns the same live instance (`replayed: true`), never a second one.
 *   `findByIdempotencyKey(key)` finds it without creating.
 * - `deleteInstance(id)` treats 404 as success (`alreadyGone: true`): deletion can always finish.
 * - `updateInstance` sends only mutable fields (a merge patch of `displayName`); region is
 *   never sent, so it can never be "reverted".
 * - Every call goes through the endpoint's limiter (rate, concurrency). A 429 `RateLimited`'s
 *   `Retry-After` (1 s when absent) and a 5xx's `Retry-After` pause the whole endpoint for every
 *   client that shares the limiter; a 429 about one instance (`QuotaExhausted`,
 *   `InstanceThrottled`) pauses nothing and only carries its `retryAfterMs`. While a pause longer
 *   than `maxPauseWaitMs` is running, calls fail fast with `RateLimited` and `retryAfterMs`
 *   instead of holding a worker, also those already waiting for their turn when it begins.
 * - `timeoutMs` bounds each exchange after admission (connect, headers, body); the limiter wait
 *   is bounded by the caller's signal. `maxResponseBytes` (16 MiB) bounds an answer's body: a
 *   larger one is not read (`Server`, transient). A status below 400 that the operation does not
 *   accept (a redirect, which is never followed; a 204 for a get) is `Server` too, not `Invalid`.
 * - TLS is always verified, against Node's bundled CAs, the OS store and the optional `ca`; an
 *   untrusted certificate fails with a message that says how to trust it
 *   (`untrustedCertificateHint`).
 * - The token goes only into the Authorization header: never into messages, causes or events.
 * - `calls()` counts calls per operation and outcome; `onCall` reports each one for metrics.
 * - `FleetWatch` (`fleet-watch.ts`) reads a whole account per round (`getAccount` + the pages of
 *   `listInstanceStates`) and says which instances changed: how providers are observed at a
 *   cost that does not grow per provider (ADR 0028).
 *
 * @module
 */
export {
  createVendorClient,
  type VendorClient,
  type VendorClientOptions,
  type VendorLimiter,
  type CallOptions,
  type VendorCallEvent,
  type VendorCallCounts,
  type VendorOperationCounts,
} from './client.ts';
export { VendorError, VENDOR_ERROR_KINDS, isVendorError, isNoAnswer, kindForStatus, endpointPause, type VendorErrorKind, type VendorErrorInit } from './errors.ts';
export { vendorText, VENDOR_TEXT_MAX } from './vendor-text.ts';
export { readLimits, readUsage, vendorTime } from './reports.ts';
export { FleetWatch, defaultStateKey, type FleetWatchOptions, type FleetChange, type FleetSnapshot, type StateKey } from './fleet-watch.ts';
export {
  VENDOR_OPERATION_NAMES,
  VENDOR_WRITE_OPERATIONS,
  type VendorInstance,
  type VendorHealth,
  type VendorHealthStatus,
  type VendorLimits,
  type VendorUsage,
  type VendorAccount,
  type VendorAccountState,
  type VendorInstanceState,
  type InstanceStatePage,
  type UnreadableInstanceState,
  type CreateInstanceInput,
  type UpdateInstanceInput,
  type CreateInstanceResult,
  type DeleteInstanceResult,
  type VendorOperationName,
} from './types.ts';
