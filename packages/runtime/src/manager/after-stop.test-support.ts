/**
 * Test support: a witness of what something does after it stopped. Made before the start, it
 * keeps the lines of the logger it hands out and counts Node's active resources (servers, sockets,
 * timers) by type; after the stop it fails when a line came later, or when something beyond what
 * it counted at first is still there once it had time to go.
 * Caveat: resources that are `unref()`'d are not counted (a peer's end of such a connection in the
 * same process is).
 * @module
 */
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { createLogger } from '../logging/index.ts';

export interface AfterStopWitness {
  /** A logger (every level) whose lines are kept. */
  readonly log: Logger;
  /** Call the moment the thing settled its stop: the lines up to here are its own business. */
  stopped(): void;
  /**
   * Fails when a line came after `stopped()` (watched for at least `quietMs`, default 300), or when
   * resources beyond those at creation are still there after up to `withinMs` (default 2 000; a
   * socket's peer closes a moment after its owner, later on a loaded machine; what is left open for
   * good, a keep-alive pool for one, lasts seconds). `what` names the run in the messages.
   */
  check(what: string, options?: { quietMs?: number; withinMs?: number }): Promise<void>;
}

export function afterStopWitness(): AfterStopWitness {
  const before = activeResources();
  const lines: string[] = [];
  let settled: number | undefined;
  return {
    log: createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } }),
    stopped() {
      settled = lines.length;
    },
    async check(what, options = {}) {
      assert.ok(settled !== undefined, 'stopped() was not called');
      const started = performance.now();
      await new Promise((r) => setTimeout(r, options.quietMs ?? 300));
      const deadline = started + (options.withinMs ?? 2_000);
      let left = beyond(before, activeResources());
      while (Object.keys(left).length > 0 && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        left = beyond(before, activeResources());
      }
      assert.deepEqual(lines.slice(settled), [], `logged after it settled (${what})`);
      assert.deepEqual(left, {}, `left running after it settled (${what})`);
    },
  };
}

/** Node's active resources now, counted by type. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/** What `now` holds beyond `before`, by type (empty when nothing was added). */
function beyond(before: Map<string, number>, now: Map<string, number>): Record<string, number> {
  const extra: Record<string, number> = {};
  for (const [type, n] of now) if (n > (before.get(type) ?? 0)) extra[type] = n - (before.get(type) ?? 0);
  return extra;
}
