/**
 * The packages as a new user gets them: `npm run pack`'s tarballs installed into empty projects,
 * nothing from this repository's sources on the way (ADR 0011).
 *
 * - the CLI runs from `node_modules` (`converge --help`, `converge run` against the test
 *   cluster until `/readyz` is ok and a sample Microservice is converged, then SIGTERM → exit 0);
 * - the one-shot commands shipped as bundles (scripts/bundle-cli.ts) load no package at start
 *   and print what the repository's sources print for the same objects (the one place a source
 *   CLI runs here, as the reference);
 * - a TypeScript file importing the runtime type-checks against the shipped declarations, and a
 *   deep import is refused by the `exports` map;
 * - the example operator (examples/configmap-mirror) runs on the installed runtime;
 * - `converge init` scaffolds a project that installs, type-checks, passes its own tests on the
 *   test cluster and converges its sample with `npm start` on a control plane of its own.
 * Every other process here runs compiled JavaScript from the tarballs: the test asserts that no
 * file under the repository's `packages/` was loaded.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ConfigMapKind, isNotFound } from '@converge/runtime';
import type { ConfigMap, KubeClient } from '@converge/runtime';
import { freePorts } from '@converge/envtest';
import { packWorkspace } from '../../scripts/pack.ts';
import type { PackedPackage } from '../../scripts/pack.ts';
import { BUNDLED_COMMANDS } from '../../scripts/bundle-cli.ts';
import { MicroserviceKind } from '../../packages/operators/src/index.ts';
import type { Microservice } from '../../packages/operators/src/index.ts';
import { ensureCrds } from '../support/crds.ts';
import { eventually, kubeconfigPath, testClient, testNamespace } from '../support/operator-harness.ts';

const execFileP = promisify(execFile);
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const NODE_BIN_DIR = dirname(process.execPath);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

let work: string;
let packed: PackedPackage[];
let client: KubeClient;

/** The environment of a user's shell: Node 24 first on PATH, no hint of this repository. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // NODE_TEST_CONTEXT would make a `node --test` inside report to this test runner, not print.
  const { NODE_OPTIONS: _o, NODE_TEST_CONTEXT: _t, npm_config_prefix: _p, ...rest } = process.env;
  return { ...rest, PATH: `${NODE_BIN_DIR}:${process.env.PATH ?? ''}`, ...extra };
}

async function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = userEnv(), timeout = 300_000): Promise<string> {
  try {
    const { stdout } = await execFileP(cmd, args, { cwd, env, timeout, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

function tarball(name: string): string {
  const p = packed.find((x) => x.name === name);
  assert.ok(p, `no tarball for ${name}`);
  return p.tarball;
}

/** An empty npm project with the given tarballs installed. */
async function project(name: string, tarballs: string[]): Promise<string> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2));
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], dir);
  return dir;
}

// Packing compiles the three packages: 52–79 s in CI's runs, past the default 120 s on a
// machine busier than CI's.
before(async () => {
  work = mkdtempSync(join(tmpdir(), 'converge-packaging-'));
  packed = await packWorkspace({ outDir: join(work, 'tarballs') });
  client = testClient();
  await ensureCrds(client);
}, { timeout: 300_000 });

