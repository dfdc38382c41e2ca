/**
 * The benchmark report: one JSON document (`report.json`), its markdown rendering
 * (`report.md`) and a chart (`chart.svg`) written into the run's output directory, and copied to
 * `bench/reports/latest/` for a default run. Rendering is pure (markdown.ts, svg-chart.ts).
 * @module
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderMarkdown } from './markdown.ts';
import { renderChart } from './svg-chart.ts';

export { hotFunctions, readProfile } from './cpu-profile.ts';
export type { HotFunction, CpuProfile } from './cpu-profile.ts';

export type { ProfileSummary, ScenarioReport, Report } from './report-types.ts';
import type { Report } from './report-types.ts';

export const CAVEAT =
  'Absolute times are noisy: this machine has few cores and other work (test suites of other engineers, the control plane itself, the benchmark\'s own observers) runs beside the operator. Compare ratios measured in the same run (operator ÷ ceiling, achieved ÷ limit) and counts (requests, writes, bytes per object), not seconds across runs.';

export const REPORT_FILES = ['report.json', 'report.md', 'chart.svg'] as const;

export function writeReport(report: Report, outDir: string): void {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, 'report.md'), renderMarkdown(report));
  const panels = report.scenarios.flatMap((s) => s.charts ?? []);
  writeFileSync(join(outDir, 'chart.svg'), renderChart(panels, `Converge benchmarks, ${report.startedAt.slice(0, 10)}, commit ${report.machine.git.commit.slice(0, 10)}, ${report.machine.cpus} cores — figures are noisy, compare ratios`));
}

/** Replaces `dest` with the report files (and nothing else) of `outDir`. */
export function copyReport(outDir: string, dest: string): void {
  mkdirSync(dest, { recursive: true });
  for (const f of readdirSync(dest)) rmSync(join(dest, f), { recursive: true, force: true });
  for (const f of REPORT_FILES) copyFileSync(join(outDir, f), join(dest, f));
}

/** A report written before: `path` is its `report.json` or the directory holding it. */
export function readReport(path: string): Report {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, 'report.json') : path;
  return JSON.parse(readFileSync(file, 'utf8')) as Report;
}
