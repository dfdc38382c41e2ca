#!/usr/bin/env node
// The `converge` command. Plain JavaScript, so that it can say clearly what it needs on any
// Node.js. In the repository (where `src/` sits beside it) it runs the TypeScript sources; from an
// installed package (built by scripts/pack.ts, which ships `dist/` and no sources) the compiled
// JavaScript.
import { existsSync } from 'node:fs';
// A namespace import: Node.js < 22.1 has no enableCompileCache, and a named import of it would
// fail before the version check below could explain.
import * as nodeModule from 'node:module';

const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  // The same words as src/cli/shared/node-version.ts.
  process.stderr.write(
    `Converge needs Node.js >= 24 (this is ${process.version}). ` +
      'In the repository, `npm start` and `npm test` install it and run on it (node_modules/.bin/node); elsewhere install Node.js 24 LTS.\n',
  );
  process.exit(1);
}

// One-shot commands (status, explain, crds, …) start faster from V8's on-disk code cache
// (issue 17, goal 5: ≈ 60 ms less CPU for `status`). It lives in the OS temp folder
// (`node-compile-cache`); where that cannot be written the cache is simply off. Long-running
// processes gain nothing from it and keep their memory as measured, so they do not use it.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off.
if (!['run', 'dev', 'dashboard', 'cluster', 'vendor-sim'].includes(process.argv[2] ?? '')) nodeModule.enableCompileCache?.();

const source = new URL('../src/cli/main.ts', import.meta.url);
await import(existsSync(source) ? source.href : new URL('../dist/cli/main.js', import.meta.url).href);
