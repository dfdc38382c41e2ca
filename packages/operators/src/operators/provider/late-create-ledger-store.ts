/**
 * One ConfigMap of the late-create ledger (`late-create-ledger.ts`) in the operator's own
 * namespace: a shard of it (`late-create-ledger-shards.ts` spreads the entries over several),
 * read and written by the late-create sweep (`late-creates.ts`) only.
 *
 * Guarantees:
 * - **A change resolves once it is stored.** `change` edits the ConfigMap's `data` read just
 *   before; the write is conditional on the version read, and repeated on a conflict (another
 *   replica wrote meanwhile) with the change applied to a fresh read; it throws after 5 conflicts
 *   in a row, or on any other failure.
 * - **Concurrent changes share one write.** Changes asked for while a write is in flight are
 *   applied together in the next read-modify-write, so that many reconciles recording keys at
 *   once (a mass creation or deletion) cost a handful of writes and no conflicts among themselves.
 *   A change is applied and stored entirely or not at all; one whose caller gave up (its signal
 *   aborted) before its turn is dropped; a write in flight is cancelled only when every caller in
 *   it gave up.
 * - No write when no change changed anything.
 *
 * Assumption: `change` is a pure edit of `data` (it may run again after a conflict).
 * @module
 */
import { ConfigMapKind, isAlreadyExists, isConflict, isNotFound } from '@converge/runtime';
import type { ConfigMap, KubeClient } from '@converge/runtime';
import type { LedgerData } from './late-create-ledger.ts';

/** Edits `data` in place; says whether it changed anything. */
export type LedgerChange = (data: LedgerData) => boolean;

interface Queued {
  change: LedgerChange;
  signal: AbortSignal;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class LedgerStore {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #name: string;
  readonly #queued: Queued[] = [];
  #writing = false;

  constructor(client: KubeClient, namespace: string, name: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#name = name;
  }

  /** `namespace/name` of the ConfigMap, for logs. */
  get ref(): string {
    return `${this.#namespace}/${this.#name}`;
  }

  /** The ConfigMap's `data`, `undefined` while it does not exist. */
  async read(signal: AbortSignal): Promise<LedgerData | undefined> {
    return (await this.#get(signal))?.data;
  }

  /** Applies `change` and stores the result (see the module header). */
  change(change: LedgerChange, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queued.push({ change, signal, resolve, reject });
      if (!this.#writing) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#queued.length) {
        const batch: Queued[] = [];
        for (const q of this.#queued.splice(0)) {
          if (q.signal.aborted) q.reject(q.signal.reason);
          else batch.push(q);
        }
        if (!batch.length) continue;
        const cancel = whenAllAborted(batch.map((q) => q.signal));
        try {
          await this.#readModifyWrite((data) => batch.reduce((changed, q) => q.change(data) || changed, false), cancel.signal);
          for (const q of batch) q.resolve();
        } catch (err) {
          for (const q of batch) q.reject(err);
        } finally {
          cancel.dispose();
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  /** Read, change, write to the version read; again on a conflict. */
  async #readModifyWrite(change: LedgerChange, signal: AbortSignal): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const cm = await this.#get(signal);
      const data = { ...cm?.data };
      if (!change(data)) return;
      try {
        if (cm) await this.#client.replace(ConfigMapKind, { ...cm, data }, { signal });
        else await this.#client.create(ConfigMapKind, this.#fresh(data), { signal });
        return;
      } catch (err) {
        if (attempt >= 4 || !(isConflict(err) || isAlreadyExists(err))) throw err;
      }
    }
  }

  async #get(signal: AbortSignal): Promise<ConfigMap | undefined> {
    try {
      return await this.#client.get(ConfigMapKind, { namespace: this.#namespace, name: this.#name }, { signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  #fresh(data: LedgerData): ConfigMap {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: this.#name,
        namespace: this.#namespace,
        labels: { 'app.kubernetes.io/name': 'converge', 'app.kubernetes.io/component': 'provider-late-creates' },
        annotations: { 'dhp.example.com/purpose': 'idempotency keys of DigitalHumanProviders whose create may reach the vendor with nothing in the cluster pointing at it; looked up and cleaned by the operator' },
      },
      data,
    };
  }
}

/** A signal that aborts once every one of `signals` has; `dispose` removes its listeners. */
function whenAllAborted(signals: AbortSignal[]): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  let left = signals.length;
  const listeners: (() => void)[] = [];
  for (const s of signals) {
    if (s.aborted) {
      left--;
      continue;
    }
    const onAbort = () => {
      if (--left === 0) controller.abort(s.reason);
    };
    s.addEventListener('abort', onAbort, { once: true });
    listeners.push(() => s.removeEventListener('abort', onAbort));
  }
  if (left === 0) controller.abort();
  return { signal: controller.signal, dispose: () => listeners.forEach((remove) => remove()) };
}
