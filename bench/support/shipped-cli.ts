/**
 * The `converge` command as it ships: the workspace packed into tarballs (`scripts/pack.ts`,
 * compiled JavaScript) and installed with production dependencies into
 * `.converge/bench-shipped/`, as the container image installs them. The benchmarked operator
 * runs from there by default, so its memory and start-up are those of production, not of the
 * repository's TypeScript sources (Node's type stripper alone adds ≈ 15 MB of RSS and the
 * stripping of every file costs start-up time). `--operator-build source` runs the sources.
 *
 * Built once per benchmark process (≈ 20 s); nothing is downloaded (`--prefer-offline`).
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { packWorkspace } from '../../scripts/pack.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const SOURCE_MAIN = join(ROOT, 'packages', 'operators', 'src', 'cli', 'main.ts');
const run = promisify(execFile);

let built: Promise<string> | undefined;
let build: 'shipped' | 'source' = 'shipped';

/** Chooses how the benchmarked operator runs (bench/main.ts calls this with `--operator-build`). */
export function useOperatorBuild(which: 'shipped' | 'source'): void {
  build = which;
}

/** The script to run `converge` with: the installed `bin/converge.js`, or the TypeScript `main.ts`. */
export async function convergeScript(log?: (line: string) => void): Promise<string> {
  if (build === 'source') return SOURCE_MAIN;
  built ??= (async () => {
    const started = performance.now();
    const dir = join(ROOT, '.converge', 'bench-shipped');
    rmSync(dir, { recursive: true, force: true });
    const app = join(dir, 'app');
    mkdirSync(app, { recursive: true });
    const packed = await packWorkspace({ outDir: join(dir, 'tarballs') });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'converge-bench-shipped', version: '0.0.0', private: true, type: 'module' }));
    await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', ...packed.map((p) => p.tarball)], {
      cwd: app,
      maxBuffer: 16 << 20,
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    log?.(`operator: the shipped build (packed and installed in ${((performance.now() - started) / 1000).toFixed(0)} s)`);
    return join(app, 'node_modules', '@converge', 'operators', 'bin', 'converge.js');
  })();
  return built;
}
