/**
 * Names the DigitalHumanProvider operator and its tools agree on: API coordinates, the finalizer,
 * condition types and reasons, the field manager.
 * @module
 */

export const PROVIDER_GROUP = 'dhp.example.com';
export const PROVIDER_VERSION = 'v1alpha1';
export const PROVIDER_API_VERSION = `${PROVIDER_GROUP}/${PROVIDER_VERSION}`;
export const PROVIDER_KIND = 'DigitalHumanProvider';
export const PROVIDER_PLURAL = 'digitalhumanproviders';

/** Added before any vendor call; removed only once the vendor instance is gone (a vendor 404 counts as gone). */
export const PROVIDER_FINALIZER = 'dhp.example.com/provider-cleanup';

/** Server-Side Apply field manager for the operator's writes (status, finalizer). */
export const PROVIDER_FIELD_MANAGER = 'converge-digitalhumanprovider';

/** Key read from the credentials Secret when `spec.credentialsSecretRef.key` is not given. */
export const DEFAULT_CREDENTIALS_KEY = 'token';

export const ProviderConditionType = {
  Ready: 'Ready',
} as const;
export type ProviderConditionType = (typeof ProviderConditionType)[keyof typeof ProviderConditionType];

/** Reasons of the `Ready` condition and of Events (CamelCase, stable). */
export const ProviderReason = {
  /** Ready=True: the instance exists, matches the spec and reports healthy. */
  ProviderReady: 'ProviderReady',
  /** Ready=Unknown: the first ensure is under way. */
  Progressing: 'Progressing',
  /** Ready=True: the instance works but the vendor reports it degraded. */
  ProviderDegraded: 'ProviderDegraded',
  /** Ready=False: creating, finding or updating the instance failed (unreachable vendor, 5xx, timeouts). */
  EnsureFailed: 'EnsureFailed',
  /** Ready=False: the vendor reports the instance down. */
  ProviderUnhealthy: 'ProviderUnhealthy',
  /** Ready=False: the Secret or its key is missing; retried when the Secret appears. */
  CredentialsMissing: 'CredentialsMissing',
  /** Ready=False: the vendor rejected the token (401/403). */
  Unauthorized: 'Unauthorized',
  /** Ready=False while deleting: the vendor could not confirm deletion; the finalizer stays. */
  DeletionBlocked: 'DeletionBlocked',
  /** Events. */
  Created: 'Created',
  Updated: 'Updated',
  Deleted: 'Deleted',
} as const;
export type ProviderReason = (typeof ProviderReason)[keyof typeof ProviderReason];
