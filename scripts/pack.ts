/**
 * `npm run pack`: one installable tarball per workspace package, compiled JavaScript and `.d.ts`
 * only (ADR 0011). Node.js does not strip types under `node_modules`, so what is installed must
 * be JavaScript, while the repository itself keeps running its TypeScript sources.
 *
 *   npm run pack                      tarballs into .converge/pack/
 *   npm run pack -- --out <dir>       tarballs into <dir>
 *   npm run pack -- runtime           only some packages (runtime, envtest, operators)
 *
 * For each package: `tsc` compiles `src/` (tests excluded) into a staging folder, non-TypeScript
 * assets under `src/` (YAML, HTML, …) are copied beside the JavaScript, the package manifest is
 * rewritten so that `exports`, `types` and `bin` point at `dist/`, README/LICENSE and the
 * package's extra folders are copied, and `npm pack` runs on the staging folder. (The operators'
 * one-shot CLI commands ship as single-file bundles: scripts/bundle-cli.ts, ADR 0032.) Imports
 * of other workspace packages compile against *their staged declarations*, so each tarball is checked
 * against what its dependencies really ship. Prints one line per tarball; `packWorkspace()` is
 * the same for tests.
 * @module
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, globSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

interface PackageSpec {
  /** Folder under packages/. */
  dir: string;
  /** Source folders (under src/) that tsc does not compile: browser code with its own build. */
  notCompiled?: string[];
  /** Runs after the compile, with the staging folder: builds what tsc does not. */
  build?: (stageDir: string) => Promise<void>;
  /** Folders or files copied into the tarball besides dist/: [from (repo-relative), to (package-relative)]. */
  extra: [string, string][];
}

/** In dependency order: a package is compiled after the packages it imports. */
export const PACKAGES: PackageSpec[] = [
  { dir: 'runtime', extra: [] },
  { dir: 'envtest', extra: [['packages/envtest/control-plane', 'control-plane']] },
  {
    dir: 'operators',
    extra: [['packages/operators/bin', 'bin'], ['deploy', 'deploy'], ['packages/operators/templates', 'templates']],
    // The dashboard's page is bundled by esbuild (ADR 0021) into dist/dashboard/web-assets;
    // the one-shot CLI commands are bundled over tsc's output (ADR 0032: start-up).
    notCompiled: ['dashboard/web'],
    build: async (stageDir) => {
      const { buildDashboardAssets } = await import('../packages/operators/src/dashboard/assets.ts');
      await buildDashboardAssets(join(stageDir, 'dist', 'dashboard', 'web-assets'));
      const { bundleCliCommands } = await import('./bundle-cli.ts');
      await bundleCliCommands(stageDir);
    },
  },
];

export interface PackedPackage {
  name: string;
  version: string;
  tarball: string;
}

