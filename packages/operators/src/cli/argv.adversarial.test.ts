/**
 * Adversarial tests of the `converge` command line's argument handling and error reporting: the
 * CLI runs as a child process (`node_modules/.bin/node …/cli/main.ts <argv>`) on generated argv.
 *
 * Generated (fast-check), for every command (status, explain, providers, crds, manifests, uninstall, run,
 * dashboard, dev, init, cluster up, migrate-storage, vendor-sim, vendor-sim fault) and for unknown
 * ones: the command's own flags as `--flag value`, `--flag=value` and `-f value` / `-fvalue`,
 * flags missing their value (also last), booleans given a value, repeated flags, flags of other
 * commands, unknown flags, `--` separators, `-A` with `-n`, `--help` / `-h` anywhere, and values
 * and positionals that are good, empty, unicode, 20 000 characters long, start with `-`, or are
 * the names of Object.prototype's members (`constructor`, `__proto__`, `toString`…) — as the
 * command, a flag, a flag value and the kind of `explain <kind>/<name>`. A third of the argv hold
 * well-formed flags with good values only, so that the commands' own checks and failures run too.
 *
 * Every run gets its own empty working directory and an environment of its own: HOME, TMPDIR and
 * XDG_CACHE_HOME in a temporary folder; a kubeconfig (through `KUBECONFIG`, `--kubeconfig`, or
 * none) whose server is `https://127.0.0.1:1` (nothing listens) and whose user holds a fake token
 * `TOKEN`; some of the kubeconfigs are broken (invalid YAML on the token's line, token plus basic
 * auth, a token no HTTP header can carry); `CONVERGE_CONTROL_PLANE_BIN` names a file that is not
 * executable, so `dev` and `cluster up` cannot build or start a control plane. No run can reach a
 * cluster. `vendor-sim fault` drives a simulator of the test's own (its handle file is in every
 * run's `.converge/dev/`, as `converge dev` writes it). A run is killed (its whole process group)
 * half a second after it says it serves (`run`, `dashboard`, `vendor-sim`, `status --watch`,
 * `vendor-sim fault` with a duration), after `LONG_RUNNING_MS` when the help says it runs until
 * stopped, else after `TIMEOUT_MS`.
 *
 * Checked for every run, against what the command's `--help` says it accepts (`expectation`, the
 * test's own model of each help text):
 * - the exit code is 0, 1 or 2; a run that is killed (started, or timed out) is a long-running
 *   command given valid argv — never a usage error waiting for the network;
 * - argv the help rules out (parse errors, unknown formats and kinds, `-A` with `-n`, malformed
 *   addresses, …) exits 2; argv it allows does not;
 * - exit 2: nothing on stdout; stderr is one `converge[ <command>]: <message>` line, then nothing
 *   or a blank line and the usage;
 * - exit 1: stderr has a `converge[ <command>]: <message>` line;
 * - `--help` / `-h` (when the rest parses): exit 0, the command's usage on stdout, nothing on stderr;
 * - no output (with the argv's own strings taken out, and without the operators' JSON log lines)
 *   holds a stack trace, `[object …]`, `undefined`, `NaN`, a JavaScript error name, `Cannot read
 *   properties`, a function's source (`[native code]`) or a warning of Node.js itself — and no
 *   output at all holds the kubeconfig's token.
 * Besides: `--help` of every command; argv that earlier versions got wrong (the regressions); and
 * a stdout nobody reads (a closed pipe: quiet exit; `/dev/full`: one line on stderr, exit 1).
 *
 * `CLI_ARGV_RUNS` sets how many generated argv are tried (default 48, in batches of `POOL` run in
 * parallel; the file takes ≈ 20–25 s on two cores); `CLI_ARGV_SEED` replays a seed fast-check
 * printed; `CLI_ARGV_LOG=<file>` appends every run (argv, outcome, output, expectation) to a file
 * as JSON lines.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { isIP } from 'node:net';
import { appendFileSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ParseArgsOptionsConfig } from 'node:util';
import fc from 'fast-check';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

const RUNS = Number.parseInt(process.env.CLI_ARGV_RUNS ?? '', 10) || 48;
/** A file to append every run to (one JSON line: argv, outcome, output, expectation), to see what was tried. */
const LOG = process.env.CLI_ARGV_LOG;
const SEED = process.env.CLI_ARGV_SEED ? Number.parseInt(process.env.CLI_ARGV_SEED, 10) : undefined;
/** Child processes at once (each start costs ≈ 0.2–0.5 s of CPU). */
const POOL = 4;
/** A run still going after this is killed; only a long-running command with valid argv may take it. */
const TIMEOUT_MS = 20_000;
/** The same for argv the help says runs until stopped (a `run` with `--log-level error` says nothing when it starts). */
const LONG_RUNNING_MS = 5_000;
/** How long a run may go on after it says it serves (then it is killed). */
const STARTED_GRACE_MS = 500;
/** The fake credential in every kubeconfig: no output may ever hold it. */
const TOKEN = 'FAKE-TOKEN-q7Zr2-canary-never-print';

/** What a long-running command prints once it serves; the run is killed then. */
const STARTED = [
  /"msg":"starting operators"/, // run (JSON log on stdout)
  /^converge dashboard: https?:\/\//m,
  /^vendor-sim ready$/m,
  /\(retrying\)$/m, // status --watch
  /\(Ctrl-C ends them early\)$/m, // vendor-sim fault with a duration
  /control plane: starting/, // dev, should it ever get that far
];

// ---------------------------------------------------------------------------------------------
// The sandbox: kubeconfigs, a non-executable control-plane "binary", a folder per run.

let sandbox = '';
const paths = { good: '', brokenYaml: '', basicAuth: '', badHeader: '', missing: '', dir: '', home: '', fakeBin: '', runs: '', simHandle: '' };
/** The vendor simulator `vendor-sim fault` runs drive (through its handle file, `paths.simHandle`). */
let simulator: ReturnType<typeof spawn> | undefined;

