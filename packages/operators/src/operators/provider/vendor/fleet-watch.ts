/**
 * `FleetWatch`: what one vendor account (one endpoint, one token) looks like now — the account's
 * state and every instance's health, limits and usage — read with one `getAccount` and the pages
 * of `listInstanceStates` per round, whatever the number of instances (ADR 0028). No Kubernetes:
 * it reports which instance ids changed, the operator maps them to its objects.
 *
 * Guarantees:
 * - A round either completes (account and every page read) and replaces the snapshot at once, or
 *   fails and leaves the previous snapshot in place, older: a reader never sees half a round.
 *   `ageMs()` (monotonic) says how old the snapshot is; Infinity before the first round.
 * - After each completed round `onChange` hears, by instance id: `changed` — the instance's state
 *   key differs from the previous round's (or it is new); `gone` — it was listed before and is not
 *   now; `usageChanged` — only its usage figures moved; and `accountChanged`. A round that changes
 *   nothing reports nothing (no call of `onChange`).
 * - `run(signal)` polls every `intervalMs` (measured from the start of a round, so a slow vendor
 *   does not stretch the rhythm beyond one round) until the signal aborts; it never throws for a
 *   vendor failure (`onError` hears it) and resolves once stopped.
 * - **A refused token backs off**: after n rounds in a row the vendor refused the token (401/403,
 *   `Unauthorized`), the next starts `intervalMs × 2ⁿ` after the last, at most `maxBackoffMs`
 *   (default 5 minutes) — a revoked token is not sent every interval for as long as it is named.
 *   Any completed round brings the interval back; other failures (the vendor down) keep it.
 * - Paging ends on the vendor's last page; a repeated page token or more than `maxPages` pages
 *   fails the round (a vendor bug must not loop forever).
 * - **An instance the client cannot read** (outside the vendor contract) does not fail the round:
 *   it is left out of the snapshot (`instance(id)` undefined: its caller asks the vendor itself
 *   and meets the problem there), reported once in `changed` when it becomes unreadable (never
 *   as `gone`: it is still listed), and `onUnreadable` hears the round's unreadable items each
 *   time that set changes (an empty list once none is left).
 *
 * - `forget(id)` after a write to an instance: `instance(id)` answers undefined until a round
 *   that started after the write has completed, so nobody acts on what the instance looked like
 *   before it (a limit set back twice, say).
 * - Rounds may overlap (`poll()` is public): one that completes after a round that started later
 *   is dropped (it reports no change), so the snapshot never goes back in time.
 *
 * Caveat: an instance created during a round may be missing from it; callers that need a
 * specific instance fall back to asking for it (`getInstance`) when the snapshot lacks it.
 * @module
 */
import type { Clock } from '@converge/runtime';
import type { VendorClient, CallOptions } from './client.ts';
import type { UnreadableInstanceState, VendorAccount, VendorInstanceState } from './types.ts';
import { isVendorError } from './errors.ts';

/** What decides "the state changed" for an instance; usage figures alone are not state. */
export type StateKey = (state: VendorInstanceState, account: VendorAccount) => string;

/** Health (status and message), limits, quota exhausted or not, throttled or not. */
export const defaultStateKey: StateKey = (s) =>
  JSON.stringify([s.health.status, s.health.message ?? '', s.limits.maxConcurrency, s.limits.requestsPerMinute, s.limits.dailyQuota, s.usage.quotaRemaining === 0, s.usage.throttledRequests > 0]);

const usageKey = (s: VendorInstanceState): string => JSON.stringify([s.usage.callsToday, s.usage.quotaRemaining, s.usage.refusedToday, s.usage.throttledRequests, s.usage.quotaResetAt]);
/** The state key of an instance listed but unreadable (no state key of a readable one is this). */
const UNREADABLE = 'unreadable';
const accountKey = (a: VendorAccount): string => JSON.stringify([a.state, a.reason ?? '', a.message ?? '']);

