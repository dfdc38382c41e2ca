/**
 * Talks to the API server: typed CRUD, patches (merge, JSON, strategic, Server-Side Apply),
 * the status subresource, watches, and an error taxonomy code can branch on.
 *
 * What a caller can rely on: no hidden retries, a per-request timeout, an optional client-side rate
 * limit, and a write notification that keeps the cache in step with the operator's own writes.
 * @module
 */
export { KubeClient } from './client.ts';
export type { ClientObserver, RequestInfo } from './client.ts';
export type {
  KubeClientOptions,
  ListOptions,
  ListAllOptions,
  WatchOptions,
  WatchEvent,
  WatchEventType,
  WriteOptions,
  Patch,
  PatchOptions,
  ApplyOptions,
  DeleteOptions,
  JsonPatchOperation,
} from './options.ts';
export { ApiError, apiErrorFromResponse, parseRetryAfter, MAX_RETRY_AFTER_MS, isNotFound, isAlreadyExists, isConflict, isFieldManagerConflict, isInvalid, isGone, isForbidden, isNamespaceTerminating, isResourceVersionTooLarge } from './errors.ts';
export type { ApiErrorReason, FieldCause, ApiStatus } from './errors.ts';