function kubeconfig(user: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: nowhere',
    '  cluster:',
    '    server: https://127.0.0.1:1',
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: someone',
    '  user:',
    user,
    'contexts:',
    '- name: ctx',
    '  context: {cluster: nowhere, user: someone, namespace: team-a}',
    'current-context: ctx',
    '',
  ].join('\n');
}

before(async () => {
  sandbox = mkdtempSync(join(tmpdir(), 'converge-argv-adv-'));
  for (const d of ['home', 'cache', 'tmp', 'runs', 'dir']) mkdirSync(join(sandbox, d));
  Object.assign(paths, {
    good: join(sandbox, 'kubeconfig.yaml'),
    brokenYaml: join(sandbox, 'broken.yaml'),
    basicAuth: join(sandbox, 'basic-auth.yaml'),
    badHeader: join(sandbox, 'bad-header.yaml'),
    missing: join(sandbox, 'missing.yaml'),
    dir: join(sandbox, 'dir'),
    home: join(sandbox, 'home'),
    fakeBin: join(sandbox, 'control-plane-not-executable'),
    runs: join(sandbox, 'runs'),
    simHandle: join(sandbox, 'vendor-sim.json'),
  });
  writeFileSync(paths.good, kubeconfig(`    token: ${TOKEN}`));
  writeFileSync(paths.brokenYaml, kubeconfig(`    token: ${TOKEN}: [unclosed`));
  writeFileSync(paths.basicAuth, kubeconfig(`    {token: ${TOKEN}, username: admin, password: ${TOKEN}}`));
  writeFileSync(paths.badHeader, kubeconfig(`    token: "${TOKEN}\\n\\u0001"`));
  writeFileSync(paths.fakeBin, '#!/bin/sh\nexit 99\n', { mode: 0o644 });
  await startSimulator();
});

after(() => {
  simulator?.kill('SIGKILL');
  if (sandbox) rmSync(sandbox, { recursive: true, force: true });
});

/** A vendor simulator of our own, and the handle file `converge dev` would write for it. */
async function startSimulator(): Promise<void> {
  const child = spawn(NODE, [MAIN, 'vendor-sim', '--token', 'sim-token'], { cwd: sandbox, env: envFor('none'), stdio: ['ignore', 'pipe', 'pipe'] });
  simulator = child;
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const deadline = Date.now() + 30_000;
  while (!/^vendor-sim ready$/m.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the vendor simulator did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const line = (label: string) => new RegExp(`^vendor-sim ${label}: (.+)$`, 'm').exec(out)![1]!;
  writeFileSync(paths.simHandle, JSON.stringify({ baseUrl: line('base URL'), caPath: line('CA'), adminToken: line('admin token'), pid: child.pid }), { mode: 0o600 });
}

type EnvVariant = 'kubeconfig' | 'none' | 'broken' | 'list';

function envFor(variant: EnvVariant): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: paths.home,
    TMPDIR: join(sandbox, 'tmp'),
    XDG_CACHE_HOME: join(sandbox, 'cache'),
    CONVERGE_CONTROL_PLANE_BIN: paths.fakeBin,
  };
  if (variant === 'kubeconfig') env.KUBECONFIG = paths.good;
  if (variant === 'broken') env.KUBECONFIG = paths.brokenYaml;
  if (variant === 'list') env.KUBECONFIG = `${paths.missing}:${paths.good}`;
  return env;
}

// ---------------------------------------------------------------------------------------------
// Running one argv.

interface Outcome {
  argv: string[];
  env: EnvVariant;
  /** `exited`, or killed: `started` (it said it serves) or `timeout`. */
  end: 'exited' | 'started' | 'timeout';
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const MAX_CAPTURE = 1 << 20;

function converge(argv: string[], env: EnvVariant = 'kubeconfig'): Promise<Outcome> {
  const cwd = mkdtempSync(join(paths.runs, 'run-'));
  mkdirSync(join(cwd, '.converge', 'dev'), { recursive: true });
  copyFileSync(paths.simHandle, join(cwd, '.converge', 'dev', 'vendor-sim.json'));
  const want = expectation(argv);
  const timeoutMs = want.longRunning && (want.verdict === 'valid' || want.verdict === 'any') ? LONG_RUNNING_MS : TIMEOUT_MS;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(NODE, [MAIN, ...argv], { cwd, env: envFor(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let end: Outcome['end'] = 'exited';
    let code: number | null = null;
    let signal: NodeJS.Signals | null = null;
    // The whole process group: a command's own children (kubectl, a simulator) go with it.
    const kill = (why: 'started' | 'timeout') => {
      if (end === 'exited') end = why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    // Killed a moment after it says it serves, so that what it does right then (a timer that
    // fires at once, a warning) is seen.
    let grace: NodeJS.Timeout | undefined;
    const seen = () => {
      if (!grace && STARTED.some((re) => re.test(stdout) || re.test(stderr))) grace = setTimeout(() => kill('started'), STARTED_GRACE_MS);
    };
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      if (stdout.length < MAX_CAPTURE) stdout += c;
      seen();
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      if (stderr.length < MAX_CAPTURE) stderr += c;
      seen();
    });
    child.once('exit', (c, s) => {
      code = c;
      signal = s;
    });
    const done = () => {
      clearTimeout(timer);
      clearTimeout(grace);
      resolve({ argv, env, end, code, signal, stdout, stderr, ms: Math.round(performance.now() - t0) });
    };
    child.once('close', done);
    child.once('error', (err) => {
      stderr += `spawn failed: ${err.message}`;
      done();
    });
  });
}

async function inPool<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(POOL, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  }));
  return results;
}

// ---------------------------------------------------------------------------------------------
// What each command accepts, as its --help says (the test's own model, not the command's code).

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;
type Verdict = 'valid' | 'usage' | 'any';

interface Spec {
  /** As printed in its usage line: `converge <name>`. */
  name: string;
  /** The argv words before the flags. */
  prefix: string[];
  options: ParseArgsOptionsConfig;
  positionals?: boolean;
  /** Whether parsed argv is allowed (`usage` when the help rules it out, `any` when not modelled). */
  check?(values: Values, positionals: string[]): Verdict;
  longRunning?(values: Values): boolean;
  /** Good values for its flags (the rest get adversarial ones only). */
  good?: Record<string, fc.Arbitrary<string>>;
  /** Words always put first, so that a server that starts takes no fixed port of this machine. */
  safe?: string[];
}

