/**
 * Ready / progressing / failed at a glance, for both kinds, from the rows `converge status`
 * computes. Pure.
 *
 * - ready: converged (`converge status`'s definition: Ready=True for the current generation,
 *   status caught up; for a provider also its providerID and finalizer, not deleting);
 * - failed: needs a person. A Microservice whose phase is Failed, that is Stalled, or whose Ready
 *   is False for a reason that does not resolve by waiting (RolloutStalled, InvalidSpec,
 *   OwnershipConflict); a provider whose Ready is False (its reasons all mean the vendor or its
 *   credentials are not usable now);
 * - progressing: anything else (no status yet, a rollout under way, a stale generation, deleting).
 * @module
 */
import type { MicroserviceRow, ProviderRow } from '../../cli/views/status-view.ts';
import type { Health } from './types.ts';

/** Microservice Ready=False reasons that waiting does not fix. */
export const FAILED_MICROSERVICE_REASONS: ReadonlySet<string> = new Set(['RolloutStalled', 'InvalidSpec', 'OwnershipConflict']);

export function microserviceHealth(row: MicroserviceRow): Health {
  if (row.converged) return 'ready';
  if (row.deleting) return 'progressing';
  if (row.phase === 'Failed' || row.stalled?.status === 'True') return 'failed';
  if (row.ready?.status === 'False' && FAILED_MICROSERVICE_REASONS.has(row.ready.reason)) return 'failed';
  return 'progressing';
}

export function providerHealth(row: ProviderRow): Health {
  if (row.converged) return 'ready';
  if (row.ready?.status === 'False') return 'failed';
  return 'progressing';
}
