/**
 * Memory: heap and RSS of an operator process against the number of objects in its cache.
 * A dedicated operator watches namespace `bench-memory`; Microservices are added in steps, and
 * at each step, once everything is converged (so every cached object has its final size), the
 * process is asked for a full GC and its memory (support/memory-probe.mjs). Each Microservice
 * puts four objects in the cache: itself, its Deployment, its Service and its EndpointSlice.
 * @module
 */
import { EndpointSliceKind, ServiceKind } from '@converge/runtime';
import { createMicroservices } from '../support/fixtures.ts';
import { observe, trackDeployments, trackMicroservices } from '../support/observer.ts';
import { startOperator } from '../support/operator.ts';
import { sumOf } from '../support/prometheus.ts';
import { round } from '../support/stats.ts';
import { convergenceTimeoutMs } from './fleet.ts';
import type { Scenario } from './types.ts';

const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const MEMORY_NAMESPACE = 'bench-memory';
/** How long the empty operator is left alone before its settled idle reading: half the idle window, at most 30 s. */
const idleSettleMs = (idleSeconds: number) => Math.min(30, idleSeconds / 2) * 1000;

interface Point {
  microservices: number;
  objects: number;
  heapUsed: number;
  /** Heap used without code and bytecode: what the cached objects themselves hold. */
  dataHeapUsed: number;
  rss: number;
  heapTotal: number;
  external: number;
}

