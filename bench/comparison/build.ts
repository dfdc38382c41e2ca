/**
 * Builds and caches what the `compare` benchmark runs besides Converge, outside the repository
 * and the way packages/envtest/src/binary.ts caches the control plane:
 *
 * - the controller-runtime comparison operator (`bench/comparison/controller-runtime/`, its own
 *   Go module): `go build` into `<cache>/bench-cr-<hash>`, the hash taken over the Go sources,
 *   go.mod, go.sum and the platform, so an edit rebuilds and unchanged sources reuse the binary
 *   (`ensureGoBinary`, which the kstatus checker in `test/kstatus/` is built with too);
 * - the Kopf operator's virtualenv: `<cache>/bench-kopf-venv`, `pip install` of KOPF_PACKAGES from
 *   PyPI, rebuilt when that list changes (recorded in the venv).
 *
 * `<cache>` is the control plane's cache directory (`$CONVERGE_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/converge`, else `~/.cache/converge`). Both builds take a lock file so that
 * concurrent benchmark runs build once; both throw with the tail of the tool's output on failure.
 * @module
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, open, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { controlPlaneCacheDir } from '@converge/envtest';

export const controllerRuntimeSourceDir = resolve(fileURLToPath(new URL('./controller-runtime/', import.meta.url)));
export const kopfOperatorPath = resolve(fileURLToPath(new URL('./kopf/operator.py', import.meta.url)));

/** What the Kopf venv gets from PyPI: Kopf 1.45 (newest 1.45.x) and the Kubernetes client, as the seed installs them. */
export const KOPF_PACKAGES = ['kopf>=1.45,<1.46', 'kubernetes'] as const;

export interface BuildOptions {
  onProgress?: (message: string) => void;
}

/** Which files of a Go module folder determine its binary (sources, not tests; go.mod, go.sum). */
export function isGoBuildInput(name: string): boolean {
  return (name.endsWith('.go') && !name.endsWith('_test.go')) || name === 'go.mod' || name === 'go.sum';
}

/** A 16-hex-digit hash over named file contents and extra strings, independent of the order given. */
export function contentHash(files: readonly { name: string; content: Buffer | string }[], extra: readonly string[] = []): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    hash.update(f.name).update('\0').update(f.content).update('\0');
  }
  for (const e of extra) hash.update(e).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** The hash of a Go module folder's build inputs and the platform (the controller-runtime operator's by default). */
export async function goSourceHash(dir = controllerRuntimeSourceDir): Promise<string> {
  const names = (await readdir(dir)).filter(isGoBuildInput);
  const files = await Promise.all(names.map(async (name) => ({ name, content: await readFile(join(dir, name)) })));
  return contentHash(files, [process.platform, process.arch]);
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, fsConstants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `ready()`; if false, takes `<target>.lock` (waiting for a live owner) and runs `make()`. */
async function buildOnce(target: string, ready: () => Promise<boolean>, make: () => Promise<void>, progress: (m: string) => void): Promise<void> {
  const lockPath = `${target}.lock`;
  for (;;) {
    if (await ready()) return;
    let lock;
    try {
      lock = await open(lockPath, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) {
        await rm(lockPath, { force: true });
        continue;
      }
      progress(`waiting for another process (pid ${owner || '?'}) that is building ${target}…`);
      await new Promise((r) => setTimeout(r, 2000));
      continue;
    }
    try {
      await lock.writeFile(String(process.pid));
      await lock.close();
      if (!(await ready())) await make();
      return;
    } finally {
      await rm(lockPath, { force: true });
    }
  }
}

/** Runs a command; resolves with its output, rejects with the last lines of it on a non-zero exit. */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; what: string }): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const output: string[] = [];
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.length > 400) output.splice(0, output.length - 400);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new Error(`${options.what}: \`${command}\` is not on PATH`) : err),
    );
    child.once('close', (code) => {
      const text = output.join('');
      if (code === 0) resolvePromise(text);
      else reject(new Error(`${options.what} failed (exit ${code}):\n${text.split('\n').slice(-40).join('\n')}`));
    });
  });
}

