/**
 * The fleet: N Microservices in namespace `bench-fleet` that exist before their operator starts,
 * the operator (`converge run --operators microservice --namespace bench-fleet`) in a child
 * process, and the benchmark's observers of Microservices, Deployments and Services.
 *
 * Starting the fleet *is* the cold-start measurement (`convergence`): times are counted from
 * the operator's spawn. The cold-start, idle-cost, repair and churn scenarios share one fleet,
 * in that order; `stop()` stops the operator (writing its CPU profile with --profile) and the
 * observers, and leaves the objects in place.
 * @module
 */
import type { Service } from '@converge/runtime';
import { ServiceKind } from '@converge/runtime';
import { createMicroservices } from '../support/fixtures.ts';
import { observe, trackDeployments, trackMicroservices } from '../support/observer.ts';
import type { DeploymentTracker, MicroserviceTracker, Observed } from '../support/observer.ts';
import { startOperator } from '../support/operator.ts';
import type { RunningOperator } from '../support/operator.ts';
import type { MemorySnapshot } from '../support/child-process.ts';
import type { Session } from '../support/session.ts';
import { auditMark, countRequests } from '../support/audit.ts';
import type { RequestCounts } from '../support/audit.ts';
import { OPERATOR_USER_AGENT } from '../support/operator.ts';
import { sumOf } from '../support/prometheus.ts';
import type { BenchOptions } from '../support/options.ts';

export const FLEET_NAMESPACE = 'bench-fleet';

export interface Convergence {
  /** ms from start until every object was ResourcesApplied, every Deployment available, every object Ready. */
  appliedMs: number;
  deploymentsAvailableMs: number;
  readyMs: number;
  /** Sorted ms offsets at which each object became ResourcesApplied / Ready (convergence curves). */
  appliedTimes: number[];
  readyTimes: number[];
}

export interface Fleet {
  readonly namespace: string;
  readonly names: string[];
  readonly operator: RunningOperator;
  readonly microservices: MicroserviceTracker;
  readonly deployments: DeploymentTracker;
  readonly services: Observed<Service>;
  readonly convergence: Convergence;
  /** The operator's memory and CPU right after convergence. */
  readonly memoryAtConvergence: MemorySnapshot;
  /** The operator's API requests from its start to convergence (audit log). */
  readonly requestsToConvergence: RequestCounts;
  /** Reconciles from its start to convergence. */
  readonly reconcilesToConvergence: number;
  stop(): Promise<void>;
}

/** How long a convergence may take before the benchmark gives up. */
export function convergenceTimeoutMs(n: number): number {
  return 180_000 + n * 600;
}

/** Waits for n ResourcesApplied, n available Deployments and n Ready, timing each from t0. */
export async function awaitConvergence(ms: MicroserviceTracker, deployments: DeploymentTracker, n: number, t0: number, what: string): Promise<Convergence> {
  const timeout = convergenceTimeoutMs(n);
  const applied = ms.until(() => ms.appliedCount() >= n, timeout, `${what}: ${n} ResourcesApplied`);
  const available = deployments.until(() => deployments.availableCount() >= n, timeout, `${what}: ${n} Deployments available`);
  const ready = ms.until(() => ms.readyCount() >= n, timeout, `${what}: ${n} Ready`);
  const [a, d, r] = await Promise.all([applied, available, ready]);
  const times = [...ms.times.values()];
  return {
    appliedMs: a - t0,
    deploymentsAvailableMs: d - t0,
    readyMs: r - t0,
    appliedTimes: times.map((t) => (t.appliedAt ?? Number.NaN) - t0).sort((x, y) => x - y),
    readyTimes: times.map((t) => (t.readyAt ?? Number.NaN) - t0).sort((x, y) => x - y),
  };
}

/** The operator configuration shared by the fleet scenarios (and mirrored by the ceiling). */
export function fleetOperatorConfig(options: BenchOptions): Record<string, unknown> {
  return {
    microservice: { resyncPeriodSeconds: options.resyncSeconds, maxConcurrentReconciles: options.workers },
    client: { qps: options.qps, burst: options.burst },
  };
}

export async function startFleet(session: Session, options: BenchOptions): Promise<Fleet> {
  const n = options.microservices;
  const ns = await session.createNamespace(FLEET_NAMESPACE);
  session.log(`fleet: creating ${n} Microservices in ${ns}`);
  const names = await createMicroservices(session.client, ns, n);
  const microservices = await trackMicroservices(session.client, ns);
  const deployments = await trackDeployments(session.client, ns);
  const services = await observe(session.client, ServiceKind, ns);
  session.log(`fleet: starting the operator`);
  const mark = await auditMark(session.auditLogPath);
  const t0 = performance.now();
  const operator = await startOperator({
    name: 'operator-fleet',
    kubeconfigPath: session.kubeconfigPath,
    namespace: ns,
    operators: ['microservice'],
    config: fleetOperatorConfig(options),
    outDir: session.outDir,
    ...(session.profileDir ? { profileDir: session.profileDir } : {}),
  });
  const progress = setInterval(() => session.log(`fleet: ${microservices.appliedCount()}/${n} ResourcesApplied, ${deployments.availableCount()}/${n} Deployments available, ${microservices.readyCount()}/${n} Ready`), 10_000);
  let convergence: Convergence;
  try {
    convergence = await awaitConvergence(microservices, deployments, n, t0, 'operator');
  } catch (err) {
    await operator.stop(5_000);
    await Promise.all([microservices.stop(), deployments.stop(), services.stop()]);
    throw err;
  } finally {
    clearInterval(progress);
  }
  const memoryAtConvergence = await operator.memory();
  const requestsToConvergence = await countRequests(session.auditLogPath, mark, OPERATOR_USER_AGENT);
  const reconcilesToConvergence = sumOf(await operator.metrics(), 'controller_runtime_reconcile_total');
  session.log(`fleet: converged in ${(convergence.readyMs / 1000).toFixed(1)} s`);
  let stopped: Promise<void> | undefined;
  return {
    namespace: ns,
    names,
    operator,
    microservices,
    deployments,
    services,
    convergence,
    memoryAtConvergence,
    requestsToConvergence,
    reconcilesToConvergence,
    stop() {
      stopped ??= (async () => {
        await operator.stop();
        await Promise.all([microservices.stop(), deployments.stop(), services.stop()]);
      })();
      return stopped;
    },
  };
}