const PROTO = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const str = (v: Values[string]): string | undefined => (typeof v === 'string' ? v : undefined);
const logLevel = (v: Values[string]) => LOG_LEVELS.includes((str(v) ?? 'info').toLowerCase());
const own = (table: Record<string, string>, key: string) => (Object.hasOwn(table, key) ? table[key] : undefined);

/** `host:port`, `:port`, `[ipv6]:port`, or `0` (disabled), as `run --*-bind-address` takes them. */
function bindAddress(text: string): boolean {
  if (text.trim() === '' || text.trim() === '0') return true;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  return m !== null && Number(m[3]) <= 65535;
}

/** `host:port`, `:port` or `[ipv6]:port`, as `dashboard --listen` takes it. */
/** Whether a `host:port` that `listenAddress` accepts is on loopback (the dev dashboard's rule). */
function loopbackListen(text: string): boolean {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim())!;
  const host = (m[1] ?? m[2] ?? '').toLowerCase();
  return host === 'localhost' || host === '::1' || host === '0:0:0:0:0:0:0:1' || (isIP(host) === 4 && host.startsWith('127.')) || /^::ffff:127\./.test(host);
}

function listenAddress(text: string): boolean {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  return m !== null && Number(m[3]) <= 65535 && (m[1] === undefined || isIP(m[1]) === 6);
}

const EXPLAIN_KINDS: Record<string, string> = {
  ms: 'microservice', microservice: 'microservice', microservices: 'microservice', 'microservices.platform.example.io': 'microservice',
  dhp: 'provider', digitalhumanprovider: 'provider', digitalhumanproviders: 'provider', 'digitalhumanproviders.dhp.example.com': 'provider',
};

function explainTarget(positionals: string[]): boolean {
  let kind: string | undefined;
  let name: string | undefined;
  if (positionals.length === 1 && positionals[0]!.includes('/')) {
    const i = positionals[0]!.indexOf('/');
    [kind, name] = [positionals[0]!.slice(0, i), positionals[0]!.slice(i + 1)];
  } else if (positionals.length === 2) {
    [kind, name] = positionals;
  }
  if (!kind || !name || name.includes('/')) return false;
  const lower = kind.toLowerCase();
  return own(EXPLAIN_KINDS, lower) !== undefined || own(EXPLAIN_KINDS, lower.replace(/\.(platform\.example\.io|dhp\.example\.com)$/, '')) !== undefined;
}

const MIGRATE_KINDS: Record<string, string> = {
  all: 'all', microservices: 'microservices', digitalhumanproviders: 'digitalhumanproviders',
  ms: 'microservices', microservice: 'microservices', dhp: 'digitalhumanproviders', digitalhumanprovider: 'digitalhumanproviders',
};

const kubeconfigValue = () => fc.constantFrom(paths.good, paths.good, paths.brokenYaml, paths.basicAuth, paths.badHeader, paths.missing, paths.dir);
const namespaceValue = fc.constantFrom('default', 'team-a', 'kube-system', 'x');

