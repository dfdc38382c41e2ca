/**
 * Service creates (issue 17, goal 1): how many Services per second this control plane creates
 * with a cluster IP and without one (headless), with 1, 4 and 16 creates in flight, and what the
 * API server's own `IPAddress` creates took meanwhile.
 *
 * Why: every Microservice's Service gets a cluster IP, and kube-apiserver's ClusterIP allocator
 * holds one lock across its loopback `IPAddress` create, so these creates go through one at a
 * time however many clients send them. A cold start of N Microservices is then at least N of
 * those steps in a row, for Converge and for the plain client alike, and each step takes longer
 * when anything else runs on the machine's CPUs. This scenario measures that step on the
 * bench's own control plane with nothing else running: cluster-IP creates level off at the
 * lock's rate as more are sent at once, while headless ones keep getting faster; the time per
 * create at the highest concurrency is the step.
 *
 * Each measurement creates its Services in a namespace of its own, which is deleted (and waited
 * for) before the next, so that every one starts with the same addresses allocated. The
 * measurements run twice, in opposite order, and the table shows both.
 * @module
 */
import { ServiceKind } from '@converge/runtime';
import type { Service } from '@converge/runtime';
import { scrapeApiServer, sumOf } from '../support/prometheus.ts';
import type { Sample } from '../support/prometheus.ts';
import { round } from '../support/stats.ts';
import type { BenchContext, Cell, Scenario } from './types.ts';

/** Services created per measurement. */
export const SERVICES_PER_MEASUREMENT = 300;
export const IN_FLIGHT = [1, 4, 16] as const;
export type ServiceShape = 'cluster-ip' | 'headless';

export interface Measurement {
  shape: ServiceShape;
  inFlight: number;
  /** Which of the two passes (0: first, 1: the reverse order). */
  pass: number;
  perSecond: number;
  /** Mean time of one Service create, as the bench's client timed it. */
  meanCreateMs: number;
  /** The API server's own IPAddress creates in the same window (its metrics): count and mean time; null when a scrape failed. */
  ipAddressCreates: number | null;
  meanIpAddressCreateMs: number | null;
  /** The etcd write inside it, as the API server timed it (`etcd_request_duration_seconds`). */
  meanIpAddressEtcdMs: number | null;
}

/** The order of one pass: every shape at every concurrency, reversed on the second pass. */
export function measurementPlan(): { shape: ServiceShape; inFlight: number; pass: number }[] {
  const one = IN_FLIGHT.flatMap((inFlight) => (['cluster-ip', 'headless'] as const).map((shape) => ({ shape, inFlight })));
  return [...one.map((m) => ({ ...m, pass: 0 })), ...[...one].reverse().map((m) => ({ ...m, pass: 1 }))];
}

/** Creates per second of one shape at one concurrency, the mean of its passes; NaN when not measured. */
export function meanRate(ms: readonly Measurement[], shape: ServiceShape, inFlight: number): number {
  const xs = ms.filter((m) => m.shape === shape && m.inFlight === inFlight).map((m) => m.perSecond);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
}

/**
 * How much faster `inFlight` creates go than one at a time, per shape (the mean of the passes'
 * rates): a serialized step stays near 1 ×, an unserialized one grows with the concurrency
 * until the machine is busy.
 */
export function speedUps(ms: readonly Measurement[]): Record<ServiceShape, Record<number, number | null>> {
  const rate = (shape: ServiceShape, inFlight: number) => meanRate(ms, shape, inFlight);
  const out = { 'cluster-ip': {}, headless: {} } as Record<ServiceShape, Record<number, number | null>>;
  for (const shape of ['cluster-ip', 'headless'] as const) {
    for (const k of IN_FLIGHT) out[shape][k] = round(rate(shape, k) / rate(shape, 1), 2);
  }
  return out;
}

function service(name: string, namespace: string, shape: ServiceShape): Service {
  return {
    metadata: { name, namespace },
    spec: { ...(shape === 'headless' ? { clusterIP: 'None' } : {}), selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
  } as Service;
}

async function measure(ctx: BenchContext, shape: ServiceShape, inFlight: number, pass: number): Promise<Measurement> {
  const { session } = ctx;
  const ns = await session.createNamespace(`bench-svc-${shape}-${inFlight}-${pass}`);
  const ipCreates = (s: Sample[] | undefined) => ({
    count: s ? sumOf(s, 'apiserver_request_duration_seconds_count', { verb: 'POST', resource: 'ipaddresses' }) : Number.NaN,
    sum: s ? sumOf(s, 'apiserver_request_duration_seconds_sum', { verb: 'POST', resource: 'ipaddresses' }) : Number.NaN,
    etcdCount: s ? sumOf(s, 'etcd_request_duration_seconds_count', { operation: 'create', resource: 'ipaddresses' }) : Number.NaN,
    etcdSum: s ? sumOf(s, 'etcd_request_duration_seconds_sum', { operation: 'create', resource: 'ipaddresses' }) : Number.NaN,
  });
  const before = ipCreates(await scrapeApiServer(session.kubeconfigPath));
  let next = 0;
  let createMs = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < SERVICES_PER_MEASUREMENT) {
        const i = next++;
        const s = performance.now();
        await session.client.create(ServiceKind, service(`s${i}`, ns, shape));
        createMs += performance.now() - s;
      }
    }),
  );
  const elapsedMs = performance.now() - t0;
  const after = ipCreates(await scrapeApiServer(session.kubeconfigPath));
  await session.deleteNamespace(ns, { wait: true });
  const count = after.count - before.count;
  const etcdCount = after.etcdCount - before.etcdCount;
  return {
    shape,
    inFlight,
    pass,
    perSecond: round((SERVICES_PER_MEASUREMENT * 1000) / elapsedMs, 1) ?? Number.NaN,
    meanCreateMs: round(createMs / SERVICES_PER_MEASUREMENT, 1) ?? Number.NaN,
    ipAddressCreates: Number.isFinite(count) ? count : null,
    meanIpAddressCreateMs: count > 0 ? round(((after.sum - before.sum) * 1000) / count, 1) : null,
    meanIpAddressEtcdMs: etcdCount > 0 ? round(((after.etcdSum - before.etcdSum) * 1000) / etcdCount, 1) : null,
  };
}