export interface FleetChange {
  accountChanged: boolean;
  changed: string[];
  gone: string[];
  usageChanged: string[];
}

export interface FleetSnapshot {
  account: VendorAccount;
  /** By instance id. */
  instances: ReadonlyMap<string, VendorInstanceState>;
  /** Wall-clock time (ms) the round that made it finished. */
  observedAt: number;
}

export interface FleetWatchOptions {
  client: Pick<VendorClient, 'getAccount' | 'listInstanceStates'>;
  clock: Clock;
  intervalMs: number;
  /** Instances per page. Default 200. */
  pageSize?: number;
  /** Default 1000. */
  maxPages?: number;
  stateKey?: StateKey;
  /** The longest wait between rounds while the vendor refuses the token. Default 300 000 (5 minutes). */
  maxBackoffMs?: number;
  onChange?: (change: FleetChange) => void;
  onError?: (err: unknown) => void;
  /** The listed items the client could not read, when that set changed since the last round (see above). */
  onUnreadable?: (items: UnreadableInstanceState[]) => void;
}

interface Seen {
  state: string;
  usage: string;
}

export class FleetWatch {
  readonly #o: FleetWatchOptions;
  readonly #stateKey: StateKey;
  #snapshot: FleetSnapshot | undefined;
  #at = Number.NEGATIVE_INFINITY;
  #seen = new Map<string, Seen>();
  #account: string | undefined;
  #rounds = 0;
  #failures = 0;
  /** When (monotonic) the round behind the snapshot started. */
  #roundStart = Number.NEGATIVE_INFINITY;
  /** Instances written to, and when: not trusted from rounds that started before. */
  readonly #written = new Map<string, number>();
  /** What the last completed round could not read (ids and problems), to tell a change. */
  #unreadableKey = '[]';
  #unreadable = 0;

  constructor(options: FleetWatchOptions) {
    if (!(options.intervalMs > 0)) throw new RangeError('FleetWatch: intervalMs must be > 0');
    this.#o = options;
    this.#stateKey = options.stateKey ?? defaultStateKey;
  }

  snapshot(): FleetSnapshot | undefined {
    return this.#snapshot;
  }

