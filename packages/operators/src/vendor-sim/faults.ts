/**
 * Faults the simulator can inject, their JSON shape (as the admin endpoint takes it) and the
 * decisions taken for each /v1 request. Deterministic wherever a test needs to count: the error
 * share is evenly spread unless `spread: random` asks otherwise (seeded), bursts and lost
 * responses count down exactly.
 *
 * @module
 */

/** The /v1 operations, for scoping faults; `call` is the billable `POST /v1/instances/{id}/calls`. */
export type VendorOperation = 'create' | 'list' | 'get' | 'update' | 'delete' | 'health' | 'getLimits' | 'setLimits' | 'usage' | 'account' | 'call';
export const VENDOR_OPERATIONS: readonly VendorOperation[] = ['create', 'list', 'get', 'update', 'delete', 'health', 'getLimits', 'setLimits', 'usage', 'account', 'call'];

/** Restricts a fault to some operations; absent = all operations. */
interface Scoped {
  ops?: VendorOperation[];
}

export interface LatencyFault extends Scoped {
  /** Added before the request is handled. */
  ms: number;
  /** Plus a uniform random extra in [0, jitterMs). */
  jitterMs?: number;
}
export interface ErrorsFault extends Scoped {
  /** Share of matching requests that fail, 0..1. */
  rate: number;
  /**
   * `even` (default): exactly floor(n * rate) of n fail, evenly spread — countable, but a client
   * whose requests come in a fixed rhythm can meet the failing slot every time. `random`: each
   * request fails with probability `rate` (seeded by `seed`), as real outages do.
   */
  spread?: 'even' | 'random';
  /** Seed of the `random` spread; default 1. */
  seed?: number;
  /** Status sent, 400..599 (a 4xx is the vendor refusing the request: `InvalidRequest`). Default 500. */
  status?: number;
}
export interface Burst429Fault extends Scoped {
  /** The next `count` matching requests get 429; counts down. */
  count: number;
  /** Default 1; at least 1 (the contract's `Retry-After` is ≥ 1 on every 429). */
  retryAfterSeconds?: number;
  /**
   * The `error.code` sent: `RateLimited` (default: the endpoint is throttling this client), or a
   * code about one instance, `QuotaExhausted` or `InstanceThrottled` (a vendor that meters its
   * management API against the instance's limits).
   */
  code?: Burst429Code;
}

export type Burst429Code = 'RateLimited' | 'QuotaExhausted' | 'InstanceThrottled';
export const BURST429_CODES: readonly Burst429Code[] = ['RateLimited', 'QuotaExhausted', 'InstanceThrottled'];
/** A token bucket over the management API (every operation but `call`). */
export interface RateLimitFault {
  requestsPerSecond: number;
  /** Bucket size. Default ceil(requestsPerSecond). */
  burst?: number;
}
export type HangFault = Scoped;
export interface OutageFault extends Scoped {
  /** `status` (default): answer `status`; `reset`: destroy the connection without answering. */
  mode?: 'status' | 'reset';
  /** Default 503. */
  status?: number;
}
export interface LoseCreateResponsesFault {
  /** The next `count` creates happen but the connection is destroyed instead of answering. */
  count: number;
}
export interface SlowCreatesFault {
  /**
   * Every create takes this long before it is applied and answered, and is applied even when the
   * client has given up by then (a vendor that keeps working on a request whose client timed
   * out). Until then a lookup by its Idempotency-Key finds nothing.
   */
  ms: number;
}

export interface UnknownHealthFault {
  /**
   * The health status sent for the instances named (GET .../health and the listing's
   * `view=full`): one the contract does not have, as a vendor's newer API version might send
   * (`maintenance`, say). 1–32 letters.
   */
  status: string;
  /** The instances it applies to; absent = every instance. */
  ids?: string[];
}

