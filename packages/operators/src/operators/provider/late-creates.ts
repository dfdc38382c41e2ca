/**
 * The late-create sweep: deletes a vendor instance whose create reached the vendor after the
 * finalizer of its DigitalHumanProvider was released (ADR 0037).
 *
 * A deletion releases the finalizer once the vendor lists no instance for the CR's idempotency
 * key, no sooner than `createSettleMs` after the last create request. A create can still land
 * later: the vendor was slow to apply it after the call timed out, or the replica that sent it
 * was killed with the request on its way. Nothing in the cluster would then ever point at it.
 * So, before the finalizer goes, the reconciler `record`s the key in the ledger (ConfigMaps of
 * the operator's own namespace, `late-create-ledger-shards.ts`); the sweep looks the key up
 * again — `settleMs` after the release, then at doubling gaps up to `windowMs` after the create
 * request — and deletes what it finds.
 *
 * The same holds for a provider that kube-apiserver removes past its finalizer (its race
 * kubernetes#77988: a DELETE that found no finalizer removes the object even though one was added
 * meanwhile, so no deletion reconcile ever runs). Before a provider's first create, the reconciler
 * `record`s a `beforeCreate` entry; while the provider exists the sweep only checks that it does
 * (the cache, no vendor call), and drops the entry once the status records the instance and a
 * minute has passed since the create request. When the provider is gone without its finalizer
 * honoured, or replaced by another object of the same name (the cache says so, and a read from
 * the API server confirms it), the key is looked up and swept like a released one. A reconcile
 * that finds its provider gone (`notice`) has it looked at once.
 *
 * Guarantees:
 * - **Written before the release.** `record` resolves only once the entry is stored (conditional
 *   writes, retried on conflicts); when it throws, the caller keeps the finalizer. A restart,
 *   a failover or a SIGKILL loses no entry: the next leader loads the ledger and looks at every
 *   entry at once.
 * - **Only keys this cluster released** are looked up, and each lookup is by the exact key (the
 *   CR's UID), so an instance someone else created in the same vendor account is never touched.
 * - **A failed look is repeated** (past the window too): an entry is dropped only after a look at
 *   or after its `until` succeeded. Looks at one key are at most `maxGapMs` (60 s) apart, so a late
 *   instance lives at most that long.
 * - **A failure delays only the keys it failed.** In a pass over one account's due keys, a key whose
 *   lookup or deletion failed is looked at again after the same gap; the others advance (or are
 *   dropped after their last look). A failure that would fail the account's other calls too (no
 *   answer, a rate limit, the token, the account) ends the pass there: the keys it did not get to
 *   are looked at again like failed ones (a vendor that does not answer costs one call per pass).
 * - **Bounded vendor load**: while an account has up to 3 released keys, each due key is looked up
 *   by key; with more, a pass over the account is one listing of it matched against all its keys,
 *   due or not (they are looked at early, and their schedules move with the listing's), so a mass
 *   deletion costs one listing per pass, however far apart its finalizers were released.
 * - **Written before the first create.** A `beforeCreate` entry is stored before that create is
 *   sent (when `record` throws, the caller sends none), so a replica killed right after it leaves
 *   the key to the next leader, which looks at every entry at start.
 * - **A live provider's instance is never swept**: a `beforeCreate` key is looked up at the vendor
 *   only after the API server answered that no provider has its UID.
 * - **Wall-clock steps** (an NTP correction, a resumed VM) neither end a window early nor hold the
 *   looks back: schedules and windows run on monotonic time from when an entry is tracked.
 * - **No needless writes**: one write per provider's first create, one per released provider whose
 *   create is younger than the window, one per batch of entries done; none while idle.
 *
 * Assumptions: the Secret named in the entry still holds the token, or this process saw it before
 * the release (the token is kept in memory only, never written anywhere).
 *
 * Caveats: a create that reaches the vendor more than `windowMs` after it was sent is not
 * caught. Without a token (the Secret deleted, and the process restarted) the entry is looked at
 * again until one appears; the log says so once per entry. A key whose endpoint this process
 * refuses to call (no longer in `provider.vendor.allowedEndpoints`) is put aside after one refused
 * look, with one warning: it stays in the ledger, unswept, until an operator allowed to call the
 * endpoint loads it.
 * @module
 */