export const serviceCreates: Scenario = {
  name: 'service-creates',
  title: 'Service creates: cluster IP against headless',
  description:
    `${SERVICES_PER_MEASUREMENT} Services created by the bench's own client (no client-side limit), with a cluster IP and headless (\`clusterIP: None\`), ${IN_FLIGHT.join(', ')} at a time, each measurement in a namespace of its own that is deleted before the next; two passes in opposite order. Nothing else runs. The API server's own IPAddress creates in each window, and the etcd write in each, come from its metrics (\`apiserver_request_duration_seconds\`, \`etcd_request_duration_seconds\`). A cluster-IP Service create waits on kube-apiserver's ClusterIP allocator, which holds one lock across that IPAddress create: cluster-IP creates level off at the lock's rate while headless ones keep getting faster, and the time per create at ${IN_FLIGHT.at(-1)} in flight is the lock's step on an idle machine, the step every cold start of Microservices takes once per Service, whichever client sends the creates.`,
  async run(ctx) {
    const results: Measurement[] = [];
    for (const m of measurementPlan()) {
      const r = await measure(ctx, m.shape, m.inFlight, m.pass);
      ctx.session.log(`service-creates: ${m.shape}, ${m.inFlight} in flight (pass ${m.pass + 1}): ${r.perSecond}/s, ${r.meanCreateMs} ms each; IPAddress creates ${r.ipAddressCreates}, ${r.meanIpAddressCreateMs ?? '—'} ms each`);
      results.push(r);
    }
    const ups = speedUps(results);
    const top = IN_FLIGHT.at(-1)!;
    const step = round(1000 / meanRate(results, 'cluster-ip', top), 1);
    const rows: Cell[][] = results.map((r) => [r.shape === 'cluster-ip' ? 'cluster IP' : 'headless', r.inFlight, r.pass + 1, r.perSecond, r.meanCreateMs, r.ipAddressCreates, r.meanIpAddressCreateMs, r.meanIpAddressEtcdMs]);
    const figures: Record<string, number | null> = {};
    for (const r of results) figures[`${r.shape}.inFlight${r.inFlight}.pass${r.pass + 1}.perSecond`] = r.perSecond;
    for (const shape of ['cluster-ip', 'headless'] as const) for (const k of IN_FLIGHT) figures[`${shape}.speedUp${k}`] = ups[shape][k] ?? null;
    figures['cluster-ip.stepMs'] = step;
    return {
      headline: `${top} in flight instead of 1: cluster-IP Service creates ${ups['cluster-ip'][top]} × as fast, headless ${ups.headless[top]} × (4 in flight: ${ups['cluster-ip'][4]} × and ${ups.headless[4]} ×); the allocator's step on an idle machine ≈ ${step} ms`,
      figures,
      tables: [
        {
          title: `${SERVICES_PER_MEASUREMENT} Service creates per row`,
          columns: ['Service', 'in flight', 'pass', 'creates per second', 'mean create (ms)', "API server's IPAddress creates", 'their mean time (ms)', 'of it, the etcd write (ms)'],
          rows,
        },
        {
          title: 'Creates per second, relative to one in flight (mean of the two passes)',
          columns: ['Service', ...IN_FLIGHT.map((k) => `${k} in flight`)],
          rows: (['cluster-ip', 'headless'] as const).map((shape) => [shape === 'cluster-ip' ? 'cluster IP' : 'headless', ...IN_FLIGHT.map((k) => ups[shape][k] ?? null)]),
        },
      ],
      charts: [],
      notes: [
        'Headless Services get no IPAddress, so their column of IPAddress creates is 0: the difference between the two rows of a concurrency is the allocator.',
        `The allocator's step: ${step} ms, the time per cluster-IP create at ${top} in flight (1 ÷ the mean rate of the two passes). The API server's own time for the IPAddress create is part of it; the rest is the loopback request around it and the allocator's count of the addresses in use.`,
      ],
    };
  },
};
