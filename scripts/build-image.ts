/**
 * `npm run image`: builds the operator image from the repository's Dockerfile with podman.
 *
 *   npm run image                         localhost/converge:dev on a locally built Node.js 24 base
 *   npm run image -- --tag <ref>          another tag
 *   npm run image -- --node-image <ref>   a base you have (e.g. node:24-bookworm-slim from a registry)
 *
 * No registry is reachable on the machines this project is built on, so by default the base is
 * made locally and cached: a Debian bookworm root from `debootstrap --variant=minbase`, the
 * Node.js binary the npm `node` package ships (the one this repository runs on) and npm, laid out
 * as in the official `node` images (`/usr/local/bin/node`, `/usr/local/lib/node_modules/npm`).
 * The Dockerfile itself is written for the official images and is passed this base as NODE_IMAGE.
 *
 * podman runs with a containers.conf of its own (`runtime = "runc"`, no default ulimits: what
 * these sandboxes need, see docs) through CONTAINERS_CONF, and the host network (the build
 * reaches the npm registry; containers reach the local API server on 127.0.0.1). A CA bundle in
 * NODE_EXTRA_CA_CERTS (a TLS-intercepting proxy) is passed to the build as the secret `ca`.
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, cpSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';

const execFileP = promisify(execFile);
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const DEFAULT_TAG = 'localhost/converge:dev';

function cacheDir(): string {
  const base = process.env.CONVERGE_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/root', '.cache'), 'converge');
  return join(base, 'image');
}

/** The environment podman runs with: our containers.conf. */
export function podmanEnv(): NodeJS.ProcessEnv {
  const dir = join(ROOT, '.converge', 'podman');
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'containers.conf');
  writeFileSync(conf, '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n');
  return { ...process.env, CONTAINERS_CONF: conf };
}

