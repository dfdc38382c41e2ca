/**
 * The shape of a benchmark report (`report.json`, schema version 1), apart from the code that
 * writes and renders it, so renderers can depend on it without depending on the writer.
 * @module
 */
import type { MachineInfo } from '../support/machine.ts';
import type { BenchOptions } from '../support/options.ts';
import type { ScenarioResult } from '../scenarios/types.ts';
import type { HotFunction } from './cpu-profile.ts';
import type { CpuSplit } from '../support/cpu-split.ts';

export interface ProfileSummary {
  /** Path relative to the report. */
  file: string;
  /** Sampled wall time of the process, ms. */
  totalMs: number;
  top: HotFunction[];
}

export interface ScenarioReport extends Partial<ScenarioResult> {
  name: string;
  title: string;
  description: string;
  status: 'ok' | 'failed' | 'skipped';
  error?: string;
  durationSeconds: number;
}

export interface Report {
  schemaVersion: 1;
  startedAt: string;
  finishedAt: string;
  durationSeconds: number;
  command: string;
  options: BenchOptions;
  machine: MachineInfo;
  /** With --split-cpus: the CPUs the control plane and the benchmark (with its contenders) ran on, for every scenario. */
  cpuSplit?: CpuSplit;
  loadAverageAtEnd: number[];
  caveat: string;
  scenarios: ScenarioReport[];
  /** With --profile: one entry per operator process. */
  profiles?: ProfileSummary[];
}
