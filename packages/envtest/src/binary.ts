/**
 * Builds the control-plane Go program once and caches the binary outside the repository.
 *
 * The cache key is a hash of the Go sources, go.mod, go.sum, the link flags and the platform,
 * so an edit to any of them produces a new binary while unchanged sources reuse the old one.
 * The cache lives in `$CONVERGE_CACHE_DIR`, else `$XDG_CACHE_HOME/converge`, else `~/.cache/converge`.
 * `$CONVERGE_CONTROL_PLANE_BIN` names a prebuilt binary and skips all of this.
 * @module
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Go module's folder in this repository. */
export const controlPlaneSourceDir = resolve(fileURLToPath(new URL('../control-plane/', import.meta.url)));

export interface EnsureBinaryOptions {
  /** Called with human-readable progress lines ("building…", "still building… 45s"). */
  onProgress?: (message: string) => void;
  /** Interval between "still building" lines; default 15 s. */
  progressIntervalMs?: number;
}

/** The directory that holds cached binaries. */
export function controlPlaneCacheDir(): string {
  if (process.env.CONVERGE_CACHE_DIR) return process.env.CONVERGE_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'converge');
}

/** Link flags: strip debug info, and stamp the Kubernetes version into /version and User-Agents. */
export async function goLinkFlags(sourceDir = controlPlaneSourceDir): Promise<string> {
  const goMod = await readFile(join(sourceDir, 'go.mod'), 'utf8');
  const match = /^\s*k8s\.io\/kubernetes\s+v(\d+)\.(\d+)\.(\d+)\s*$/m.exec(goMod);
  const flags = ['-s', '-w'];
  if (match) {
    const [, major, minor, patch] = match;
    for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
      flags.push(
        `-X ${pkg}.gitVersion=v${major}.${minor}.${patch}`,
        `-X ${pkg}.gitMajor=${major}`,
        `-X ${pkg}.gitMinor=${minor}`,
        `-X ${pkg}.gitTreeState=clean`,
      );
    }
  }
  return flags.join(' ');
}

/** Hash over everything that determines the binary. */
export async function controlPlaneSourceHash(sourceDir = controlPlaneSourceDir): Promise<string> {
  const hash = createHash('sha256');
  const names = (await readdir(sourceDir))
    .filter((n) => (n.endsWith('.go') && !n.endsWith('_test.go')) || n === 'go.mod' || n === 'go.sum')
    .sort();
  for (const name of names) {
    hash.update(name).update('\0').update(await readFile(join(sourceDir, name))).update('\0');
  }
  hash.update(await goLinkFlags(sourceDir)).update(process.platform).update(process.arch);
  return hash.digest('hex').slice(0, 16);
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

/**
 * Returns the path of an up-to-date control-plane binary, building it first if needed.
 * Safe to call concurrently from several processes: one builds, the others wait for it.
 * Throws with the tail of `go build`'s output when the build fails.
 */
export async function ensureControlPlaneBinary(options: EnsureBinaryOptions = {}): Promise<string> {
  const progress = options.onProgress ?? (() => {});
  if (process.env.CONVERGE_CONTROL_PLANE_BIN) {
    const bin = resolve(process.env.CONVERGE_CONTROL_PLANE_BIN);
    if (!(await isExecutable(bin))) throw new Error(`CONVERGE_CONTROL_PLANE_BIN=${bin} is not an executable file`);
    return bin;
  }
  const dir = controlPlaneCacheDir();
  await mkdir(dir, { recursive: true });
  const hash = await controlPlaneSourceHash();
  const bin = join(dir, `control-plane-${hash}`);
  const lockPath = `${bin}.lock`;

  for (;;) {
    if (await isExecutable(bin)) return bin;
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
      progress(`waiting for another process (pid ${owner || '?'}) that is building the control plane…`);
      await new Promise((r) => setTimeout(r, 2000));
      continue;
    }
    try {
      await lock.writeFile(String(process.pid));
      await lock.close();
      if (await isExecutable(bin)) return bin;
      await build(bin, options);
      return bin;
    } finally {
      await rm(lockPath, { force: true });
    }
  }
}

/** Keeps the newest few cached binaries (other checkouts may use them); each is ~120 MB. */
async function pruneOldBinaries(keep: string, max = 3): Promise<void> {
  const dir = controlPlaneCacheDir();
  const entries = await Promise.all(
    (await readdir(dir))
      .filter((n) => /^control-plane-[0-9a-f]{16}$/.test(n))
      .map(async (n) => ({ path: join(dir, n), mtime: (await stat(join(dir, n))).mtimeMs })),
  );
  entries.sort((a, b) => b.mtime - a.mtime);
  for (const e of entries.slice(max)) {
    if (e.path !== keep) await rm(e.path, { force: true });
  }
}

async function build(bin: string, options: EnsureBinaryOptions): Promise<void> {
  const progress = options.onProgress ?? (() => {});
  const tmp = `${bin}.tmp-${process.pid}`;
  const ldflags = await goLinkFlags();
  const args = ['build', '-ldflags', ldflags, '-o', tmp, '.'];
  progress(
    `building the control plane (go build in ${controlPlaneSourceDir}); ` +
      'this takes several minutes when the Go build cache is cold, seconds when warm',
  );
  const started = Date.now();
  const output: string[] = [];
  const child = spawn('go', args, { cwd: controlPlaneSourceDir, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const timer = setInterval(
    () => progress(`still building… ${Math.round((Date.now() - started) / 1000)}s`),
    options.progressIntervalMs ?? 15_000,
  );
  try {
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('close', (c) => res(c));
    });
    if (code !== 0) {
      throw new Error(`go build failed (exit ${code}):\n${output.join('').split('\n').slice(-40).join('\n')}`);
    }
    await rename(tmp, bin);
    progress(`built ${bin} in ${Math.round((Date.now() - started) / 1000)}s`);
    await pruneOldBinaries(bin);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (err as NodeJS.ErrnoException).syscall?.startsWith('spawn')) {
      throw new Error('`go` is not on PATH: install Go (see go.mod for the version) to build the control plane');
    }
    throw err;
  } finally {
    clearInterval(timer);
    await rm(tmp, { force: true });
  }
}