/** Runs podman; resolves with stdout; rejects with its stderr. */
export async function podman(args: string[], options: { timeoutMs?: number } = {}): Promise<string> {
  try {
    const { stdout } = await execFileP('podman', args, { env: podmanEnv(), maxBuffer: 256 * 1024 * 1024, timeout: options.timeoutMs ?? 600_000 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`podman ${args.slice(0, 3).join(' ')} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
}

/** Streams a long command's output to `log` line by line. */
function stream(cmd: string, args: string[], log: (line: string) => void, input?: () => NodeJS.ReadableStream): Promise<void> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { env: podmanEnv(), stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    if (input) input().pipe(child.stdin!);
    let tail = '';
    const onData = (d: Buffer) => {
      const text = tail + d.toString();
      const lines = text.split('\n');
      tail = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) log(l);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', rej);
    child.once('exit', (code) => (code === 0 ? res() : rej(new Error(`${cmd} ${args[0]} exited with ${code}${tail ? `: ${tail}` : ''}`))));
  });
}

function npmDir(): string {
  const candidates = [process.env.npm_execpath ? resolve(process.env.npm_execpath, '..', '..') : '', '/usr/lib/node_modules/npm', '/usr/local/lib/node_modules/npm'];
  const found = candidates.find((c) => c && existsSync(join(c, 'bin', 'npm-cli.js')));
  if (!found) throw new Error('npm not found (looked at $npm_execpath, /usr/lib/node_modules/npm, /usr/local/lib/node_modules/npm)');
  return found;
}

/**
 * The local Node.js 24 base image (built once, then reused): its tag. Needs `debootstrap` and
 * root (Debian's packages `podman runc debootstrap`).
 */
export async function ensureLocalNodeImage(log: (line: string) => void = () => undefined): Promise<string> {
  const nodeBinary = join(ROOT, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(nodeBinary)) throw new Error(`${nodeBinary} is missing: run npm ci first`);
  const npm = npmDir();
  const nodeVersion = (await execFileP(nodeBinary, ['--version'])).stdout.trim().replace(/^v/, '');
  const npmVersion = (JSON.parse(readFileSync(join(npm, 'package.json'), 'utf8')) as { version: string }).version;
  const tag = `localhost/converge-node:${nodeVersion}-npm${npmVersion}`;
  if (await podman(['image', 'exists', tag]).then(() => true, () => false)) return tag;

  const dir = cacheDir();
  mkdirSync(dir, { recursive: true });
  const debianTar = join(dir, 'debian-bookworm-minbase.tar');
  if (!existsSync(debianTar)) {
    const rootfs = join(dir, `rootfs-${process.pid}`);
    rmSync(rootfs, { recursive: true, force: true });
    log('image: debootstrap --variant=minbase bookworm (once; about 2 minutes)');
    await stream('debootstrap', ['--variant=minbase', 'bookworm', rootfs, 'http://deb.debian.org/debian'], (l) => { if (/^I: (Retrieving|Base system)/.test(l)) log(`image: ${l}`); });
    rmSync(join(rootfs, 'var', 'cache', 'apt', 'archives'), { recursive: true, force: true });
    rmSync(join(rootfs, 'var', 'lib', 'apt', 'lists'), { recursive: true, force: true });
    await execFileP('tar', ['-C', rootfs, '-cf', `${debianTar}.tmp`, '.'], { maxBuffer: 1024 * 1024 });
    renameSync(`${debianTar}.tmp`, debianTar);
    rmSync(rootfs, { recursive: true, force: true });
  }
  // Node.js and npm, where the official images have them.
  const overlay = join(dir, `overlay-${process.pid}`);
  rmSync(overlay, { recursive: true, force: true });
  mkdirSync(join(overlay, 'usr', 'local', 'bin'), { recursive: true });
  mkdirSync(join(overlay, 'usr', 'local', 'lib', 'node_modules'), { recursive: true });
  cpSync(nodeBinary, join(overlay, 'usr', 'local', 'bin', 'node'));
  cpSync(npm, join(overlay, 'usr', 'local', 'lib', 'node_modules', 'npm'), { recursive: true });
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(overlay, 'usr', 'local', 'bin', 'npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(overlay, 'usr', 'local', 'bin', 'npx'));
  const full = join(dir, `base-${process.pid}.tar`);
  await execFileP('cp', [debianTar, full]);
  // Only entries the Debian root lacks: a tar layer must not list a path twice.
  await execFileP('tar', ['-C', overlay, '-rf', full, './usr/local/bin/node', './usr/local/bin/npm', './usr/local/bin/npx', './usr/local/lib/node_modules']);
  log(`image: importing ${tag}`);
  await podman(['import', '--change', 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin', '--change', 'CMD ["node"]', full, tag]);
  rmSync(overlay, { recursive: true, force: true });
  rmSync(full, { force: true });
  return tag;
}

export interface BuildImageOptions {
  tag?: string;
  /** A base image to use instead of the local one. */
  nodeImage?: string;
  log?: (line: string) => void;
}

/** Builds the Dockerfile; resolves with the tag and the image's size in bytes. */
export async function buildImage(options: BuildImageOptions = {}): Promise<{ tag: string; sizeBytes: number; seconds: number }> {
  const log = options.log ?? (() => undefined);
  const tag = options.tag ?? DEFAULT_TAG;
  const nodeImage = options.nodeImage ?? (await ensureLocalNodeImage(log));
  const started = performance.now();
  const args = ['build', '--network', 'host', '--build-arg', `NODE_IMAGE=${nodeImage}`, '-t', tag];
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  if (ca && existsSync(ca) && statSync(ca).size > 0) args.push('--secret', `id=ca,src=${ca}`);
  log(`image: podman build -t ${tag} (base ${nodeImage})`);
  await stream('podman', [...args, ROOT], (l) => { if (/^(\[\d\/\d\] )?STEP|^Successfully|^Error/.test(l)) log(`image: ${l}`); });
  const inspect = JSON.parse(await podman(['image', 'inspect', tag])) as { Size: number }[];
  return { tag, sizeBytes: inspect[0]!.Size, seconds: (performance.now() - started) / 1000 };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { tag: { type: 'string' }, 'node-image': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write('Usage: npm run image -- [--tag <ref>] [--node-image <ref>]\n');
    process.exit(0);
  }
  const result = await buildImage({
    ...(values.tag ? { tag: values.tag } : {}),
    ...(values['node-image'] ? { nodeImage: values['node-image'] } : {}),
    log: (l) => process.stdout.write(`${l}\n`),
  });
  process.stdout.write(`built ${result.tag}: ${(result.sizeBytes / 1e6).toFixed(0)} MB in ${result.seconds.toFixed(0)} s\n`);
}