import { isNotFound } from '@converge/runtime';
import type { Clock, EventSink, KubeClient, Runnable, Store } from '@converge/runtime';
import type { Logger } from 'pino';
import { DigitalHumanProviderKind, ProviderReason as Reason } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import { accountId } from './vendor-api.ts';
import type { VendorApi, VendorApis, VendorInstance } from './vendor-api.ts';
import type { CredentialsReader } from './credentials.ts';
import { afterPass, beforeCreateVerdict, decodeLedger, encodeEntry, firstLook, nextLook, released, retryLook } from './late-create-ledger.ts';
import { PROVIDER_FINALIZER } from './api/constants.ts';
import type { LedgerEntry, LookSchedule } from './late-create-ledger.ts';
import { ShardedLedger } from './late-create-ledger-shards.ts';
import { BY_KEY_UP_TO, lookAtAccount, refusedHere } from './late-create-account-pass.ts';
import type { KeyLook } from './late-create-account-pass.ts';

/** The `msg` of the warn line logged for each late instance the sweep deleted (the kill storm and the deletion tests count these lines). */
export const LATE_INSTANCE_DELETED_LOG = 'a create reached the vendor after the finalizer was released; its instance deleted';
/** Keys due this soon are looked at with the ones due now: deletions close together share a listing. */
const BATCH_SLACK_MS = 1_000;

export interface LateCreateSweepOptions {
  client: KubeClient;
  /** Where the ledger's ConfigMaps live: the operator's own namespace. */
  namespace: string;
  vendors: Pick<VendorApis, 'forEndpoint'>;
  credentials: Pick<CredentialsReader, 'token'>;
  /** Whether a provider still exists under an entry's UID (confirmed by a read from `client` before a `beforeCreate` key is swept). */
  providers: Store<DigitalHumanProvider>;
  events: EventSink;
  clock: Clock;
  log: Logger;
  /** The first look comes this long after the release. */
  settleMs: number;
  /** Keys are looked up until this long after the create request. */
  windowMs: number;
  /** Longest gap between two looks at one key. Default 60 s. */
  maxGapMs?: number;
  /** Told of every instance deleted (a metric). */
  onDeleted?: () => void;
}

/**
 * An entry being looked after. Its schedule, `untilAt` and `requestedAt` are monotonic ms
 * (`clock.monotonic()`): a step of the wall clock neither ends a window early (a late instance
 * then left for good) nor holds the looks back. The wall clock is read only to turn the entry's
 * dates into monotonic time, once, when it is tracked.
 */
interface Tracked {
  entry: LedgerEntry;
  untilAt: number;
  /** When the first create was sent (`entry.requestedAt`), as monotonic time. */
  requestedAt: number;
  schedule: LookSchedule;
  /** The token seen at the release; after a restart, read from the Secret. */
  token?: string;
  complainedNoToken?: boolean;
  /**
   * The API server answered that no provider has its UID (a `beforeCreate` entry, swept from then
   * on): a cache that shows one is behind, and must not drop the entry as a live provider's.
   */
  goneAtServer?: boolean;
}

export class LateCreateSweep implements Runnable {
  readonly name = 'provider-late-create-sweep';
  readonly #o: LateCreateSweepOptions;
  readonly #ledger: ShardedLedger;
  readonly #tracked = new Map<string, Tracked>();
  /** UIDs done, to be removed from the ledger in one write per shard. */
  readonly #done = new Set<string>();
  /**
   * The UIDs of the tracked `beforeCreate` entries, by `namespace/name`: a set, as a name can have
   * several (a provider removed past its finalizer and one created under its name since; after a
   * restart, both are loaded). With one UID per name, the older entry's took the newer one's
   * place, or dropped it when swept, and the newer one's `notice` was lost.
   */
  readonly #beforeCreate = new Map<string, Set<string>>();
  #wake: AbortController = new AbortController();
  /** When (monotonic) the loop's sleep ends, unless woken; -Infinity while it is not asleep. */
  #sleepsUntil = Number.NEGATIVE_INFINITY;
  #loaded = false;
  /** Entries of the ledger that could not be read when it was loaded (left there, not looked at). */
  #unreadableEntries = 0;

  constructor(options: LateCreateSweepOptions) {
    this.#o = options;
    this.#ledger = new ShardedLedger(options.client, options.namespace);
  }

