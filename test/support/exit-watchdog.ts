/**
 * Loaded into every test process (`scripts/test.ts` passes `--import`): a test file's process
 * must end once its tests have. Node's runner waits for each file's process to exit, and a
 * process that something keeps alive (an interval, a server, a loop that re-arms its timer after
 * its owner stopped) never does — the whole run then waits until CI kills it, with no word of
 * which file or why. Here, once every test of the file has ended, a timer that keeps nothing
 * alive waits `CONVERGE_TEST_EXIT_GRACE_MS` (60 s): if the process is still there, it writes
 * to stderr what keeps it alive — the kinds of resource Node counts, the sockets, servers and
 * child processes with their addresses, and for 3 s every callback that runs with what created
 * it — and exits 1, so that file fails and the run goes on.
 *
 * Guarantees: a process that exits on its own within the grace is never touched; nothing here
 * runs while tests run (no hook is installed until the grace is over).
 * @module
 */
import { createHook, executionAsyncResource } from 'node:async_hooks';
import { syncBuiltinESMExports } from 'node:module';
import { after } from 'node:test';
import timers from 'node:timers';

const graceMs = Number(process.env.CONVERGE_TEST_EXIT_GRACE_MS ?? 60_000);
const watchMs = 3_000;

/** Timers of 10 s and more, with where they were made: Node lists no timers, only counts them. */
const LONG_TIMER_MS = 10_000;
const longTimers = new Set<{ timer: NodeJS.Timeout; ms: number; made: Error }>();
let pruneAt = 1_000;

/** `setTimeout` and `setInterval` (global and `node:timers`) note their long timers. */
function noteLongTimers(): void {
  for (const name of ['setTimeout', 'setInterval'] as const) {
    const original = globalThis[name] as (...args: unknown[]) => NodeJS.Timeout;
    const noting = Object.assign(function (this: unknown, ...args: unknown[]) {
      const timer = original.apply(this, args);
      const ms = Number(args[1]);
      if (ms >= LONG_TIMER_MS) {
        if (longTimers.size >= pruneAt) {
          for (const t of longTimers) if ((t.timer as unknown as { _destroyed?: boolean })._destroyed) longTimers.delete(t);
          pruneAt = Math.max(1_000, 2 * longTimers.size); // amortized: many timers pending cost no pass each
        }
        longTimers.add({ timer, ms, made: new Error(name) }); // the stack is formatted only if it is ever read
      }
      return timer;
    }, original);
    (globalThis as Record<string, unknown>)[name] = noting;
    (timers as Record<string, unknown>)[name] = noting;
  }
  syncBuiltinESMExports();
}

// Only in a file's own process (the runner that starts them loads this module too).
if (process.env.NODE_TEST_CONTEXT?.startsWith('child')) {
  noteLongTimers();
  after(() => {
    setTimeout(() => {
      void explain().finally(() => process.exit(1));
    }, graceMs).unref();
  });
}

async function explain(): Promise<void> {
  const lines = [
    `this test file's process is still running ${graceMs / 1000} s after its last test ended (CONVERGE_TEST_EXIT_GRACE_MS); something keeps it alive:`,
    `  resources: ${JSON.stringify(count(process.getActiveResourcesInfo()))}`,
    ...activeHandles().map((h) => `  ${h}`),
    ...pendingLongTimers(),
  ];
  const seen = new Map<string, number>();
  let own: unknown;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') return;
      note(seen, `created ${type}\n${outsideFrames(new Error().stack, 6)}`);
    },
    before() {
      const resource = executionAsyncResource();
      if (resource !== own && !(resource instanceof Promise)) note(seen, `ran ${describe(resource)}`);
    },
  });
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40; // Node's own frames come first; the caller is further down
  await new Promise<void>((done) => {
    own = setTimeout(done, watchMs).unref();
    hook.enable();
  });
  hook.disable();
  Error.stackTraceLimit = limit;
  lines.push(`  in the next ${watchMs / 1000} s:${seen.size === 0 ? ' nothing ran' : ''}`);
  for (const [what, n] of [...seen].slice(0, 12)) lines.push(`    ${n}× ${what}`);
  process.stderr.write(`${lines.join('\n')}\n`);
}

function note(seen: Map<string, number>, what: string): void {
  seen.set(what, (seen.get(what) ?? 0) + 1);
}

/** The long timers still pending that keep the process alive, each with where it was made. */
function pendingLongTimers(): string[] {
  const pending = [...longTimers].filter(({ timer }) => !(timer as unknown as { _destroyed?: boolean })._destroyed && timer.hasRef());
  return pending.slice(0, 10).map(({ ms, made }) => {
    return `  a ${made.message} of ${ms} ms, made\n${outsideFrames(made.stack, 4)}`;
  });
}

/** The first `n` frames of `stack` outside Node's own modules and this one, one per line. */
function outsideFrames(stack: string | undefined, n: number): string {
  const frames = (stack ?? '').split('\n').slice(1).map((l) => l.trim());
  return frames.filter((f) => !/\(node:|^at node:|exit-watchdog\.ts/.test(f)).slice(0, n).map((f) => `      ${f}`).join('\n');
}

function count(names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = (out[n] ?? 0) + 1;
  return out;
}

/** Sockets, servers and child processes Node holds, with what tells them apart. */
function activeHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.() ?? [];
  return handles.map((h) => describe(h));
}

function describe(resource: unknown): string {
  if (resource === null || typeof resource !== 'object') return String(resource);
  const r = resource as Record<string, unknown> & { constructor?: { name?: string } };
  const kind = r.constructor?.name ?? 'object';
  if (kind === 'Timeout' && typeof r._onTimeout === 'function') {
    const fn = r._onTimeout as (...args: unknown[]) => unknown;
    const when = typeof r._repeat === 'number' ? `every ${r._repeat} ms` : `once, after ${Math.round(Number(r._idleTimeout))} ms`;
    return `${kind} (${when}) → ${fn.name || 'anonymous'}: ${String(fn).replace(/\s+/g, ' ').slice(0, 160)}`;
  }
  if (typeof r.getpeername === 'function') {
    const peer: { address?: string; port?: number } = {};
    (r.getpeername as (out: object) => number).call(r, peer);
    return `${kind} → ${peer.address ?? '(no peer)'}:${peer.port ?? ''}`;
  }
  if (kind === 'Socket' || kind === 'TLSSocket') {
    const s = r as { remoteAddress?: string; remotePort?: number; localPort?: number; _handle?: { fd?: number } };
    return s.remoteAddress ? `${kind} :${s.localPort} → ${s.remoteAddress}:${s.remotePort}` : `${kind} (fd ${s._handle?.fd ?? '?'}: ${(s._handle?.fd ?? 9) <= 2 ? 'stdio' : 'a pipe'})`;
  }
  if (typeof r.address === 'function' && typeof r.listen === 'function') {
    try {
      return `${kind} listening on ${JSON.stringify((r.address as () => unknown).call(r))}`;
    } catch {
      return `${kind} (a server)`;
    }
  }
  if (typeof r.pid === 'number' && typeof r.kill === 'function') return `${kind} pid ${r.pid} (${String(r.spawnfile)} ${JSON.stringify(r.spawnargs ?? []).slice(0, 200)})`;
  return kind;
}
