#!/usr/bin/env node
// The `converge` command. Plain JavaScript, so that it can say clearly what it needs on any
// Node.js. In the repository (where `src/` sits beside it) it runs the TypeScript sources; from an
// installed package (built by scripts/pack.ts, which ships `dist/` and no sources) the compiled
// JavaScript.
import { existsSync } from 'node:fs';

const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `converge needs Node.js >= 24 (this is ${process.version}).\n` +
      'In the repository, `npm start` and `npm test` install and use it (the `node` dev dependency); ' +
      'elsewhere install Node.js 24 LTS.\n',
  );
  process.exit(1);
}

const source = new URL('../src/cli/main.ts', import.meta.url);
await import(existsSync(source) ? source.href : new URL('../dist/cli/main.js', import.meta.url).href);
