/**
 * `LeaderElector`: client-go's leader election on a `coordination.k8s.io/v1` Lease.
 * @module
 */
import type { Logger } from 'pino';
import { ApiError, type KubeClient } from '../client/index.ts';
import { systemClock, type Clock } from '../clock/index.ts';
import { jitter } from '../rate-limit/index.ts';
import { LeadershipTerm } from './leadership-term.ts';
import {
  Leases,
  assessLease,
  candidateDelayMs,
  leaseTime as microTime,
  leaseSpecFor,
  releasedLeaseSpec,
  type LeaseObject,
  type Observation,
} from './lease-record.ts';

/** The three calls leader election makes: a `KubeClient` satisfies it. */
export type LeaseClient = Pick<KubeClient, 'get' | 'create' | 'replace'>;

export interface LeaderElectorOptions {
  client: LeaseClient;
  /** Namespace and name of the Lease (created when missing). */
  namespace: string;
  name: string;
  /** Unique per replica, e.g. the pod name plus a random suffix. */
  identity: string;
  /** How long a standby waits, after it last saw the Lease change, before taking it (default 15 000). */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leadership (default 10 000). */
  renewDeadlineMs?: number;
  /**
   * Time between attempts, leader and candidates alike (default 2000). A leader's renewals go this
   * long after the previous one was sent, or at once when its answer took longer; the renew
   * deadline counts from each send, so a steady round trip above `renewDeadline / 2` ends the term.
   */
  retryPeriodMs?: number;
  /** Candidates wait `retryPeriod * (1 + random * jitterFactor)` (default 0.2). */
  jitterFactor?: number;
  /** Release the Lease when `run`'s signal aborts, so a standby takes over at once (default true). */
  releaseOnCancel?: boolean;
  /** Durations on `clock.monotonic()`; `clock.now()` only for the times written into the Lease. */
  clock?: Clock;
  log?: Logger;
  /** Called when this replica starts or stops leading, or the observed holder changes. Must not throw. */
  onLeaderChange?(isLeader: boolean, holder?: string): void;
  /** Random source for jitter, in [0, 1) (tests). */
  random?: () => number;
}

interface AttemptResult {
  acquired: boolean;
  /** Monotonic time the attempt's first request was sent. */
  sentAtMs: number;
  /** Another replica holds a valid lease until then (monotonic). */
  expiresAtMs?: number;
  error?: unknown;
}

const ABORTED = AbortSignal.abort(new Error('not the leader'));

export class LeaderElector {
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly #client: LeaseClient;
  readonly #key: { namespace: string; name: string };
  readonly #jitterFactor: number;
  readonly #releaseOnCancel: boolean;
  readonly #clock: Clock;
  readonly #log: Logger | undefined;
  readonly #onChange: ((isLeader: boolean, holder?: string) => void) | undefined;
  readonly #random: () => number;
  readonly #waiters = new Set<() => void>();
  #term: LeadershipTerm | undefined;
  #lease: LeaseObject | undefined;
  #observation: Observation | undefined;
  #reported: { leader: boolean; holder: string | undefined } = { leader: false, holder: undefined };
  #running = false;
  /** `abandon()` was called during this run: stop without releasing. */
  #abandoned: AbortController | undefined;

