/**
 * The one-shot commands of the shipped `converge` (`status`, `explain`, `crds`, `providers`) as
 * one file each, bundled by esbuild at pack time (ADR 0032, issue 17 goal 5). Node's ESM loader
 * costs ≈ 0.3 ms per module before any code runs: `explain` loaded ≈ 460 modules (TypeBox ≈ 250,
 * YAML ≈ 70, the runtime ≈ 90) and spent more time resolving and linking them than doing its
 * work. Bundled, each command is a single module.
 *
 * `bundleCliCommands(stageDir)` overwrites `<stageDir>/dist/cli/commands/<name>.js` (which tsc
 * compiled) with the bundle of `packages/operators/src/cli/commands/<name>.ts`; the dispatcher
 * (`dist/cli/main.js`) imports it by the same path, and the `.d.ts` files tsc wrote stay.
 *
 * What a caller can rely on:
 * - A bundle runs the same sources as the repository, with types stripped (esbuild, like tsc
 *   with `erasableSyntaxOnly`): behaviour does not differ, only how many files are loaded.
 * - Each bundle is self-contained for its own code and the runtime's, TypeBox and YAML (both
 *   bundled; the runtime's `loadOnFirstUse` is pointed at the bundled copies, still evaluated
 *   only on first use). Packages with workers, native parts or process-wide state (pino,
 *   prom-client, OpenTelemetry, x509, undici, the local control plane) stay external: loaded
 *   from `node_modules`, only if a command reaches them.
 * - Only commands that share no module state with the dispatcher are bundled: a bundle has its
 *   own copy of every module it contains. The build refuses a command that imports the
 *   dispatcher's `stop-signal.ts`.
 * - Long-running commands (`run`, `dev`, `dashboard`, …) are not bundled: their memory is
 *   measured as the unbundled build runs them, and a bundle would save them nothing after start.
 *
 * Caveats: a bundle carries a copy of TypeBox's and YAML's code (MIT, ISC; their licence
 * comments are kept), fixed at pack time; an `npm update` of those packages reaches the bundled
 * commands only with the next pack.
 * @module
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const COMMANDS_DIR = join(ROOT, 'packages', 'operators', 'src', 'cli', 'commands');
const LOADING_MODULE = join(ROOT, 'packages', 'runtime', 'src', 'loading', 'index.ts');
const STOP_SIGNAL = join(ROOT, 'packages', 'operators', 'src', 'cli', 'shared', 'stop-signal.ts');

/** The commands shipped as bundles: one-shot readers whose start-up a person waits for. */
export const BUNDLED_COMMANDS = ['status', 'explain', 'crds', 'providers'] as const;

/** Bundled into each command, and what the runtime's `loadOnFirstUse` gets for them there. */
const BUNDLED_LAZY = ['yaml', '@sinclair/typebox'] as const;

/** Loaded from node_modules at run time, never bundled. */
const EXTERNAL = ['pino', 'prom-client', '@opentelemetry/api', '@peculiar/x509', 'reflect-metadata', 'undici', '@converge/envtest'];

/**
 * The runtime's `loading/index.ts` as it is inside a bundle: the bundled packages come from the
 * bundle (esbuild's lazy module wrappers, so they are still evaluated on first use), any other
 * from node_modules as the unbundled runtime loads it.
 */
function bundledLoadingModule(): string {
  const cases = BUNDLED_LAZY.map((spec) => `    case ${JSON.stringify(spec)}: return require(${JSON.stringify(`bundled-esm:${spec}`)});`).join('\n');
  return `import { createRequire } from 'node:module';
const nodeRequire = createRequire(import.meta.url);
export function loadOnFirstUse(specifier) {
  switch (specifier) {
${cases}
    default: return nodeRequire(new URL(import.meta.resolve(specifier)).pathname);
  }
}
`;
}

/** Bundles each command of `BUNDLED_COMMANDS` over tsc's output in `<stageDir>/dist/cli/commands/`. */
export async function bundleCliCommands(stageDir: string): Promise<void> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: Object.fromEntries(BUNDLED_COMMANDS.map((name) => [name, join(COMMANDS_DIR, `${name}.ts`)])),
    absWorkingDir: ROOT,
    outdir: join(stageDir, 'dist', 'cli', 'commands'),
    allowOverwrite: true,
    bundle: true,
    splitting: false,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    minify: false,
    sourcemap: false,
    legalComments: 'inline',
    logLevel: 'silent',
    metafile: true,
    external: EXTERNAL,
    // CommonJS packages (YAML) call require() for Node's built-ins; ESM has no require.
    banner: {
      js: [
        '// A bundle of packages/operators/src/cli/commands/<this file>.ts and what it imports, made by',
        '// scripts/bundle-cli.ts when the package was packed (ADR 0032). Edit the sources, not this file.',
        "import { createRequire as __convergeCreateRequire } from 'node:module';",
        'const require = __convergeCreateRequire(import.meta.url);',
      ].join('\n'),
    },
    plugins: [
      {
        name: 'converge-bundled-loading',
        setup(build) {
          // `bundled-esm:<package>`: the package's ESM entry (as `import` resolves it), so that
          // a require() of it and the static imports elsewhere in the bundle are one module.
          build.onResolve({ filter: /^bundled-esm:/ }, async (args) => {
            const found = await build.resolve(args.path.slice('bundled-esm:'.length), { kind: 'import-statement', resolveDir: join(ROOT, 'packages', 'runtime') });
            return found.errors.length ? { errors: found.errors } : { path: found.path };
          });
          build.onLoad({ filter: /[\\/]loading[\\/]index\.ts$/ }, (args) =>
            args.path === LOADING_MODULE ? { contents: bundledLoadingModule(), loader: 'js', resolveDir: join(ROOT, 'packages', 'runtime') } : undefined,
          );
        },
      },
    ],
  });
  const inputs = Object.keys(result.metafile.inputs).map((p) => resolve(ROOT, p));
  if (inputs.includes(STOP_SIGNAL)) throw new Error('bundle-cli: a bundled command imports cli/shared/stop-signal.ts, whose state it must share with the dispatcher; do not bundle it');
  for (const name of BUNDLED_COMMANDS) {
    const text = readFileSync(join(stageDir, 'dist', 'cli', 'commands', `${name}.js`), 'utf8');
    if (!/export\s*\{/.test(text)) throw new Error(`bundle-cli: ${name}.js exports nothing`);
  }
}
