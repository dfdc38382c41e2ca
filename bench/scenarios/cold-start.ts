/**
 * Cold start: N Microservices exist before the operator starts; how long until all are
 * `ResourcesApplied`, all Deployments available (the simulated pods Ready) and all `Ready`?
 * Compared with the ceiling in the same run: a plain client doing the same writes with the same
 * concurrency and client rate limit and no operator logic (support/ceiling.ts), on its own
 * namespace, which is deleted (and waited for) before the operator's turn.
 * @module
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startChild } from '../support/child-process.ts';
import type { BenchChild } from '../support/child-process.ts';
import { createMicroservices } from '../support/fixtures.ts';
import { trackDeployments, trackMicroservices } from '../support/observer.ts';
import { auditMark, countRequests } from '../support/audit.ts';
import type { RequestCounts } from '../support/audit.ts';
import { ratio, round, seconds } from '../support/stats.ts';
import { awaitConvergence } from './fleet.ts';
import type { Convergence } from './fleet.ts';
import type { BenchContext, ChartSeries, Scenario } from './types.ts';

const CEILING = fileURLToPath(new URL('../support/ceiling.ts', import.meta.url));
export const CEILING_NAMESPACE = 'bench-ceiling';
export const CEILING_USER_AGENT = 'converge-bench-ceiling';

/** A convergence curve: after x seconds, y objects had reached the state. At most ~200 points. */
export function curve(name: string, sortedMs: number[]): ChartSeries {
  const finite = sortedMs.filter(Number.isFinite);
  const step = Math.max(1, Math.ceil(finite.length / 200));
  const points: [number, number][] = [[0, 0]];
  if (finite.length) points.push([finite[0]! / 1000, 0]);
  for (let i = step - 1; i < finite.length; i += step) points.push([finite[i]! / 1000, i + 1]);
  if (finite.length && points.at(-1)![1] !== finite.length) points.push([finite.at(-1)! / 1000, finite.length]);
  return { name, points };
}