  constructor(options: LeaderElectorOptions) {
    this.identity = options.identity;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.#jitterFactor = options.jitterFactor ?? 0.2;
    if (!options.identity) throw new RangeError('leader election needs a non-empty identity');
    if (!options.namespace || !options.name) throw new RangeError('leader election needs a Lease namespace and name');
    if (!(this.retryPeriodMs > 0)) throw new RangeError('retryPeriodMs must be > 0');
    if (!(this.renewDeadlineMs > this.retryPeriodMs * (1 + this.#jitterFactor))) {
      throw new RangeError('renewDeadlineMs must exceed retryPeriodMs * (1 + jitterFactor)');
    }
    if (!(this.leaseDurationMs > this.renewDeadlineMs)) throw new RangeError('leaseDurationMs must exceed renewDeadlineMs');
    this.#client = options.client;
    this.#key = { namespace: options.namespace, name: options.name };
    this.#releaseOnCancel = options.releaseOnCancel ?? true;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log;
    this.#onChange = options.onLeaderChange;
    this.#random = options.random ?? Math.random;
  }

  /** The Lease's name (the `name` label of `leader_election_master_status`, as client-go's). */
  get leaseName(): string {
    return this.#key.name;
  }

  /**
   * True while this replica holds the Lease and its renew deadline (monotonic) has not passed.
   * Checked against the clock on every call, so it turns false at the deadline even when the
   * event loop is too busy to run the term's timer.
   */
  isLeader(): boolean {
    return this.#term?.active ?? false;
  }

  /**
   * The current term's signal: live while leading, aborted the moment leadership is lost (or
   * `run` stops). When not leading, an already aborted signal.
   */
  leadership(): AbortSignal {
    return this.#term?.active ? this.#term.signal : ABORTED;
  }

  /**
   * This replica's identity while leading; otherwise the other holder last observed in the Lease,
   * or `undefined` when none is known (free Lease, or one still naming this replica after it
   * stopped leading).
   */
  holder(): string | undefined {
    if (this.isLeader()) return this.identity;
    const observed = this.#observation?.holder;
    return observed && observed !== this.identity ? observed : undefined;
  }

  /**
   * Resolves once this replica leads (at once if it does); then `leadership()` is the term's
   * signal (already aborted if the term ended in between). Rejects with `signal.reason` if
   * `signal` aborts first.
   */
  whenLeader(signal?: AbortSignal): Promise<void> {
    if (this.#term?.active) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(signal!.reason);
      };
      const waiter = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Campaigns for the Lease and, once leading, keeps renewing it, until `signal` aborts or the
   * term ends. A lost term ends the run (as in client-go): it does not campaign again, so a
   * process never holds the Lease while its work is being torn down; call `run` again to
   * campaign anew. On abort it ends the term and (with `releaseOnCancel`) releases the Lease,
   * then settles. After a loss or `abandon()` nothing is released: the Lease is someone else's,
   * or it expires for the standbys in `leaseDuration`. Never rejects because of API errors
   * (they are logged and retried).
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error('LeaderElector.run is already running');
    this.#running = true;
    const abandoned = (this.#abandoned = new AbortController());
    const stop = AbortSignal.any([signal, abandoned.signal]);
    let lost = false;
    /** Monotonic send time of the last attempt while leading (the one that won the Lease, then each renewal). */
    let lastSentAtMs = Number.NEGATIVE_INFINITY;
    try {
      while (!stop.aborted) {
        const term = this.#term;
        if (term) {
          term.expireIfDue();
          if (!term.active) {
            lost = true;
            break;
          }
          // The next renewal goes a retry period after the previous one was *sent* (at once when
          // its answer took longer): each renewal's deadline counts from its send, so waiting a
          // retry period after each answer lost a healthy lease under steady latency above
          // (renewDeadline - retryPeriod) / 2; now only above renewDeadline / 2.
          const waitMs = Math.max(0, lastSentAtMs + this.retryPeriodMs - this.#clock.monotonic());
          if (!(await this.#sleep(waitMs, AbortSignal.any([stop, term.signal])))) continue;
          const result = await this.#attempt(AbortSignal.any([stop, term.signal]));
          if (stop.aborted) break;
          lastSentAtMs = result.sentAtMs;
          if (result.acquired) term.renewed(result.sentAtMs);
          else if (result.expiresAtMs !== undefined) this.#lose(term, `lease taken by ${this.#observation?.holder}`);
          continue;
        }
        const result = await this.#attempt(stop);
        if (stop.aborted) break;
        if (result.acquired) {
          lastSentAtMs = result.sentAtMs;
          this.#begin(result.sentAtMs);
          continue;
        }
        const delay = candidateDelayMs(jitter(this.retryPeriodMs, this.#jitterFactor, this.#random), result.expiresAtMs, this.#clock.monotonic());
        if (!(await this.#sleep(delay, stop))) break;
      }
    } finally {
      const term = this.#term;
      this.#term = undefined;
      if (term && !term.signal.aborted) term.end(new Error(abandoned.signal.aborted ? 'leadership abandoned' : 'leader election stopped'));
      this.#report();
      if (this.#releaseOnCancel && !lost && !abandoned.signal.aborted) await this.#release();
      this.#abandoned = undefined;
      this.#running = false;
    }
  }

  /**
   * Stops at once without releasing the Lease: the term ends now, `run` settles, and standbys
   * take over only once the Lease has expired by their clocks (`leaseDuration` after the last
   * renewal they saw). For a process that cannot stop its work: handing the Lease over while a
   * reconcile may still be running would let two replicas act at once. No-op when not running.
   */
  abandon(): void {
    if (this.#term?.active) this.#lose(this.#term, 'abandoned: this process could not stop its work');
    this.#abandoned?.abort();
  }

  #begin(sentAtMs: number): void {
    const term = new LeadershipTerm(this.#clock, this.renewDeadlineMs, sentAtMs, (t) => this.#lost(t));
    this.#term = term;
    this.#log?.info({ lease: `${this.#key.namespace}/${this.#key.name}`, identity: this.identity }, 'became leader');
    this.#report();
    for (const waiter of [...this.#waiters]) waiter();
    this.#waiters.clear();
  }

  #lose(term: LeadershipTerm, why: string): void {
    term.end(new Error(`leadership lost: ${why}`));
    this.#lost(term);
  }

  #lost(term: LeadershipTerm): void {
    this.#log?.warn({ lease: `${this.#key.namespace}/${this.#key.name}`, identity: this.identity, reason: (term.signal.reason as Error).message }, 'lost leadership');
    this.#report();
  }

  #report(): void {
    const leader = this.isLeader();
    const holder = this.holder();
    if (leader === this.#reported.leader && holder === this.#reported.holder) return;
    this.#reported = { leader, holder };
    try {
      this.#onChange?.(leader, holder);
    } catch (err) {
      this.#log?.error({ err }, 'onLeaderChange threw');
    }
  }

  /**
   * One try to acquire or renew. Resolves with the outcome (never rejects). `sentAtMs` is
   * monotonic; the Lease gets the wall-clock time, as the API expects.
   */
  async #attempt(signal: AbortSignal): Promise<AttemptResult> {
    const sentAtMs = this.#clock.monotonic();
    const wallNow = microTime(this.#clock.now());
    const seconds = Math.ceil(this.leaseDurationMs / 1000);
    try {
      // Fast path: a leader renews its own last-written version without reading first.
      if (this.#term?.active && this.#lease?.spec?.holderIdentity === this.identity) {
        try {
          await this.#write(this.#lease, leaseSpecFor(this.#lease.spec, this.identity, seconds, wallNow), signal);
          return { acquired: true, sentAtMs };
        } catch (err) {
          if (!(err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound'))) throw err;
        }
      }
      let lease: LeaseObject;
      try {
        lease = await this.#client.get(Leases, this.#key, { signal });
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
        try {
          const created = await this.#client.create(
            Leases,
            { metadata: { ...this.#key }, spec: leaseSpecFor(undefined, this.identity, seconds, wallNow) },
            { signal },
          );
          this.#saw(created);
          return { acquired: true, sentAtMs };
        } catch (createErr) {
          if (createErr instanceof ApiError && createErr.reason === 'AlreadyExists') return { acquired: false, sentAtMs };
          throw createErr;
        }
      }
      const verdict = assessLease(lease, this.#observation, this.identity, this.#clock.monotonic(), this.leaseDurationMs);
      this.#observation = verdict.observation;
      this.#lease = lease;
      this.#report();
      if (verdict.action === 'wait') return { acquired: false, sentAtMs, expiresAtMs: verdict.expiresAtMs };
      try {
        await this.#write(lease, leaseSpecFor(lease.spec, this.identity, seconds, wallNow), signal);
      } catch (err) {
        if (err instanceof ApiError && err.reason === 'Conflict') return { acquired: false, sentAtMs };
        throw err;
      }
      return { acquired: true, sentAtMs };
    } catch (err) {
      if (signal.aborted) return { acquired: false, sentAtMs, error: err };
      this.#log?.debug({ err, lease: `${this.#key.namespace}/${this.#key.name}` }, 'lease acquire/renew failed');
      return { acquired: false, sentAtMs, error: err };
    }
  }

  /** Compare-and-swap of the Lease spec on `base`'s resourceVersion. */
  async #write(base: LeaseObject, spec: LeaseObject['spec'], signal: AbortSignal): Promise<LeaseObject> {
    // managedFields left out: the server keeps them; resourceVersion makes this a compare-and-swap.
    const { managedFields: _omit, ...metadata } = base.metadata;
    const written = await this.#client.replace(Leases, { ...base, metadata, ...(spec ? { spec } : {}) }, { signal });
    this.#saw(written);
    return written;
  }

  /** Records a Lease this process wrote: observed now, by the monotonic clock. */
  #saw(lease: LeaseObject): void {
    this.#lease = lease;
    this.#observation = {
      resourceVersion: lease.metadata.resourceVersion ?? '',
      holder: lease.spec?.holderIdentity ?? '',
      leaseDurationMs: (lease.spec?.leaseDurationSeconds ?? 0) * 1000 || this.leaseDurationMs,
      observedAtMs: this.#clock.monotonic(),
    };
  }

  /** Hands the Lease back if this replica still holds it (compare-and-swap: never clobbers a new holder). */
  async #release(): Promise<void> {
    const signal = AbortSignal.timeout(this.renewDeadlineMs);
    for (let tries = 0; tries < 2 && this.#lease?.spec?.holderIdentity === this.identity; tries++) {
      try {
        await this.#write(this.#lease, releasedLeaseSpec(this.#lease.spec, microTime(this.#clock.now())), signal);
        this.#log?.info({ lease: `${this.#key.namespace}/${this.#key.name}`, identity: this.identity }, 'released lease');
        this.#report();
        return;
      } catch (err) {
        if (err instanceof ApiError && err.reason === 'Conflict') {
          try {
            this.#lease = await this.#client.get(Leases, this.#key, { signal });
            continue;
          } catch (getErr) {
            err = getErr;
          }
        }
        this.#log?.warn({ err, lease: `${this.#key.namespace}/${this.#key.name}` }, 'could not release lease; standbys take over when it expires');
        return;
      }
    }
  }

  /** Sleeps on the clock; false when `signal` aborted. */
  async #sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }
}
