/**
 * Names the DigitalHumanProvider operator and its tools agree on: API coordinates, the finalizer,
 * condition types and reasons, the field manager.
 * @module
 */

export const PROVIDER_GROUP = 'dhp.example.com';
/** The hub and storage version; `v1alpha1` is still served, deprecated (ADR 0024). */
export const PROVIDER_VERSION = 'v1';
export const PROVIDER_API_VERSION = `${PROVIDER_GROUP}/${PROVIDER_VERSION}`;
export const PROVIDER_KIND = 'DigitalHumanProvider';
export const PROVIDER_PLURAL = 'digitalhumanproviders';

/**
 * Added before any vendor call; removed only once the vendor has confirmed that no instance exists
 * for the object (a vendor 404 counts as gone), when no create was ever sent for it, or when a
 * person gives the instance up with `ABANDON_ANNOTATION`.
 */
export const PROVIDER_FINALIZER = 'dhp.example.com/provider-cleanup';

/**
 * Put on a DigitalHumanProvider to give up its vendor instance without cleanup (manual takeover,
 * e.g. when the vendor is gone for good). The value must name what is given up: the instance's
 * ID (`status.providerID`), or, when no ID was ever recorded, the object's UID (the Idempotency-Key
 * a create may have used). Honoured only while the object is being deleted; the operator records
 * who, what and when in a Warning Event and its log, then releases the finalizer. Nothing else
 * ever skips cleanup.
 */
export const ABANDON_ANNOTATION = 'dhp.example.com/abandon-instance';

/** Optional, with `ABANDON_ANNOTATION`: who gives the instance up, and why (free text, shown in the Event and the log). */
export const ABANDONED_BY_ANNOTATION = 'dhp.example.com/abandoned-by';

/** Server-Side Apply field manager for the operator's writes (status, finalizer). */
export const PROVIDER_FIELD_MANAGER = 'converge-digitalhumanprovider';

/**
 * The label a Secret must carry (value `"true"`) before a DigitalHumanProvider may send a value of
 * it to a vendor: `kubectl label secret <name> dhp.example.com/vendor-credentials=true`. Without
 * it the operator never reads the Secret's data (its watch holds metadata only), and the provider
 * is `CredentialsNotAllowed`. Why: whoever may create a provider picks the endpoint its token is
 * sent to, so without an opt-in they could send any Secret of the namespace anywhere, read with
 * the operator's rights.
 */
export const VENDOR_CREDENTIALS_LABEL = 'dhp.example.com/vendor-credentials';

/** Whether a Secret (or its metadata) opted in with `VENDOR_CREDENTIALS_LABEL=true`. */
export function optedInForVendor(secret: { metadata: { labels?: Record<string, string> } }): boolean {
  return secret.metadata.labels?.[VENDOR_CREDENTIALS_LABEL] === 'true';
}

/** Key read from the credentials Secret when `spec.credentials.secretRef.key` is not given. */
export const DEFAULT_CREDENTIALS_KEY = 'token';

/** What the vendor accepts as a region (its `openapi.yaml`, `Region`); the CRD refuses anything else. */
export const REGION_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

export const ProviderConditionType = {
  Ready: 'Ready',
  /** kstatus's "the controller is working towards the spec": True while it waits for the vendor. */
  Reconciling: 'Reconciling',
  /** kstatus's "progress needs a person": rejected credentials, a missing Secret, input the vendor refuses. */
  Stalled: 'Stalled',
  /** True: no calls left in the vendor's quota day (until status.usage.quotaResetAt). */
  QuotaExhausted: 'QuotaExhausted',
  /** True: the vendor throttled the instance's calls in its last window. Ready stays True. */
  RateLimited: 'RateLimited',
  /** True: the vendor account is suspended (for non-payment, say). */
  AccountSuspended: 'AccountSuspended',
  /** True: a person should raise a limit or add a provider (`status.recommendation`); never acted on. */
  ScaleRecommended: 'ScaleRecommended',
  /**
   * Whether the vendor holds the spec of this generation (`SpecAppliedReason`). Apart from Ready:
   * a change the vendor refuses leaves the instance serving as it was, so Ready and
   * `status.usable` keep describing the instance.
   */
  SpecApplied: 'SpecApplied',
} as const;
export type ProviderConditionType = (typeof ProviderConditionType)[keyof typeof ProviderConditionType];