const SPECS: Spec[] = [
  {
    name: 'status', prefix: ['status'],
    options: { namespace: { type: 'string', short: 'n' }, 'all-namespaces': { type: 'boolean', short: 'A' }, output: { type: 'string', short: 'o' }, watch: { type: 'boolean', short: 'w' }, kubeconfig: { type: 'string' }, context: { type: 'string' } },
    good: { namespace: namespaceValue, output: fc.constantFrom('wide', 'json', 'yaml'), get kubeconfig() { return kubeconfigValue(); }, context: fc.constantFrom('ctx', 'other') },
    check: (v) => {
      if (v.output !== undefined && !['table', 'wide', 'json', 'yaml'].includes(str(v.output)!)) return 'usage';
      if (v.namespace && v['all-namespaces']) return 'usage';
      return 'valid';
    },
    longRunning: (v) => v.watch === true,
  },
  {
    name: 'explain', prefix: ['explain'], positionals: true,
    options: { namespace: { type: 'string', short: 'n' }, output: { type: 'string', short: 'o' }, config: { type: 'string' }, kubeconfig: { type: 'string' }, context: { type: 'string' } },
    good: { namespace: namespaceValue, output: fc.constantFrom('json', 'yaml'), config: fc.constantFrom('missing.yaml'), get kubeconfig() { return kubeconfigValue(); }, context: fc.constantFrom('ctx') },
    check: (v, p) => {
      if (!explainTarget(p)) return 'usage';
      if (v.output !== undefined && !['text', 'json', 'yaml'].includes(str(v.output)!)) return 'usage';
      return 'valid';
    },
  },
  {
    name: 'providers', prefix: ['providers'],
    options: { region: { type: 'string' }, namespace: { type: 'string', short: 'n' }, 'all-namespaces': { type: 'boolean', short: 'A' }, all: { type: 'boolean' }, output: { type: 'string', short: 'o' }, kubeconfig: { type: 'string' }, context: { type: 'string' } },
    good: { region: fc.constantFrom('eu', 'ap-northeast-1'), namespace: namespaceValue, output: fc.constantFrom('table', 'name', 'json'), get kubeconfig() { return kubeconfigValue(); } },
    check: (v) => {
      if (v.output !== undefined && !['table', 'name', 'json'].includes(str(v.output)!)) return 'usage';
      if (v.namespace && v['all-namespaces']) return 'usage';
      return 'valid';
    },
  },
  {
    name: 'crds', prefix: ['crds'],
    options: { apply: { type: 'boolean' }, kubeconfig: { type: 'string' }, context: { type: 'string' } },
    good: { get kubeconfig() { return kubeconfigValue(); } },
  },
  {
    name: 'manifests', prefix: ['manifests'],
    options: { apply: { type: 'boolean' }, 'create-namespace': { type: 'boolean' }, mode: { type: 'string' }, namespace: { type: 'string', short: 'n', multiple: true }, image: { type: 'string' }, kubeconfig: { type: 'string' }, context: { type: 'string' } },
    good: { mode: fc.constantFrom('cluster', 'namespace'), namespace: namespaceValue, image: fc.constantFrom('ghcr.io/example/converge:0.1.0'), get kubeconfig() { return kubeconfigValue(); } },
    check: (v) => {
      const namespaces = v.namespace as string[] | undefined;
      const mode = str(v.mode) ?? (namespaces ? 'namespace' : 'cluster');
      if (mode !== 'cluster' && mode !== 'namespace') return 'usage';
      if (mode === 'cluster' && namespaces) return 'usage';
      if ((namespaces ?? []).some((ns) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns) || ns.length > 63)) return 'usage';
      if (v['create-namespace'] && !v.apply) return 'usage';
      if (typeof v.image === 'string' && v.image.trim() === '') return 'usage';
      return 'valid';
    },
  },
  {
    name: 'uninstall', prefix: ['uninstall'],
    options: { crds: { type: 'boolean' }, force: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, kubeconfig: { type: 'string' }, context: { type: 'string' } },
    good: { get kubeconfig() { return kubeconfigValue(); }, context: fc.constantFrom('ctx', 'other') },
  },
  {
    name: 'run', prefix: ['run'],
    safe: ['--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-bind-address=0'],
    options: {
      kubeconfig: { type: 'string' }, namespace: { type: 'string', multiple: true }, 'leader-elect': { type: 'boolean' }, 'leader-election-namespace': { type: 'string' },
      'leader-election-id': { type: 'string' }, 'metrics-bind-address': { type: 'string' }, 'health-probe-bind-address': { type: 'string' }, config: { type: 'string' },
      operators: { type: 'string' }, 'log-level': { type: 'string' }, 'webhook-bind-address': { type: 'string' }, 'webhook-cert-dir': { type: 'string' },
      'webhook-ca-secret': { type: 'string' }, 'webhook-ca-dir': { type: 'string' }, 'webhook-inject-ca': { type: 'boolean' }, 'webhook-url': { type: 'string' },
      'metrics-auth': { type: 'string' }, 'metrics-secure': { type: 'boolean' }, 'metrics-cert-dir': { type: 'string' },
    },
    good: {
      get kubeconfig() { return kubeconfigValue(); }, namespace: namespaceValue, 'log-level': fc.constantFrom(...LOG_LEVELS, 'WARN'),
      operators: fc.constantFrom('microservice', 'provider', 'microservice,provider', ' provider , microservice'),
      'metrics-bind-address': fc.constantFrom('0', '127.0.0.1:0', '', ':99999', '[zz]:1'), 'health-probe-bind-address': fc.constantFrom('0', '127.0.0.1:0', 'localhost'),
      'webhook-bind-address': fc.constantFrom('0', '1:2:3'), 'metrics-auth': fc.constantFrom('none', 'kubernetes', 'Kubernetes', ''),
      'metrics-cert-dir': fc.constantFrom('certs', ' ', ''),
    },
    check: (v) => {
      if (!logLevel(v['log-level'])) return 'usage';
      if (!['none', 'kubernetes'].includes(str(v['metrics-auth']) ?? 'none')) return 'usage';
      const certDir = str(v['metrics-cert-dir']);
      if (certDir !== undefined && (certDir.trim() === '' || v['metrics-secure'] !== true)) return 'usage';
      if (['metrics-bind-address', 'health-probe-bind-address', 'webhook-bind-address'].some((f) => !bindAddress(str(v[f]) ?? '0'))) return 'usage';
      const operators = (str(v.operators) ?? 'microservice,provider').split(',').map((s) => s.trim()).filter(Boolean);
      if (operators.some((o) => o !== 'microservice' && o !== 'provider')) return 'usage';
      return 'valid';
    },
    longRunning: () => true,
  },
  {
    name: 'dashboard', prefix: ['dashboard'], safe: ['--listen=127.0.0.1:0'],
    options: { kubeconfig: { type: 'string', multiple: true }, listen: { type: 'string' }, 'token-file': { type: 'string' }, 'log-level': { type: 'string' } },
    good: {
      get kubeconfig() { return fc.oneof(kubeconfigValue(), kubeconfigValue().map((p) => `prod=${p}`), fc.constantFrom(...PROTO).map((n) => `${n}=${paths.good}`)); },
      listen: fc.constantFrom('127.0.0.1:0', '[::1]:0', 'localhost:0', ' 127.0.0.1:0 ', '[zz]:1', ':99999', '127.0.0.1'), 'log-level': fc.constantFrom(...LOG_LEVELS),
    },
    check: (v) => (logLevel(v['log-level']) && listenAddress(str(v.listen) ?? '127.0.0.1:7070') ? 'valid' : 'usage'),
    longRunning: () => true,
  },
  {
    name: 'dev', prefix: ['dev'],
    options: {
      'no-ui': { type: 'boolean' }, 'no-samples': { type: 'boolean' }, namespace: { type: 'string' }, 'kubeconfig-out': { type: 'string' }, 'log-file': { type: 'string' },
      'log-level': { type: 'string' }, dashboard: { type: 'string' }, 'exit-when-ready': { type: 'boolean' }, timeout: { type: 'string' },
    },
    good: { namespace: namespaceValue, 'log-level': fc.constantFrom(...LOG_LEVELS), timeout: fc.constantFrom('1', '0.5', '600', '1e-9', '9999999999', '2147484'), dashboard: fc.constantFrom('off', '127.0.0.1:0', '0.0.0.0:0', 'nowhere') },
    check: (v) => {
      const timeout = Number(str(v.timeout) ?? '600');
      if (!Number.isFinite(timeout) || timeout <= 0 || timeout > 2_147_483.647) return 'usage'; // "at most 2147483 (24 days)"
      if (v['exit-when-ready'] && v['no-samples']) return 'usage';
      if (!logLevel(v['log-level'])) return 'usage';
      if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(str(v.namespace) ?? 'default')) return 'usage';
      const dashboard = str(v.dashboard) ?? '127.0.0.1:7070';
      if (dashboard !== 'off' && !(listenAddress(dashboard) && loopbackListen(dashboard))) return 'usage';
      return 'valid';
    },
    longRunning: () => true,
  },
  {
    name: 'init', prefix: ['init'], positionals: true,
    options: { kind: { type: 'string' }, group: { type: 'string' }, version: { type: 'string' }, name: { type: 'string' } },
    good: { kind: fc.constantFrom('Widget', 'Gadget'), group: fc.constantFrom('example.com', 'acme.io'), version: fc.constantFrom('v1', 'v1beta1'), name: fc.constantFrom('my-operator') },
    // The scaffold's own checks (kind, group, version, package name) are not modelled.
    check: (_v, p) => (p.length === 1 && p[0] !== '' ? 'any' : 'usage'),
  },
  {
    name: 'cluster up', prefix: ['cluster', 'up'],
    options: { kubeconfig: { type: 'string' }, 'audit-log': { type: 'boolean' }, nodes: { type: 'string' } },
    good: { kubeconfig: fc.constantFrom('out/kubeconfig'), nodes: fc.constantFrom('1', '3', '100') },
    check: (v) => {
      if (!v.kubeconfig) return 'usage';
      const nodes = Number(str(v.nodes) ?? '1');
      return Number.isInteger(nodes) && nodes >= 1 && nodes <= 100 ? 'valid' : 'usage';
    },
    longRunning: () => true,
  },
  {
    name: 'migrate-storage', prefix: ['migrate-storage'],
    // --max-pages is not in the help (the reliability test's resume case uses it), but checked like the others.
    options: { kind: { type: 'string', multiple: true }, to: { type: 'string' }, 'page-size': { type: 'string' }, qps: { type: 'string' }, kubeconfig: { type: 'string' }, context: { type: 'string' }, 'max-pages': { type: 'string' } },
    good: { kind: fc.constantFrom(...Object.keys(MIGRATE_KINDS)), to: fc.constantFrom('v1', 'v1alpha1'), 'page-size': fc.constantFrom('1', '100', '1000'), qps: fc.constantFrom('0.5', '20'), 'max-pages': fc.constantFrom('1', '3'), get kubeconfig() { return kubeconfigValue(); } },
    check: (v) => {
      if (((v.kind as string[] | undefined) ?? []).some((k) => own(MIGRATE_KINDS, k) === undefined)) return 'usage';
      const pageSize = Number(str(v['page-size']) ?? '100');
      const qps = Number(str(v.qps) ?? '20');
      const maxPages = str(v['max-pages']);
      // A page size is a count: the API server refuses `limit=1.5`; an empty --max-pages is no limit.
      const pagesOk = maxPages === undefined || maxPages === '' || (Number.isInteger(Number(maxPages)) && Number(maxPages) >= 1);
      return Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= 1000 && qps > 0 && pagesOk ? 'valid' : 'usage';
    },
  },
  {
    name: 'vendor-sim', prefix: ['vendor-sim'],
    options: { listen: { type: 'string' }, token: { type: 'string' }, 'admin-token': { type: 'string' }, 'state-file': { type: 'string' }, dir: { type: 'string' }, faults: { type: 'string' } },
    good: { listen: fc.constantFrom('127.0.0.1:0', '[::1]:0', ':0'), token: fc.constantFrom('t0k', 'secret-vendor-token'), 'state-file': fc.constantFrom('state.json'), dir: fc.constantFrom('certs'), faults: fc.constantFrom('{}', '{"latency":{"ms":1}}', '{"errors":{"rate":7}}', '{"nope":1}', 'null', '[1]', '{') },
    check: (v) => {
      if (!v.token) return 'usage'; // CONVERGE_VENDOR_SIM_TOKEN is not set here
      const listen = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(str(v.listen) ?? '127.0.0.1:0');
      if (!listen || Number(listen[3]) > 65535) return 'usage';
      if (typeof v.faults === 'string') {
        try {
          JSON.parse(v.faults);
        } catch {
          return 'usage';
        }
        return 'any'; // the simulator's fault validation is not modelled
      }
      return 'valid';
    },
    longRunning: () => true,
  },
  {
    name: 'vendor-sim fault', prefix: ['vendor-sim', 'fault'],
    options: {
      outage: { type: 'string' }, errors: { type: 'string' }, latency: { type: 'string' }, 'rate-limit': { type: 'string' }, hang: { type: 'boolean' }, health: { type: 'string' },
      instance: { type: 'string' }, for: { type: 'string' }, clear: { type: 'boolean' }, show: { type: 'boolean' }, sim: { type: 'string' },
    },
    good: {
      outage: fc.constantFrom('30s', 'on', '999h'), errors: fc.constantFrom('0.5', '1'), latency: fc.constantFrom('2s', '300ms', '999h'), 'rate-limit': fc.constantFrom('5'),
      health: fc.constantFrom('degraded:GPU hot', 'down', 'healthy'), instance: fc.constantFrom('inst-1', ...PROTO), for: fc.constantFrom('1m', '600h'),
      get sim() { return fc.constantFrom(paths.simHandle, paths.simHandle, paths.simHandle, paths.missing, paths.good); },
    },
    // The fault combinations are not modelled (any exit code); one with a duration waits.
    check: () => 'any',
    longRunning: (v) => typeof v.for === 'string' || (typeof v.outage === 'string' && v.outage !== 'on'),
  },
];

