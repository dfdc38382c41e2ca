/**
 * The simulator's interface: its options, the `VendorSimulator` handle (the same operations
 * `/admin` offers over HTTP) and the shapes those operations return.
 *
 * @module
 */
import type { Account, AccountConfig, AccountState } from './accounts.ts';
import type { Faults, FaultsPatch } from './faults.ts';
import type { ConsumeOutcome, Limits, UsageReport } from './metering.ts';
import type { SimStats } from './stats.ts';
import type { HealthStatus, StoredInstance } from './store.ts';

export interface VendorSimulatorOptions {
  /** Listen address. Default `127.0.0.1`. */
  host?: string;
  /** Listen port; 0 (default) picks a free one. */
  port?: number;
  /** The bearer token of the default account (`default`). */
  token: string;
  /** More accounts, each with its own token; each sees only its own instances. */
  accounts?: AccountConfig[];
  /** The bearer token for /admin. Default: random (read it from `adminToken`). */
  adminToken?: string;
  /** JSON file holding the instances (with their limits); loaded at start, rewritten after each change. */
  stateFile?: string;
  /**
   * Where the CA and server certificate live. An existing CA there is reused, so clients keep
   * trusting a restarted simulator. Default: the state file's folder when `stateFile` is given,
   * else a new temporary folder that `stop()` removes.
   */
  dir?: string;
  /** Faults active from the start. */
  faults?: Faults;
  /** How long a throttled call counts in `throttledRequests` (1–3600 s). Default 60. */
  usageWindowSeconds?: number;
}

/** An instance as the admin view shows it: its owner, limits, health and usage. */
export type AdminInstance = StoredInstance & { usage: UsageReport & { id: string } };

/** Usage of an instance, as `GET /v1/instances/{id}/usage` answers it. */
export type Usage = UsageReport & { id: string };

/** What became of the calls of `consume`, and the usage after. */
export interface ConsumeResult extends ConsumeOutcome {
  /** Refused because the account is suspended. */
  suspended: number;
  usage: Usage;
}

export interface QuotaDay {
  day: number;
  quotaResetAt: string;
}

export interface ResetOptions {
  /** Clear all faults (releasing hanging requests). Default true. */
  faults?: boolean;
  /** Zero the statistics. Default true. */
  stats?: boolean;
  /** Every account back to active. Default true. */
  accounts?: boolean;
  /** Delete every instance (their limits and usage with them). Default false. */
  instances?: boolean;
}

export interface VendorSimulator {
  /** `https://<host>:<port>` — no trailing slash. */
  readonly baseUrl: string;
  readonly host: string;
  readonly port: number;
  /** File holding the CA certificate (PEM) that signs the server certificate. */
  readonly caPath: string;
  readonly caPem: string;
  /** Folder with the TLS material. */
  readonly dir: string;
  readonly stateFile: string | undefined;
  /** Bearer token for /admin. */
  readonly adminToken: string;

  /** Active faults. */
  faults(): Faults;
  /** Replaces all faults (validated like PUT /admin/faults; throws `FaultValidationError`). */
  setFaults(faults: Faults): Faults;
  /** Merges faults; `null` clears a field (like PATCH /admin/faults). */
  patchFaults(patch: FaultsPatch): Faults;
  clearFaults(): Faults;
  stats(): SimStats;
  reset(options?: ResetOptions): SimStats;
  /** Live instances with their owner, limits, health and usage. */
  instances(): AdminInstance[];
  /** Deletes an instance behind the operator's back; false when there was none. */
  deleteInstance(id: string): boolean;
  /** Sets an instance's health; false when there is no such instance. */
  setHealth(id: string, status: HealthStatus, message?: string): boolean;
  /** Changes limits as the vendor's console would (validated; throws `LimitValidationError`); undefined when there is no such instance. */
  setLimits(id: string, patch: Partial<Limits>): Limits | undefined;
  /** The instance's usage now; undefined when there is no such instance. */
  usage(id: string): Usage | undefined;
  /** Makes `calls` billable calls on the instance at once (see `openapi.yaml`); undefined when there is no such instance. */
  consume(id: string, calls: number): ConsumeResult | undefined;
  /** Records `requests` throttled calls now; undefined when there is no such instance. */
  throttle(id: string, requests: number): Usage | undefined;
  /** Forgets the throttled calls of the window; undefined when there is no such instance. */
  clearThrottle(id: string): Usage | undefined;
  accounts(): Account[];
  /** Suspends or resumes an account (throws `AccountValidationError` on bad input); undefined when there is no such account. */
  setAccountState(id: string, change: { state: AccountState; reason?: string; message?: string }): Account | undefined;
  /** Shorthands of `setAccountState` (default account unless named). */
  suspendAccount(id?: string, message?: string, reason?: string): Account | undefined;
  resumeAccount(id?: string): Account | undefined;
  quotaDay(): QuotaDay;
  /** Starts the next quota day now, for every instance. */
  advanceQuotaDay(): QuotaDay;
  /** Closes the server and every connection (hanging requests included). Idempotent. */
  stop(): Promise<void>;
}
