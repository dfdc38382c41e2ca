/**
 * The account watches (ADR 0028): one `FleetWatch` per vendor account in use — an (endpoint,
 * token) pair some provider reconciled with — reading the whole account every
 * `observeIntervalMs`, and waking exactly the providers whose vendor state changed.
 *
 * What a caller (the reconciler, the operator's wiring) can rely on:
 * - `use(endpoint, token, key)` registers a provider as a user of that account and returns its
 *   watch; its `snapshot()` is what the reconciler reads instead of calling the vendor per
 *   provider. A provider is a user of one account at a time (a rotated token moves it).
 *   `peek(endpoint, token)` returns the account's watch when it has one, registering nobody and
 *   starting nothing: a reconcile reads it before the vendor has taken the token.
 *   `release(key)` ends a provider's use (it is gone, or its latest reconcile used no account:
 *   its credentials are missing, say).
 * - Watches poll only while `start(signal)` runs (the operator leads), and only while their
 *   account has a user: the last user's leaving stops and drops the watch at once (a round in
 *   flight is aborted), so no account is read with a token no provider names any more. The
 *   vendor clients no call used for their idle time are closed (`VendorApis.sweepIdle`) once a
 *   minute.
 * - After each round: the providers of every instance whose state changed (health, limits, quota
 *   exhausted, throttled, …) or that vanished are enqueued at once; every user of the account when
 *   the account's state changed; providers whose usage figures alone moved at most once per
 *   `usageRefreshMs` each (the status write bound does the rest: `usage-status.ts`).
 * - A failing round is logged (at most once per minute per account) and leaves the previous
 *   snapshot, which ages: the reconciler stops trusting it and asks the vendor directly.
 * @module
 */
import type { Logger } from 'pino';
import type { Clock, Runnable } from '@converge/runtime';
import { FleetWatch, type FleetChange, type StateKey } from './vendor/index.ts';
import { accountId } from './vendor-api.ts';
import type { VendorApis } from './vendor-api.ts';

export interface AccountWatchesOptions {
  vendors: Pick<VendorApis, 'forEndpoint' | 'sweepIdle'>;
  clock: Clock;
  intervalMs: number;
  /** Usage-only changes wake a provider at most this often. */
  usageRefreshMs: number;
  /** The provider keys (`ns/name`) whose `status.providerID` is this instance. */
  keysForInstance(instanceId: string): string[];
  enqueue(key: string): void;
  stateKey?: StateKey;
  log?: Logger;
}

interface Entry {
  id: string;
  endpoint: string;
  watch: FleetWatch;
  users: Set<string>;
  lastUsageWake: Map<string, number>;
  lastErrorLog: number;
  abort?: AbortController;
  running?: Promise<void>;
}

export class AccountWatches implements Runnable {
  readonly name = 'vendor-account-watches';
  readonly #o: AccountWatchesOptions;
  readonly #entries = new Map<string, Entry>();
  /** Which account each provider key uses. */
  readonly #keyToEntry = new Map<string, string>();
  /** Loops of dropped watches still winding down (a round being aborted): `start` waits for them. */
  readonly #stopping = new Set<Promise<void>>();
  /** Rounds and failures of dropped watches: the stats' counts never go back. */
  #retired = { rounds: 0, failures: 0 };
  #signal: AbortSignal | undefined;

  constructor(options: AccountWatchesOptions) {
    this.#o = options;
  }

