/**
 * Idle cost: after convergence, with the periodic check on, how many API requests does the
 * operator make per minute? Counted by the API server (audit log, filtered by the operator's
 * User-Agent) and cross-checked with the operator's own `rest_client_requests_total`. The target
 * is zero writes and zero reads that bypass the cache (get/list); watches are reported apart.
 * @module
 */
import { auditMark, countRequests } from '../support/audit.ts';
import { OPERATOR_USER_AGENT } from '../support/operator.ts';
import { sumOf } from '../support/prometheus.ts';
import { round } from '../support/stats.ts';
import type { Scenario } from './types.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const idleCost: Scenario = {
  name: 'idle-cost',
  title: 'Idle cost',
  description:
    'After the fleet has converged, the operator is left alone for the idle window with its periodic check on. Requests are counted by the API server from the audit log (User-Agent converge-operator): writes, reads that bypass the cache (get, list) and watches opened; the operator\'s reconciles and CPU time over the same window come from its /metrics and process.',
  async run(ctx) {
    const { session, options } = ctx;
    const fleet = await ctx.fleet();
    const n = fleet.names.length;
    await sleep(3_000); // the last status writes of the previous scenario settle
    const before = await fleet.operator.metrics();
    const cpuBefore = (await fleet.operator.memory()).cpuMs;
    const mark = await auditMark(session.auditLogPath);
    const t0 = performance.now();
    session.log(`idle-cost: watching the converged fleet for ${options.idleSeconds} s`);
    await sleep(options.idleSeconds * 1000);
    const windowMs = performance.now() - t0;
    const counts = await countRequests(session.auditLogPath, mark, OPERATOR_USER_AGENT);
    const after = await fleet.operator.metrics();
    const memoryAfter = await fleet.operator.memory();
    const cpuAfter = memoryAfter.cpuMs;
    const mib = (bytes: number) => round(bytes / 2 ** 20, 1);
    const perMinute = (x: number) => round((x * 60_000) / windowMs, 2);
    const reconciles = sumOf(after, 'controller_runtime_reconcile_total') - sumOf(before, 'controller_runtime_reconcile_total');
    const clientRequests = sumOf(after, 'rest_client_requests_total') - sumOf(before, 'rest_client_requests_total');
    return {
      headline: `${n} converged Microservices: ${perMinute(counts.writes)} writes/min, ${perMinute(counts.reads)} cache-bypassing reads/min, ${perMinute(counts.watches)} watches opened/min, ${reconciles} periodic checks in ${round(windowMs / 1000, 0)} s; target ${counts.writes === 0 && counts.reads === 0 ? 'met' : 'NOT met'}`,
      figures: {
        microservices: n,
        windowSeconds: round(windowMs / 1000, 1),
        resyncSeconds: options.resyncSeconds,
        reconciles,
        periodicChecksPerObject: round(reconciles / n, 1),
        writesPerMinute: perMinute(counts.writes),
        cacheBypassingReadsPerMinute: perMinute(counts.reads),
        watchesOpenedPerMinute: perMinute(counts.watches),
        requestsPerMinute: perMinute(counts.total),
        clientCountedRequests: clientRequests,
        cpuSecondsPerMinute: round(((cpuAfter - cpuBefore) / windowMs) * 60, 3),
        cpuShareOfOneCore: round((cpuAfter - cpuBefore) / windowMs, 4),
        targetMet: counts.writes === 0 && counts.reads === 0,
        rssMiBAfterIdle: mib(memoryAfter.rss),
        heapUsedMiBAfterIdle: mib(memoryAfter.heapUsed),
      },
      tables: [
        {
          title: `Idle operator: ${n} converged Microservices, periodic check every ${options.resyncSeconds} s, ${round(windowMs / 1000, 0)} s window`,
          columns: ['', 'in the window', 'per minute'],
          rows: [
            ['reconciles (periodic checks)', reconciles, perMinute(reconciles)],
            ['API writes (target 0)', counts.writes, perMinute(counts.writes)],
            ['reads bypassing the cache: get/list (target 0)', counts.reads, perMinute(counts.reads)],
            ['watches opened', counts.watches, perMinute(counts.watches)],
            ['all requests seen by the API server', counts.total, perMinute(counts.total)],
            ['requests counted by the operator (rest_client_requests_total)', clientRequests, perMinute(clientRequests)],
            ['operator CPU time (s)', round((cpuAfter - cpuBefore) / 1000, 2), round(((cpuAfter - cpuBefore) / windowMs) * 60, 2)],
            ['operator RSS / heap used at the end, after a full GC (MiB)', `${mib(memoryAfter.rss)} / ${mib(memoryAfter.heapUsed)}`, ''],
          ],
        },
        ...(counts.total > 0
          ? [{ title: 'Idle requests by verb and resource', columns: ['request', 'count'], rows: Object.entries(counts.byVerb).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v]) }]
          : []),
      ],
      charts: [],
      notes: [
        'The two CPU snapshots force a garbage collection in the operator (memory probe); that work is included in the CPU time.',
      ],
    };
  },
};
