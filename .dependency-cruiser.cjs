/**
 * Layering rules, checked in CI (`npm run lint:layers`), as Kopf checks its own with
 * import-linter. The packages are the API boundaries (ADR 0011):
 * - `@converge/runtime` (packages/runtime) is a library: it never imports the other packages,
 *   the tests, the benchmarks or the examples;
 * - `@converge/envtest` (packages/envtest, the local control plane) stands alone too;
 * - a package reaches another only by its package name (`@converge/runtime`), which resolves to
 *   its public entry; never by a relative path into another package's folder;
 * - the vendor simulator plays the vendor: it shares no code with the operators or the runtime;
 * - examples are external consumers: they use `@converge/runtime` only;
 * - no import cycles.
 */
const PACKAGES = ['runtime', 'envtest', 'operators'];

/** One rule per pair: a relative import from package A into package B's folder. */
const noRelativeCrossings = PACKAGES.flatMap((from) =>
  PACKAGES.filter((to) => to !== from).map((to) => ({
    name: `${from}-reaches-${to}-by-name`,
    comment: `Import @converge/${to}, not a path into packages/${to}/.`,
    severity: 'error',
    from: { path: `^packages/${from}/` },
    to: { path: `^packages/${to}/`, dependencyTypes: ['local'] },
  })),
);

module.exports = {
  forbidden: [
    {
      name: 'runtime-is-a-library',
      comment: 'The runtime must not depend on what is built on it.',
      severity: 'error',
      from: { path: '^packages/runtime/' },
      to: { path: '^(packages/(envtest|operators)|test|bench|examples|scripts)/' },
    },
    {
      name: 'envtest-stands-alone',
      comment: 'The local control plane serves every operator; it knows none of them.',
      severity: 'error',
      from: { path: '^packages/envtest/' },
      to: { path: '^(packages/(runtime|operators)|test|bench|examples|scripts)/' },
    },
    {
      name: 'runtime-only-through-its-entry',
      comment: 'Everything outside the runtime uses its public entry (src/index.ts), never its internals.',
      severity: 'error',
      from: { path: '^(packages/operators|examples)/' },
      to: { path: '^packages/runtime/', pathNot: '^packages/runtime/src/index\\.ts$' },
    },
    {
      name: 'vendor-sim-stands-alone',
      comment: 'The simulator plays the vendor: it shares no code with the operators.',
      severity: 'error',
      from: { path: '^packages/operators/src/vendor-sim/' },
      to: { path: '^(packages/runtime/|packages/operators/src/(operators|cli)/)' },
    },
    {
      name: 'examples-are-consumers',
      comment: 'Examples build on the published runtime only, like any other team would.',
      severity: 'error',
      from: { path: '^examples/' },
      to: { path: '^(packages/(envtest|operators)|test|bench|scripts)/' },
    },
    ...noRelativeCrossings,
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js'],
      conditionNames: ['import', 'types', 'default'],
      exportsFields: ['exports'],
    },
  },
};