export interface GoBinaryOptions extends BuildOptions {
  /** The Go module folder to build (`go build .` there). */
  sourceDir: string;
  /** The cached binary's name before its hash: `<cache>/<prefix>-<hash>`. */
  prefix: string;
  /** What is built, for progress lines and errors. */
  what: string;
}

/**
 * The path of an up-to-date binary of the Go module in `sourceDir`, built first if needed:
 * `go build` into `<cache>/<prefix>-<hash>`, the hash taken over the module's Go sources, go.mod,
 * go.sum and the platform. Concurrent callers build once (a lock file); a failed build throws
 * with the tail of Go's output and leaves nothing in the cache.
 */
export async function ensureGoBinary(options: GoBinaryOptions): Promise<string> {
  const progress = options.onProgress ?? (() => {});
  const dir = controlPlaneCacheDir();
  await mkdir(dir, { recursive: true });
  const bin = join(dir, `${options.prefix}-${await goSourceHash(options.sourceDir)}`);
  await buildOnce(bin, () => isExecutable(bin), async () => {
    const tmp = `${bin}.tmp-${process.pid}`;
    const started = Date.now();
    progress(`building ${options.what} (go build in ${options.sourceDir}); minutes with a cold Go cache`);
    try {
      await run('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', tmp, '.'], { cwd: options.sourceDir, what: `go build of ${options.what}` });
      await rename(tmp, bin);
    } finally {
      await rm(tmp, { force: true });
    }
    progress(`built ${bin} in ${Math.round((Date.now() - started) / 1000)} s`);
  }, progress);
  return bin;
}

/** The path of an up-to-date controller-runtime comparison binary, built first if needed. */
export async function ensureControllerRuntimeBinary(options: BuildOptions = {}): Promise<string> {
  return ensureGoBinary({ ...options, sourceDir: controllerRuntimeSourceDir, prefix: 'bench-cr', what: 'the controller-runtime comparison operator' });
}

export interface KopfEnvironment {
  /** The venv's `kopf` entry point. */
  kopf: string;
  python: string;
  /** Installed versions, e.g. { kopf: '1.45.2', kubernetes: '37.0.2', python: '3.11.7' }. */
  versions: Record<string, string>;
}

/** The Kopf virtualenv, created and filled from PyPI first if it is missing or its package list changed. */
export async function ensureKopfEnvironment(options: BuildOptions = {}): Promise<KopfEnvironment> {
  const progress = options.onProgress ?? (() => {});
  const dir = controlPlaneCacheDir();
  await mkdir(dir, { recursive: true });
  const venv = join(dir, 'bench-kopf-venv');
  const python = join(venv, 'bin', 'python');
  const kopf = join(venv, 'bin', 'kopf');
  const stamp = join(venv, 'bench-packages.txt');
  const wanted = KOPF_PACKAGES.join('\n');
  const ready = async () => (await isExecutable(kopf)) && (await readFile(stamp, 'utf8').catch(() => '')) === wanted;
  await buildOnce(venv, ready, async () => {
    progress(`creating the Kopf virtualenv ${venv} (pip install ${KOPF_PACKAGES.join(' ')})`);
    const pythonCmd = process.env.PYTHON ?? 'python3';
    if (!(await isExecutable(python))) await run(pythonCmd, ['-m', 'venv', venv], { what: 'python3 -m venv' });
    await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...KOPF_PACKAGES], { what: 'pip install of Kopf' });
    await writeFile(stamp, wanted);
  }, progress);
  const out = await run(python, ['-c', 'import importlib.metadata as m, platform; print(m.version("kopf"), m.version("kubernetes"), platform.python_version())'], { what: 'reading the Kopf versions' });
  const [kopfVersion = 'unknown', kubernetesVersion = 'unknown', pythonVersion = 'unknown'] = out.trim().split(/\s+/);
  return { kopf, python, versions: { kopf: kopfVersion, kubernetes: kubernetesVersion, python: pythonVersion } };
}
