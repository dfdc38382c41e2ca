/**
 * Pools the per-round ratios Converge ÷ plain client (no client-side limit) of compare reports
 * already written: each report's rounds, then all of them, with the median and its interval
 * (order statistics, as the compare scenario reports for one set). A ratio is taken within one
 * round, both contenders on the same control plane, so sets from different runs pool; their
 * seconds do not.
 *
 *   node scripts/bootstrap.mjs bench/pool-ratios.ts <report dir or report.json>...
 * @module
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { poolRatios, ratiosOfReport } from './scenarios/pooled-ratios.ts';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  process.stderr.write('usage: pool-ratios.ts <report dir or report.json>...\n');
  process.exit(2);
}
const sets = paths.map((p) => {
  const file = existsSync(p) && statSync(p).isDirectory() ? join(p, 'report.json') : p;
  return { name: p, ...ratiosOfReport(JSON.parse(readFileSync(file, 'utf8'))) };
});
process.stdout.write(`${poolRatios(sets)}\n`);
