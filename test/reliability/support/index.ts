/**
 * Support for the reliability suite (issue 7): the stage of a test (`env.ts`), a churn workload
 * (`workload.ts`), an independent witness of children and vendor instances (`witness.ts`),
 * convergence and invariant checks (`convergence.ts`), counters and audit-log writes
 * (`metrics.ts`) and the figures reporter that feeds `results/latest.md` (`report.ts`).
 * See docs/reliability.md for what each test proves and how to run the long variants.
 * @module
 */
export { reliabilityEnv, diedAt, random, within, IMAGE } from './env.ts';
export type { ReliabilityEnv, InProcessOperator, OperatorSettings, Rng } from './env.ts';
export { Churn } from './workload.ts';
export type { ChurnOp, ChurnOptions } from './workload.ts';
export { startWitness, reportLeftovers } from './witness.ts';
export type { Witness } from './witness.ts';
export { assess, waitConverged, describe } from './convergence.ts';
export type { Assessment, Expectations } from './convergence.ts';
export { counter, auditMark, summarize, AUDIT_LOG } from './metrics.ts';
export { reliabilityReport, LONG, renderLatest } from './report.ts';
export type { Figures, FigureKind, ResultRow } from './report.ts';
export { recordReconciles } from './reconciles.ts';
export type { ReconcileLog } from './reconciles.ts';