/** Reasons of the `Ready` condition and of Events (CamelCase, stable). */
export const ProviderReason = {
  /** Ready=True: the instance exists, matches the spec and reports healthy. */
  ProviderReady: 'ProviderReady',
  /** Ready=True: the instance works but the vendor reports it degraded. */
  ProviderDegraded: 'ProviderDegraded',
  /** Ready=False: creating, finding or updating the instance failed transiently (unreachable vendor, 5xx, timeouts); retried with backoff. */
  EnsureFailed: 'EnsureFailed',
  /**
   * Ready=False: the vendor refused the create (400, 409, 422: no instance exists), or the endpoint
   * cannot be used; sent again when the spec changes, else every `provider.rejectedRetrySeconds`.
   * A refused change of an existing instance is `SpecApplied=False` with this reason instead.
   */
  VendorRejected: 'VendorRejected',
  /** Ready=False (and AccountSuspended=True): the vendor account is suspended; the account watch notices when it is resumed. */
  AccountSuspended: 'AccountSuspended',
  /** Ready=False (and QuotaExhausted=True): no calls left in the vendor's quota day. */
  QuotaExhausted: 'QuotaExhausted',
  /** Ready=False: the vendor reports the instance down. */
  ProviderUnhealthy: 'ProviderUnhealthy',
  /** Ready=False: the Secret or its key is missing; retried when the Secret appears. */
  CredentialsMissing: 'CredentialsMissing',
  /** Ready=False: the Secret lacks the `VENDOR_CREDENTIALS_LABEL` opt-in, so it is not read; retried when the Secret changes. */
  CredentialsNotAllowed: 'CredentialsNotAllowed',
  /** Ready=False: the token is not one line of printable ASCII (a request header cannot carry it); nothing was sent; retried when the Secret changes. */
  CredentialsInvalid: 'CredentialsInvalid',
  /**
   * Ready=False: `spec.endpoint` is not among the operator's `provider.vendor.allowedEndpoints`;
   * nothing was read or sent. Waits for the spec to change.
   */
  EndpointNotAllowed: 'EndpointNotAllowed',
  /** Ready=False: the vendor rejected the token (401/403). */
  Unauthorized: 'Unauthorized',
  /** Ready=False while deleting: the vendor could not confirm deletion; the finalizer stays. */
  DeletionBlocked: 'DeletionBlocked',
  /**
   * Ready=False: `spec.endpoint` differs from `status.instanceEndpoint`, where the instance lives
   * (only possible when the cluster's CRD lacks the rule that refuses such an edit); nothing is
   * created at the new endpoint. Waits for the spec to change back.
   */
  EndpointChanged: 'EndpointChanged',
  /** Stalled=False: nothing needs a person. */
  NotStalled: 'NotStalled',
  /** Events. */
  Created: 'Created',
  Updated: 'Updated',
  /** Normal Event: the vendor instance's limits were set to spec.limits (on create or a spec change). */
  LimitsUpdated: 'LimitsUpdated',
  /** Warning Event: the vendor's limits differed from spec.limits without a spec change (a console edit); set back. */
  LimitsDriftRepaired: 'LimitsDriftRepaired',
  Deleted: 'Deleted',
  /** Warning Event: the instance was given up without cleanup (`ABANDON_ANNOTATION`), with who, what and when. */
  InstanceAbandoned: 'InstanceAbandoned',
  /** Warning Event: `ABANDON_ANNOTATION` names something else than the instance; ignored, cleanup goes on. */
  AbandonRejected: 'AbandonRejected',
  /** Normal Event: the finalizer was released without a vendor call, because no create was ever sent. */
  NothingToClean: 'NothingToClean',
  /** Warning Event: a create reached the vendor after the finalizer was released; the late-create sweep deleted that instance. */
  LateInstanceDeleted: 'LateInstanceDeleted',
} as const;
export type ProviderReason = (typeof ProviderReason)[keyof typeof ProviderReason];

/** Reasons of the `SpecApplied` condition (CamelCase, stable). */
export const SpecAppliedReason = {
  /** True: the vendor holds the spec of this generation (nothing to write, or every write accepted). */
  Applied: 'Applied',
  /**
   * False: the vendor refused a write of this generation (a 4xx; the message has its words and the
   * field). Stalled=True; sent again when the spec changes, else every `provider.rejectedRetrySeconds`.
   */
  VendorRejected: 'VendorRejected',
  /** False: a write failed transiently (5xx, 429, timeout), or waits for a suspended account; retried. Reconciling=True. */
  ApplyFailed: 'ApplyFailed',
} as const;
export type SpecAppliedReason = (typeof SpecAppliedReason)[keyof typeof SpecAppliedReason];

/** Reasons of the quota conditions (CamelCase, stable). */
export const QuotaReason = {
  QuotaExhausted: 'QuotaExhausted',
  QuotaAvailable: 'QuotaAvailable',
  Throttled: 'Throttled',
  NotThrottled: 'NotThrottled',
  /** AccountSuspended=True, the vendor's reason NonPayment. */
  NonPayment: 'NonPayment',
  /** AccountSuspended=True for any other vendor reason (its words are in the message). */
  Suspended: 'Suspended',
  AccountActive: 'AccountActive',
  /** ScaleRecommended=True: today's calls reached provider.recommendation.quotaPercent of the quota. */
  QuotaNearlyUsed: 'QuotaNearlyUsed',
  /** ScaleRecommended=True: RateLimited has held for provider.recommendation.sustainedThrottlingSeconds. */
  SustainedThrottling: 'SustainedThrottling',
  WithinLimits: 'WithinLimits',
  /** Any quota condition before the vendor's figures were read. */
  NotObserved: 'NotObserved',
} as const;
export type QuotaReason = (typeof QuotaReason)[keyof typeof QuotaReason];
