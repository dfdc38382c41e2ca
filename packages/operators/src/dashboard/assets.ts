/**
 * The page's files: built from `web/` (Preact + TypeScript, bundled by esbuild) into
 * `index.html`, `app.js`, `app.css`, plus the API's `openapi.yaml`. Nothing is fetched from
 * anywhere else at run time (the CSP forbids it).
 *
 * - `buildDashboardAssets(outDir)` builds them into a directory: the pack step calls it with
 *   `<staging>/dist/dashboard/web-assets` so an installed `@converge/operators` serves them
 *   without esbuild (a dev dependency).
 * - `loadDashboardAssets()` serves prebuilt files when they sit beside this module
 *   (`./web-assets/`, i.e. in `dist/`); in the repository it builds them once into
 *   `.converge/dashboard-assets/<hash of the sources>/` and reuses that build while the sources
 *   are unchanged. One build per process at most (memoized).
 * @module
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const WEB_DIR = join(HERE, 'web');
const SHARED_DIR = join(HERE, 'shared');
const OPENAPI = join(HERE, 'openapi.yaml');
const PREBUILT_DIR = join(HERE, 'web-assets');

export const ASSET_FILES = ['index.html', 'app.js', 'app.css', 'openapi.yaml'] as const;
export type AssetName = (typeof ASSET_FILES)[number];

export const ASSET_TYPES: Record<AssetName, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'openapi.yaml': 'application/yaml; charset=utf-8',
};

export type DashboardAssets = ReadonlyMap<AssetName, Buffer>;

/** Builds the page into `outDir` (created; existing files replaced). Needs esbuild (a dev dependency). */
export async function buildDashboardAssets(outDir: string): Promise<void> {
  const esbuild = await import('esbuild');
  await mkdir(outDir, { recursive: true });
  await esbuild.build({
    entryPoints: { app: join(WEB_DIR, 'main.tsx') },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
    // The browser bundle must not pull in server code by accident.
    external: [],
  });
  await esbuild.build({
    entryPoints: { app: join(WEB_DIR, 'styles.css') },
    outdir: outDir,
    bundle: true,
    minify: true,
    logLevel: 'silent',
  });
  await copyFile(join(WEB_DIR, 'index.html'), join(outDir, 'index.html'));
  await copyFile(OPENAPI, join(outDir, 'openapi.yaml'));
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (!e.name.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}

/** A hash of every source the build reads, so a cached build is reused only for the same sources. */
export async function sourceHash(): Promise<string> {
  const h = createHash('sha256');
  for (const f of [...(await filesUnder(WEB_DIR)), ...(await filesUnder(SHARED_DIR)), OPENAPI]) {
    h.update(relative(HERE, f)).update('\0').update(await readFile(f)).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

function repoCacheDir(): string {
  const root = fileURLToPath(new URL('../../../../', import.meta.url));
  return existsSync(join(root, 'package.json')) ? join(root, '.converge', 'dashboard-assets') : join(tmpdir(), 'converge-dashboard-assets');
}

async function readAll(dir: string): Promise<DashboardAssets> {
  const map = new Map<AssetName, Buffer>();
  for (const name of ASSET_FILES) map.set(name, await readFile(join(dir, name)));
  return map;
}

const complete = (dir: string) => ASSET_FILES.every((f) => existsSync(join(dir, f)));

let loading: Promise<DashboardAssets> | undefined;

/** The page's files, prebuilt or built once (see the module comment). */
export function loadDashboardAssets(): Promise<DashboardAssets> {
  loading ??= (async () => {
    if (complete(PREBUILT_DIR)) return readAll(PREBUILT_DIR);
    const dir = join(repoCacheDir(), await sourceHash());
    if (!complete(dir)) {
      // Build beside, then rename: a concurrent process never reads a half-written build.
      const staging = `${dir}.tmp-${process.pid}-${Date.now()}`;
      await buildDashboardAssets(staging);
      await rm(dir, { recursive: true, force: true });
      await rename(staging, dir).catch(async (err: NodeJS.ErrnoException) => {
        await rm(staging, { recursive: true, force: true });
        if (!complete(dir)) throw err;
      });
    }
    return readAll(dir);
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}
