/**
 * `converge vendor-sim fault`: injects the documented vendor faults into the simulator a running
 * `converge dev` (`npm start`) started — found through its handle file (cli/dev/vendor-sim-handle.ts)
 * — or shows what is active. So a person trying the provider operator needs no second
 * simulator, no admin token copied by hand and no curl.
 *
 * Contracts:
 * - Faults given together are set together (one PATCH of /admin/faults; faults not named stay).
 * - With a duration (`--for`, or `--outage <duration>`), the command waits that long, then
 *   removes exactly the faults it set, and exits 0; Ctrl-C removes them at once. Without one, the
 *   faults stay until `--clear`. A duration longer than a timer can wait (2^31-1 ms, ≈ 24.8 days)
 *   is a usage error.
 * - `--health` sets the health the simulator reports for every instance (or `--instance`);
 *   health is not a fault: `--clear` leaves it, `--health healthy` restores it.
 * - Exit codes: 0 done, 1 the simulator could not be reached or refused, 2 usage error.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { createVendorSimAdmin } from '../../vendor-sim/index.ts';
import type { FaultsPatch, HealthStatus, VendorSimAdmin } from '../../vendor-sim/index.ts';
import { defaultVendorSimHandlePath, readVendorSimHandle } from '../dev/vendor-sim-handle.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { processIO } from '../shared/kubectl.ts';
import type { CommandIO } from '../shared/kubectl.ts';
import { stopSignal } from '../shared/stop-signal.ts';

const HEALTH: readonly HealthStatus[] = ['healthy', 'degraded', 'down'];
/** The longest the command can wait (`--for`, `--outage <duration>`): setTimeout fires at once past it. */
const MAX_WAIT_MS = 2 ** 31 - 1;

const HELP = `Usage: converge vendor-sim fault [faults] [--for <duration>] | --clear | --show

Inject faults into the vendor simulator that \`npm start\` (converge dev) runs, and watch the
DigitalHumanProvider operator cope (npx converge explain dhp/studio, the dev table). Without flags:
show the active faults, the instances with their health, and the request counts.

Faults (several at once are set together; others already active stay):
  --outage <duration|on>     every vendor request is answered 503: for that long, or "on" until --clear
  --errors <share>           a share of requests (0-1, e.g. 0.5) is answered 500
  --latency <duration>       every request waits this long first (e.g. 2s, 300ms)
  --rate-limit <per-second>  the vendor allows this many requests per second; 429 past it
  --hang                     requests are never answered (the operator's call timeout strikes)
  --health <status>[:<msg>]  the health every instance reports: healthy, degraded or down, with the
                             vendor's own words, e.g. degraded:"GPU hot" (not a fault: --clear keeps it)
  --instance <id>            with --health: only this instance (default: every instance)
  --for <duration>           remove the faults set here after that long (the command waits; Ctrl-C
                             removes them early). Default: they stay until --clear
Other:
  --clear                    remove every fault
  --show                     show the active faults, instances and request counts (the default)
  --sim <file>               the simulator's handle file (default .converge/dev/vendor-sim.json, which
                             converge dev writes while it runs)
  -h, --help                 show this help

Durations: 30s, 500ms, 2m, or a number of seconds; waiting (--for, --outage) at most 596h.

Examples:
  npx converge vendor-sim fault --outage 30s       # the vendor is gone for 30 s, then back
  npx converge vendor-sim fault --errors 0.5 --for 1m
  npx converge vendor-sim fault --health degraded:"GPU hot"
  npx converge vendor-sim fault --clear
`;