  /** The instance as the last completed round saw it; undefined when it was written to since that round started. */
  instance(id: string): VendorInstanceState | undefined {
    const written = this.#written.get(id);
    if (written !== undefined && written >= this.#roundStart) return undefined;
    return this.#snapshot?.instances.get(id);
  }

  /** The caller just wrote to this instance: the snapshot's view of it is out of date. */
  forget(id: string): void {
    this.#written.set(id, this.#o.clock.monotonic());
  }

  /** Milliseconds since the last completed round (monotonic); Infinity before the first. */
  ageMs(): number {
    return this.#o.clock.monotonic() - this.#at;
  }

  /** `unreadable`: items of the last completed round the client could not read. */
  stats(): { rounds: number; failures: number; instances: number; unreadable: number } {
    return { rounds: this.#rounds, failures: this.#failures, instances: this.#snapshot?.instances.size ?? 0, unreadable: this.#unreadable };
  }

  /**
   * One round. Rejects on a vendor failure (the snapshot is then unchanged) or the signal's abort;
   * reports no change when a round that started later has completed first.
   */
  async poll(signal?: AbortSignal): Promise<FleetChange> {
    const opts: CallOptions = signal ? { signal } : {};
    const started = this.#o.clock.monotonic();
    const account = await this.#o.client.getAccount(opts);
    const instances = new Map<string, VendorInstanceState>();
    const unreadable: UnreadableInstanceState[] = [];
    const tokens = new Set<string>();
    let pageToken: string | undefined;
    const maxPages = this.#o.maxPages ?? 1000;
    for (let page = 0; ; page++) {
      if (page >= maxPages) throw new Error(`vendor listInstanceStates: more than ${maxPages} pages; giving up this round`);
      const got = await this.#o.client.listInstanceStates({ pageSize: this.#o.pageSize ?? 200, ...(pageToken ? { pageToken } : {}) }, opts);
      for (const item of got.items) instances.set(item.instance.id, item);
      unreadable.push(...(got.unreadable ?? []));
      pageToken = got.nextPageToken;
      if (pageToken === undefined) break;
      if (tokens.has(pageToken)) throw new Error('vendor listInstanceStates: the same page token came twice; giving up this round');
      tokens.add(pageToken);
    }
    // An id read on one page and unreadable on another (the listing moved under the pages) is
    // served as read; only the rest is unreadable.
    const unread = unreadable.filter((u) => u.id === undefined || !instances.has(u.id));
    return this.#commit(account, instances, unread, started);
  }

  #commit(account: VendorAccount, instances: Map<string, VendorInstanceState>, unreadable: UnreadableInstanceState[], started: number): FleetChange {
    const change: FleetChange = { accountChanged: false, changed: [], gone: [], usageChanged: [] };
    // An overlapping round that started earlier but finished later read older facts: dropping it
    // keeps the snapshot from going back in time (and an instance written in between from being
    // served as it was before the write, whose mark the later round's commit has cleared).
    if (started < this.#roundStart) return change;
    const aKey = accountKey(account);
    change.accountChanged = this.#account !== undefined && this.#account !== aKey;
    const seen = new Map<string, Seen>();
    for (const [id, state] of instances) {
      const now = { state: this.#stateKey(state, account), usage: usageKey(state) };
      const before = this.#seen.get(id);
      if (!before || before.state !== now.state) change.changed.push(id);
      else if (before.usage !== now.usage) change.usageChanged.push(id);
      seen.set(id, now);
    }
    // Listed but unreadable: out of the snapshot, still there (not gone); its providers are woken
    // once, when it becomes unreadable, and read it themselves.
    for (const { id } of unreadable) {
      if (id === undefined || instances.has(id) || seen.has(id)) continue;
      if (this.#seen.get(id)?.state !== UNREADABLE) change.changed.push(id);
      seen.set(id, { state: UNREADABLE, usage: '' });
    }
    for (const id of this.#seen.keys()) if (!seen.has(id)) change.gone.push(id);
    this.#seen = seen;
    this.#account = aKey;
    this.#snapshot = { account, instances, observedAt: this.#o.clock.now() };
    this.#at = this.#o.clock.monotonic();
    this.#roundStart = started;
    for (const [id, at] of this.#written) if (at < started) this.#written.delete(id);
    this.#rounds++;
    this.#unreadable = unreadable.length;
    const unreadableKey = JSON.stringify(unreadable.map((u) => [u.id ?? null, u.problem]).sort());
    if (unreadableKey !== this.#unreadableKey) {
      this.#unreadableKey = unreadableKey;
      this.#o.onUnreadable?.(unreadable);
    }
    return change;
  }

  /** Polls every `intervalMs` until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    /** Rounds in a row the vendor refused the token in. */
    let refused = 0;
    while (!signal.aborted) {
      const started = this.#o.clock.monotonic();
      let change: FleetChange | undefined;
      try {
        change = await this.poll(signal);
        refused = 0;
      } catch (err) {
        if (signal.aborted) break;
        this.#failures++;
        refused = isVendorError(err) && err.kind === 'Unauthorized' ? refused + 1 : 0;
        this.#o.onError?.(err);
      }
      if (change && (change.accountChanged || change.changed.length || change.gone.length || change.usageChanged.length)) this.#o.onChange?.(change);
      const pause = refused ? Math.min(this.#o.maxBackoffMs ?? 300_000, this.#o.intervalMs * 2 ** refused) : this.#o.intervalMs;
      const wait = Math.max(0, pause - (this.#o.clock.monotonic() - started));
      try {
        await this.#o.clock.sleep(wait, signal);
      } catch {
        break; // aborted
      }
    }
  }
}
