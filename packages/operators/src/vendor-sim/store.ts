/**
 * The simulator's instances: an in-memory map, optionally persisted to a JSON file after every
 * change (written to a temporary file and renamed, so a crash never leaves half a file).
 *
 * All methods are synchronous, so in Node's single thread each one is atomic: two concurrent
 * creates with the same Idempotency-Key can never both create.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

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

/** What the store keeps: the instance plus its (admin-controlled) health. */
export interface StoredInstance extends Instance {
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
      for (const instance of state.instances) this.#index(instance);
    }
  }

  #index(instance: StoredInstance): void {
    this.#instances.set(instance.id, instance);
    if (instance.idempotencyKey !== null) this.#byKey.set(instance.idempotencyKey, instance.id);
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

  list(): StoredInstance[] {
    return [...this.#instances.values()];
  }

  get(id: string): StoredInstance | undefined {
    return this.#instances.get(id);
  }

  findByKey(key: string): StoredInstance | undefined {
    const id = this.#byKey.get(key);
    return id === undefined ? undefined : this.#instances.get(id);
  }

  /**
   * Creates an instance, or returns the live one created with the same key: `replayed` when the
   * region matches, `key-conflict` when it does not. A deleted instance frees its key.
   */
  create(input: { region: string; displayName: string }, key: string | undefined): CreateOutcome {
    if (key !== undefined) {
      const existing = this.findByKey(key);
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
    if (instance.idempotencyKey !== null && this.#byKey.get(instance.idempotencyKey) === id) this.#byKey.delete(instance.idempotencyKey);
    this.#save();
    return true;
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

/** The public view of a stored instance (no health fields). */
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
