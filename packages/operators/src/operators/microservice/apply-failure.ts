/**
 * A child write the API server refused or failed in a way retrying may outlive — a ResourceQuota
 * exceeded, a missing permission, an admission webhook denying or failing — told in the
 * Microservice's status (`ApplyFailed`) while the write is retried with backoff. Pure; the
 * refusals that wait for a change (422) are `apply-rejection.ts`.
 * @module
 */
import { ApiError, isNamespaceTerminating } from '@converge/runtime';

/**
 * Whether a failed child write is one the status should tell: an answer of the API server that
 * retrying may outlive (403, 401, 400, 5xx, a server-side timeout). Not a conflict, an
 * AlreadyExists or a NotFound (the cache is behind: retried at once), a 429 (the API server asks
 * for less, not for a status write), a terminating namespace, nor a failure with no answer (a
 * status write would fail the same way).
 */
export function tellsApplyFailure(err: unknown): err is ApiError {
  if (!(err instanceof ApiError) || err.code <= 0) return false;
  if (isNamespaceTerminating(err)) return false;
  return ['Forbidden', 'Unauthorized', 'BadRequest', 'ServerError', 'Timeout'].includes(err.reason);
}

/** "could not create Service web: <the API server's words>; retried with backoff" (the words cut at 1,000 characters). */
export function applyFailureMessage(err: ApiError, kind: string, name: string, existed: boolean, adopting: boolean): string {
  const verb = !existed ? 'create' : adopting ? 'adopt (update)' : 'update';
  const said = err.message.length > 1_000 ? `${err.message.slice(0, 1_000)}…` : err.message;
  return `could not ${verb} ${kind} ${name}: ${said}; retried with backoff`;
}
