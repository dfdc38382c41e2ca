/**
 * Writes the compiled checks (`npm run generate:checks`): packages/operators/src/operators/compiled-checks/checks.generated.ts
 * from the TypeBox schemas. `compiled-checks.test.ts` fails when the committed file differs from what this writes.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { COMPILED_CHECKS_FILE, renderCompiledChecks } from '../packages/operators/src/operators/compiled-checks/render.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
await writeFile(`${root}${COMPILED_CHECKS_FILE}`, renderCompiledChecks());
console.log(`wrote ${COMPILED_CHECKS_FILE}`);
