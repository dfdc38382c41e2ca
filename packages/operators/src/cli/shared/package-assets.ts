/**
 * Folders that ship beside the code (`deploy/`, `templates/`), found the same way in the
 * repository and in an installed `@converge/operators`.
 *
 * In the repository `deploy/` sits at the workspace root and `templates/` in the package folder;
 * the pack step (scripts/pack.ts) copies both into the package root of the tarball. From this
 * file, `../../..` is the package root either way (`src/cli/shared/` or `dist/cli/shared/`).
 * @module
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The absolute path of a shipped folder, with a trailing slash. */
export function assetDir(name: 'deploy' | 'templates'): string {
  const inPackage = join(PACKAGE_ROOT, name);
  if (existsSync(inPackage)) return `${inPackage}/`;
  return `${join(PACKAGE_ROOT, '..', '..', name)}/`;
}
