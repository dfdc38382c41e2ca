/**
 * `node scripts/reliability-report.ts`: renders `test/reliability/results/latest.md` from the
 * figures the reliability suite left in `test/reliability/results/tmp/*.json` (one file per test
 * file; the suite also renders after each test, so this is only needed to re-render by hand).
 * Prints the table; exits 1 when there is nothing to render or a row failed.
 * @module
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { readRows, renderLatest } from '../test/reliability/support/report.ts';

const rows = readRows();
if (rows.length === 0) {
  process.stderr.write('reliability-report: no results yet; run `npm test -- test/reliability` first\n');
  process.exit(1);
}
const path = renderLatest();
process.stdout.write(readFileSync(path, 'utf8'));
process.stderr.write(`reliability-report: wrote ${relative(process.cwd(), path)} (${rows.length} rows)\n`);
process.exit(rows.some((r) => r.status === 'fail') ? 1 : 0);
