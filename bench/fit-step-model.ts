/**
 * Fits the step model (bench/scenarios/step-model.ts) to compare reports already written: each
 * report's runs with no client-side limit, then all of them pooled. For reports from before the
 * compare scenario fitted the model itself.
 *
 *   node scripts/bootstrap.mjs bench/fit-step-model.ts <report dir or report.json>...
 * @module
 */
import { readReport } from './report/index.ts';
import { CONTENDER_TITLES } from './comparison/contenders.ts';
import type { ContenderName } from './comparison/contenders.ts';
import { fitStepModel, stepModelNote, stepPointsFromFigures } from './scenarios/step-model.ts';
import type { StepPoint } from './scenarios/step-model.ts';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  process.stderr.write('usage: fit-step-model.ts <report dir or report.json>...\n');
  process.exit(2);
}
const title = (c: string) => CONTENDER_TITLES[c as ContenderName] ?? c;
const pooled: StepPoint[] = [];
let size: number | undefined;
for (const p of paths) {
  const report = readReport(p);
  const figures = report.scenarios.find((s) => s.name === 'compare')?.figures;
  if (!figures) {
    process.stdout.write(`${p}: no compare scenario\n`);
    continue;
  }
  const n = Number(figures.microservices);
  if (size !== undefined && n !== size) throw new Error(`${p}: ${n} Microservices, the reports before had ${size}; pool reports of one size`);
  size = n;
  const points = stepPointsFromFigures(figures, 'unlimited');
  pooled.push(...points);
  const model = fitStepModel(points);
  process.stdout.write(`${p}: ${model ? stepModelNote(model, n, title) : `${points.length} runs with an IPAddress time: too few to fit`}\n`);
}
const model = fitStepModel(pooled);
if (paths.length > 1 && model) process.stdout.write(`\nall ${paths.length} reports: ${stepModelNote(model, size!, title)}\n`);
