/**
 * Wakes the providers that wait on an unreachable vendor endpoint as soon as it answers again.
 *
 * Nothing in the cluster changes when a vendor recovers, so no watch event ends a provider's
 * backoff: without this, every CR blocked by an outage (a deletion held as `DeletionBlocked`, an
 * instance not yet created) waits out its own retry delay — up to `maxRetryDelaySeconds` —
 * after the vendor is back. With it they are re-queued within a probe interval of the recovery.
 *
 * How it decides, per endpoint:
 * - **Down** after `downAfter` consecutive calls that got no usable answer (5xx, timeout, network
 *   error). A 429 is an answer (the vendor is up, it asks us to slow down) and counts as neither.
 * - **Up** on any answer: a success or a 4xx that is not a 429.
 * - A reconcile that got no answer registers its key as **blocked** on its endpoint; the end of
 *   any reconcile of the key that did not (an answer of any kind, no vendor call at all, the CR's
 *   removal) forgets it (`settled`, from `key-holds.ts`).
 * - **Down → up** hands every key blocked on that endpoint to `wake` once, and forgets them.
 * - While an endpoint is down and has blocked keys, one of them is woken every `probeIntervalMs`
 *   (in turn): its reconcile is the probe, so a dead vendor sees one call per interval however
 *   many CRs wait on it.
 *
 * - An endpoint no key waits on and no call has reached for `forgetAfterMs` (10 minutes) is
 *   forgotten, down or not: a provider whose mistyped endpoint was fixed, or that was deleted,
 *   leaves no endpoint counted down for good (`converge_vendor_endpoints_down`). An endpoint in
 *   use is called every observe or health interval, far more often.
 *
 * Guarantees: a key is woken at most once per recovery (plus its probe turns); wakes only happen
 * while `start` runs (the operator leads). Waking only moves a retry earlier: the key's own
 * backoff count is untouched, so a key that fails again backs off as before.
 * Caveat: a flaky vendor that never fails `downAfter` calls in a row is never "down", and its
 * CRs keep their ordinary backoff — on purpose: waking on every success would defeat it.
 * @module
 */
import type { Logger } from 'pino';
import type { Clock, Runnable, Timer } from '@converge/runtime';
import { isNoAnswer } from './vendor/index.ts';
import type { VendorCallEvent } from './vendor/index.ts';

export interface VendorRecoveryOptions {
  clock: Clock;
  /** Consecutive unanswered calls that mark an endpoint down. Default 3. */
  downAfter?: number;
  /** How often a blocked key is woken as a probe while its endpoint is down; 0 = never. Default 5000. */
  probeIntervalMs?: number;
  /** An endpoint no key waits on and no call reached for this long is forgotten. Default 600 000. */
  forgetAfterMs?: number;
  /** Says when an endpoint goes down and comes back. */
  log?: Logger;
}

interface EndpointState {
  unanswered: number;
  down: boolean;
  /** Blocked keys in the order they were blocked (the probe takes them in turn). */
  blocked: Set<string>;
  probe: Timer | undefined;
  /** When (monotonic) a call's outcome, or a key blocked on it, was last seen. */
  lastSeen: number;
}

