/**
 * The step model of a cold start (issue 17, goal 1): a straight line through the compare runs,
 * time to all ResourcesApplied against the API server's mean time for one `IPAddress` create in
 * the same window. Pure: no I/O.
 *
 * Why that line: every Microservice's Service gets a cluster IP, and kube-apiserver's ClusterIP
 * allocator holds one lock across its loopback `IPAddress` create (the `service-creates`
 * scenario measures it), so a cold start of N Microservices takes its start-up plus N of those
 * steps in a row, whichever client sends the creates. If that is all there is, every run lies
 * on one line whatever the contender, and a contender that spent time of its own off that path
 * (a slow reconcile, a wait in its queue) would lie above it. Each contender's median distance
 * from the line says which.
 *
 * What a caller can rely on: `fitStepModel` needs at least three runs with different step times
 * (otherwise undefined); residuals are seconds, positive above the line.
 * @module
 */
import { median, round } from '../support/stats.ts';

export interface StepPoint {
  /** The contender's name (`converge`, `minimal-client`, …). */
  contender: string;
  appliedSeconds: number;
  /** The API server's mean time for an IPAddress create between the contender's start and all ResourcesApplied. */
  ipAddressCreateMs: number;
}

export interface StepModel {
  runs: number;
  interceptSeconds: number;
  secondsPerMs: number;
  /** Pearson's correlation of the two. */
  r: number;
  /** Per contender: how many runs, and their median distance from the line (s). */
  byContender: Record<string, { runs: number; medianResidualSeconds: number }>;
}

/** Least squares of `appliedSeconds` on `ipAddressCreateMs`; undefined for fewer than 3 usable runs or no spread. */
export function fitStepModel(points: readonly StepPoint[]): StepModel | undefined {
  const ps = points.filter((p) => Number.isFinite(p.appliedSeconds) && Number.isFinite(p.ipAddressCreateMs));
  if (ps.length < 3) return undefined;
  const n = ps.length;
  const mx = ps.reduce((a, p) => a + p.ipAddressCreateMs, 0) / n;
  const my = ps.reduce((a, p) => a + p.appliedSeconds, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const p of ps) {
    sxy += (p.ipAddressCreateMs - mx) * (p.appliedSeconds - my);
    sxx += (p.ipAddressCreateMs - mx) ** 2;
    syy += (p.appliedSeconds - my) ** 2;
  }
  if (sxx === 0 || syy === 0) return undefined;
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  const byContender: StepModel['byContender'] = {};
  for (const c of [...new Set(ps.map((p) => p.contender))]) {
    const mine = ps.filter((p) => p.contender === c);
    byContender[c] = { runs: mine.length, medianResidualSeconds: median(mine.map((p) => p.appliedSeconds - (intercept + slope * p.ipAddressCreateMs))) };
  }
  return { runs: n, interceptSeconds: intercept, secondsPerMs: slope, r: sxy / Math.sqrt(sxx * syy), byContender };
}

/**
 * The runs of one setting as a compare report's figures keep them
 * (`<setting>.<contender>.appliedSecondsByRound`, `<setting>.<contender>.apiServerByRound`),
 * so that reports written before this model can be read again. Runs without an IPAddress time
 * are left out.
 */
export function stepPointsFromFigures(figures: Record<string, unknown>, setting: string): StepPoint[] {
  const points: StepPoint[] = [];
  const prefix = `${setting}.`;
  for (const key of Object.keys(figures)) {
    if (!key.startsWith(prefix) || !key.endsWith('.appliedSecondsByRound')) continue;
    const contender = key.slice(prefix.length, -'.appliedSecondsByRound'.length);
    // Failed runs appear as "failed" in the times and not at all in the API server's figures.
    const times = String(figures[key]).split(',').map((x) => x.trim()).filter((x) => x !== 'failed').map(Number);
    const api = String(figures[`${prefix}${contender}.apiServerByRound`] ?? '').split(' | ').filter(Boolean);
    if (api.length !== times.length) continue; // cannot pair them safely
    api.forEach((a, i) => {
      const m = /POST ipaddresses ([\d.]+) ms/.exec(a);
      if (m) points.push({ contender, appliedSeconds: times[i]!, ipAddressCreateMs: Number(m[1]) });
    });
  }
  return points;
}

/** One sentence for a report, naming contenders by their titles. */
export function stepModelNote(model: StepModel, microservices: number, title: (contender: string) => string): string {
  const per = model.secondsPerMs * 1000 / microservices;
  const distances = Object.entries(model.byContender)
    .map(([c, v]) => `${title(c)} ${signed(v.medianResidualSeconds)} s (${v.runs} runs)`)
    .join(', ');
  return (
    `Step model (bench/scenarios/step-model.ts): over these ${model.runs} runs, all ResourcesApplied ≈ ${round(model.interceptSeconds, 1)} s + ${round(model.secondsPerMs, 3)} s per ms of the API server's mean IPAddress create (r = ${round(model.r, 3)}), ` +
    `i.e. ${round(per, 2)} ms of the run per Microservice for each ms of that create: the ClusterIP allocator's locked step, one per Service, whichever client sends it. ` +
    `Median distance from the line: ${distances}; a contender's own time off that path would put it above the line.`
  );
}

const signed = (x: number): string => {
  const r = round(x, 2) ?? 0;
  return r === 0 ? '0' : `${r > 0 ? '+' : '−'}${Math.abs(r)}`;
};