after(async () => {
  await client?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('each tarball ships compiled JavaScript, declarations and its manifest, and no TypeScript sources', async () => {
  for (const p of packed) {
    const listing = (await sh('tar', ['tzf', p.tarball], work)).split('\n').filter(Boolean);
    assert.ok(listing.includes('package/dist/index.js'), `${p.name}: dist/index.js`);
    assert.ok(listing.includes('package/dist/index.d.ts'), `${p.name}: dist/index.d.ts`);
    assert.ok(listing.includes('package/LICENSE'), `${p.name}: LICENSE`);
    assert.ok(listing.includes('package/README.md'), `${p.name}: README.md`);
    const sources = listing.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'));
    assert.deepEqual(sources, [], `${p.name} ships no .ts sources`);
    assert.deepEqual(listing.filter((f) => /\.test\./.test(f) && !f.startsWith('package/templates/')), [], `${p.name} ships no tests`);
    const manifest = JSON.parse(await sh('tar', ['xzOf', p.tarball, 'package/package.json'], work)) as { exports: Record<string, unknown>; devDependencies?: unknown; engines: { node: string } };
    assert.deepEqual(manifest.exports['.'], { types: './dist/index.d.ts', default: './dist/index.js' });
    assert.equal(manifest.devDependencies, undefined);
    assert.equal(manifest.engines.node, '>=24.0.0');
  }
  const runtime = JSON.parse(await sh('tar', ['xzOf', tarball('@converge/runtime'), 'package/package.json'], work)) as { dependencies: Record<string, string> };
  for (const dep of ['@converge/envtest', '@converge/operators', '@kubernetes/client-node', 'undici']) {
    assert.equal(runtime.dependencies[dep], undefined, `the runtime does not carry ${dep}`);
  }
});

test('the CLI runs from node_modules: --help, and `converge run` converges a Microservice and stops on SIGTERM', async (t) => {
  const dir = await project('cli-user', [tarball('@converge/runtime'), tarball('@converge/envtest'), tarball('@converge/operators')]);
  const help = await sh(join(dir, 'node_modules', '.bin', 'converge'), ['--help'], dir);
  assert.match(help, /Usage: converge <command>/);
  assert.match(help, /init/);

  const ns = await testNamespace(t, client, 'pkg');
  await client.create(MicroserviceKind, { metadata: { name: 'from-tarball', namespace: ns }, spec: { container: { image: 'example.com/app:1', port: 8080 } } } as Microservice);
  const [metricsPort, probePort] = await freePorts(2);
  const child = spawn(join(dir, 'node_modules', '.bin', 'converge'), [
    'run', '--kubeconfig', kubeconfigPath(), '--namespace', ns, '--operators', 'microservice', '--webhook-bind-address', '0',
    '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--health-probe-bind-address', `127.0.0.1:${probePort}`,
  ], { cwd: dir, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  t.after(() => child.kill('SIGKILL'));
  await eventually(async () => (await fetch(`http://127.0.0.1:${probePort}/readyz`).catch(() => undefined))?.ok, { what: '/readyz ok', timeoutMs: 60_000 });
  await eventually(async () => {
    const ms = await client.get(MicroserviceKind, { namespace: ns, name: 'from-tarball' });
    return ms.status?.phase === 'ResourcesApplied' && ms.status.observedGeneration === ms.metadata.generation;
  }, { what: 'ResourcesApplied', timeoutMs: 60_000 });
  child.kill('SIGTERM');
  assert.equal(await exited, 0, `graceful stop exits 0; output:\n${output.slice(-2000)}`);
  assert.ok(!output.includes(join(ROOT, 'packages')), 'no stack frame or path of the repository sources');
  assert.match(output, /"msg":"manager stopped"/, 'JSON logs');
});

test('the bundled one-shot commands (status, explain, crds, providers) print from node_modules what the sources print', async (t) => {
  const dir = await project('cli-bundles', [tarball('@converge/runtime'), tarball('@converge/envtest'), tarball('@converge/operators')]);
  // Each is one module (scripts/bundle-cli.ts, ADR 0032): no import of another package but the external ones.
  for (const name of BUNDLED_COMMANDS) {
    const text = readFileSync(join(dir, 'node_modules', '@converge', 'operators', 'dist', 'cli', 'commands', `${name}.js`), 'utf8');
    const imported = [...text.matchAll(/^import\s[^;]*?from\s*["']([^"']+)["']/gm)].map((m) => m[1]);
    assert.deepEqual(imported.filter((s) => !s!.startsWith('node:')), [], `${name}.js is a bundle: it imports no package at load`);
  }
  const ns = await testNamespace(t, client, 'pkg');
  await client.create(MicroserviceKind, { metadata: { name: 'bundled', namespace: ns }, spec: { container: { image: 'example.com/app:1', port: 8080 } } } as Microservice);
  const kube = ['--kubeconfig', kubeconfigPath()];
  const installed = join(dir, 'node_modules', '.bin', 'converge');
  const sources = join(ROOT, 'packages', 'operators', 'bin', 'converge.js');
  const cases: string[][] = [
    ['status', '-n', ns, '-o', 'json', ...kube],
    ['status', '-n', ns, '-o', 'yaml', ...kube],
    ['explain', 'ms/bundled', '-n', ns, '-o', 'json', ...kube],
    ['explain', 'ms/bundled', '-n', ns, '-o', 'yaml', ...kube],
    ['providers', '-n', ns, '--all', '-o', 'json', ...kube],
    ['crds'],
  ];
  for (const args of cases) {
    const shipped = await sh(installed, args, dir);
    assert.equal(shipped, await sh(process.execPath, [sources, ...args], ROOT), `converge ${args.join(' ')}: the bundle prints what the sources print`);
  }
  assert.match(await sh(installed, ['explain', 'ms/bundled', '-n', ns, ...kube], dir), /^Microservice .*\/bundled/);
  assert.match(await sh(installed, ['status', '-n', ns, ...kube], dir), /^Microservices \(0\/1 ready\)\nNAME/);
  // Errors keep their words and exit codes.
  await assert.rejects(sh(installed, ['explain', 'ms/missing', '-n', ns, ...kube], dir), /microservice "missing" not found in namespace/);
  await assert.rejects(sh(installed, ['status', '-o', 'xml'], dir), /unknown output format "xml"/);
});

test('a TypeScript project type-checks against the shipped declarations; deep imports are refused', async () => {
  const dir = await project('types-user', [tarball('@converge/runtime')]);
  writeFileSync(join(dir, 'operator.ts'), `
import { ConfigMapKind, Manager, PermanentError, type Request, type Result } from '@converge/runtime';
export function register(manager: Manager): void {
  const store = manager.cache.informer(ConfigMapKind).store;
  manager.controller('x').for(ConfigMapKind).complete(async (request: Request, _signal: AbortSignal): Promise<Result> => {
    if (!store.get(request.key)) throw new PermanentError('Gone', 'no such ConfigMap');
    return { requeueAfterMs: 1000 };
  });
}
// @ts-expect-error: only the package's public entry is exported
import type { StoreWriter } from '@converge/runtime/dist/cache/store.js';
export type Unused = StoreWriter<never>;
`);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'es2024', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] },
    include: ['operator.ts'],
  }));
  await sh(process.execPath, [TSC, '-p', 'tsconfig.json'], dir);
  // A type error in user code is reported against the shipped types (the check is real).
  writeFileSync(join(dir, 'wrong.ts'), "import { ConfigMapKind } from '@converge/runtime';\nexport const n: number = ConfigMapKind;\n");
  writeFileSync(join(dir, 'tsconfig.wrong.json'), JSON.stringify({ extends: './tsconfig.json', include: ['wrong.ts'] }));
  await assert.rejects(sh(process.execPath, [TSC, '-p', 'tsconfig.wrong.json'], dir), /TS2322/);
});

