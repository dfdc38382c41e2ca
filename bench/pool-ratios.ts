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
import { readReport } from './report/index.ts';
import { poolRatios, ratiosOfReport } from './scenarios/pooled-ratios.ts';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  process.stderr.write('usage: pool-ratios.ts <report dir or report.json>...\n');
  process.exit(2);
}
try {
  const sets = paths.map((p) => {
    try {
      return { name: p, ...ratiosOfReport(readReport(p)) };
    } catch (err) {
      throw new Error(`${p}: ${(err as Error).message}`);
    }
  });
  process.stdout.write(`${poolRatios(sets)}\n`);
} catch (err) {
  process.stderr.write(`pool-ratios: ${(err as Error).message}\n`);
  process.exit(1);
}