export class VendorRecovery implements Runnable {
  readonly #clock: Clock;
  readonly #downAfter: number;
  readonly #probeIntervalMs: number;
  readonly #forgetAfterMs: number;
  readonly #log: Logger | undefined;
  readonly #endpoints = new Map<string, EndpointState>();
  /** Which endpoint each blocked key waits on. */
  readonly #keys = new Map<string, string>();
  #wake: ((key: string) => void) | undefined;
  #running = false;
  #woken = 0;
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(options: VendorRecoveryOptions) {
    this.#clock = options.clock;
    this.#downAfter = options.downAfter ?? 3;
    this.#probeIntervalMs = options.probeIntervalMs ?? 5_000;
    this.#forgetAfterMs = options.forgetAfterMs ?? 600_000;
    this.#log = options.log;
    if (!(this.#downAfter >= 1)) throw new RangeError(`downAfter must be >= 1, got ${this.#downAfter}`);
    if (!(this.#probeIntervalMs >= 0)) throw new RangeError(`probeIntervalMs must be >= 0, got ${this.#probeIntervalMs}`);
  }

  /** Where woken keys go (the controller's enqueue). Set once, before `start`. */
  onWake(wake: (key: string) => void): void {
    this.#wake = wake;
  }

  /** Wakes keys until `signal` aborts (no wake follows the abort); then cancels its timers and resolves. */
  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#running = true;
    for (const state of this.#endpoints.values()) this.#armProbe(state);
    await new Promise<void>((resolve) => {
      // Stopped in the abort itself, not a microtask later: no wake follows the abort.
      signal.addEventListener('abort', () => {
        this.#running = false;
        for (const state of this.#endpoints.values()) this.#cancelProbe(state);
        resolve();
      }, { once: true });
    });
  }

  /** Every vendor call's outcome, from the vendor client's `onCall`. */
  observe(endpoint: string, event: Pick<VendorCallEvent, 'outcome'>): void {
    if (event.outcome === 'RateLimited' || event.outcome === 'Aborted') return; // no news about reachability
    const unanswered = isNoAnswer(event.outcome);
    this.#forgetUnused(true);
    const state = this.#state(endpoint);
    if (unanswered) {
      state.unanswered++;
      if (!state.down && state.unanswered >= this.#downAfter) {
        state.down = true;
        this.#log?.warn({ endpoint, unanswered: state.unanswered, waiting: state.blocked.size }, 'vendor endpoint is not answering; CRs that need it wait for it to answer again');
        this.#armProbe(state);
      }
      return;
    }
    state.unanswered = 0;
    if (!state.down) return;
    state.down = false;
    this.#cancelProbe(state);
    const keys = [...state.blocked];
    state.blocked.clear();
    this.#log?.info({ endpoint, waking: keys.length }, 'vendor endpoint answers again; waking the CRs that waited for it');
    for (const key of keys) {
      this.#keys.delete(key);
      this.#emit(key);
    }
  }

  /** `key`'s reconcile failed transiently calling `endpoint`. */
  blocked(endpoint: string, key: string): void {
    const previous = this.#keys.get(key);
    if (previous !== undefined && previous !== endpoint) this.#endpoints.get(previous)?.blocked.delete(key);
    this.#keys.set(key, endpoint);
    const state = this.#state(endpoint);
    state.blocked.add(key);
    if (state.down) this.#armProbe(state);
  }

  /** `key` no longer waits on anything (reconciled, or gone). */
  settled(key: string): void {
    const endpoint = this.#keys.get(key);
    if (endpoint === undefined) return;
    this.#keys.delete(key);
    const state = this.#endpoints.get(endpoint);
    state?.blocked.delete(key);
    if (state && state.blocked.size === 0) this.#cancelProbe(state);
  }

  /** For tests and metrics: blocked keys and down endpoints now, keys woken so far. */
  stats(): { blocked: number; downEndpoints: number; woken: number } {
    this.#forgetUnused();
    let down = 0;
    for (const s of this.#endpoints.values()) if (s.down) down++;
    return { blocked: this.#keys.size, downEndpoints: down, woken: this.#woken };
  }

  /** The state of `endpoint`, seen now (created when it is not known). */
  #state(endpoint: string): EndpointState {
    let state = this.#endpoints.get(endpoint);
    if (!state) {
      state = { unanswered: 0, down: false, blocked: new Set(), probe: undefined, lastSeen: 0 };
      this.#endpoints.set(endpoint, state);
    }
    state.lastSeen = this.#clock.monotonic();
    return state;
  }

  /** Forgets what no key waits on and no call reached for `forgetAfterMs`; on calls, at most once a minute. */
  #forgetUnused(onCall = false): void {
    const now = this.#clock.monotonic();
    if (onCall && now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [endpoint, state] of this.#endpoints) {
      if (state.blocked.size > 0 || now - state.lastSeen < this.#forgetAfterMs) continue;
      this.#cancelProbe(state);
      this.#endpoints.delete(endpoint);
    }
  }

  #emit(key: string): void {
    if (!this.#running || !this.#wake) return;
    this.#woken++;
    this.#wake(key);
  }

  #armProbe(state: EndpointState): void {
    if (state.probe || !this.#running || !state.down || state.blocked.size === 0 || this.#probeIntervalMs === 0) return;
    state.probe = this.#clock.setTimer(this.#probeIntervalMs, () => {
      state.probe = undefined;
      if (!state.down || !this.#running) return;
      // The oldest blocked key goes; it re-registers (at the end) if its probe fails again.
      const key = state.blocked.values().next().value;
      if (key === undefined) return;
      state.blocked.delete(key);
      this.#keys.delete(key);
      this.#emit(key);
      this.#armProbe(state);
    });
  }

  #cancelProbe(state: EndpointState): void {
    state.probe?.cancel();
    state.probe = undefined;
  }
}
