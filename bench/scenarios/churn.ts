/**
 * Churn: sustained spec changes (the image tag flips) on the converged fleet at increasing
 * rates. For each rate: the p99 wait in the operator's work queue over the step (from the
 * `workqueue_queue_duration_seconds` histogram, difference of two scrapes) and the time from
 * each change to `Ready` for its generation. A rate is kept up with when the queue's p99 wait
 * is ≤ 1 s and every change is Ready before the drain deadline; the first rate that is not
 * ends the climb.
 * @module
 */
import { GENERATION_ANNOTATION, MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import { IMAGE, IMAGE_TAGS } from '../support/fixtures.ts';
import { fractionAtOrBelow, histogram, histogramDelta, histogramQuantile, mergeHistograms, sumOf } from '../support/prometheus.ts';
import type { Sample } from '../support/prometheus.ts';
import { isDeploymentAvailable } from '../support/observer.ts';
import { auditMark, countRequests } from '../support/audit.ts';
import { OPERATOR_USER_AGENT } from '../support/operator.ts';
import { round, summarize } from '../support/stats.ts';
import type { Cell, Scenario } from './types.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const QUEUE_TARGET_SECONDS = 1;
const WRITE_VERBS = ['create', 'update', 'patch', 'delete'];

/** The operator's writes so far (its own client's count) and their latency histogram. */
function writesOf(samples: Sample[]) {
  return {
    count: sumOf(samples, 'rest_client_requests_total') - sumOf(samples, 'rest_client_requests_total', { method: 'GET' }),
    latency: mergeHistograms(WRITE_VERBS.map((verb) => histogram(samples, 'rest_client_request_duration_seconds', { verb }))),
  };
}

interface Step {
  rate: number;
  changes: number;
  achievedRate: number;
  queueP50: number;
  queueP99: number;
  queueWithin1s: number;
  readyP50Ms: number;
  readyP99Ms: number;
  readyMaxMs: number;
  updatedP50Ms: number;
  updatedP99Ms: number;
  rolloutP50Ms: number;
  rolloutP99Ms: number;
  lagP50Ms: number;
  lagP99Ms: number;
  writesPerChange: number;
  writeLatencyP99: number;
  notReady: number;
  /** The operator's requests in the step, by "verb resource", per change (audit log). */
  requestsPerChange: Record<string, number>;
  cpuShare: number;
  keptUp: boolean;
}

export const churn: Scenario = {
  name: 'churn',
  title: 'Churn',
  description:
    'Spec changes (the image tag flips between two values) are sent at a steady rate for each step, to Microservices of the converged fleet that have no change in flight. Queue wait is the operator\'s own workqueue_queue_duration_seconds histogram over the step (periodic checks included); time to Ready runs from the PATCH until the benchmark sees Ready=True for that generation, so it includes the rollout by kube-controller-manager and the pod simulator. A rate is kept up with when the p99 queue wait is at most 1 s and every change is Ready before the drain deadline.',
  async run(ctx) {
    const { session, options } = ctx;
    const fleet = await ctx.fleet();
    const names = fleet.names;
    let cursor = 0;
    const inFlight = new Map<string, number>(); // key → generation awaited
    const steps: Step[] = [];
    // When the Deployment was first seen rolled out for the generation a change produced.
    // When the Deployment was first seen updated for the generation a change produced (the
    // operator's part) and then fully rolled out (the control plane's part).
    type Rollout = { generation: number; updatedAt?: number; at?: number };
    const awaitingRollout = new Map<string, Rollout>();
    const stopWatching = fleet.deployments.onChange((c, at) => {
      const key = `${c.object.metadata.namespace}/${c.object.metadata.name}`;
      const w = awaitingRollout.get(key);
      if (!w || w.at !== undefined || c.type === 'delete') return;
      if (c.object.metadata.annotations?.[GENERATION_ANNOTATION] !== String(w.generation)) return;
      w.updatedAt ??= at;
      if (isDeploymentAvailable(c.object)) w.at = at;
    });
    const finished = new Map<string, Rollout>(); // `${key}@${generation}` → its rollout
    const drainMs = Math.max(60_000, options.churnStepSeconds * 4_000);
    for (const rate of options.churnRates) {
      const before = await fleet.operator.metrics();
      const mark = await auditMark(session.auditLogPath);
      const total = Math.max(1, Math.round(rate * options.churnStepSeconds));
      const changes: { key: string; generation: number; sentAt: number }[] = [];
      const pending: Promise<void>[] = [];
      session.log(`churn: ${rate} changes/s for ${options.churnStepSeconds} s (${total} changes)`);
      const tStart = performance.now();
      let skipped = 0;
      for (let k = 0; k < total; k++) {
        const due = tStart + (k * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        // Next Microservice without a change in flight.
        let name: string | undefined;
        for (let tries = 0; tries < names.length; tries++) {
          const candidate = names[cursor++ % names.length]!;
          const key = `${fleet.namespace}/${candidate}`;
          const awaited = inFlight.get(key);
          if (awaited !== undefined && fleet.microservices.readyAt(key, awaited) === undefined) continue;
          name = candidate;
          break;
        }
        if (!name) {
          skipped += 1;
          continue;
        }
        const key = `${fleet.namespace}/${name}`;
        const current = fleet.microservices.store.get(key);
        const image = current?.spec.container.image.endsWith(`:${IMAGE_TAGS[0]}`) ? `${IMAGE}:${IMAGE_TAGS[1]}` : `${IMAGE}:${IMAGE_TAGS[0]}`;
        inFlight.set(key, Number.MAX_SAFE_INTEGER); // reserved until the PATCH answers
        const sentAt = performance.now();
        pending.push(
          session.client.patch(MicroserviceKind, { namespace: fleet.namespace, name }, { type: 'merge', body: { spec: { container: { image } } } }).then((ms) => {
            const generation = ms.metadata.generation ?? 0;
            inFlight.set(key, generation);
            changes.push({ key, generation, sentAt });
            const prev = awaitingRollout.get(key);
            if (prev) finished.set(`${key}@${prev.generation}`, prev);
            awaitingRollout.set(key, { generation });
          }),
        );
      }
      await Promise.all(pending);
      const sendMs = performance.now() - tStart;
      const everyReady = () => changes.every((c) => fleet.microservices.readyAt(c.key, c.generation) !== undefined);
      try {
        await fleet.microservices.until(everyReady, drainMs, `${changes.length} changed Microservices Ready`);
      } catch {
        // reported as notReady below
      }
      const after = await fleet.operator.metrics();
      const q = histogramDelta(histogram(after, 'workqueue_queue_duration_seconds', { name: 'microservice' }), histogram(before, 'workqueue_queue_duration_seconds', { name: 'microservice' }));
      const latencies: number[] = [];
      const rollouts: number[] = [];
      const updates: number[] = [];
      const lags: number[] = [];
      let notReady = 0;
      for (const c of changes) {
        const at = fleet.microservices.readyAt(c.key, c.generation);
        if (at === undefined) notReady += 1;
        else latencies.push(at - c.sentAt);
        const w = awaitingRollout.get(c.key);
        const r = w?.generation === c.generation ? w : finished.get(`${c.key}@${c.generation}`);
        if (r?.updatedAt !== undefined) updates.push(r.updatedAt - c.sentAt);
        const rolled = r?.at;
        if (rolled !== undefined) {
          rollouts.push(rolled - c.sentAt);
          if (at !== undefined) lags.push(at - rolled);
        }
      }
      const audit = await countRequests(session.auditLogPath, mark, OPERATOR_USER_AGENT);
      const requestsPerChange = Object.fromEntries(Object.entries(audit.byVerb).filter(([k]) => !k.startsWith('watch')).map(([k, v]) => [k, changes.length ? v / changes.length : Number.NaN]));
      const writesBefore = writesOf(before);
      const writesAfter = writesOf(after);
      notReady += skipped;
      const s = summarize(latencies);
      const elapsed = performance.now() - tStart;
      const cpu = sumOf(after, 'process_cpu_seconds_total') - sumOf(before, 'process_cpu_seconds_total');
      const step: Step = {
        rate,
        changes: changes.length,
        achievedRate: changes.length / (sendMs / 1000),
        queueP50: histogramQuantile(q, 0.5),
        queueP99: histogramQuantile(q, 0.99),
        queueWithin1s: fractionAtOrBelow(q, QUEUE_TARGET_SECONDS),
        readyP50Ms: s.p50,
        readyP99Ms: s.p99,
        readyMaxMs: s.max,
        updatedP50Ms: summarize(updates).p50,
        updatedP99Ms: summarize(updates).p99,
        rolloutP50Ms: summarize(rollouts).p50,
        rolloutP99Ms: summarize(rollouts).p99,
        lagP50Ms: summarize(lags).p50,
        lagP99Ms: summarize(lags).p99,
        writesPerChange: changes.length ? (writesAfter.count - writesBefore.count) / changes.length : Number.NaN,
        writeLatencyP99: histogramQuantile(histogramDelta(writesAfter.latency, writesBefore.latency), 0.99),
        notReady,
        requestsPerChange,
        cpuShare: cpu / (elapsed / 1000),
        keptUp: false,
      };
      step.keptUp = step.queueP99 <= QUEUE_TARGET_SECONDS && notReady === 0;
      steps.push(step);
      session.log(`churn: ${rate}/s → queue p99 ${step.queueP99.toFixed(3)} s, Ready p50 ${(s.p50 / 1000).toFixed(2)} s p99 ${(s.p99 / 1000).toFixed(2)} s, not Ready ${notReady}${step.keptUp ? '' : ' — not kept up with'}`);
      if (!step.keptUp) break;
      await sleep(2_000);
    }
    stopWatching();
    const best = [...steps].reverse().find((s) => s.keptUp);
    // One column per rate: easier to read than sixteen columns.
    const metrics: [string, (s: Step) => Cell][] = [
      ['changes sent', (s) => s.changes],
      ['achieved rate (/s)', (s) => round(s.achievedRate, 1)],
      ['queue wait p50 (s)', (s) => round(s.queueP50, 3)],
      ['queue wait p99 (s), target ≤ 1', (s) => round(s.queueP99, 3)],
      ['queue waits ≤ 1 s (%)', (s) => round(s.queueWithin1s * 100, 1)],
      ['change → Ready p50 (s)', (s) => round(s.readyP50Ms / 1000, 2)],
      ['change → Ready p99 (s)', (s) => round(s.readyP99Ms / 1000, 2)],
      ['change → Deployment updated by the operator p50 (s)', (s) => round(s.updatedP50Ms / 1000, 2)],
      ['change → Deployment updated by the operator p99 (s)', (s) => round(s.updatedP99Ms / 1000, 2)],
      ['change → Deployment rolled out p50 (s)', (s) => round(s.rolloutP50Ms / 1000, 2)],
      ['operator lag after rollout p50 (s)', (s) => round(s.lagP50Ms / 1000, 2)],
      ['operator lag after rollout p99 (s)', (s) => round(s.lagP99Ms / 1000, 2)],
      ['operator writes per change', (s) => round(s.writesPerChange, 1)],
      ['operator write latency p99 (s)', (s) => round(s.writeLatencyP99, 3)],
      ['changes not Ready by the deadline', (s) => s.notReady],
      ['operator CPU (% of one core)', (s) => round(s.cpuShare * 100, 0)],
      ['kept up', (s) => (s.keptUp ? 'yes' : 'no')],
    ];
    return {
      headline: best
        ? `kept up with ${best.rate} spec changes/s${best === steps.at(-1) && steps.length === options.churnRates.length ? ' (the highest rate tried)' : ''}: queue p99 ${round(best.queueP99, 3)} s, change → Ready p50 ${round(best.readyP50Ms / 1000, 2)} s, p99 ${round(best.readyP99Ms / 1000, 2)} s`
        : `did not keep up with the lowest rate tried (${options.churnRates[0]}/s)`,
      figures: {
        microservices: names.length,
        stepSeconds: options.churnStepSeconds,
        ratesTried: steps.map((s) => s.rate).join(','),
        highestRateKeptUp: best?.rate ?? 0,
        allRatesKeptUp: best !== undefined && best === steps.at(-1) && steps.length === options.churnRates.length,
        readyP50SecondsAtBest: best ? round(best.readyP50Ms / 1000, 2) : null,
        readyP99SecondsAtBest: best ? round(best.readyP99Ms / 1000, 2) : null,
        queueP99SecondsAtBest: best ? round(best.queueP99, 3) : null,
        operatorLagP50SecondsAtBest: best ? round(best.lagP50Ms / 1000, 2) : null,
        operatorLagP99SecondsAtBest: best ? round(best.lagP99Ms / 1000, 2) : null,
        writesPerChangeAtBest: best ? round(best.writesPerChange, 1) : null,
      },
      tables: [
        {
          title: `Spec changes at increasing rates (fleet of ${names.length}, ${options.churnStepSeconds} s per rate)`,
          columns: ['spec changes per second', ...steps.map((s) => String(s.rate))],
          rows: metrics.map(([label, f]) => [label, ...steps.map(f)]),
        },
        {
          title: 'Operator requests per spec change, by verb and resource (audit log)',
          columns: ['request', ...steps.map((s) => `${s.rate}/s`)],
          rows: [...new Set(steps.flatMap((s) => Object.keys(s.requestsPerChange)))]
            .sort((a, b) => (steps[0]?.requestsPerChange[b] ?? 0) - (steps[0]?.requestsPerChange[a] ?? 0))
            .map((k) => [k, ...steps.map((s) => round(s.requestsPerChange[k] ?? 0, 2))]),
        },
      ],
      charts: [
        {
          title: 'Churn: latency against the rate of spec changes',
          xLabel: 'spec changes per second',
          yLabel: 'seconds',
          series: [
            { name: 'change → Ready p50', points: steps.map((s) => [s.rate, s.readyP50Ms / 1000] as [number, number]) },
            { name: 'change → Ready p99', points: steps.map((s) => [s.rate, s.readyP99Ms / 1000] as [number, number]) },
            { name: 'change → Deployment updated p50', points: steps.map((s) => [s.rate, s.updatedP50Ms / 1000] as [number, number]) },
            { name: 'change → Deployment rolled out p50', points: steps.map((s) => [s.rate, s.rolloutP50Ms / 1000] as [number, number]) },
            { name: 'queue wait p99', points: steps.map((s) => [s.rate, s.queueP99] as [number, number]) },
          ],
          threshold: { y: QUEUE_TARGET_SECONDS, label: 'queue p99 target 1 s' },
        },
      ],
      notes: [
        'Three segments of change → Ready: "Deployment updated by the operator" is when the benchmark first saw the Deployment stamped with the new generation (the operator\'s queue, its client-side rate limit and its PUT); "rolled out" is when that Deployment was fully available (kube-controller-manager and the pod simulator, which also wait on the API server); "operator lag" runs from then until Ready=True for that generation (the operator noticing, checking endpoints, writing status). "Operator writes per change" counts every write of the operator during the step (status, Deployment, Events) per spec change; with the client limit of the run, writes per change × rate shows how close a rate comes to the limit.',
        'Queue quantiles are estimated from histogram buckets (…, 0.5, 1, 2.5, … s) by linear interpolation, as PromQL\'s histogram_quantile does; "queue ≤ 1 s" is exact.',
        best && best === steps.at(-1) ? 'The highest rate tried was kept up with: the real limit is higher; try --churn-rates with larger values.' : '',
      ].filter(Boolean),
    };
  },
};
