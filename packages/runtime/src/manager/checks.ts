/**
 * The manager's health and readiness checks: the built-in ones (`caches-synced`,
 * `watches-healthy`, from the watches' health; `eventloop` is the probe server's own) and the
 * ones an operator adds (`Manager.addReadyCheck`, `Manager.addHealthCheck`).
 *
 * Guarantees:
 * - a check name is refused (malformed, or taken) when it is added, whether or not a probe
 *   server runs, so a mistake shows in every environment, not only where probes are served;
 * - an added check that throws fails itself, with its error as the detail, and nothing else: the
 *   built-in checks are computed apart from the added ones;
 * - `readyChecks()` answers in-process what `/readyz` would, probe server or not.
 * @module
 */
import type { WatchHealth } from '../cache/index.ts';
import { assertCheckName } from '../serving/index.ts';
import type { HealthCheck, ProbeServer } from '../serving/index.ts';
import { readyChecksFor, runCheck, type ReadyCheck } from './readiness.ts';

/** An added check: cheap and synchronous. */
export type AddedCheck = () => { ok: boolean; detail?: string };

const BUILT_IN_READY = ['caches-synced', 'watches-healthy'] as const;
const BUILT_IN_HEALTH = ['eventloop'] as const;

export class ManagerChecks {
  readonly #health: () => readonly WatchHealth[];
  readonly #ready = new Map<string, AddedCheck>();
  readonly #liveness = new Set<string>();
  #probe: ProbeServer | undefined;

  constructor(health: () => readonly WatchHealth[]) {
    this.#health = health;
  }

  /** The built-in readiness checks, each computed alone, for a probe server's `checks`. */
  builtInProbeChecks(): Record<string, HealthCheck> {
    return Object.fromEntries(BUILT_IN_READY.map((name) => [name, () => {
      const check = readyChecksFor(this.#health()).find((c) => c.name === name)!;
      return { ok: check.ok, ...(check.detail ? { message: check.detail } : {}) };
    }]));
  }

  /** The probe server that serves the checks added from now on (set once, before any is added). */
  serveOn(probe: ProbeServer): void {
    this.#probe = probe;
  }

  addReady(name: string, check: AddedCheck): void {
    assertCheckName(name);
    if (this.#ready.has(name) || (BUILT_IN_READY as readonly string[]).includes(name)) throw new Error(`ready check ${name} already exists`);
    this.#probe?.addReadyCheck(name, () => asOutcome(runCheck(check)));
    this.#ready.set(name, check);
  }

  addHealth(name: string, check: AddedCheck): void {
    assertCheckName(name);
    if (this.#liveness.has(name) || (BUILT_IN_HEALTH as readonly string[]).includes(name)) throw new Error(`health check ${name} already exists`);
    this.#probe?.addHealthCheck(name, () => asOutcome(runCheck(check)));
    this.#liveness.add(name);
  }

  /** The built-in readiness checks, then the added ones. */
  readyChecks(): ReadyCheck[] {
    const added = [...this.#ready].map(([name, check]) => {
      const { ok, detail } = runCheck(check);
      return { name, ok, ...(detail ? { detail } : {}) };
    });
    return [...readyChecksFor(this.#health()), ...added];
  }
}

function asOutcome({ ok, detail }: { ok: boolean; detail?: string }): { ok: boolean; message?: string } {
  return { ok, ...(detail ? { message: detail } : {}) };
}
