/**
 * What the kill-point tests share: finding the processes a run started (by a marker in their
 * environment, which children inherit, so one spawned a moment before a kill is not missed),
 * waiting on a condition, and delays from a printed seed (`CONVERGE_KILL_SEED` replays one).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';

/** A fresh `NAME=value` marker for one run's environment. */
export function killPointMark(): { entry: string; env: Record<string, string> } {
  const value = randomBytes(8).toString('hex');
  return { entry: `CONVERGE_KILL_POINT_MARK=${value}`, env: { CONVERGE_KILL_POINT_MARK: value } };
}

/** Pids of live processes (not zombies) whose environment holds `entry`; others' processes are skipped. */
export function processesMarked(entry: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${name}/environ`).includes(entry)) continue;
      // A zombie (exited, not yet reaped) holds no resources.
      if (/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
      found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Resolves once `check()` holds; rejects naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Numbers in [0, 1) from `CONVERGE_KILL_SEED` or a new seed, printed as a diagnostic (xorshift32). */
export function killPointRandom(t: TestContext): () => number {
  const seed = Number(process.env.CONVERGE_KILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`seed ${seed} (CONVERGE_KILL_SEED=${seed} replays the delays)`);
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}
