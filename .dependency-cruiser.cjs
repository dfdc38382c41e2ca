/**
 * Layering rules, checked in CI (`npm run lint:layers`), as Kopf checks its own with
 * import-linter:
 * - the runtime never imports the operators, the CLI, the control-plane launcher or the vendor
 *   simulator;
 * - operators and examples import the runtime only through its public entry
 *   (src/runtime/index.ts), never its internals;
 * - the vendor simulator stands alone (it is the vendor, not part of the operator);
 * - no import cycles.
 */
module.exports = {
  forbidden: [
    {
      name: 'runtime-is-a-library',
      comment: 'The runtime must not depend on what is built on it.',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/(operators|cli|control-plane|vendor-sim)/' },
    },
    {
      name: 'runtime-only-through-its-entry',
      comment: 'Operators and examples use src/runtime/index.ts, never runtime internals.',
      severity: 'error',
      from: { path: '^(src/operators|examples|src/cli|src/vendor-sim)/' },
      to: { path: '^src/runtime/', pathNot: '^src/runtime/index\\.ts$' },
    },
    {
      name: 'vendor-sim-stands-alone',
      comment: 'The simulator plays the vendor: it shares no code with the operators.',
      severity: 'error',
      from: { path: '^src/vendor-sim/' },
      to: { path: '^src/(operators|runtime|cli)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
