/**
 * The Microservice reconciler's status writer: one patch of `status`, sent only when it differs,
 * only to the version of the object the cache shows, and only while that version still is the
 * generation the reconcile worked on.
 *
 * Guarantees:
 * - Nothing is sent when the status (with the conditions merged in) equals what the cache has.
 * - The patch is conditional on the UID and resourceVersion it was computed from: it cannot land
 *   on a newer version, nor on another object of the same name.
 * - The conditions are set on that very version's conditions, so a condition type another writer
 *   added is kept, and a write that would drop one cannot land.
 * - `OwnerGone` (with the UID) when the cache or the API server no longer has this UID; a
 *   `Superseded` TemporaryError when the cache shows a newer generation or a deletion (a newer
 *   event is already queued, and this status would describe the past).
 * - `lastWrittenAt` says when this process last wrote a key's status (monotonic ms), for the
 *   reconciler's progress coalescing and its choice of a live owner read.
 * @module
 */
import type { Logger } from 'pino';
import { TemporaryError, isNotFound, setCondition, patchStatus, toRfc3339 } from '@converge/runtime';
import type { Clock, Condition, KubeClient, Store } from '@converge/runtime';
import { MicroserviceKind, MICROSERVICE_FIELD_MANAGER } from './api/schema-free.ts';
import type { Microservice, MicroserviceStatus } from './api/schema-free.ts';
import type { ConditionEntry } from './conditions.ts';
import type { OwnStatus } from './progress-only.ts';

/** The Microservice read from the cache no longer exists on the API server (or is being deleted). */
export class OwnerGone extends Error {
  /** The UID found gone. */
  readonly uid: string;
  constructor(message: string, uid: string) {
    super(message);
    this.uid = uid;
  }
}

export interface StatusWriterDeps {
  client: KubeClient;
  microservices: Store<Microservice>;
  clock: Clock;
  /** Test-only fault hook, called at `microservice:before-status`. */
  faultPoint?: (name: string) => void | Promise<void>;
}

export class MicroserviceStatusWriter {
  readonly #d: StatusWriterDeps;
  readonly #writtenAt = new Map<string, number>();

  constructor(deps: StatusWriterDeps) {
    this.#d = deps;
  }

  /** Writes `own` plus `conditions` as `ms`'s status if it differs; returns the written object, or undefined when nothing was sent. */
  async write(ms: Microservice, own: OwnStatus, conditions: ConditionEntry[], log: Logger, signal: AbortSignal): Promise<Microservice | undefined> {
    const key = { namespace: ms.metadata.namespace ?? '', name: ms.metadata.name ?? '' };
    const latest = this.#d.microservices.get(key);
    if (!latest || latest.metadata.uid !== ms.metadata.uid) {
      throw new OwnerGone(`${MicroserviceKind.kind} ${key.namespace}/${key.name} (uid ${ms.metadata.uid}) was deleted while it was reconciled`, ms.metadata.uid ?? '');
    }
    if (latest.metadata.generation !== ms.metadata.generation || latest.metadata.deletionTimestamp) {
      throw new TemporaryError('Superseded', 'the Microservice changed while it was reconciled; looking again', { retryAfterMs: 0 });
    }
    const status: MicroserviceStatus = { ...own, conditions: this.#conditions(latest, conditions) };
    await this.#d.faultPoint?.('microservice:before-status');
    try {
      const written = await patchStatus(this.#d.client, MicroserviceKind, latest, status, { fieldManager: MICROSERVICE_FIELD_MANAGER, signal });
      if (written) this.#writtenAt.set(`${key.namespace}/${key.name}`, this.#d.clock.monotonic());
      log.debug(
        { phase: own.phase, conditions: Object.fromEntries(conditions.map(([type, s, reason]) => [type, `${s}/${reason}`])) },
        written ? 'status written' : 'status unchanged; not written',
      );
      return written;
    } catch (err) {
      if (isNotFound(err)) throw new OwnerGone(`${MicroserviceKind.kind} ${key.namespace}/${key.name} was deleted`, ms.metadata.uid ?? '');
      throw err;
    }
  }

  /** When this process last wrote the status of `key` (`namespace/name`), monotonic ms; undefined if never. */
  lastWrittenAt(key: string): number | undefined {
    return this.#writtenAt.get(key);
  }

  /** Forgets `key` (the Microservice left the cache). */
  forget(key: string): void {
    this.#writtenAt.delete(key);
  }

  /** `entries` set on `ms`'s conditions (other condition types kept as they are). */
  #conditions(ms: Microservice, entries: ConditionEntry[]): Condition[] {
    const now = toRfc3339(new Date(this.#d.clock.now()));
    let conditions = (ms.status?.conditions ?? []) as Condition[];
    for (const [type, status, reason, message] of entries) {
      conditions = setCondition(conditions, { type, status, reason, message, observedGeneration: ms.metadata.generation ?? 0 }, now);
    }
    return conditions;
  }
}
