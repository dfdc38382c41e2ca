/**
 * `converge vendor-sim --listen 127.0.0.1:<port> --token <token> [--state-file F] [--dir D]`:
 * runs the vendor API simulator (packages/operators/src/vendor-sim) in the foreground.
 * `converge vendor-sim fault …` drives the one `converge dev` runs (vendor-sim-fault.ts).
 *
 * Prints, one line each on stdout, `vendor-sim base URL: <url>`, `vendor-sim CA: <path>` and
 * (when generated) `vendor-sim admin token: <token>`, then `vendor-sim ready`; runs until
 * SIGINT/SIGTERM, then closes every connection and exits 0. Bad flags: message on stderr, exit 2;
 * a failure to start (port in use, unreadable state file): stderr, exit 1.
 * @module
 */
import { startVendorSimulator, type Faults } from '../../vendor-sim/index.ts';
import { parseCommandArgs } from '../shared/command-args.ts';

const HELP = `Usage: converge vendor-sim --listen <host:port> --token <token> [flags]
       converge vendor-sim fault [faults]     (faults for the simulator npm start runs; fault --help)

Run the digital-human vendor API simulator: real HTTPS on the given address with a
self-signed CA, the API of packages/operators/src/vendor-sim/openapi.yaml, and /admin endpoints to inject
faults (latency, 5xx share, 429 bursts, rate limit, hangs, lost create answers, outages,
out-of-band deletes, health flips). Runs until interrupted (Ctrl-C / SIGTERM).

Flags:
  --listen <host:port>   address to listen on (default 127.0.0.1:0 = a free port);
                         IPv6 as [::1]:8443
  --token <token>        bearer token the /v1 API accepts (required; or env
                         CONVERGE_VENDOR_SIM_TOKEN)
  --admin-token <token>  bearer token for /admin (default: random, printed; or env
                         CONVERGE_VENDOR_SIM_ADMIN_TOKEN)
  --state-file <path>    keep instances in this JSON file, so a restart loses nothing
  --dir <path>           folder for the CA and server certificate (default: the state
                         file's folder, else a temporary folder removed on exit); an
                         existing CA there is reused
  --faults <json>        faults active from the start, e.g. '{"rateLimit":{"requestsPerSecond":5}}'
  -h, --help             show this help

Prints "vendor-sim base URL: <url>" and "vendor-sim CA: <path>" (one line each), then
"vendor-sim ready". Admin examples (admin token from the output):
  curl --cacert <CA> -H "Authorization: Bearer <admin>" -X PATCH <url>/admin/faults \\
       -d '{"errors":{"rate":0.3},"latency":{"ms":200}}'
  curl --cacert <CA> -H "Authorization: Bearer <admin>" <url>/admin/stats
`;

/** Splits `host:port` / `[v6]:port` / `:port`; throws on anything else. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  if (!m) throw new Error(`--listen must be host:port (e.g. 127.0.0.1:8443), got "${value}"`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`--listen port must be 0-65535, got ${port}`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

export async function run(argv: string[]): Promise<number> {
  if (argv[0] === 'fault') return (await import('./vendor-sim-fault.ts')).run(argv.slice(1));
  const args = parseCommandArgs('vendor-sim', HELP, argv, {
    listen: { type: 'string', default: '127.0.0.1:0' },
    token: { type: 'string' },
    'admin-token': { type: 'string' },
    'state-file': { type: 'string' },
    dir: { type: 'string' },
    faults: { type: 'string' },
  });
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  const token = values.token ?? process.env.CONVERGE_VENDOR_SIM_TOKEN;
  const adminToken = values['admin-token'] ?? process.env.CONVERGE_VENDOR_SIM_ADMIN_TOKEN;
  let listen: { host: string; port: number };
  let faults: Faults | undefined;
  try {
    if (!token) throw new Error('--token is required (or set CONVERGE_VENDOR_SIM_TOKEN)');
    listen = parseListen(values.listen);
    if (values.faults !== undefined) {
      try {
        faults = JSON.parse(values.faults) as Faults;
      } catch {
        throw new Error('--faults must be JSON');
      }
    }
  } catch (err) {
    process.stderr.write(`converge vendor-sim: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }

  let sim;
  try {
    sim = await startVendorSimulator({
      host: listen.host,
      port: listen.port,
      token,
      ...(adminToken ? { adminToken } : {}),
      ...(values['state-file'] ? { stateFile: values['state-file'] } : {}),
      ...(values.dir ? { dir: values.dir } : {}),
      ...(faults ? { faults } : {}),
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason = e.code === 'EADDRINUSE' ? `address ${values.listen} is already in use` : e.message;
    process.stderr.write(`converge vendor-sim: cannot start: ${reason}\n`);
    return e.name === 'FaultValidationError' ? 2 : 1;
  }

  process.stdout.write(
    [
      `vendor-sim base URL: ${sim.baseUrl}`,
      `vendor-sim CA: ${sim.caPath}`,
      ...(adminToken ? [] : [`vendor-sim admin token: ${sim.adminToken}`]),
      ...(sim.stateFile ? [`vendor-sim state file: ${sim.stateFile}`] : []),
      'vendor-sim ready',
      '',
    ].join('\n'),
  );

  const signal = await new Promise<NodeJS.Signals>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal('SIGINT'));
    process.once('SIGTERM', () => resolveSignal('SIGTERM'));
  });
  process.stderr.write(`converge vendor-sim: ${signal}, stopping\n`);
  await sim.stop();
  return 0;
}