test('the example operator runs on the installed runtime', async (t) => {
  const dir = await project('example-user', [tarball('@converge/runtime')]);
  cpSync(join(ROOT, 'examples', 'configmap-mirror', 'index.ts'), join(dir, 'configmap-mirror.ts'));
  const ns = await testNamespace(t, client, 'pkg');
  writeFileSync(join(dir, 'main.ts'), `
import { Manager, createLogger, loadKubeConfig } from '@converge/runtime';
import { registerConfigMapMirror } from './configmap-mirror.ts';
const manager = new Manager({ kubeConfig: loadKubeConfig(process.argv[2]), namespaces: [process.argv[3]!], log: createLogger({ level: 'warn', name: 'example' }) });
registerConfigMapMirror(manager);
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
await manager.start(stop.signal);
`);
  const child = spawn(process.execPath, ['main.ts', kubeconfigPath(), ns], { cwd: dir, env: userEnv(), stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  t.after(() => child.kill('SIGKILL'));
  await client.create(ConfigMapKind, { metadata: { name: 'src', namespace: ns, labels: { 'converge.example/mirror': 'true' } }, data: { k: 'v' } });
  await eventually(async () => {
    try {
      return (await client.get(ConfigMapKind, { namespace: ns, name: 'src-mirror' })).data?.k === 'v';
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }, { what: 'the mirror', timeoutMs: 60_000 });
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('`converge init` scaffolds a project that installs, type-checks, passes its own tests and converges its sample', async (t) => {
  const cli = await project('init-user', [tarball('@converge/runtime'), tarball('@converge/envtest'), tarball('@converge/operators')]);
  const dir = join(work, 'gadget-operator');
  const out = await sh(join(cli, 'node_modules', '.bin', 'converge'), ['init', dir, '--kind', 'Gadget', '--group', 'toys.example.com'], cli);
  assert.match(out, /created \d+ files/);
  // Bad input writes nothing and says which flag to change.
  await assert.rejects(sh(join(cli, 'node_modules', '.bin', 'converge'), ['init', join(work, 'bad'), '--kind', 'gadget'], cli), /--kind "gadget": must be CamelCase/);

  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball('@converge/runtime'), tarball('@converge/envtest')], dir);
  await sh('npm', ['run', 'typecheck'], dir);
  const tested = await sh('npm', ['test'], dir, userEnv({ CONVERGE_ENVTEST_KUBECONFIG: kubeconfigPath() }));
  assert.match(tested, /# fail 0|ℹ fail 0/, tested);
  assert.match(tested, /# pass [1-9]|ℹ pass [1-9]/, tested);

  // `npm start`: its own control plane, the CRD, the operator and the sample, until SIGINT.
  const start = spawn('npm', ['start'], { cwd: dir, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  start.stdout.on('data', (d: Buffer) => (log += d.toString()));
  start.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => start.once('exit', (code, signal) => res({ code, signal })));
  t.after(() => { try { process.kill(-start.pid!, 'SIGKILL'); } catch { /* already gone */ } });
  const kubeconfig = await eventually(() => /KUBECONFIG=(\S+) kubectl/.exec(log)?.[1], { what: `npm start running; log:\n${log}`, timeoutMs: 240_000 });
  await eventually(async () => {
    const { stdout } = await execFileP('kubectl', ['--kubeconfig', kubeconfig, 'get', 'gadgets.toys.example.com', 'hello', '-n', 'default', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']).catch(() => ({ stdout: '' }));
    return stdout === 'True';
  }, { what: 'the sample Gadget Ready', timeoutMs: 60_000 });
  const cm = JSON.parse((await execFileP('kubectl', ['--kubeconfig', kubeconfig, 'get', 'configmap', 'hello', '-n', 'default', '-o', 'json'])).stdout) as ConfigMap;
  assert.match(cm.data?.message ?? '', /Hello from gadget-operator/);
  // Ctrl-C reaches the whole process group; npm itself re-raises SIGINT once its child is done.
  process.kill(-start.pid!, 'SIGINT');
  const { code, signal } = await exited;
  assert.ok(code === 0 || signal === 'SIGINT', `npm start ended by Ctrl-C (code ${code}, signal ${signal})`);
  await eventually(() => /"msg":"manager stopped"/.test(log), { what: 'the operator stopped gracefully' });
  await assert.rejects(execFileP('kubectl', ['--kubeconfig', kubeconfig, 'get', '--raw', '/readyz', '--request-timeout=2s']), 'its control plane is stopped too');
});
