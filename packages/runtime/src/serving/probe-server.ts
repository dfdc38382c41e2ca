/**
 * `/healthz` and `/readyz`, in the kube-apiserver's format.
 * @module
 */
import type { ServerResponse } from 'node:http';
import { HttpEndpoint, send, type EndpointServer } from './http-endpoint.ts';
import { describeError } from '../logging/index.ts';
import { EventLoopMonitor, type EventLoopMonitorOptions } from './event-loop-monitor.ts';

/**
 * A health check. It passes when it returns (or resolves to) anything but `false` or
 * `{ ok: false }` without throwing; a thrown error's message, or `message`, says why it failed.
 */
export type HealthCheck = () => CheckOutcome | Promise<CheckOutcome>;
export type CheckOutcome = void | boolean | { ok: boolean; message?: string };

export interface ProbeServerOptions {
  /** `host:port`, `:port`, or `0` to disable. */
  address: string;
  /** Readiness checks by name (e.g. `informers-synced`, `watches-healthy`). More via `addReadyCheck`. */
  checks?: Record<string, HealthCheck>;
  /** Extra liveness checks besides the built-in `eventloop`. */
  healthChecks?: Record<string, HealthCheck>;
  /** Event-loop blocking threshold and window (default: fail above 5000 ms). */
  eventLoop?: EventLoopMonitorOptions;
  /** A check that does not settle in time fails (default 5000 ms). */
  checkTimeoutMs?: number;
}

export interface ProbeServer extends EndpointServer {
  addReadyCheck(name: string, check: HealthCheck): void;
  addHealthCheck(name: string, check: HealthCheck): void;
  /** Runs the readiness checks in-process (what `/readyz` answers). */
  ready(): Promise<CheckReport[]>;
  /** Runs the liveness checks in-process (what `/healthz` answers). */
  healthy(): Promise<CheckReport[]>;
}

export interface CheckReport {
  name: string;
  ok: boolean;
  message?: string;
}

const NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** Throws the RangeError a probe server gives a check name it refuses (lower-case alphanumerics and '-'). */
export function assertCheckName(name: string): void {
  if (!NAME.test(name)) throw new RangeError(`check name ${JSON.stringify(name)} must be lower-case alphanumerics and '-'`);
}

export function createProbeServer(options: ProbeServerOptions): ProbeServer {
  const timeoutMs = options.checkTimeoutMs ?? 5_000;
  const monitor = new EventLoopMonitor(options.eventLoop);
  const live = new Map<string, HealthCheck>();
  const ready = new Map<string, HealthCheck>();
  const add = (set: Map<string, HealthCheck>, name: string, check: HealthCheck): void => {
    assertCheckName(name);
    if (set.has(name)) throw new Error(`check ${name} is already registered`);
    set.set(name, check);
  };
  add(live, 'eventloop', () => {
    const delay = monitor.maxDelayMs();
    return delay > monitor.thresholdMs
      ? { ok: false, message: `event loop blocked for ${Math.round(delay)} ms (threshold ${monitor.thresholdMs} ms)` }
      : true;
  });
  for (const [name, check] of Object.entries(options.healthChecks ?? {})) add(live, name, check);
  for (const [name, check] of Object.entries(options.checks ?? {})) add(ready, name, check);

  const endpoint = new HttpEndpoint('probe', options.address, async (_req, res, url) => {
    const m = /^\/(healthz|readyz|livez)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (!m) {
      send(res, 404, 'not found\n');
      return;
    }
    const kind = m[1] === 'readyz' ? 'readyz' : m[1]!;
    const set = m[1] === 'readyz' ? ready : live;
    if (m[2] !== undefined) {
      const check = set.get(m[2]);
      if (!check) {
        send(res, 404, `no such check: ${m[2]}\n`);
        return;
      }
      const [report] = await runChecks(new Map([[m[2], check]]), timeoutMs);
      send(res, report!.ok ? 200 : 500, report!.ok ? 'ok\n' : `internal server error: ${report!.message ?? 'failed'}\n`);
      return;
    }
    const excluded = new Set(url.searchParams.getAll('exclude'));
    const selected = new Map([...set].filter(([name]) => !excluded.has(name)));
    const reports = await runChecks(selected, timeoutMs);
    respond(res, kind, reports, url.searchParams.has('verbose'));
  });

  return {
    name: endpoint.name,
    async start(signal: AbortSignal): Promise<void> {
      monitor.start();
      try {
        await endpoint.start(signal);
      } finally {
        monitor.stop();
      }
    },
    listening: () => endpoint.listening(),
    addReadyCheck: (name, check) => add(ready, name, check),
    addHealthCheck: (name, check) => add(live, name, check),
    ready: () => runChecks(ready, timeoutMs),
    healthy: () => runChecks(live, timeoutMs),
  };
}

/** Runs checks concurrently, each bounded by `timeoutMs`. Never rejects. */
export async function runChecks(checks: Map<string, HealthCheck>, timeoutMs: number): Promise<CheckReport[]> {
  return Promise.all([...checks].map(([name, check]) => runCheck(name, check, timeoutMs)));
}

async function runCheck(name: string, check: HealthCheck, timeoutMs: number): Promise<CheckReport> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    const outcome = await Promise.race([Promise.resolve().then(check), timeout]);
    if (outcome === false) return { name, ok: false };
    if (outcome && typeof outcome === 'object') {
      // As text: a message that is no string (a Symbol, an object whose toString throws) broke
      // the whole answer, or showed what its toString threw.
      return { name, ok: Boolean(outcome.ok), ...(outcome.message ? { message: describeError(outcome.message, 'unprintable message') } : {}) };
    }
    return { name, ok: true };
  } catch (err) {
    // describeError, not `String(err)`, which can throw (even `err` itself): this function
    // never rejects, and an unprintable error once left /readyz unanswered, its rejection unhandled.
    return { name, ok: false, message: describeError(err) };
  } finally {
    clearTimeout(timer);
  }
}

function respond(res: ServerResponse, kind: string, reports: CheckReport[], verbose: boolean): void {
  const ok = reports.every((r) => r.ok);
  if (ok && !verbose) {
    send(res, 200, 'ok');
    return;
  }
  const lines = reports.map((r) =>
    r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: ${verbose ? (r.message ?? 'check failed') : 'reason withheld'}`,
  );
  lines.push(`${kind} check ${ok ? 'passed' : 'failed'}`);
  send(res, ok ? 200 : 500, `${lines.join('\n')}\n`);
}
