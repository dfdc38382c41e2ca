/**
 * The vendor's data as the client returns it (see `packages/operators/src/vendor-sim/openapi.yaml`).
 *
 * @module
 */

/** An instance at the vendor. `id` is opaque: store it, never parse it. */
export interface VendorInstance {
  id: string;
  region: string;
  /** '' when never set. */
  displayName: string;
  /** The Idempotency-Key it was created with (the operator uses the CR's UID), or null. */
  idempotencyKey: string | null;
  createdAt: string;
  updatedAt: string;
}

export type VendorHealthStatus = 'healthy' | 'degraded' | 'down';

export interface VendorHealth {
  id: string;
  status: VendorHealthStatus;
  /** The vendor's own words (e.g. "GPU hot"), bounded and redacted (`vendorText`); absent when it gave none. */
  message?: string;
  checkedAt: string;
}

/** What the vendor enforces on an instance's work (its billable calls, not this API). */
export interface VendorLimits {
  maxConcurrency: number;
  requestsPerMinute: number;
  dailyQuota: number;
}

/** Usage of an instance in the vendor's current quota day. */
export interface VendorUsage {
  callsToday: number;
  dailyQuota: number;
  quotaRemaining: number;
  /** Calls refused today because no quota was left. */
  refusedToday: number;
  /** Calls throttled (over requestsPerMinute) in the last `throttleWindowSeconds`. */
  throttledRequests: number;
  throttleWindowSeconds: number;
  /** When the next quota day starts (RFC 3339). */
  quotaResetAt: string;
  /** When the vendor read these figures (RFC 3339). */
  observedAt: string;
}

export type VendorAccountState = 'active' | 'suspended';

/** The account a token belongs to. */
export interface VendorAccount {
  id: string;
  state: VendorAccountState;
  /** CamelCase, e.g. `NonPayment`; only while suspended. */
  reason?: string;
  /** The vendor's words for a person, bounded and redacted (`vendorText`); only while suspended. */
  message?: string;
  since: string;
}

/** An instance with its health, limits and usage, as one list call reports it (`view=full`). */
export interface VendorInstanceState {
  instance: VendorInstance;
  health: VendorHealth;
  limits: VendorLimits;
  usage: VendorUsage;
}

/**
 * A listed item the client could not read: outside the vendor contract (a health status it does
 * not know, limits that are not numbers, not an object at all). The page's other items stand.
 */
export interface UnreadableInstanceState {
  /** The item's `id`, when that is a non-empty string. */
  id?: string;
  /**
   * The item's `idempotencyKey`: a string; null when the item is an object without one (an
   * instance created without a key); absent when the item is not an object (it cannot be told).
   */
  idempotencyKey?: string | null;
  /** The instance, when that part could be read (its health, limits or usage could not). */
  instance?: VendorInstance;
  /** Why it could not be read (the vendor's answer is not quoted). */
  problem: string;
}

export interface InstanceStatePage {
  items: VendorInstanceState[];
  /** Items the client could not read; absent when there is none. */
  unreadable?: UnreadableInstanceState[];
  /** Pass as `pageToken` for the next page; absent on the last page. */
  nextPageToken?: string;
}

export interface CreateInstanceInput {
  region: string;
  displayName?: string;
}

export interface UpdateInstanceInput {
  /** The only mutable field. */
  displayName?: string;
}

export interface CreateInstanceResult {
  instance: VendorInstance;
  /** True when the vendor answered with the instance an earlier create with this key made. */
  replayed: boolean;
}

export interface DeleteInstanceResult {
  /** True when the vendor answered 404: the instance was already gone. Counts as success. */
  alreadyGone: boolean;
}

/** The client's operations, as counted and reported. */
export type VendorOperationName =
  | 'createInstance'
  | 'getInstance'
  | 'findByIdempotencyKey'
  | 'updateInstance'
  | 'deleteInstance'
  | 'getHealth'
  | 'getLimits'
  | 'setLimits'
  | 'getUsage'
  | 'getAccount'
  | 'listInstanceStates';

export const VENDOR_OPERATION_NAMES: readonly VendorOperationName[] = [
  'createInstance',
  'getInstance',
  'findByIdempotencyKey',
  'updateInstance',
  'deleteInstance',
  'getHealth',
  'getLimits',
  'setLimits',
  'getUsage',
  'getAccount',
  'listInstanceStates',
];

/** Operations that change vendor state (the "no vendor write calls" checks count these). */
export const VENDOR_WRITE_OPERATIONS: readonly VendorOperationName[] = ['createInstance', 'updateInstance', 'deleteInstance', 'setLimits'];
