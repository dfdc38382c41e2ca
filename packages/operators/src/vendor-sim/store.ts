/**
 * The simulator's instances: an in-memory map, optionally persisted to a JSON file after every
 * change (written to a temporary file and renamed, so a crash never leaves half a file). Each
 * instance belongs to one account (the one whose token created it) and carries its limits; an
 * account sees only its own instances, and idempotency keys are per account.
 *
 * All methods are synchronous, so in Node's single thread each one is atomic: two concurrent
 * creates with the same Idempotency-Key can never both create.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { DEFAULT_ACCOUNT } from './accounts.ts';
import { DEFAULT_LIMITS, type Limits } from './metering.ts';

export type HealthStatus = 'healthy' | 'degraded' | 'down';
export const HEALTH_STATUSES: readonly HealthStatus[] = ['healthy', 'degraded', 'down'];

/** What the API returns for an instance. */
export interface Instance {
  id: string;
  region: string;
  displayName: string;
  idempotencyKey: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What the store keeps: the instance plus its owner, limits and (admin-controlled) health. */
export interface StoredInstance extends Instance {
  account: string;
  limits: Limits;
  health: HealthStatus;
  healthMessage?: string;
}

interface StateFile {
  version: 1;
  instances: StoredInstance[];
}

export type CreateOutcome =
  | { kind: 'created'; instance: StoredInstance }
  | { kind: 'replayed'; instance: StoredInstance }
  | { kind: 'key-conflict'; instance: StoredInstance };

export class InstanceStore {
  readonly #instances = new Map<string, StoredInstance>();
  readonly #byKey = new Map<string, string>();
  readonly #file: string | undefined;
  readonly #now: () => Date;

  constructor(stateFile?: string, now: () => Date = () => new Date()) {
    this.#file = stateFile;
    this.#now = now;
    if (stateFile && existsSync(stateFile)) {
      const state = JSON.parse(readFileSync(stateFile, 'utf8')) as StateFile;
      if (state.version !== 1 || !Array.isArray(state.instances)) throw new Error(`unreadable vendor-sim state file ${stateFile}`);
      // Files written before accounts and limits existed: the default account, default limits.
      for (const instance of state.instances) this.#index({ ...instance, account: instance.account ?? DEFAULT_ACCOUNT, limits: { ...DEFAULT_LIMITS, ...instance.limits } });
    }
  }

  #index(instance: StoredInstance): void {
    this.#instances.set(instance.id, instance);
    if (instance.idempotencyKey !== null) this.#byKey.set(keyOf(instance.account, instance.idempotencyKey), instance.id);
  }

  #save(): void {
    if (!this.#file) return;
    const state: StateFile = { version: 1, instances: [...this.#instances.values()] };
    const tmp = `${this.#file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n');
    renameSync(tmp, this.#file);
  }

  get size(): number {
    return this.#instances.size;
  }

  /** Every instance, or only `account`'s. */
  list(account?: string): StoredInstance[] {
    const all = [...this.#instances.values()];
    return account === undefined ? all : all.filter((i) => i.account === account);
  }

  /** The instance, when it exists (and, with `account`, belongs to it). */
  get(id: string, account?: string): StoredInstance | undefined {
    const instance = this.#instances.get(id);
    return instance && (account === undefined || instance.account === account) ? instance : undefined;
  }

  findByKey(key: string, account = DEFAULT_ACCOUNT): StoredInstance | undefined {
    const id = this.#byKey.get(keyOf(account, key));
    return id === undefined ? undefined : this.#instances.get(id);
  }

  /**
   * Creates an instance, or returns the live one created with the same key: `replayed` when the
   * region matches, `key-conflict` when it does not. A deleted instance frees its key.
   */
  create(input: { region: string; displayName: string }, key: string | undefined, account = DEFAULT_ACCOUNT): CreateOutcome {
    if (key !== undefined) {
      const existing = this.findByKey(key, account);
      if (existing) return { kind: existing.region === input.region ? 'replayed' : 'key-conflict', instance: existing };
    }
    const at = this.#now().toISOString();
    const instance: StoredInstance = {
      id: `inst-${randomBytes(8).toString('hex')}`,
      region: input.region,
      displayName: input.displayName,
      idempotencyKey: key ?? null,
      createdAt: at,
      updatedAt: at,
      account,
      limits: { ...DEFAULT_LIMITS },
      health: 'healthy',
    };
    this.#index(instance);
    this.#save();
    return { kind: 'created', instance };
  }

  update(id: string, patch: { displayName?: string }): StoredInstance | undefined {
    const instance = this.#instances.get(id);
    if (!instance) return undefined;
    if (patch.displayName !== undefined && patch.displayName !== instance.displayName) {
      instance.displayName = patch.displayName;
      instance.updatedAt = this.#now().toISOString();
      this.#save();
    }
    return instance;
  }

  delete(id: string): boolean {
    const instance = this.#instances.get(id);
    if (!instance) return false;
    this.#instances.delete(id);
    const key = instance.idempotencyKey === null ? undefined : keyOf(instance.account, instance.idempotencyKey);
    if (key !== undefined && this.#byKey.get(key) === id) this.#byKey.delete(key);
    this.#save();
    return true;
  }

  /** Sets some limits (already validated); saved only when something changed. */
  setLimits(id: string, patch: Partial<Limits>): StoredInstance | undefined {
    const instance = this.#instances.get(id);
    if (!instance) return undefined;
    const next = { ...instance.limits, ...patch };
    if (next.maxConcurrency !== instance.limits.maxConcurrency || next.requestsPerMinute !== instance.limits.requestsPerMinute || next.dailyQuota !== instance.limits.dailyQuota) {
      // Limits are their own resource (/limits): the instance's updatedAt stays.
      instance.limits = next;
      this.#save();
    }
    return instance;
  }

  setHealth(id: string, status: HealthStatus, message?: string): StoredInstance | undefined {
    const instance = this.#instances.get(id);
    if (!instance) return undefined;
    instance.health = status;
    if (message === undefined) delete instance.healthMessage;
    else instance.healthMessage = message;
    this.#save();
    return instance;
  }

  clear(): void {
    this.#instances.clear();
    this.#byKey.clear();
    this.#save();
  }
}

/** The key index's key: idempotency keys are per account. */
const keyOf = (account: string, key: string): string => `${account}\u0000${key}`;

/** The public view of a stored instance (no owner, limits or health). */
export function publicInstance(s: StoredInstance): Instance {
  return {
    id: s.id,
    region: s.region,
    displayName: s.displayName,
    idempotencyKey: s.idempotencyKey,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}
