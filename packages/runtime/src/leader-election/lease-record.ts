/**
 * The pure part of leader election: reading a Lease, deciding whether to take it, and the Lease
 * spec to write. No I/O, no clock of its own: every function takes `now` (monotonic for
 * decisions, a wall-clock RFC 3339 string for what is written).
 * @module
 */
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import { LeaseKind } from '../objects/index.ts';

/** `coordination.k8s.io/v1` Lease spec as JSON (times are RFC 3339 strings with microseconds). */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

export interface LeaseObject extends KubeObject {
  spec?: LeaseSpec;
}

/** The built-in Lease kind with its spec typed as the JSON the API server sends. */
export const Leases = LeaseKind as unknown as ResourceKind<LeaseObject>;

/**
 * What a candidate knows about the Lease: the version it last saw and *when it saw it change*,
 * by its own monotonic clock (client-go's observedRecord + observedTime). Expiry is judged from
 * that local reading, never from the holder's `renewTime` nor from the wall clock, so neither
 * clock skew between replicas nor a wall-clock step on either of them matters.
 */
export interface Observation {
  resourceVersion: string;
  holder: string;
  leaseDurationMs: number;
  /** Monotonic time (`Clock.monotonic`) this process first saw `resourceVersion`. */
  observedAtMs: number;
}

export type Verdict =
  | { action: 'renew'; observation: Observation }
  | { action: 'take'; observation: Observation }
  | { action: 'wait'; observation: Observation; expiresAtMs: number };

/**
 * Decides what to do with an existing Lease: `renew` it (we hold it), `take` it (free: released,
 * or not renewed within its duration since we saw it change), or `wait` until `expiresAtMs`.
 * `now` and every time in the result are monotonic readings of this process's clock.
 * `defaultDurationMs` applies when the Lease names no duration.
 */
export function assessLease(
  lease: LeaseObject,
  previous: Observation | undefined,
  identity: string,
  now: number,
  defaultDurationMs: number,
): Verdict {
  const rv = lease.metadata.resourceVersion ?? '';
  const holder = lease.spec?.holderIdentity ?? '';
  const seconds = lease.spec?.leaseDurationSeconds;
  const leaseDurationMs = seconds !== undefined && seconds > 0 ? seconds * 1000 : defaultDurationMs;
  const observedAtMs = previous && previous.resourceVersion === rv && rv !== '' ? previous.observedAtMs : now;
  const observation: Observation = { resourceVersion: rv, holder, leaseDurationMs, observedAtMs };
  if (holder === identity) return { action: 'renew', observation };
  if (holder === '') return { action: 'take', observation };
  const expiresAtMs = observedAtMs + leaseDurationMs;
  if (now < expiresAtMs) return { action: 'wait', observation, expiresAtMs };
  return { action: 'take', observation };
}

/**
 * The spec to write when acquiring or renewing. Renewing keeps `acquireTime` and
 * `leaseTransitions`; taking over sets `acquireTime` to now and counts a transition.
 * Fields this elector does not manage (`strategy`, `preferredHolder`) are kept.
 */
export function leaseSpecFor(current: LeaseSpec | undefined, identity: string, leaseDurationSeconds: number, now: string): LeaseSpec {
  const renewing = current?.holderIdentity === identity;
  return {
    ...current,
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: renewing && current?.acquireTime ? current.acquireTime : now,
    renewTime: now,
    leaseTransitions: current === undefined ? 0 : (current.leaseTransitions ?? 0) + (renewing ? 0 : 1),
  };
}

/** The spec of a released Lease: no holder, a 1 s duration, so any candidate takes it at once. */
export function releasedLeaseSpec(current: LeaseSpec | undefined, now: string): LeaseSpec {
  return {
    ...current,
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: current?.leaseTransitions ?? 0,
  };
}

/**
 * How long a candidate sleeps before its next attempt: the (jittered) retry period, but never
 * past the moment the current holder's lease expires, so a dead leader is replaced promptly.
 */
export function candidateDelayMs(retryDelayMs: number, expiresAtMs: number | undefined, now: number): number {
  if (expiresAtMs === undefined) return retryDelayMs;
  return Math.max(0, Math.min(retryDelayMs, expiresAtMs - now));
}

/** A Lease time (`metav1.MicroTime`): RFC 3339 with exactly six fractional digits. */
export function leaseTime(ms: number): string {
  return new Date(Math.floor(ms)).toISOString().replace(/Z$/, '000Z');
}