export const memory: Scenario = {
  name: 'memory',
  title: 'Memory',
  description:
    'A dedicated operator (Microservice controller only, one replica per Deployment so that fewer pods are simulated) watches its own namespace. Microservices are added in steps; at each step, once every object is Ready, the operator runs a full garbage collection and reports heap and RSS. Cached objects = Microservices + Deployments + Services + EndpointSlices in the namespace, counted by the benchmark. Bytes per cached object = heap growth over the empty-cache baseline ÷ cached objects.',
  async run(ctx) {
    const { session, options } = ctx;
    const ns = await session.createNamespace(MEMORY_NAMESPACE);
    const ms = await trackMicroservices(session.client, ns);
    const deployments = await trackDeployments(session.client, ns);
    const services = await observe(session.client, ServiceKind, ns);
    const slices = await observe(session.client, EndpointSliceKind, ns);
    const operator = await startOperator({
      name: 'operator-memory',
      kubeconfigPath: session.kubeconfigPath,
      namespace: ns,
      operators: ['microservice'],
      config: {
        microservice: { resyncPeriodSeconds: options.resyncSeconds, maxConcurrentReconciles: options.workers, defaults: { replicas: 1 } },
        // Memory does not depend on the client's rate limit; a higher one fills the cache sooner.
        client: { qps: options.qps === 0 ? 0 : Math.max(options.qps, 200), burst: Math.max(options.burst, 400) },
      },
      outDir: session.outDir,
      ...(session.profileDir ? { profileDir: session.profileDir } : {}),
    });
    const cached = () => ms.store.size + deployments.store.size + services.store.size + slices.store.size;
    try {
      await sleep(3_000); // caches synced and the process settled
      const base = await operator.memory();
      // An operator that has been idle for a while: V8's memory reducer returns pages some
      // seconds after the last allocation burst, so the reading 3 s after start is not the one a
      // long-idle operator shows. Both are reported.
      await sleep(idleSettleMs(options.idleSeconds));
      const settled = await operator.memory();
      const points: Point[] = [{ microservices: 0, objects: cached(), heapUsed: base.heapUsed, dataHeapUsed: base.dataHeapUsed, rss: base.rss, heapTotal: base.heapTotal, external: base.external }];
      let created = 0;
      for (const target of options.memoryObjects) {
        const want = Math.max(1, Math.ceil(target / 4));
        if (want > created) {
          session.log(`memory: ${want} Microservices (≈ ${want * 4} cached objects)`);
          await createMicroservices(session.client, ns, want - created, { from: created });
          created = want;
        }
        const timeout = convergenceTimeoutMs(want);
        await ms.until(() => ms.readyCount() >= created, timeout, `${created} Microservices Ready (memory)`);
        await slices.until(() => slices.store.size >= created, timeout, `${created} EndpointSlices`);
        // The operator's queue is empty and stays so for a moment: nothing in flight.
        for (let quiet = 0; quiet < 3; ) {
          await sleep(1_000);
          quiet = sumOf(await operator.metrics(), 'workqueue_depth') === 0 ? quiet + 1 : 0;
        }
        const m = await operator.memory();
        points.push({ microservices: created, objects: cached(), heapUsed: m.heapUsed, dataHeapUsed: m.dataHeapUsed, rss: m.rss, heapTotal: m.heapTotal, external: m.external });
        session.log(`memory: ${cached()} cached objects → heap ${(m.heapUsed / MiB).toFixed(1)} MiB, RSS ${(m.rss / MiB).toFixed(1)} MiB`);
      }
      const b = points[0]!;
      const last = points.at(-1)!;
      const first = points[1];
      // Heap growth per cached object over the empty cache, of all the heap or of its data alone
      // (without V8's code and bytecode: functions compiled or optimized on first use between two
      // readings are not a cost of the objects cached in between).
      const growth = (from: Point, to: Point, heap: 'heapUsed' | 'dataHeapUsed') => (to.objects > from.objects ? (to[heap] - from[heap]) / (to.objects - from.objects) : Number.NaN);
      const perObject = (p: Point) => growth(b, p, 'heapUsed');
      const dataPerObject = (p: Point) => growth(b, p, 'dataHeapUsed');
      // Between the first and last measured steps, free of start-up allocations.
      const slope = first ? growth(first, last, 'heapUsed') : Number.NaN;
      const dataSlope = first ? growth(first, last, 'dataHeapUsed') : Number.NaN;
      return {
        headline: `${last.objects} cached objects: heap ${round(last.heapUsed / MiB, 1)} MiB, RSS ${round(last.rss / MiB, 1)} MiB; ${round(perObject(last), 0)} heap bytes per cached object${Number.isFinite(slope) ? ` (marginal ${round(slope, 0)})` : ''}`,
        figures: {
          baselineHeapMiB: round(b.heapUsed / MiB, 1),
          baselineRssMiB: round(b.rss / MiB, 1),
          idleSettledRssMiB: round(settled.rss / MiB, 1),
          idleSettledHeapMiB: round(settled.heapUsed / MiB, 1),
          maxCachedObjects: last.objects,
          heapMiBAtMax: round(last.heapUsed / MiB, 1),
          rssMiBAtMax: round(last.rss / MiB, 1),
          heapBytesPerCachedObject: round(perObject(last), 0),
          heapBytesPerCachedObjectMarginal: round(slope, 0),
          dataHeapBytesPerCachedObject: round(dataPerObject(last), 0),
          dataHeapBytesPerCachedObjectMarginal: round(dataSlope, 0),
        },
        tables: [
          {
            title: 'Operator memory after a full GC, against cached objects',
            columns: ['Microservices', 'cached objects', 'heap used (MiB)', 'of it data (MiB)', 'heap total (MiB)', 'RSS (MiB)', 'heap bytes per cached object', 'data heap bytes per cached object'],
            rows: points.map((p) => [
              p.microservices,
              p.objects,
              round(p.heapUsed / MiB, 1),
              round(p.dataHeapUsed / MiB, 1),
              round(p.heapTotal / MiB, 1),
              round(p.rss / MiB, 1),
              p === b ? null : round(perObject(p), 0),
              p === b ? null : round(dataPerObject(p), 0),
            ]),
          },
        ],
        charts: [
          {
            title: 'Memory: operator heap and RSS against cached objects',
            xLabel: 'cached objects',
            yLabel: 'MiB',
            series: [
              { name: 'heap used (after GC)', points: points.map((p) => [p.objects, p.heapUsed / MiB] as [number, number]) },
              { name: 'RSS', points: points.map((p) => [p.objects, p.rss / MiB] as [number, number]) },
            ],
          },
        ],
        notes: [
          `Idle for ${idleSettleMs(options.idleSeconds) / 1000} s more with the empty cache (before the first Microservice): RSS ${round(settled.rss / MiB, 1)} MiB (${round(settled.rss / 1e6, 1)} MB), heap ${round(settled.heapUsed / MiB, 1)} MiB; the first row is read 3 s after start.`,
          Number.isFinite(slope) ? `Marginal cost between the first and last step: ${round(slope, 0)} heap bytes per cached object (${round(dataSlope, 0)} without code and bytecode).` : '',
          'Data heap: the heap without code and bytecode (code_space, trusted spaces), the figure the memory gate in `npm test` holds to 2 KiB per object.',
          'RSS includes the V8 heap reserve and native memory that the GC does not return to the OS at once; heap used is the figure that scales with the cache.',
        ].filter(Boolean),
      };
    } finally {
      await operator.stop();
      await Promise.all([ms.stop(), deployments.stop(), services.stop(), slices.stop()]);
    }
  },
};