interface Manifest {
  name: string;
  version: string;
  exports?: Record<string, unknown>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  [key: string]: unknown;
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** `./src/x.ts` → `./dist/x.js`, and the matching declaration for `types`. */
function toDist(path: string, ext: '.js' | '.d.ts'): string {
  return path.replace(/^\.\/src\//, './dist/').replace(/\.ts$/, ext);
}

/** The published manifest: entry points moved from the sources to dist/. */
export function publishedManifest(source: Manifest): Manifest {
  const exports: Record<string, unknown> = {};
  for (const [subpath, target] of Object.entries(source.exports ?? {})) {
    if (typeof target === 'string' && !target.endsWith('.ts')) exports[subpath] = target;
    else {
      const entry = typeof target === 'string' ? target : (target as { default: string }).default;
      exports[subpath] = { types: toDist(entry, '.d.ts'), default: toDist(entry, '.js') };
    }
  }
  const { devDependencies: _dev, scripts: _scripts, ...rest } = source as Manifest & { devDependencies?: unknown; scripts?: unknown };
  const main = exports['.'] as { types: string; default: string } | undefined;
  return { ...rest, exports, ...(main ? { types: main.types, main: main.default } : {}) };
}

async function compile(pkgDir: string, stageDir: string, staged: Map<string, string>, notCompiled: string[] = []): Promise<void> {
  const paths: Record<string, string[]> = {};
  for (const [name, dir] of staged) paths[name] = [join(dir, 'dist', 'index.d.ts')];
  const tsconfig = {
    compilerOptions: {
      target: 'es2024',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      lib: ['es2024'],
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      strict: true,
      declaration: true,
      outDir: join(stageDir, 'dist'),
      rootDir: join(pkgDir, 'src'),
      allowImportingTsExtensions: true,
      rewriteRelativeImportExtensions: true,
      erasableSyntaxOnly: true,
      verbatimModuleSyntax: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      skipLibCheck: true,
      resolveJsonModule: true,
      paths,
    },
    include: [join(pkgDir, 'src')],
    exclude: [join(pkgDir, 'src', '**', '*.test.ts'), join(pkgDir, 'src', '**', '*.test-support.ts'), join(pkgDir, 'src', '**', 'test-support', '**'), join(pkgDir, 'src', '**', 'compiled-checks', 'render.ts'), ...notCompiled.map((d) => join(pkgDir, 'src', d, '**'))],
  };
  const file = join(stageDir, '..', `tsconfig.${relative(join(ROOT, 'packages'), pkgDir)}.json`);
  writeFileSync(file, JSON.stringify(tsconfig, null, 2));
  try {
    await run(process.execPath, [TSC, '-p', file], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`tsc failed for ${relative(ROOT, pkgDir)}:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** Builds and packs the named packages (default all) into `outDir`; returns the tarballs. */
export async function packWorkspace(options: { outDir: string; only?: string[]; log?: (line: string) => void }): Promise<PackedPackage[]> {
  const outDir = resolve(options.outDir);
  // Staged inside the repository, whatever the output folder: the staged declarations of one
  // package import its dependencies' types (undici, pino, …), found in the root node_modules.
  const workDir = join(ROOT, '.converge', `pack-staging-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  mkdirSync(outDir, { recursive: true });
  const staged = new Map<string, string>();
  const packed: PackedPackage[] = [];
  for (const spec of PACKAGES) {
    const pkgDir = join(ROOT, 'packages', spec.dir);
    const manifest = readManifest(pkgDir);
    const stageDir = join(workDir, spec.dir);
    mkdirSync(stageDir, { recursive: true });
    await compile(pkgDir, stageDir, staged, spec.notCompiled);
    staged.set(manifest.name, stageDir);
    if (options.only && !options.only.includes(spec.dir)) continue;
    await spec.build?.(stageDir);
    for (const asset of globSync('**/*', { cwd: join(pkgDir, 'src') })) {
      if (/\.(ts|tsx)$/.test(asset) || !/\.[a-z0-9]+$/i.test(asset)) continue;
      if ((spec.notCompiled ?? []).some((d) => asset.startsWith(`${d}/`))) continue;
      const to = join(stageDir, 'dist', asset);
      mkdirSync(dirname(to), { recursive: true });
      cpSync(join(pkgDir, 'src', asset), to);
    }
    for (const [from, to] of spec.extra) {
      if (existsSync(join(ROOT, from))) cpSync(join(ROOT, from), join(stageDir, to), { recursive: true });
    }
    for (const file of ['README.md', 'LICENSE']) {
      const own = join(pkgDir, file);
      const fallback = join(ROOT, file);
      if (existsSync(own)) cpSync(own, join(stageDir, file));
      else if (file === 'LICENSE' && existsSync(fallback)) cpSync(fallback, join(stageDir, file));
    }
    writeFileSync(join(stageDir, 'package.json'), `${JSON.stringify(publishedManifest(manifest), null, 2)}\n`);
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', outDir, stageDir], { cwd: outDir, maxBuffer: 64 * 1024 * 1024 });
    const [info] = JSON.parse(stdout) as { filename: string }[];
    const tarball = join(outDir, info!.filename);
    packed.push({ name: manifest.name, version: manifest.version, tarball });
    options.log?.(`${manifest.name}@${manifest.version} → ${relative(ROOT, tarball)}`);
  }
  rmSync(workDir, { recursive: true, force: true });
  return packed;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf('--out');
  const outDir = outIndex >= 0 ? args[outIndex + 1]! : join(ROOT, '.converge', 'pack');
  const only = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--out');
  await packWorkspace({ outDir, ...(only.length ? { only } : {}), log: (line) => process.stdout.write(`${line}\n`) });
}
