/**
 * What a provider's key holds in the operator beyond its reconcile: a place among the users of
 * an account's watch (`account-watches.ts`) and a place among the objects waiting for a vendor
 * endpoint to answer again (`vendor-recovery.ts`).
 *
 * Guarantee: a key holds each only while its latest reconcile took it. `end(key)`, called when
 * every reconcile of the key ends (the provider gone from the cache included), lets go of what
 * that reconcile did not take again: a provider whose credentials went, whose endpoint change
 * was refused, whose token the vendor refused, or whose create waits for a change after a refusal
 * polls no account; one the vendor answered, whatever the answer, waits for no endpoint. A
 * reconcile may read an account's watch without taking a place (`peekAccount`).
 *
 * Assumption: no two reconciles of one key run at once (the work queue's guarantee), so what a
 * reconcile took is kept per key.
 * @module
 */
import type { AccountWatches } from './account-watches.ts';
import type { VendorRecovery } from './vendor-recovery.ts';
import type { FleetWatch } from './vendor/index.ts';

export class KeyHolds {
  readonly #watches: Pick<AccountWatches, 'use' | 'release' | 'peek'> | undefined;
  readonly #recovery: Pick<VendorRecovery, 'blocked' | 'settled'> | undefined;
  /** Keys whose reconcile in progress used an account's watch. */
  readonly #used = new Set<string>();
  /** Keys whose reconcile in progress found their endpoint not answering. */
  readonly #blocked = new Set<string>();

  constructor(watches: Pick<AccountWatches, 'use' | 'release' | 'peek'> | undefined, recovery: Pick<VendorRecovery, 'blocked' | 'settled'> | undefined) {
    this.#watches = watches;
    this.#recovery = recovery;
  }

  /** This reconcile reads the account's watch: `key` is one of its users (undefined without watches). */
  useAccount(endpoint: string, token: string, key: string): FleetWatch | undefined {
    if (!this.#watches) return undefined;
    this.#used.add(key);
    return this.#watches.use(endpoint, token, key);
  }

  /** The account's watch if some provider uses it; `key` takes no place among its users. */
  peekAccount(endpoint: string, token: string): FleetWatch | undefined {
    return this.#watches?.peek(endpoint, token);
  }

  /** This reconcile got no answer from `endpoint`: `key` waits for it to answer again. */
  blocked(endpoint: string, key: string): void {
    if (!this.#recovery) return;
    this.#blocked.add(key);
    this.#recovery.blocked(endpoint, key);
  }

  /** The reconcile of `key` ended: what it did not take is let go. */
  end(key: string): void {
    if (!this.#used.delete(key)) this.#watches?.release(key);
    if (!this.#blocked.delete(key)) this.#recovery?.settled(key);
  }
}
