/**
 * Pooling the compare scenario's rounds across sets (issue 17, goal 1): each set's per-round
 * ratios Converge ÷ plain client with no client-side limit, and the median of all of them with
 * its order-statistics interval. Pure: no I/O (`bench/pool-ratios.ts` reads the reports).
 *
 * What a caller can rely on: `ratiosOfReport` returns the ratios in round order and the set's
 * size, or throws when the report has no compare scenario or no such ratios (a report of another
 * setting or contender pair pools nothing, and saying so beats pooling an empty set);
 * `poolRatios` refuses sets of different sizes (500 and 2,000 are different questions).
 * @module
 */
import { median, medianInterval } from '../support/stats.ts';

/** What `ratiosOfReport` reads of a report. */
export interface ReportLike {
  scenarios: { name: string; figures?: Record<string, unknown> }[];
}

export interface RatioSet {
  /** Where the set came from, as the caller names it. */
  name: string;
  microservices: number;
  ratios: number[];
}

/** The per-round ratios of a compare report's no-limit setting, and how many Microservices it ran. */
export function ratiosOfReport(report: ReportLike): Omit<RatioSet, 'name'> {
  const compare = report.scenarios.find((s) => s.name === 'compare');
  if (!compare) throw new Error('no compare scenario in the report');
  const text = compare.figures?.['unlimited.convergeOverPlainClientByRound'];
  const ratios = typeof text === 'string' ? text.split(',').map((s) => Number(s.trim())).filter((x) => Number.isFinite(x)) : [];
  if (ratios.length === 0) throw new Error('the compare scenario has no per-round ratio of Converge to the plain client with no client-side limit');
  return { microservices: Number(compare.figures?.microservices), ratios };
}

const fmt = (x: number) => x.toFixed(2);
const interval = (xs: number[]) => {
  const i = medianInterval(xs);
  return i ? `${fmt(i.low)}–${fmt(i.high)} (${(i.coverage * 100).toFixed(1)} %)` : '—';
};

/** One line per set and one for all of them: rounds, median, interval. */
export function poolRatios(sets: readonly RatioSet[]): string {
  if (sets.length === 0) return 'no sets';
  const sizes = new Set(sets.map((s) => s.microservices));
  if (sizes.size > 1) throw new Error(`sets of different sizes (${[...sizes].join(', ')} Microservices); pool sets of one size`);
  const lines = sets.map((s) => `${s.name}: ${s.ratios.length} rounds, median ${fmt(median(s.ratios))}, interval ${interval(s.ratios)}`);
  const all = sets.flatMap((s) => s.ratios);
  lines.push(`all ${sets.length} sets (${sets[0]!.microservices} Microservices): ${all.length} rounds, median ${fmt(median(all))}, interval ${interval(all)}`);
  return lines.join('\n');
}