const COMMANDS = ['status', 'explain', 'providers', 'crds', 'manifests', 'uninstall', 'run', 'dashboard', 'dev', 'init', 'cluster', 'migrate-storage', 'vendor-sim'];
const HELP_WORDS = ['--help', '-h', 'help'];

interface Expectation {
  verdict: Verdict | 'help';
  /** With `help`: how stdout starts. */
  usage?: string;
  longRunning: boolean;
}

/** What the help texts say `converge <argv>` must do. */
function expectation(argv: readonly string[]): Expectation {
  const [command, ...rest] = argv;
  if (command === undefined || command === '') return { verdict: 'usage', longRunning: false };
  if (HELP_WORDS.includes(command)) return { verdict: 'help', usage: 'Usage: converge <command>', longRunning: false };
  if (!COMMANDS.includes(command)) return { verdict: 'usage', longRunning: false };
  let spec: Spec;
  let args = rest;
  if (command === 'cluster') {
    if (HELP_WORDS.includes(rest[0] ?? '')) return { verdict: 'help', usage: 'Usage: converge cluster up', longRunning: false };
    if (rest[0] !== 'up') return { verdict: 'usage', longRunning: false };
    spec = SPECS.find((s) => s.name === 'cluster up')!;
    args = rest.slice(1);
  } else if (command === 'vendor-sim' && rest[0] === 'fault') {
    spec = SPECS.find((s) => s.name === 'vendor-sim fault')!;
    args = rest.slice(1);
  } else {
    spec = SPECS.find((s) => s.name === command)!;
  }
  let parsed;
  try {
    // kubectl's reading of a short flag with "=": `-n=x` is `-n x` (before `--`).
    const valued = new Set(Object.values(spec.options).filter((o) => o.type === 'string' && o.short).map((o) => `-${o.short}=`));
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    const words = args.flatMap((w, i) => (i < end && valued.has(w.slice(0, 3)) ? [w.slice(0, 2), w.slice(3)] : [w]));
    parsed = parseArgs({ args: words, options: { ...spec.options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: spec.positionals ?? false });
  } catch {
    return { verdict: 'usage', longRunning: false };
  }
  const values = parsed.values as Values;
  if (values.help) return { verdict: 'help', usage: `Usage: converge ${spec.name}`, longRunning: false };
  return { verdict: spec.check?.(values, parsed.positionals) ?? 'valid', longRunning: spec.longRunning?.(values) ?? false };
}

// ---------------------------------------------------------------------------------------------
// The checks.

const FORBIDDEN: [RegExp, string][] = [
  [/^\s+at (.*\(.*:\d+:\d+\)|\S+:\d+:\d+|.*\(native\)|.*<anonymous>|.*\(index \d+\))$/m, 'a JavaScript stack trace'],
  [/\[object \w+\]/, '"[object …]"'],
  [/\bundefined\b/, '"undefined"'],
  [/\bNaN\b/, '"NaN"'],
  [/\b(TypeError|ReferenceError|RangeError|SyntaxError)\b/, 'a JavaScript error name'],
  [/Cannot read propert/, '"Cannot read properties"'],
  [/\[native code\]/, 'the source of a function ("[native code]")'],
  [/\(node:\d+\) (\[\w+\] )?\w*Warning/, 'a warning of Node.js itself'],
];
const MESSAGE_LINE = /^(\[\s*[\d.]+s\] )?converge( [a-z-]+)*: \S/;

/** Output with every string the argv holds taken out (a message may quote them). */
function withoutArgv(text: string, argv: readonly string[]): string {
  const parts = new Set<string>();
  for (const a of argv) {
    for (const p of [a, ...a.split('=')]) {
      if (p.length > 0) {
        parts.add(p);
        parts.add(JSON.stringify(p).slice(1, -1));
      }
    }
  }
  let out = text;
  for (const p of [...parts].sort((a, b) => b.length - a.length)) out = out.split(p).join('');
  return out;
}

/** The problems with one run; empty when it behaved. */
function problems(o: Outcome): string[] {
  const found: string[] = [];
  const want = expectation(o.argv);
  const killed = o.end !== 'exited';
  if (killed) {
    if (!want.longRunning || want.verdict === 'usage' || want.verdict === 'help') found.push(`${o.end === 'timeout' ? `still running after ${o.ms} ms` : 'started serving'} (expected ${want.verdict}${want.longRunning ? '' : ', not a long-running command'})`);
  } else if (o.code === null || ![0, 1, 2].includes(o.code)) {
    found.push(`exit code ${o.code ?? `signal ${o.signal}`}, not 0, 1 or 2`);
  } else {
    if (want.verdict === 'usage' && o.code !== 2) found.push(`exit ${o.code} for argv its help rules out (expected 2)`);
    if (want.verdict === 'valid' && o.code === 2) found.push('exit 2 for argv its help allows');
    if (want.verdict === 'help') {
      if (o.code !== 0) found.push(`--help exited ${o.code}`);
      if (!o.stdout.startsWith(want.usage!)) found.push(`--help: stdout does not start with "${want.usage}"`);
      if (o.stderr !== '') found.push('--help wrote to stderr');
    }
    if (o.code === 2) {
      if (o.stdout !== '') found.push('usage error with output on stdout');
      const [first, second, third] = o.stderr.split('\n');
      if (!MESSAGE_LINE.test(first!) && !first!.startsWith('Usage: converge')) found.push(`usage error: stderr does not start with a "converge …: message" line (${JSON.stringify(first!.slice(0, 120))})`);
      // One line, then nothing or a blank line and the usage.
      else if (second !== undefined && !(second === '' && (third === undefined || third.startsWith('Usage: converge')))) found.push(`usage error: the message is not one line (then ${JSON.stringify(second.slice(0, 80))})`);
    }
    if (o.code === 1 && !o.stderr.split('\n').some((l) => MESSAGE_LINE.test(l))) found.push('failure without a "converge …: message" line on stderr');
  }
  for (const [stream, text] of [['stdout', o.stdout], ['stderr', o.stderr]] as const) {
    if (text.includes(TOKEN)) found.push(`the kubeconfig's token on ${stream}`);
    // The operators' JSON log (`run`) may name an error's type; it is a log, not a message.
    const stripped = withoutArgv(text.split('\n').filter((l) => !l.startsWith('{"level":')).join('\n'), o.argv);
    for (const [re, what] of FORBIDDEN) {
      const m = re.exec(stripped);
      if (m) found.push(`${what} on ${stream}: …${JSON.stringify(stripped.slice(Math.max(0, m.index - 60), m.index + 60))}…`);
    }
  }
  return found;
}

function report(o: Outcome, found: string[]): string {
  const clip = (s: string) => (s.length > 800 ? `${s.slice(0, 800)}… (${s.length} chars)` : s);
  const shown = o.argv.map((a) => (a.length > 60 ? `${a.slice(0, 20)}…(${a.length} chars)` : a));
  return [
    `converge ${JSON.stringify(shown)} (env: ${o.env}; ${o.end}, exit ${o.code}, ${o.ms} ms; expected ${expectation(o.argv).verdict})`,
    ...found.map((f) => `  - ${f}`),
    `  stdout: ${JSON.stringify(clip(o.stdout))}`,
    `  stderr: ${JSON.stringify(clip(o.stderr))}`,
  ].join('\n');
}

async function checkAll(cases: readonly { argv: string[]; env: EnvVariant }[]): Promise<void> {
  const outcomes = await inPool(cases, (c) => converge(c.argv, c.env));
  if (LOG) for (const o of outcomes) appendFileSync(LOG, `${JSON.stringify({ ...o, expected: expectation(o.argv) })}\n`);
  const failures = outcomes.map((o) => [o, problems(o)] as const).filter(([, f]) => f.length > 0);
  assert.equal(failures.length, 0, `\n${failures.map(([o, f]) => report(o, f)).join('\n\n')}`);
}

// ---------------------------------------------------------------------------------------------
// The generators.

/** Not NUL (spawn refuses it), no line breaks (the line checks), no absolute paths or `..` (runs stay in their folder). */
const harmless = (s: string) => !/[\0\n\r]/.test(s) && !s.startsWith('/') && !s.includes('..');

const adversarialValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PROTO) },
  { weight: 3, arbitrary: fc.constantFrom('', ' ', '-', '--', '-1', '-A', '=', '=x', 'true', 'false', 'null', 'undefined', 'NaN', '0', '-0', '1.5', '1e309', 'Infinity', '{}', '[]', '%s%d', '${HOME}', 'é', '日本語', '🙂‍↔️', '\u200b', '\u202etxt', '\u001b[31mred') },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(20_000), 'ü'.repeat(5_000)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
).filter(harmless);

