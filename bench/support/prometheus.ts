/**
 * Reads Prometheus metrics (the operator's `/metrics`, the API server's through kubectl): samples by name and labels,
 * histogram buckets, the difference between two scrapes, and quantiles estimated from buckets
 * the way PromQL's `histogram_quantile` does (linear interpolation inside a bucket).
 * Pure functions apart from `scrape` and `scrapeApiServer`; unit-tested in prometheus.test.ts.
 * @module
 */
import { execFile } from 'node:child_process';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the text exposition format (comments and blank lines skipped). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[3]) {
      for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const v = m[4]!;
    out.push({ name: m[1]!, labels, value: v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v) });
  }
  return out;
}

const matches = (s: Sample, name: string, labels: Record<string, string>) =>
  s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);

/** Sum of every sample of `name` whose labels include `labels`. */
export function sumOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => matches(s, name, labels)).reduce((a, s) => a + s.value, 0);
}

export interface Histogram {
  /** Cumulative counts per upper bound, ascending, ending with +Inf. */
  buckets: { le: number; count: number }[];
  sum: number;
  count: number;
}

/** The histogram `name` (labels summed over those not given). */
export function histogram(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Histogram {
  const byLe = new Map<number, number>();
  for (const s of samples) {
    if (!matches(s, `${name}_bucket`, labels)) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  const buckets = [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({ le, count }));
  return { buckets, sum: sumOf(samples, `${name}_sum`, labels), count: sumOf(samples, `${name}_count`, labels) };
}

/** What was observed between two scrapes of the same histogram. */
export function histogramDelta(after: Histogram, before: Histogram): Histogram {
  const prev = new Map(before.buckets.map((b) => [b.le, b.count]));
  return {
    buckets: after.buckets.map((b) => ({ le: b.le, count: b.count - (prev.get(b.le) ?? 0) })),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/**
 * The q-quantile (0..1) estimated from cumulative buckets, like PromQL's histogram_quantile:
 * linear interpolation inside the bucket; the highest finite bound when it falls in +Inf;
 * NaN without observations.
 */
export function histogramQuantile(h: Histogram, q: number): number {
  const total = h.buckets.at(-1)?.count ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      const inBucket = b.count - prevCount;
      return inBucket <= 0 ? b.le : prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket;
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/** Share of observations at or below `le` (an exact bucket bound). */
export function fractionAtOrBelow(h: Histogram, le: number): number {
  const total = h.buckets.at(-1)?.count ?? 0;
  if (total <= 0) return Number.NaN;
  const b = h.buckets.find((x) => x.le === le);
  return b ? b.count / total : Number.NaN;
}

/** Fetches and parses `<base>/metrics`. */
export async function scrape(baseUrl: string): Promise<Sample[]> {
  const res = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${baseUrl}/metrics: ${res.status}`);
  return parseMetrics(await res.text());
}

/** The API server's own metrics, through kubectl as the admin user; undefined when it did not answer. */
export function scrapeApiServer(kubeconfigPath: string): Promise<Sample[] | undefined> {
  const args = ['--kubeconfig', kubeconfigPath, 'get', '--raw', '/metrics'];
  return new Promise((resolve) => {
    execFile('kubectl', args, { maxBuffer: 256 * 1024 * 1024, timeout: 30_000 }, (err, stdout) => resolve(err ? undefined : parseMetrics(stdout)));
  });
}

/** Sums histograms with the same buckets (e.g. one per verb). */
export function mergeHistograms(hs: readonly Histogram[]): Histogram {
  const byLe = new Map<number, number>();
  for (const h of hs) for (const b of h.buckets) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
  return {
    buckets: [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({ le, count })),
    sum: hs.reduce((a, h) => a + h.sum, 0),
    count: hs.reduce((a, h) => a + h.count, 0),
  };
}
