/**
 * Writes the CRD YAML under deploy/crds/ from the TypeBox schemas (`npm run generate:crds`).
 * `packages/operators/src/cli/commands/crds.test.ts` fails when a committed file differs from what this writes.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CRD_FILES, renderCrdFile } from '../packages/operators/src/cli/shared/crd-files.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
for (const file of CRD_FILES) {
  await writeFile(`${root}${file.path}`, renderCrdFile(file));
  console.log(`wrote ${file.path}`);
}
