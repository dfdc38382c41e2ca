/**
 * Creates this process sent whose instance the CR's status does not record yet, so that a
 * provider that vanishes without its finalizer being honoured does not leave its instance behind.
 *
 * Why: kube-apiserver removes an object at once when a DELETE found no finalizer on it, even if
 * one was added between that look and the removal (its own race, kubernetes/kubernetes#77988;
 * 1.36 has it). A provider deleted within moments of its creation can therefore disappear after
 * the reconciler added its finalizer and sent the create: no deletion reconcile ever runs, and the
 * vendor instance would belong to nothing (the kill storm found it; docs/reliability.md).
 *
 * Guarantees:
 * - Once a reconcile finds the provider gone from the cache, or replaced by another object of the
 *   same name, while a create this process sent for it is not recorded in its status (or was
 *   recorded less than `HOLD_MS` ago), the CR's key goes to the late-create sweep
 *   (`late-creates.ts`, ADR 0037), which looks it up at the vendor and deletes what it finds. A
 *   Warning line says so.
 * - When the key cannot be stored, it is kept here and the reconcile fails (retried with backoff).
 * - No write otherwise: an entry is dropped when the provider is seen being deleted with its
 *   finalizer (the deletion path then looks by key itself), or once its status records the
 *   instance and `HOLD_MS` passed since the create (the racing DELETE removes the object within
 *   its own request, which kube-apiserver ends after 60 s at most).
 *
 * Caveat: memory only. A process killed between the create and the moment it sees the provider
 * gone leaves nothing here; the next process never saw that provider, so that instance is not
 * found (the remaining gap; ADR 0037 says how it would close).
 * @module
 */
import { TemporaryError } from '@converge/runtime';
import type { Request } from '@converge/runtime';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { LateCreateSweep } from './late-creates.ts';
import { entryFor } from './late-create-ledger.ts';
import type { LedgerEntry } from './late-create-ledger.ts';

/** How long after a create its entry is kept even though the status records the instance. */
export const HOLD_MS = 60_000;

interface Unrecorded {
  entry: LedgerEntry;
  token: string;
}

export class UnrecordedCreates {
  readonly #sweep: Pick<LateCreateSweep, 'record' | 'windowMs'> | undefined;
  /** Per request key (`namespace/name`). */
  readonly #byKey = new Map<string, Unrecorded>();

  constructor(sweep: Pick<LateCreateSweep, 'record' | 'windowMs'> | undefined) {
    this.#sweep = sweep;
  }

  /** A create for `dhp` is about to be sent to `endpoint`, recorded in its status as requested at `requestedAt`. */
  sent(key: string, dhp: DigitalHumanProvider, endpoint: string, token: string, requestedAt: string): void {
    if (!this.#sweep) return;
    this.#byKey.set(key, { entry: entryFor(dhp, endpoint, requestedAt, this.#sweep.windowMs), token });
  }

  /**
   * What a reconcile found in the cache for its key (`cached`, undefined when gone) at wall time
   * `nowMs`: a create of a provider that is gone or replaced goes to the sweep; one whose provider
   * is being deleted with its finalizer, or that the status has recorded for `HOLD_MS`, is dropped.
   */
  async observe(request: Request, cached: DigitalHumanProvider | undefined, hasOurFinalizer: boolean, nowMs: number, signal: AbortSignal): Promise<void> {
    const held = this.#byKey.get(request.key);
    if (!held) return;
    if (cached?.metadata.uid === held.entry.uid) {
      const honoured = cached.metadata.deletionTimestamp !== undefined && hasOurFinalizer;
      const settled = cached.status?.providerID !== undefined && nowMs - Date.parse(held.entry.requestedAt) >= HOLD_MS;
      if (honoured || settled) this.#byKey.delete(request.key);
      return;
    }
    try {
      await this.#sweep!.record(held.entry, held.token, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw new TemporaryError('LateCreateNotRecorded', `the provider vanished while its create was not recorded, and its key cannot be stored for the late-create sweep yet: ${message}`);
    }
    this.#byKey.delete(request.key);
    request.log.warn(
      { idempotencyKey: held.entry.uid, endpoint: held.entry.endpoint, requestedAt: held.entry.requestedAt },
      'the provider was removed past its finalizer (kube-apiserver, kubernetes#77988) after a create was sent for it; its key goes to the late-create sweep',
    );
  }
}
