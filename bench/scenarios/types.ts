/**
 * What a scenario is and what it returns. A scenario receives the session (control plane,
 * client, output directory), the options, and the shared fleet of converged Microservices
 * (started on first use); it returns figures (flat, for JSON and the summary table), tables
 * (for the markdown report), chart panels and notes.
 * @module
 */
import type { Session } from '../support/session.ts';
import type { BenchOptions } from '../support/options.ts';
import type { Fleet } from './fleet.ts';

export type Cell = string | number | null;

export interface Table {
  title: string;
  columns: string[];
  rows: Cell[][];
}

export interface ChartSeries {
  name: string;
  points: [number, number][];
}

export interface ChartPanel {
  title: string;
  xLabel: string;
  yLabel: string;
  series: ChartSeries[];
  /** Draw a dashed horizontal line (e.g. a target). */
  threshold?: { y: number; label: string };
  logX?: boolean;
}

export interface ScenarioResult {
  /** One line for the summary table, e.g. "all Ready in 95 s = 1.4 × the ceiling". */
  headline: string;
  /** Headline figures; keys are stable (the report's JSON schema). */
  figures: Record<string, number | string | boolean | null>;
  tables: Table[];
  charts: ChartPanel[];
  notes: string[];
}

export interface BenchContext {
  session: Session;
  options: BenchOptions;
  /** The shared fleet (N converged Microservices and their operator), created on first call. */
  fleet(): Promise<Fleet>;
}

export interface Scenario {
  name: string;
  title: string;
  /** One paragraph: what is measured and how (copied into the report). */
  description: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}