const kindWord: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...Object.keys(EXPLAIN_KINDS), 'MS', 'Microservice', 'DHP', 'microservice.platform.example.io') },
  { weight: 2, arbitrary: fc.constantFrom(...PROTO) },
  { weight: 1, arbitrary: fc.constantFrom('', 'deployment', 'pod') },
  { weight: 1, arbitrary: adversarialValue },
);
const nameWord = fc.oneof(fc.constantFrom('todo-api', 'studio'), adversarialValue);
const positional: fc.Arbitrary<string[]> = fc.oneof(
  fc.tuple(kindWord, fc.oneof(nameWord, fc.constantFrom('', 'a/b'))).map(([k, n]) => [`${k}/${n}`]),
  fc.tuple(kindWord, nameWord),
  adversarialValue.map((v) => [v]),
);

const OTHER_FLAGS = [...new Set(SPECS.flatMap((s) => Object.keys(s.options)))].map((f) => `--${f}`);
const unknownFlag: fc.Arbitrary<string[]> = fc.oneof(
  fc.constantFrom('--bogus', '-Z', '--constructor', '--__proto__', '--toString', '--help=yes', '-', '--', '---', '--=x', '-n', '-o', '-A', '-hA', '--no-such-flag=1').map((f) => [f]),
  fc.constantFrom(...OTHER_FLAGS).map((f) => [f]),
  fc.tuple(fc.constantFrom(...OTHER_FLAGS), adversarialValue).map(([f, v]) => [f, v]),
  fc.constantFrom(...PROTO).map((p) => [`--${p}`, 'x']),
);