  /**
   * The ledger's entries this process looks after, and those it cannot read (left in place):
   * 0 when no late create can still be caught; undefined until the ledger has been read (a
   * standby, a ledger it may not read), which says nothing either way.
   */
  get trackedKeys(): number | undefined {
    return this.#loaded ? this.#tracked.size + this.#unreadableEntries : undefined;
  }

  /** How long after a create request its key is looked up. */
  get windowMs(): number {
    return this.#o.windowMs;
  }

  /**
   * Stores the entry (throws when it cannot: the caller keeps the finalizer then) and tracks it
   * with the token used for the deletion.
   */
  async record(entry: LedgerEntry, token: string, signal: AbortSignal): Promise<void> {
    // Before the write: a removal of the finished entry, queued or in the same write, must not
    // take this one out of the ledger.
    const wasDone = this.#done.delete(entry.uid);
    try {
      await this.#ledger.set(entry.uid, encodeEntry(entry), signal);
    } catch (err) {
      if (wasDone && !this.#tracked.has(entry.uid)) this.#done.add(entry.uid);
      throw err;
    }
    const dates = this.#datesOf(entry);
    const schedule = firstLook(this.#o.clock.monotonic(), this.#o.settleMs, dates.untilAt);
    this.#track({ entry, ...dates, token, schedule });
    // The loop is woken only when this look comes before the one it sleeps for: a wake costs a
    // pass over every tracked entry, and during a mass deletion records come by the thousand.
    if (schedule.dueAt < this.#sleepsUntil) this.#wake.abort();
  }

  /**
   * Removes `uid`'s entry, if there is one, before its provider's finalizer is released without
   * cleanup (a person gave the instance up, ADR 0019): the instance is no longer ours to delete.
   * Throws when the ledger cannot be written (the caller keeps the finalizer then).
   */
  async forget(uid: string, signal: AbortSignal): Promise<void> {
    await this.#ledger.remove([uid], signal);
    this.#untrack(uid);
    this.#done.delete(uid);
  }

  /**
   * What a reconcile found in the cache under `key` (`namespace/name`): the UID of the provider
   * there, `undefined` when none. Every `beforeCreate` entry of that name under another UID is
   * looked at now. Memory only.
   */
  notice(key: string, uid: string | undefined): void {
    let due = false;
    for (const tracked of this.#beforeCreate.get(key) ?? []) {
      const t = this.#tracked.get(tracked);
      if (tracked === uid || !t) continue;
      t.schedule = { dueAt: this.#o.clock.monotonic(), gapMs: t.schedule.gapMs };
      due = true;
    }
    if (due) this.#wake.abort();
  }

  #track(t: Tracked): void {
    const previous = this.#tracked.get(t.entry.uid);
    if (previous?.entry.beforeCreate) this.#unnameBeforeCreate(previous.entry);
    this.#tracked.set(t.entry.uid, t);
    if (t.entry.beforeCreate) this.#beforeCreate.set(nameOf(t.entry), (this.#beforeCreate.get(nameOf(t.entry)) ?? new Set()).add(t.entry.uid));
  }

  /** Takes the UID of `entry` (a `beforeCreate` one) out of those tracked under its name; the others stay. */
  #unnameBeforeCreate(entry: LedgerEntry): void {
    const uids = this.#beforeCreate.get(nameOf(entry));
    uids?.delete(entry.uid);
    if (uids?.size === 0) this.#beforeCreate.delete(nameOf(entry));
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.#load(signal);
    while (!signal.aborted) {
      await this.#lookDue(signal);
      if (this.#done.size) await this.#forgetDone(signal);
      let next = Number.POSITIVE_INFINITY;
      for (const t of this.#tracked.values()) next = Math.min(next, t.schedule.dueAt);
      let waitMs = Number.isFinite(next) ? Math.max(10, next - this.#o.clock.monotonic()) : 3_600_000;
      // Finished entries whose removal failed are removed again within the longest gap between
      // looks: with no entry left to look at, the idle wait would keep them in the ledger an hour.
      if (this.#done.size) waitMs = Math.min(waitMs, this.#maxGapMs());
      this.#wake = new AbortController();
      this.#sleepsUntil = this.#o.clock.monotonic() + waitMs;
      await this.#o.clock.sleep(waitMs, AbortSignal.any([signal, this.#wake.signal])).catch(() => undefined);
      this.#sleepsUntil = Number.NEGATIVE_INFINITY;
    }
  }

  /** Loads the ledger (retrying until it answers); every entry is looked at once at start. */
  async #load(signal: AbortSignal): Promise<void> {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        const { entries, unreadable } = decodeLedger(await this.#ledger.load(signal));
        if (unreadable.length) this.#o.log.warn({ configMap: this.#ledger.ref, keys: unreadable }, 'ledger entries that cannot be read are left in place and not looked at');
        const now = this.#o.clock.monotonic();
        for (const entry of entries) {
          if (this.#tracked.has(entry.uid)) continue;
          this.#track({ entry, ...this.#datesOf(entry), schedule: { dueAt: now, gapMs: Math.max(1, this.#o.settleMs / 2) } });
        }
        if (entries.length) this.#o.log.info({ configMap: this.#ledger.ref, entries: entries.length }, 'released keys loaded; looking for late creates');
        this.#unreadableEntries = unreadable.length;
        this.#loaded = true;
        return;
      } catch (err) {
        if (signal.aborted) return;
        if (attempt === 0) this.#o.log.warn({ err, configMap: this.#ledger.ref }, 'cannot read the ledger of released keys yet; retrying');
        await this.#o.clock.sleep(Math.min(30_000, 1_000 * 2 ** attempt), signal).catch(() => undefined);
      }
    }
  }

  /**
   * Looks at every due entry, grouped by account: by key when the account has few released keys,
   * else by one listing of it that covers every key of the account, due or not yet (a listing
   * costs the same for one key or all, and looking early only adds a look).
   */
  async #lookDue(signal: AbortSignal): Promise<void> {
    const now = this.#o.clock.monotonic();
    const isDue = (t: Tracked) => t.schedule.dueAt <= now + BATCH_SLACK_MS;
    const tracked = [...this.#tracked.values()];
    if (!tracked.some(isDue)) return; // woken by a new record: nothing to look at yet
    const groups = new Map<string, { vendor: VendorApi; due: Tracked[]; notDue: Tracked[] }>();
    for (const t of tracked) {
      if (signal.aborted) return;
      // Recorded again (a released key replacing its beforeCreate entry) or finished while this
      // pass waited on an earlier key: the entry taken at the start is no longer the one to judge
      // (nor could it finish the one tracked now: `#finish` finishes only the current entry).
      if (this.#tracked.get(t.entry.uid) !== t) continue;
      const due = isDue(t);
      const token = due ? await this.#dueToken(t, now, signal) : await this.#quietToken(t, signal);
      if (!token) continue;
      const id = accountId(t.entry.endpoint, token);
      let group = groups.get(id);
      if (!group) groups.set(id, (group = { vendor: this.#o.vendors.forEndpoint(t.entry.endpoint, token), due: [], notDue: [] }));
      (due ? group.due : group.notDue).push(t);
    }
    for (const { vendor, due, notDue } of groups.values()) {
      if (signal.aborted) return;
      if (!due.length) continue;
      await this.#lookAtAccount(vendor, due, due.length + notDue.length > BY_KEY_UP_TO ? notDue : [], signal);
    }
  }

  /**
   * The token to look at a due key with; `undefined` when there is none, or the key is done (it
   * belongs to a live provider) — the key's schedule and the log say so.
   */
  async #dueToken(t: Tracked, now: number, signal: AbortSignal): Promise<string | undefined> {
    if (t.entry.beforeCreate && !(await this.#providerGone(t, now, signal))) return undefined;
    const { entry } = t;
    const live = this.#o.providers.get({ namespace: entry.namespace, name: entry.name });
    if (live?.metadata.uid === entry.uid && !live.metadata.deletionTimestamp && !t.goneAtServer) {
      this.#log(entry).warn('a released key belongs to a live DigitalHumanProvider; not swept');
      this.#finish(t);
      return undefined;
    }
    let token: string | undefined;
    try {
      token = t.token ?? (await this.#o.credentials.token(entry.namespace, entry.secret.name, entry.secret.key, signal));
    } catch (err) {
      this.#failed(t, now, 'cannot read the token to look for a late create with', err);
      return undefined;
    }
    if (!token) {
      if (!t.complainedNoToken) this.#log(entry).warn({ secret: entry.secret.name, key: entry.secret.key }, 'no token to look for a late create with; looking again later');
      t.complainedNoToken = true;
      t.schedule = retryLook(t.schedule, now, this.#maxGapMs());
    }
    return token;
  }

  /**
   * For a due `beforeCreate` entry: whether its provider is gone without its finalizer honoured;
   * the entry is then swept as a released key from now on (in memory: after a restart the same
   * answer is found again). Otherwise the entry waits for its next look, or is done.
   */
  async #providerGone(t: Tracked, now: number, signal: AbortSignal): Promise<boolean> {
    const { entry } = t;
    const ref = { namespace: entry.namespace, name: entry.name };
    let found = this.#o.providers.get(ref);
    if (found?.metadata.uid !== entry.uid) {
      // The cache may not have caught up (a restart, a watch behind): the API server decides.
      try {
        found = await this.#o.client.get(DigitalHumanProviderKind, ref, { signal });
      } catch (err) {
        if (!isNotFound(err)) {
          this.#failed(t, now, 'cannot read the provider of a key recorded before its create; looking again later', err);
          return false;
        }
        found = undefined;
      }
      if (this.#tracked.get(entry.uid) !== t) return false; // forgotten meanwhile (an abandonment)
    }
    const hasOurFinalizer = found?.metadata.finalizers?.includes(PROVIDER_FINALIZER) ?? false;
    const verdict = beforeCreateVerdict(entry, found, hasOurFinalizer, { now: this.#o.clock.monotonic(), until: t.untilAt, requestedAt: t.requestedAt });
    if (verdict === 'done') {
      this.#finish(t);
      return false;
    }
    if (verdict === 'keep') {
      t.schedule = nextLook(t.schedule, now, t.untilAt, this.#maxGapMs()) ?? retryLook(t.schedule, now, this.#maxGapMs());
      return false;
    }
    this.#unnameBeforeCreate(entry);
    t.entry = released(entry);
    t.goneAtServer = true;
    t.schedule = { dueAt: now, gapMs: Math.max(1, this.#o.settleMs / 2) };
    this.#log(entry).warn(
      { requestedAt: entry.requestedAt, replacedBy: found?.metadata.uid },
      'the provider was removed past its finalizer (kube-apiserver, kubernetes#77988) after its first create was sent; its key is swept',
    );
    return true;
  }

  /** The token of a key not due yet, to count it with its account; a failure is left to its own look. */
  async #quietToken(t: Tracked, signal: AbortSignal): Promise<string | undefined> {
    if (t.entry.beforeCreate) return undefined; // not looked up with its account while its provider lives
    if (t.token) return t.token;
    return this.#o.credentials.token(t.entry.namespace, t.entry.secret.name, t.entry.secret.key, signal).catch(() => undefined);
  }

  /**
   * One pass over the due keys of one account (the vendor calls: `late-create-account-pass.ts`).
   * Each key's schedule follows its own outcome (`afterPass`): a failure about one instance or
   * request leaves the other keys to their looks; one that would fail every call to the account
   * ends the pass, and the keys it did not reach are looked at again like failed ones. `early`
   * keys, not due yet, ride along in a listing (there are some only when the account has more keys
   * than are looked up by key): looked at, they advance like the others; a failure leaves their
   * schedule as it was.
   */
  async #lookAtAccount(vendor: VendorApi, dueNow: Tracked[], early: Tracked[], signal: AbortSignal): Promise<void> {
    const lookedAt = this.#o.clock.monotonic();
    const look = (t: Tracked, isEarly: boolean): KeyLook<Tracked> => ({ t, early: isEarly, outcome: 'notLooked' });
    const looks = [...dueNow.map((t) => look(t, false)), ...early.map((t) => look(t, true))];
    const pass = await lookAtAccount(vendor, looks, (entry, instance) => this.#deleteLate(vendor, entry, instance, signal), this.#o.log, signal);
    if (pass.aborted) return;
    const { ended } = pass;
    // A key recorded again meanwhile (defensive: one UID is deleted once) keeps its new schedule.
    const current = looks.filter(({ t }) => this.#tracked.get(t.entry.uid) === t);
    const { next, done } = afterPass(current.map(({ t, outcome }) => ({ uid: t.entry.uid, schedule: t.schedule, untilAt: t.untilAt, outcome })), lookedAt, this.#maxGapMs());
    for (const { t, early: wasEarly, outcome, err } of current) {
      if (outcome !== 'looked') {
        const why = err ?? ended?.err;
        if (refusedHere(why)) {
          this.#putAside(t, why);
          continue;
        }
        if (wasEarly) continue; // its own look, when due, says why it failed
        this.#log(t.entry).warn({ err: why instanceof Error ? why.message : String(why) }, 'cannot look for a late create yet; looking again later');
      }
      const schedule = next.get(t.entry.uid);
      if (schedule) t.schedule = schedule;
    }
    const finished = new Set(done);
    for (const { t } of current) if (finished.has(t.entry.uid)) this.#finish(t);
  }

  async #deleteLate(vendor: VendorApi, entry: LedgerEntry, instance: VendorInstance, signal: AbortSignal): Promise<void> {
    const existed = await vendor.deleteInstance(instance.id, signal);
    if (!existed) return;
    this.#o.onDeleted?.();
    this.#log(entry).warn({ providerID: instance.id, requestedAt: entry.requestedAt }, LATE_INSTANCE_DELETED_LOG);
    const subject = { apiVersion: DigitalHumanProviderKind.apiVersion, kind: DigitalHumanProviderKind.kind, name: entry.name, namespace: entry.namespace, uid: entry.uid };
    this.#o.events.warning(subject, Reason.LateInstanceDeleted, 'DeleteInstance', `vendor instance ${instance.id} at ${entry.endpoint} was created after this provider's finalizer was released (the create was sent at ${entry.requestedAt}); deleted`);
  }

  /**
   * A key this process refuses to look up (its endpoint is not allowed, or not usable by the
   * client): looking again changes nothing until the configuration does, which takes a restart.
   * It is not looked at again by this process and stays in the ledger, where an operator allowed
   * to call the endpoint (after a restart: it loads the ledger) sweeps it. Said once per key.
   */
  #putAside(t: Tracked, err: unknown): void {
    if (Number.isFinite(t.schedule.dueAt)) {
      this.#log(t.entry).warn({ err: err instanceof Error ? err.message : String(err) }, 'a released key is put aside: this operator refuses to call its endpoint; it stays in the ledger for an operator that may (after a restart with that configuration)');
    }
    t.schedule = { dueAt: Number.POSITIVE_INFINITY, gapMs: t.schedule.gapMs };
  }

  #failed(t: Tracked, at: number, what: string, err: unknown): void {
    this.#log(t.entry).warn({ err: err instanceof Error ? err.message : String(err) }, what);
    t.schedule = retryLook(t.schedule, at, this.#maxGapMs());
  }

  /** The entry's wall-clock dates as monotonic time, read now. */
  #datesOf(entry: LedgerEntry): { untilAt: number; requestedAt: number } {
    const offset = this.#o.clock.monotonic() - this.#o.clock.now();
    return { untilAt: Date.parse(entry.until) + offset, requestedAt: Date.parse(entry.requestedAt) + offset };
  }

  #maxGapMs(): number {
    return this.#o.maxGapMs ?? 60_000;
  }

  #log(entry: LedgerEntry): Logger {
    return this.#o.log.child({ namespace: entry.namespace, name: entry.name, idempotencyKey: entry.uid, endpoint: entry.endpoint });
  }

  /**
   * Finishes the entry `t` (its key needs no more looks): only while `t` is still the entry its UID
   * tracks. An entry judged from a snapshot (a pass holds one across its awaits) never finishes
   * the one recorded since (a released key that replaced its `beforeCreate` entry).
   */
  #finish(t: Tracked): void {
    if (this.#tracked.get(t.entry.uid) !== t) return;
    this.#untrack(t.entry.uid);
    this.#done.add(t.entry.uid);
  }

  #untrack(uid: string): void {
    const t = this.#tracked.get(uid);
    if (t?.entry.beforeCreate) this.#unnameBeforeCreate(t.entry);
    this.#tracked.delete(uid);
  }

  async #forgetDone(signal: AbortSignal): Promise<void> {
    const done = [...this.#done];
    try {
      // An entry recorded again meanwhile (a released key replacing its beforeCreate entry) stays.
      await this.#ledger.remove(done, signal, (uid) => this.#done.has(uid) && !this.#tracked.has(uid));
      for (const uid of done) this.#done.delete(uid);
    } catch (err) {
      if (!signal.aborted) this.#o.log.warn({ err: err instanceof Error ? err.message : String(err), configMap: this.#ledger.ref }, 'cannot remove finished entries from the ledger yet; retrying');
    }
  }
}

const nameOf = (entry: LedgerEntry): string => `${entry.namespace}/${entry.name}`;