/** Milliseconds of `30s`, `500ms`, `2m`, `1h` or a bare number of seconds; undefined when it is none of these. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = Math.round(Number(m[1]) * factor);
  return ms > 0 ? ms : undefined;
}

interface Plan {
  patch: FaultsPatch;
  health?: { status: HealthStatus; message?: string; instance?: string };
  forMs?: number;
  clear: boolean;
}

/** The plan for the flags, or a usage error. Pure. */
export function planFaults(values: Record<string, string | boolean | undefined>): Plan | string {
  const patch: FaultsPatch = {};
  let forMs: number | undefined;
  if (typeof values.outage === 'string') {
    patch.outage = {};
    if (values.outage !== 'on') {
      forMs = parseDuration(values.outage);
      if (forMs === undefined) return `--outage takes a duration (30s, 2m) or "on", not "${values.outage}"`;
    }
  }
  if (typeof values.errors === 'string') {
    const rate = Number(values.errors);
    if (values.errors.trim() === '' || !Number.isFinite(rate) || rate <= 0 || rate > 1) return `--errors takes a share between 0 and 1 (e.g. 0.5), not "${values.errors}"`;
    patch.errors = { rate };
  }
  if (typeof values.latency === 'string') {
    const ms = parseDuration(values.latency);
    if (ms === undefined) return `--latency takes a duration (e.g. 2s, 300ms), not "${values.latency}"`;
    patch.latency = { ms };
  }
  if (typeof values['rate-limit'] === 'string') {
    const rps = Number(values['rate-limit']);
    if (!Number.isFinite(rps) || rps <= 0) return `--rate-limit takes a positive number of requests per second, not "${values['rate-limit']}"`;
    patch.rateLimit = { requestsPerSecond: rps };
  }
  if (values.hang === true) patch.hang = {};
  let health: Plan['health'];
  if (typeof values.health === 'string') {
    const [status, ...rest] = values.health.split(':');
    if (!HEALTH.includes(status as HealthStatus)) return `--health takes healthy, degraded or down (optionally :<message>), not "${values.health}"`;
    const message = rest.join(':').trim();
    health = { status: status as HealthStatus, ...(message ? { message } : {}), ...(typeof values.instance === 'string' ? { instance: values.instance } : {}) };
  } else if (typeof values.instance === 'string') {
    return '--instance only applies with --health';
  }
  if (typeof values.for === 'string') {
    const ms = parseDuration(values.for);
    if (ms === undefined) return `--for takes a duration (e.g. 30s, 2m), not "${values.for}"`;
    if (Object.keys(patch).length === 0) return '--for needs a fault to remove afterwards (--outage, --errors, --latency, --rate-limit, --hang)';
    forMs = ms;
  }
  if (forMs !== undefined && forMs > MAX_WAIT_MS) return 'a duration to wait (--for, --outage) is at most 596h (24 days); for longer, set the fault without one and remove it with --clear';
  const clear = values.clear === true;
  if (clear && (Object.keys(patch).length > 0 || health)) return '--clear cannot be combined with faults to set';
  return { patch, ...(health ? { health } : {}), ...(forMs !== undefined ? { forMs } : {}), clear };
}

function describe(patch: FaultsPatch): string {
  return Object.entries(patch).map(([k, v]) => (v && Object.keys(v).length > 0 ? `${k} ${JSON.stringify(v)}` : k)).join(', ');
}

async function show(admin: VendorSimAdmin, baseUrl: string, io: CommandIO): Promise<void> {
  const [faults, instances, stats] = await Promise.all([admin.faults(), admin.instances(), admin.stats()]);
  const lines = [`vendor simulator ${baseUrl}`, `faults: ${Object.keys(faults).length === 0 ? 'none' : describe(faults)}`];
  lines.push(`instances: ${instances.length === 0 ? 'none' : ''}`);
  for (const i of instances) lines.push(`  ${i.id}  ${i.region}  ${i.health}${i.healthMessage ? ` (${i.healthMessage})` : ''}  ${i.displayName}`);
  const answers = Object.entries(stats.responses).map(([code, n]) => `${code}×${n}`).join(' ');
  lines.push(`requests: ${Object.values(stats.requests).reduce((a, b) => a + b, 0)} (answers ${answers || 'none'}; ${stats.rateLimited} rate-limited)`);
  io.stdout(`${lines.join('\n')}\n`);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });

export async function run(argv: string[], io: CommandIO = processIO, signal?: AbortSignal): Promise<number> {
  const args = parseCommandArgs('vendor-sim fault', HELP, argv, {
    outage: { type: 'string' },
    errors: { type: 'string' },
    latency: { type: 'string' },
    'rate-limit': { type: 'string' },
    hang: { type: 'boolean' },
    health: { type: 'string' },
    instance: { type: 'string' },
    for: { type: 'string' },
    clear: { type: 'boolean' },
    show: { type: 'boolean' },
    sim: { type: 'string' },
  }, false, io);
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  const plan = planFaults(values);
  if (typeof plan === 'string') {
    io.stderr(`converge vendor-sim fault: ${plan}\n`);
    return 2;
  }
  const handlePath = values.sim ?? defaultVendorSimHandlePath();
  const gone = (detail: string) =>
    `the vendor simulator named in ${handlePath} is not running (${detail}): is \`npm start\` still running? The file may be left from a session that was killed`;
  let admin: VendorSimAdmin;
  let baseUrl: string;
  try {
    const handle = await readVendorSimHandle(handlePath);
    baseUrl = handle.baseUrl;
    let ca: Buffer;
    try {
      ca = await readFile(handle.caPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new Error(gone(`its CA file ${handle.caPath} is gone`));
    }
    admin = createVendorSimAdmin({ baseUrl, adminToken: handle.adminToken, ca });
  } catch (err) {
    io.stderr(`converge vendor-sim fault: ${(err as Error).message}\n`);
    return 1;
  }
  const unreachable = (err: unknown): string => {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as NodeJS.ErrnoException).code;
    return cause === 'ECONNREFUSED' ? gone(`${baseUrl} does not answer`) : (err as Error).message;
  };
  const setKeys = Object.keys(plan.patch) as (keyof FaultsPatch)[];
  let set = false;
  try {
    if (plan.clear) {
      await admin.clearFaults();
      io.stdout('vendor faults cleared\n');
      return 0;
    }
    if (setKeys.length === 0 && !plan.health) {
      await show(admin, baseUrl, io);
      return 0;
    }
    // Listening for the stop before the faults are set: a signal (or a closed output) from then
    // on ends the wait, and the faults are removed (finally), never left on.
    const stop = plan.forMs !== undefined && setKeys.length > 0 ? (signal ?? stopSignal()) : undefined;
    if (setKeys.length > 0) {
      await admin.patchFaults(plan.patch);
      set = true;
      io.stdout(`vendor faults on: ${describe(plan.patch)}${plan.forMs !== undefined ? ` for ${plan.forMs / 1000} s (Ctrl-C ends them early)` : ' (until `converge vendor-sim fault --clear`)'}\n`);
    }
    if (plan.health) {
      const { status, message, instance } = plan.health;
      const ids = instance ? [instance] : (await admin.instances()).map((i) => i.id);
      if (ids.length === 0) io.stdout('no instances yet: no health to set\n');
      for (const id of ids) {
        if (!(await admin.setHealth(id, status, message))) {
          io.stderr(`converge vendor-sim fault: no instance ${id} at ${baseUrl}\n`);
          return 1;
        }
        io.stdout(`instance ${id}: health ${status}${message ? ` (${message})` : ''}\n`);
      }
    }
    if (plan.forMs !== undefined && setKeys.length > 0) {
      await sleep(plan.forMs, stop!);
      await admin.patchFaults(Object.fromEntries(setKeys.map((k) => [k, null])) as FaultsPatch);
      set = false;
      io.stdout(`vendor faults off: ${setKeys.join(', ')}\n`);
    }
    return 0;
  } catch (err) {
    io.stderr(`converge vendor-sim fault: ${unreachable(err)}\n`);
    return 1;
  } finally {
    if (set && plan.forMs !== undefined) await admin.patchFaults(Object.fromEntries(setKeys.map((k) => [k, null])) as FaultsPatch).catch(() => {});
    await admin.close();
  }
}