  /** Registers `key` as a user of (endpoint, token) and returns that account's watch. */
  use(endpoint: string, token: string, key: string): FleetWatch {
    const id = accountId(endpoint, token);
    let entry = this.#entries.get(id);
    if (!entry) {
      entry = this.#create(id, endpoint, token);
      this.#entries.set(id, entry);
    }
    const previous = this.#keyToEntry.get(key);
    entry.users.add(key);
    if (previous !== id) {
      this.#keyToEntry.set(key, id);
      if (previous !== undefined) this.#leave(previous, key);
    }
    if (this.#signal && !entry.running) this.#run(entry, this.#signal);
    return entry.watch;
  }

  /** The watch of (endpoint, token) when some provider uses that account; nothing is registered or started. */
  peek(endpoint: string, token: string): FleetWatch | undefined {
    return this.#entries.get(accountId(endpoint, token))?.watch;
  }

  /** An instance was just written to: no account's snapshot stands in for it until its next round. */
  forget(instanceId: string): void {
    for (const e of this.#entries.values()) e.watch.forget(instanceId);
  }

  release(key: string): void {
    const id = this.#keyToEntry.get(key);
    if (id === undefined) return;
    this.#keyToEntry.delete(key);
    this.#leave(id, key);
  }

  stats(): { accounts: number; rounds: number; failures: number } {
    let { rounds, failures } = this.#retired;
    for (const e of this.#entries.values()) {
      const s = e.watch.stats();
      rounds += s.rounds;
      failures += s.failures;
    }
    return { accounts: this.#entries.size, rounds, failures };
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    for (const entry of this.#entries.values()) this.#run(entry, signal);
    try {
      while (!signal.aborted) {
        await this.#o.clock.sleep(60_000, signal).catch(() => undefined);
        this.#o.vendors.sweepIdle(); // the clients (and tokens) of accounts no call uses any more
      }
    } finally {
      this.#signal = undefined;
      await Promise.all([...[...this.#entries.values()].map((e) => e.running), ...this.#stopping]);
      for (const e of this.#entries.values()) {
        e.running = undefined;
        e.abort = undefined;
      }
    }
  }

  /** `key` no longer uses account `id`; the account's watch stops with its last user. */
  #leave(id: string, key: string): void {
    const entry = this.#entries.get(id);
    if (!entry?.users.delete(key) || entry.users.size > 0) return;
    this.#entries.delete(id);
    entry.abort?.abort();
    const { rounds, failures } = entry.watch.stats();
    this.#retired = { rounds: this.#retired.rounds + rounds, failures: this.#retired.failures + failures };
    const running = entry.running;
    if (running) {
      this.#stopping.add(running);
      void running.finally(() => this.#stopping.delete(running));
    }
  }

  #run(entry: Entry, signal: AbortSignal): void {
    // A signal aborted already never fires its 'abort' again: a watch started under it would poll
    // for good (an account first used in the moment the stop began, or a start after the stop).
    if (signal.aborted) return;
    const abort = new AbortController();
    const stop = (): void => abort.abort();
    signal.addEventListener('abort', stop, { once: true });
    entry.abort = abort;
    entry.running = entry.watch.run(abort.signal).finally(() => signal.removeEventListener('abort', stop));
  }

  #create(id: string, endpoint: string, token: string): Entry {
    const api = this.#o.vendors.forEndpoint(endpoint, token);
    const never = new AbortController().signal;
    const entry: Entry = {
      id,
      endpoint,
      users: new Set(),
      lastUsageWake: new Map(),
      lastErrorLog: Number.NEGATIVE_INFINITY,
      watch: undefined as unknown as FleetWatch,
    };
    entry.watch = new FleetWatch({
      client: {
        getAccount: (opts = {}) => api.getAccount(opts.signal ?? never),
        listInstanceStates: (page = {}, opts = {}) => api.listInstanceStates(page, opts.signal ?? never),
      },
      clock: this.#o.clock,
      intervalMs: this.#o.intervalMs,
      ...(this.#o.stateKey ? { stateKey: this.#o.stateKey } : {}),
      onChange: (change) => this.#wake(entry, change),
      onError: (err) => {
        const now = this.#o.clock.monotonic();
        if (now - entry.lastErrorLog < 60_000) return;
        entry.lastErrorLog = now;
        this.#o.log?.warn({ endpoint, err: err instanceof Error ? err.message : String(err) }, 'reading the vendor account failed; providers are checked one by one until it works again');
      },
      // Said when the set changes, not every round: the providers of those instances say it in
      // their status (they read their instance themselves and meet the problem).
      onUnreadable: (items) => {
        if (items.length === 0) this.#o.log?.info({ endpoint }, 'every instance the vendor lists can be read again');
        else this.#o.log?.warn({ endpoint, unreadable: items.length, first: items.slice(0, 5).map((u) => ({ id: u.id ?? null, problem: u.problem })) }, 'the vendor lists instances outside its contract; their providers read them one by one');
      },
    });
    return entry;
  }

  #wake(entry: Entry, change: FleetChange): void {
    const keys = new Set<string>();
    if (change.accountChanged) for (const k of entry.users) keys.add(k);
    for (const id of [...change.changed, ...change.gone]) for (const k of this.#o.keysForInstance(id)) keys.add(k);
    for (const id of change.gone) entry.lastUsageWake.delete(id);
    const now = this.#o.clock.monotonic();
    for (const id of change.usageChanged) {
      if (now - (entry.lastUsageWake.get(id) ?? Number.NEGATIVE_INFINITY) < this.#o.usageRefreshMs) continue;
      entry.lastUsageWake.set(id, now);
      for (const k of this.#o.keysForInstance(id)) keys.add(k);
    }
    for (const k of keys) this.#o.enqueue(k);
  }
}
