/**
 * Test support for this folder's pure unit tests (named `*.test-support.ts`: the package's
 * files rule for `.test.` names keeps it out of the published build): one Lease held in memory with
 * the API server's compare-and-swap on `resourceVersion`, reached by each elector over a link
 * whose latency and failures a test scripts, and per-replica views of one `FakeClock` (each
 * with its own wall-clock offset and monotonic origin). Not a fake API server: integration
 * tests run the electors against a real Lease on the local control plane.
 * @module
 */
import { ApiError } from '../client/index.ts';
import type { FakeClock } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import type { KubeObject } from '../objects/index.ts';
import type { LeaseClient } from './leader-elector.ts';
import type { LeaseObject } from './lease-record.ts';

/** How one request travels: latency to the store, whether it arrives, latency back, whether the answer arrives. */
export interface Hop {
  requestMs: number;
  responseMs: number;
  /** `before`: lost on the way (nothing committed); `after`: committed, answer lost. */
  fail?: 'before' | 'after';
}

/** A committed write, for assertions. */
export interface LeaseWrite {
  by: string;
  holder: string;
  resourceVersion: string;
  /** Monotonic time of the shared clock when it committed. */
  at: number;
}

function networkError(what: string): ApiError {
  return new ApiError({ reason: 'Network', code: 0, message: `network error: ${what}` });
}

export class InMemoryLeases {
  readonly writes: LeaseWrite[] = [];
  #lease: LeaseObject | undefined;
  #rv = 0;
  readonly #clock: FakeClock;
  readonly #onCommit: ((write: LeaseWrite) => void) | undefined;

  /** `onCommit` is called synchronously at each committed write (before any answer travels back). */
  constructor(clock: FakeClock, onCommit?: (write: LeaseWrite) => void) {
    this.#clock = clock;
    this.#onCommit = onCommit;
  }

  get lease(): LeaseObject | undefined {
    return this.#lease && structuredClone(this.#lease);
  }

  /**
   * A client for `identity`. `nextHop` is asked once per request (default: instant and
   * reliable); its latencies run on the shared clock and honour the request's signal.
   */
  client(identity: string, nextHop: () => Hop = () => ({ requestMs: 0, responseMs: 0 })): LeaseClient {
    const call = async <T>(signal: AbortSignal | undefined, commit: () => T): Promise<T> => {
      const hop = nextHop();
      if (hop.requestMs > 0) await this.#clock.sleep(hop.requestMs, signal);
      else if (signal?.aborted) throw signal.reason;
      if (hop.fail === 'before') throw networkError('request lost');
      const result = commit();
      if (hop.responseMs > 0) await this.#clock.sleep(hop.responseMs, signal);
      if (hop.fail === 'after') throw networkError('response lost');
      return result;
    };
    const client = {
      get: (_kind: unknown, key: { namespace?: string; name: string }, opts: { signal?: AbortSignal } = {}) =>
        call(opts.signal, () => {
          if (!this.#lease) throw new ApiError({ reason: 'NotFound', code: 404, message: `leases "${key.name}" not found` });
          return structuredClone(this.#lease);
        }),
      create: (_kind: unknown, obj: LeaseObject, opts: { signal?: AbortSignal } = {}) =>
        call(opts.signal, () => {
          if (this.#lease) throw new ApiError({ reason: 'AlreadyExists', code: 409, message: 'already exists' });
          return this.#commit(identity, obj);
        }),
      replace: (_kind: unknown, obj: LeaseObject, opts: { signal?: AbortSignal } = {}) =>
        call(opts.signal, () => {
          if (!this.#lease) throw new ApiError({ reason: 'NotFound', code: 404, message: 'not found' });
          if (obj.metadata.resourceVersion !== this.#lease.metadata.resourceVersion) {
            throw new ApiError({ reason: 'Conflict', code: 409, message: 'the object has been modified' });
          }
          return this.#commit(identity, obj);
        }),
    };
    return client as unknown as LeaseClient;
  }

  #commit(by: string, obj: LeaseObject): LeaseObject {
    const resourceVersion = String(++this.#rv);
    const { resourceVersion: _old, ...metadata } = obj.metadata;
    this.#lease = structuredClone({ ...obj, metadata: { ...metadata, resourceVersion } }) as LeaseObject & KubeObject;
    const write: LeaseWrite = { by, holder: obj.spec?.holderIdentity ?? '', resourceVersion, at: this.#clock.monotonic() };
    this.writes.push(write);
    this.#onCommit?.(write);
    return structuredClone(this.#lease);
  }
}

/** One replica's view of a shared `FakeClock`: its own wall-clock offset and monotonic origin. */
export interface ClockView {
  clock: Clock;
  /** Steps this replica's wall clock (either way); its monotonic time does not move. */
  stepWall(deltaMs: number): void;
}

export function clockView(base: FakeClock, options: { wallOffsetMs?: number; monotonicOriginMs?: number } = {}): ClockView {
  let wall = options.wallOffsetMs ?? 0;
  const origin = options.monotonicOriginMs ?? 0;
  return {
    clock: {
      now: () => base.now() + wall,
      monotonic: () => base.monotonic() + origin,
      setTimer: (ms, fn) => base.setTimer(ms, fn),
      sleep: (ms, signal) => base.sleep(ms, signal),
    },
    stepWall(deltaMs) {
      wall += deltaMs;
    },
  };
}