/** Every fault that can be active at once. An absent field is off. */
export interface Faults {
  latency?: LatencyFault;
  errors?: ErrorsFault;
  burst429?: Burst429Fault;
  rateLimit?: RateLimitFault;
  hang?: HangFault;
  outage?: OutageFault;
  loseCreateResponses?: LoseCreateResponsesFault;
  slowCreates?: SlowCreatesFault;
  unknownHealth?: UnknownHealthFault;
}

/** A change to the active faults: a field set to `null` is cleared, an absent one is kept. */
export type FaultsPatch = { [K in keyof Faults]?: Faults[K] | null };

const FAULT_KEYS = ['latency', 'errors', 'burst429', 'rateLimit', 'hang', 'outage', 'loseCreateResponses', 'slowCreates', 'unknownHealth'] as const;

export class FaultValidationError extends Error {
  override readonly name = 'FaultValidationError';
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(o: Record<string, unknown>, key: string, path: string, opts: { min: number; max?: number; int?: boolean; required?: boolean }): number | undefined {
  const v = o[key];
  if (v === undefined) {
    if (opts.required) throw new FaultValidationError(`${path}.${key}`, 'is required');
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new FaultValidationError(`${path}.${key}`, 'must be a number');
  if (opts.int && !Number.isInteger(v)) throw new FaultValidationError(`${path}.${key}`, 'must be an integer');
  if (v < opts.min || (opts.max !== undefined && v > opts.max)) {
    throw new FaultValidationError(`${path}.${key}`, `must be in [${opts.min}, ${opts.max ?? '∞'}]`);
  }
  return v;
}

function ops(o: Record<string, unknown>, path: string): { ops?: VendorOperation[] } {
  const v = o.ops;
  if (v === undefined) return {};
  if (!Array.isArray(v) || v.some((op) => !VENDOR_OPERATIONS.includes(op as VendorOperation))) {
    throw new FaultValidationError(`${path}.ops`, `must be a list of ${VENDOR_OPERATIONS.join(', ')}`);
  }
  return { ops: [...v] as VendorOperation[] };
}

function onlyKeys(o: Record<string, unknown>, path: string, keys: string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new FaultValidationError(`${path}.${k}`, 'is not a known field');
}

function opt<K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [key]: v }) as { [P in K]?: V };
}

