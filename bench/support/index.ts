/**
 * What the benchmark scenarios stand on, one file per job:
 *
 * - session.ts: a control plane of the benchmark's own (audit log on, a Service IP range for
 *   10,000 Services), the admin client, CRDs, namespaces. Blocks until ready; `close()` stops it.
 * - operator.ts / child-process.ts / memory-probe.mjs: operators as `converge run` child
 *   processes with metrics on a free port, GC'd memory snapshots on demand, optional CPU profile.
 * - ceiling.ts: the cold-start ceiling, a plain client run as a child process.
 * - observer.ts: list+watch observers that timestamp what the benchmark waits for.
 * - fixtures.ts: Microservices by the hundred, a bounded worker pool.
 * - audit.ts: one client's requests in the audit log between two offsets.
 * - prometheus.ts, stats.ts: parsing /metrics, histogram quantiles, percentiles (pure).
 * - options.ts: flags and size presets (pure). machine.ts: what the run ran on.
 * - cpu-split.ts: `--split-cpus`, the control plane and the benchmark on CPUs of their own.
 *
 * Nothing here retries silently or hides a failure: a timeout rejects with what was awaited.
 * @module
 */
export { openSession, BENCH_USER_AGENT } from './session.ts';
export type { Session } from './session.ts';
export { startOperator, OPERATOR_USER_AGENT } from './operator.ts';
export type { RunningOperator, OperatorOptions } from './operator.ts';
export { parseBenchArgs, BenchUsageError, USAGE, PRESETS, SCENARIO_NAMES } from './options.ts';
export type { BenchOptions, ScenarioName } from './options.ts';
export { describeMachine } from './machine.ts';
export type { MachineInfo } from './machine.ts';