/**
 * One of `spec`'s flags in one of its forms, with a good or adversarial value (or none); with
 * `clean`, only well-formed ones with good values (argv the command should accept, mostly).
 */
function knownFlag(spec: Spec, clean = false): fc.Arbitrary<string[]> {
  return fc.constantFrom(...Object.keys(spec.options)).chain((name): fc.Arbitrary<string[]> => {
    const option = spec.options[name]!;
    const good = spec.good?.[name];
    const short = option.short;
    if (clean) {
      if (option.type === 'boolean') return fc.constant<string[]>(short ? [`-${short}`] : [`--${name}`]);
      return (good ?? fc.constantFrom('x', 'team-a')).chain((v) => fc.constantFrom([`--${name}`, v], [`--${name}=${v}`], ...(short ? [[`-${short}`, v]] : [])));
    }
    const value = fc.oneof({ weight: 3, arbitrary: good ?? adversarialValue }, { weight: 2, arbitrary: adversarialValue });
    if (option.type === 'boolean') {
      return fc.oneof(
        { weight: 4, arbitrary: fc.constant<string[]>(short ? [`-${short}`] : [`--${name}`]) },
        { weight: 2, arbitrary: fc.constant<string[]>([`--${name}`]) },
        { weight: 1, arbitrary: value.map((v) => [`--${name}=${v}`]) },
      );
    }
    return value.chain((v) => fc.constantFrom(
      [`--${name}`, v],
      [`--${name}=${v}`],
      [`--${name}`], // its value missing (the next word, or nothing, follows)
      ...(short ? [[`-${short}`, v], [`-${short}${v}`], [`-${short}`]] : []),
    ));
  });
}

/** The words after the command: adversarial ones, or (a third of the time) only well-formed flags. */
function tail(spec: Spec): fc.Arbitrary<string[]> {
  const word = fc.oneof(
    { weight: 8, arbitrary: knownFlag(spec) },
    { weight: 2, arbitrary: unknownFlag },
    { weight: spec.positionals ? 4 : 1, arbitrary: positional },
    { weight: 1, arbitrary: fc.constant(['-A', '-n', 'team-a']) },
    { weight: 1, arbitrary: fc.constantFrom(['--help'], ['-h'], ['--'], ['--', '--help']) },
  );
  return fc.oneof(
    { weight: 2, arbitrary: fc.array(word, { maxLength: 6 }).map((words) => words.flat()) },
    { weight: 1, arbitrary: fc.array(knownFlag(spec, true), { maxLength: 3 }).map((words) => words.flat()) },
  );
}

