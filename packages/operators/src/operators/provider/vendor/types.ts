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
  message?: string;
  checkedAt: string;
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
export type VendorOperationName = 'createInstance' | 'getInstance' | 'findByIdempotencyKey' | 'updateInstance' | 'deleteInstance' | 'getHealth';

export const VENDOR_OPERATION_NAMES: readonly VendorOperationName[] = [
  'createInstance',
  'getInstance',
  'findByIdempotencyKey',
  'updateInstance',
  'deleteInstance',
  'getHealth',
];

/** Operations that change vendor state (the "no vendor write calls" checks count these). */
export const VENDOR_WRITE_OPERATIONS: readonly VendorOperationName[] = ['createInstance', 'updateInstance', 'deleteInstance'];