/** Validates one fault's JSON; returns a normalised copy. */
function parseOne(key: (typeof FAULT_KEYS)[number], v: unknown): Faults[typeof key] {
  const path = key;
  if (!isObject(v)) throw new FaultValidationError(path, 'must be an object');
  switch (key) {
    case 'latency':
      onlyKeys(v, path, ['ms', 'jitterMs', 'ops']);
      return { ms: num(v, 'ms', path, { min: 0, max: 600_000, required: true })!, ...opt('jitterMs', num(v, 'jitterMs', path, { min: 0, max: 600_000 })), ...ops(v, path) };
    case 'errors':
      onlyKeys(v, path, ['rate', 'status', 'spread', 'seed', 'ops']);
      if (v.spread !== undefined && v.spread !== 'even' && v.spread !== 'random') throw new FaultValidationError(`${path}.spread`, 'must be "even" or "random"');
      return {
        rate: num(v, 'rate', path, { min: 0, max: 1, required: true })!,
        ...opt('status', num(v, 'status', path, { min: 400, max: 599, int: true })),
        ...(v.spread === undefined ? {} : { spread: v.spread }),
        ...opt('seed', num(v, 'seed', path, { min: 0, max: 2 ** 32 - 1, int: true })),
        ...ops(v, path),
      };
    case 'burst429':
      onlyKeys(v, path, ['count', 'retryAfterSeconds', 'code', 'ops']);
      if (v.code !== undefined && !BURST429_CODES.includes(v.code as Burst429Code)) throw new FaultValidationError(`${path}.code`, `must be one of ${BURST429_CODES.join(', ')}`);
      return {
        ...(v.code === undefined ? {} : { code: v.code as Burst429Code }),
        count: num(v, 'count', path, { min: 0, int: true, required: true })!,
        ...opt('retryAfterSeconds', num(v, 'retryAfterSeconds', path, { min: 1, max: 86_400, int: true })),
        ...ops(v, path),
      };
    case 'rateLimit': {
      onlyKeys(v, path, ['requestsPerSecond', 'burst']);
      const rps = num(v, 'requestsPerSecond', path, { min: 0, required: true })!;
      if (rps <= 0) throw new FaultValidationError(`${path}.requestsPerSecond`, 'must be > 0');
      return { requestsPerSecond: rps, ...opt('burst', num(v, 'burst', path, { min: 1, int: true })) };
    }
    case 'hang':
      onlyKeys(v, path, ['ops']);
      return { ...ops(v, path) };
    case 'outage': {
      onlyKeys(v, path, ['mode', 'status', 'ops']);
      if (v.mode !== undefined && v.mode !== 'status' && v.mode !== 'reset') throw new FaultValidationError(`${path}.mode`, 'must be "status" or "reset"');
      return {
        ...opt('mode', v.mode as 'status' | 'reset' | undefined),
        ...opt('status', num(v, 'status', path, { min: 500, max: 599, int: true })),
        ...ops(v, path),
      };
    }
    case 'loseCreateResponses':
      onlyKeys(v, path, ['count']);
      return { count: num(v, 'count', path, { min: 0, int: true, required: true })! };
    case 'slowCreates':
      onlyKeys(v, path, ['ms']);
      return { ms: num(v, 'ms', path, { min: 0, max: 600_000, required: true })! };
    case 'unknownHealth': {
      onlyKeys(v, path, ['status', 'ids']);
      if (typeof v.status !== 'string' || !/^[A-Za-z]{1,32}$/.test(v.status)) throw new FaultValidationError(`${path}.status`, 'must be 1-32 letters');
      if (v.ids !== undefined && (!Array.isArray(v.ids) || v.ids.some((id) => typeof id !== 'string'))) throw new FaultValidationError(`${path}.ids`, 'must be a list of instance ids');
      return { status: v.status, ...(v.ids === undefined ? {} : { ids: [...(v.ids as string[])] }) };
    }
  }
}

/** Validates a patch (fields may be null); throws `FaultValidationError`. */
export function parseFaultsPatch(body: unknown): FaultsPatch {
  if (!isObject(body)) throw new FaultValidationError('faults', 'must be a JSON object');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!(FAULT_KEYS as readonly string[]).includes(key)) throw new FaultValidationError(key, `is not a fault (known: ${FAULT_KEYS.join(', ')})`);
    out[key] = value === null ? null : parseOne(key as (typeof FAULT_KEYS)[number], value);
  }
  return out as FaultsPatch;
}

/** Validates a full fault set (no nulls); throws `FaultValidationError`. */
export function parseFaults(body: unknown): Faults {
  const patch = parseFaultsPatch(body);
  for (const [key, value] of Object.entries(patch)) if (value === null) throw new FaultValidationError(key, 'null is only allowed in a PATCH');
  return patch as Faults;
}

const applies = (fault: { ops?: VendorOperation[] } | undefined, op: VendorOperation): boolean =>
  fault !== undefined && (fault.ops === undefined || fault.ops.includes(op));

/**
 * The active faults and their running state (error accumulator, rate-limit bucket, counters).
 * The server asks it one question per stage of a request, in this order: outage, hang,
 * latency, (authentication), burst429, rate limit, errors, and for creates, slow-create (after
 * the body is read and validated) and lose-response.
 */