const specCase: fc.Arbitrary<string[]> = fc.constantFrom(...SPECS).chain((spec) => {
  const prefixes = spec.name === 'cluster up'
    ? fc.constantFrom(['cluster', 'up'], ['cluster', 'up'], ['cluster'])
    : spec.name === 'explain'
      ? fc.constantFrom(['explain', 'ms/todo-api'], ['explain'])
      : fc.constant(spec.prefix);
  return fc.tuple(prefixes, tail(spec)).map(([prefix, words]) => [...prefix, ...(spec.safe ?? []), ...words]);
});

const strangeCommand: fc.Arbitrary<string[]> = fc.tuple(
  fc.oneof(fc.constantFrom(...PROTO, '', 'STATUS', 'Status', 'statu', 'help', '-h', '--help', '--', '-n', '--kubeconfig', 'vendor-sim-fault', 'fault', 'up'), adversarialValue),
  tail(SPECS[0]!),
).map(([command, words]) => [command, ...words]);

const argvCase = fc.record({
  argv: fc.oneof({ weight: 6, arbitrary: specCase }, { weight: 1, arbitrary: strangeCommand }),
  env: fc.constantFrom<EnvVariant>('kubeconfig', 'kubeconfig', 'kubeconfig', 'none', 'broken', 'list'),
});

// ---------------------------------------------------------------------------------------------
// The tests.

test('--help: every command exits 0 with its usage on stdout and nothing on stderr', async () => {
  // `-h` and --help among other flags are generated below.
  const cases = [['--help'], ['-h'], ['help'], ['cluster', '--help'], ...SPECS.map((s) => [...s.prefix, '--help'])].map((argv) => ({ argv, env: 'kubeconfig' as const }));
  await checkAll(cases);
});

test('argv that earlier versions mishandled (Object.prototype names, no command, timers past 24 days, bad addresses, multi-line messages)', async () => {
  const cases: { argv: string[]; env: EnvVariant }[] = [
    [],
    [''],
    ['explain', 'constructor/x'],
    ['explain', '__proto__/x'],
    ['explain', 'toString', 'x'],
    ['explain', 'hasOwnProperty/todo-api', '-o', 'json'],
    ['migrate-storage', '--kind', 'constructor'],
    ['migrate-storage', '--kind', '__proto__'],
    ['migrate-storage', '--kind=ms', '--kind', 'toString'],
    ['dev', '--exit-when-ready', '--timeout', '9999999999'],
    ['dev', '--exit-when-ready', '--timeout', '1e-9'],
    ['vendor-sim', 'fault', '--sim', paths.simHandle, '--outage', '999h'],
    ['vendor-sim', 'fault', '--sim', paths.simHandle, '--hang', '--for', '600h'],
    ['dashboard', '--listen', 'constructor'],
    ['dashboard', '--listen', '[zz]:1'],
    ['run', '--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-bind-address', 'abc'],
    ['run', '--metrics-bind-address=0', '--health-probe-bind-address=[zz]:1', '--webhook-bind-address=0'],
    ['run', '--metrics-bind-address=:99999', '--health-probe-bind-address=0', '--webhook-bind-address=0'],
    ['run', '--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-bind-address=0', '--metrics-cert-dir', 'certs'],
    ['run', '--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-bind-address=0', '--metrics-secure', '--metrics-cert-dir='],
    ['status', '-n', '-A'],
    ['init', 'widgets', '--kind', 'constructor', '--group', '__proto__'],
    ['migrate-storage', '--max-pages', 'NaN'],
    ['migrate-storage', '--max-pages=-1'],
    ['migrate-storage', '--page-size', '1.5'],
  ].map((argv) => ({ argv, env: 'kubeconfig' }));
  await checkAll(cases);
});

/** `converge <argv>` with a stdout that cannot be written: `/dev/full` (ENOSPC), or a pipe whose reader is gone (EPIPE). */
function convergeWithBadStdout(argv: string[], stdout: 'full' | 'closed'): Promise<{ code: number | null; stderr: string }> {
  const full = stdout === 'full' ? openSync('/dev/full', 'w') : undefined;
  const child = spawn(NODE, [MAIN, ...argv], { cwd: sandbox, env: envFor('kubeconfig'), stdio: ['ignore', full ?? 'pipe', 'pipe'] });
  if (full !== undefined) closeSync(full);
  else child.stdout!.destroy(); // like `converge … | head -1` once head has its line
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  return new Promise((resolve) => child.once('close', (code) => {
    clearTimeout(timer);
    resolve({ code, stderr });
  }));
}

test('output nobody reads: a closed pipe ends quietly, a full disk is one line on stderr (never a stack trace)', { skip: existsSync('/dev/full') ? false : 'no /dev/full' }, async () => {
  const cases = [['crds'], ['--help'], ['status', '--help'], ['vendor-sim', 'fault', '--show', '--sim', paths.simHandle]];
  const failures: string[] = [];
  for (const [argv, how] of cases.flatMap((argv) => [[argv, 'full'], [argv, 'closed']] as const)) {
    const { code, stderr } = await convergeWithBadStdout(argv, how);
    const want = how === 'closed' ? { code: 0, stderr: /^$/ } : { code: 1, stderr: /^converge: cannot write the output: ENOSPC[^\n]*\n$/ };
    if (code !== want.code || !want.stderr.test(stderr)) failures.push(`converge ${argv.join(' ')} with stdout ${how === 'full' ? '> /dev/full' : '| (closed)'}: exit ${code}, stderr ${JSON.stringify(stderr.slice(0, 400))}`);
  }
  assert.deepEqual(failures, []);
});

test('generated argv for every command: exit codes, messages, no stack traces, never the token', async () => {
  const batches = Math.max(1, Math.ceil(RUNS / POOL));
  await fc.assert(
    fc.asyncProperty(fc.array(argvCase, { minLength: POOL, maxLength: POOL }), async (cases) => {
      await checkAll(cases);
    }),
    { numRuns: batches, endOnFailure: true, ...(SEED !== undefined ? { seed: SEED } : {}) },
  );
});
