/**
 * Loading a dependency on first use, synchronously, so that importing the runtime stays cheap
 * (issue 17: prom-client, pino, TypeBox, YAML and the OpenTelemetry API are ≈ 500 modules; a
 * command that reads a few objects needs none of them).
 *
 * Guarantees: `loadOnFirstUse(specifier)` returns the package's ESM entry (as `import` would
 * resolve it from the runtime), loaded with `require(esm)` (Node ≥ 22.12). It is the very module
 * instance an `import` elsewhere in the process gets, never a second copy from the package's
 * CommonJS build (a dual-package copy would double its memory and split its state). Packages
 * without an ESM entry come as CommonJS, as `import` would load them.
 * @module
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function loadOnFirstUse<T>(specifier: string): T {
  return require(new URL(import.meta.resolve(specifier)).pathname) as T;
}