export class FaultState {
  #faults: Faults = {};
  #errorCredit = 0;
  /** The random spread's generator; reset whenever the errors fault is set. */
  #random: (() => number) | undefined;
  #tokens = 0;
  #lastRefill = 0;
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** A copy of the active faults (counters as they are now). */
  get(): Faults {
    return structuredClone(this.#faults);
  }

  replace(faults: Faults): Faults {
    return this.patch({ ...Object.fromEntries(FAULT_KEYS.map((k) => [k, null])), ...faults });
  }

  patch(patch: FaultsPatch): Faults {
    const next: Record<string, unknown> = { ...this.#faults };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete next[key];
      else if (value !== undefined) next[key] = structuredClone(value);
    }
    const before = this.#faults;
    this.#faults = next as Faults;
    if ('errors' in patch) {
      this.#errorCredit = 0;
      this.#random = undefined;
    }
    if ('rateLimit' in patch && this.#faults.rateLimit && this.#faults.rateLimit !== before.rateLimit) {
      this.#tokens = this.#bucketSize();
      this.#lastRefill = this.#now();
    }
    return this.get();
  }

  clear(): Faults {
    return this.replace({});
  }

  outage(op: VendorOperation): { mode: 'status' | 'reset'; status: number } | undefined {
    const f = this.#faults.outage;
    if (!applies(f, op)) return undefined;
    return { mode: f!.mode ?? 'status', status: f!.status ?? 503 };
  }

  hangs(op: VendorOperation): boolean {
    return applies(this.#faults.hang, op);
  }

  /** Extra delay in ms for this request (0 when none). */
  latencyMs(op: VendorOperation): number {
    const f = this.#faults.latency;
    if (!applies(f, op)) return 0;
    return f!.ms + (f!.jitterMs ? Math.floor(Math.random() * f!.jitterMs) : 0);
  }

  /** Retry-After seconds and code when this request is one of the 429 burst; counts the burst down. */
  takeBurst429(op: VendorOperation): { retryAfterSeconds: number; code: Burst429Code } | undefined {
    const f = this.#faults.burst429;
    if (!applies(f, op) || f!.count <= 0) return undefined;
    f!.count--;
    return { retryAfterSeconds: f!.retryAfterSeconds ?? 1, code: f!.code ?? 'RateLimited' };
  }

  /** Retry-After seconds when over the rate limit; otherwise takes a token and returns undefined. */
  takeRateLimit(): number | undefined {
    const f = this.#faults.rateLimit;
    if (!f) return undefined;
    const now = this.#now();
    const perMs = f.requestsPerSecond / 1000;
    this.#tokens = Math.min(this.#bucketSize(), this.#tokens + (now - this.#lastRefill) * perMs);
    this.#lastRefill = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / perMs / 1000));
  }

  /** The 5xx status when this request is in the failing share (see `ErrorsFault.spread`). */
  error(op: VendorOperation): number | undefined {
    const f = this.#faults.errors;
    if (!applies(f, op) || f!.rate <= 0) return undefined;
    if (f!.spread === 'random') {
      this.#random ??= mulberry32(f!.seed ?? 1);
      return this.#random() < f!.rate ? (f!.status ?? 500) : undefined;
    }
    this.#errorCredit += f!.rate;
    if (this.#errorCredit + 1e-9 < 1) return undefined;
    this.#errorCredit -= 1;
    return f!.status ?? 500;
  }

  /** How long a create takes before it is applied (0 when `slowCreates` is off). */
  slowCreateMs(): number {
    return this.#faults.slowCreates?.ms ?? 0;
  }

  /** The health status to send for this instance instead of its own (`unknownHealth`), if any. */
  healthStatusFor(id: string): string | undefined {
    const f = this.#faults.unknownHealth;
    return f && (f.ids === undefined || f.ids.includes(id)) ? f.status : undefined;
  }

  /** True when this create's response must be lost; counts down. */
  takeLostCreate(): boolean {
    const f = this.#faults.loseCreateResponses;
    if (!f || f.count <= 0) return false;
    f.count--;
    return true;
  }

  #bucketSize(): number {
    const f = this.#faults.rateLimit;
    return f ? (f.burst ?? Math.max(1, Math.ceil(f.requestsPerSecond))) : 0;
  }
}

/** A small seeded PRNG (mulberry32): uniform in [0, 1), the same sequence for the same seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