/** Runs the ceiling client on `ns` (its Microservices already exist) and times it like the operator. */
async function runCeiling(ctx: BenchContext, ns: string): Promise<{ ceiling: Convergence; ceilingOut: { writes?: number; cpuMs?: number }; ceilingRequests: RequestCounts }> {
  const { session, options } = ctx;
  const n = options.microservices;
  const ms = await trackMicroservices(session.client, ns);
  const deployments = await trackDeployments(session.client, ns);
  let child: BenchChild | undefined;
  const progress = setInterval(() => session.log(`cold-start: ceiling: ${ms.appliedCount()}/${n} ResourcesApplied, ${deployments.availableCount()}/${n} Deployments available, ${ms.readyCount()}/${n} Ready`), 10_000);
  try {
    const mark = await auditMark(session.auditLogPath);
    session.log('cold-start: ceiling: running');
    const t0 = performance.now();
    const c = (child = startChild({
      name: 'ceiling',
      script: CEILING,
      args: ['--kubeconfig', session.kubeconfigPath, '--namespace', ns, '--workers', String(options.workers), '--qps', String(options.qps), '--burst', String(options.burst)],
      outDir: session.outDir,
    }));
    const ceiling = await Promise.race([
      awaitConvergence(ms, deployments, n, t0, 'ceiling'),
      c.exited.then(async (code) => {
        if (code === 0) return new Promise<never>(() => {}); // exited after its last write; the observers still decide
        throw new Error(`the ceiling client exited with ${code}; see ${c.logPath}`);
      }),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([c.exited, new Promise((r) => { timer = setTimeout(() => r('timeout'), 30_000); })]);
    clearTimeout(timer); // a bound not needed keeps nothing alive
    if (code !== 0) throw new Error(`the ceiling client did not exit cleanly (${String(code)}); see ${c.logPath}`);
    const ceilingOut = JSON.parse(readFileSync(c.logPath, 'utf8').trim().split('\n').filter((l) => l.startsWith('{"done"')).at(-1) ?? '{}') as { writes?: number; cpuMs?: number };
    const ceilingRequests = await countRequests(session.auditLogPath, mark, CEILING_USER_AGENT);
    return { ceiling, ceilingOut, ceilingRequests };
  } finally {
    clearInterval(progress);
    await child?.stop(5_000);
    await Promise.all([ms.stop(), deployments.stop()]);
  }
}

export const coldStart: Scenario = {
  name: 'cold-start',
  title: 'Cold start',
  description:
    'N Microservices exist before the operator starts. Times run from the spawn of the operator process (Node start-up and cache sync included) until every object is ResourcesApplied, every Deployment is available (2 simulated pods each) and every object is Ready. The ceiling is a plain client in its own process that does the same writes (status Accepted, create Deployment and Service, status ResourcesApplied, status Ready once available) with the same workers and client rate limit, and nothing else. The ceiling runs first, on its own namespace, which is deleted (and waited for) before the operator starts.',
  async run(ctx) {
    const { session, options } = ctx;
    const n = options.microservices;
    // 1. The ceiling, on its own namespace.
    const ns = await session.createNamespace(CEILING_NAMESPACE);
    session.log(`cold-start: ceiling: creating ${n} Microservices in ${ns}`);
    await createMicroservices(session.client, ns, n);
    const { ceiling, ceilingOut, ceilingRequests } = await runCeiling(ctx, ns);
    session.log(`cold-start: ceiling converged in ${(ceiling.readyMs / 1000).toFixed(1)} s; deleting its namespace`);
    // Both runs start from the same empty cluster: the ceiling's objects are garbage-collected
    // (and waited for) before the operator's turn. Leaving them in place saved a minute at
    // N = 1000, but the operator then ran second on a fuller cluster, and its ratio moved.
    const deletionMs = await session.deleteNamespace(ns, { wait: true });

    // 2. The operator, on the fleet namespace (the fleet stays for the next scenarios).
    const fleet = await ctx.fleet();
    const op = fleet.convergence;
    const opRequests = fleet.requestsToConvergence;
    const pods = n * 2;
    return {
      headline: `${n} Microservices: all ResourcesApplied in ${seconds(op.appliedMs)} s (${ratio(op.appliedMs, ceiling.appliedMs)} × ceiling), all Ready in ${seconds(op.readyMs)} s (${ratio(op.readyMs, ceiling.readyMs)} × ceiling); ${round(opRequests.writes / n)} writes per Microservice (ceiling ${round(ceilingRequests.writes / n)})`,
      figures: {
        microservices: n,
        pods,
        workers: options.workers,
        clientQps: options.qps,
        operatorAppliedSeconds: seconds(op.appliedMs),
        operatorDeploymentsAvailableSeconds: seconds(op.deploymentsAvailableMs),
        operatorReadySeconds: seconds(op.readyMs),
        ceilingAppliedSeconds: seconds(ceiling.appliedMs),
        ceilingDeploymentsAvailableSeconds: seconds(ceiling.deploymentsAvailableMs),
        ceilingReadySeconds: seconds(ceiling.readyMs),
        appliedRatio: ratio(op.appliedMs, ceiling.appliedMs),
        readyRatio: ratio(op.readyMs, ceiling.readyMs),
        operatorWrites: opRequests.writes,
        ceilingWrites: ceilingRequests.writes,
        operatorWritesPerMicroservice: round(opRequests.writes / n),
        ceilingWritesPerMicroservice: round(ceilingRequests.writes / n),
        operatorReads: opRequests.reads,
        operatorReconciles: fleet.reconcilesToConvergence,
        operatorCpuSeconds: seconds(fleet.memoryAtConvergence.cpuMs),
        ceilingCpuSeconds: ceilingOut.cpuMs === undefined ? null : seconds(ceilingOut.cpuMs),
        ceilingNamespaceDeletionSeconds: seconds(deletionMs),
      },
      tables: [
        {
          title: `Cold start of ${n} Microservices (${pods} simulated pods), ${options.workers} workers, ${options.qps > 0 ? `client limit ${options.qps}/s burst ${options.burst}` : 'no client-side limit'}`,
          columns: ['', 'operator', 'ceiling', 'operator ÷ ceiling'],
          rows: [
            ['all ResourcesApplied (s)', seconds(op.appliedMs), seconds(ceiling.appliedMs), ratio(op.appliedMs, ceiling.appliedMs)],
            ['all Deployments available (s)', seconds(op.deploymentsAvailableMs), seconds(ceiling.deploymentsAvailableMs), ratio(op.deploymentsAvailableMs, ceiling.deploymentsAvailableMs)],
            ['all Ready (s)', seconds(op.readyMs), seconds(ceiling.readyMs), ratio(op.readyMs, ceiling.readyMs)],
            ['API writes', opRequests.writes, ceilingRequests.writes, ratio(opRequests.writes, ceilingRequests.writes)],
            ['API reads (get/list)', opRequests.reads, ceilingRequests.reads, null],
            ['CPU time of the process (s)', seconds(fleet.memoryAtConvergence.cpuMs), ceilingOut.cpuMs === undefined ? null : seconds(ceilingOut.cpuMs), ceilingOut.cpuMs ? ratio(fleet.memoryAtConvergence.cpuMs, ceilingOut.cpuMs) : null],
          ],
        },
        {
          title: 'Operator writes during cold start, by verb and resource',
          columns: ['request', 'count', 'per Microservice'],
          rows: Object.entries(opRequests.byVerb)
            .filter(([k]) => !k.startsWith('watch') && !k.startsWith('list') && !k.startsWith('get'))
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => [k, v, round(v / n)]),
        },
      ],
      charts: [
        {
          title: `Cold start: objects converged over time (N = ${n})`,
          xLabel: 'seconds since start',
          yLabel: 'Microservices',
          series: [
            curve('operator ResourcesApplied', op.appliedTimes),
            curve('operator Ready', op.readyTimes),
            curve('ceiling ResourcesApplied', ceiling.appliedTimes),
            curve('ceiling Ready', ceiling.readyTimes),
          ],
        },
      ],
      notes: [
        `The ceiling ran first, on its own namespace, which was then deleted; its garbage collection (${n} Deployments, ReplicaSets, Services, ${pods} pods) took ${seconds(deletionMs)} s and finished before the operator started.`,
        `Both runs are bound by the client-side rate limit (${options.qps} requests/s, burst ${options.burst}: the benchmark's default (the operator's is no limit, ADR 0026)); run with --qps 0 to lift it for both and see the API server's own bound.`,
        'Ready depends on the control plane: kube-controller-manager creates ReplicaSets and pods, the simulator binds them and marks them Ready, the EndpointSlice controller publishes endpoints. The "all Deployments available" row shows that part; both runs wait on it equally.',
      ],
    };
  },
};
