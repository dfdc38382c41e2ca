/**
 * Draws chart panels (line charts: series of [x, y] points, an optional dashed threshold) into
 * one self-contained SVG document, two panels per row. No dependencies; pure; unit-tested.
 * @module
 */
import type { ChartPanel } from '../scenarios/types.ts';

const W = 600;
const H = 360;
const M = { left: 64, right: 16, top: 40, bottom: 84 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** About `count` round tick values covering [min, max]. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (max <= min) max = min + 1;
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  for (let v = Math.floor(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks.at(-1)! < max) ticks.push(Number((ticks.at(-1)! + step).toPrecision(12)));
  return ticks;
}

const fmt = (v: number) => (Math.abs(v) >= 10_000 ? `${Math.round(v / 1000)}k` : Number(v.toPrecision(4)).toString());

function panel(p: ChartPanel, ox: number, oy: number): string {
  const pts = p.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xs = pts.map(([x]) => x);
  const ys = pts.map(([, y]) => y).concat(p.threshold ? [p.threshold.y] : []);
  const xTicks = niceTicks(Math.min(0, ...xs), Math.max(...xs, 1));
  const yTicks = niceTicks(0, Math.max(...ys, 0) * 1.05 || 1);
  const [x0, x1] = [xTicks[0]!, xTicks.at(-1)!];
  const [y0, y1] = [yTicks[0]!, yTicks.at(-1)!];
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const sx = (x: number) => ox + M.left + ((x - x0) / (x1 - x0)) * pw;
  const sy = (y: number) => oy + M.top + ph - ((y - y0) / (y1 - y0)) * ph;
  const out: string[] = [];
  out.push(`<rect x="${ox}" y="${oy}" width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="${ox + W / 2}" y="${oy + 22}" text-anchor="middle" font-size="14" font-weight="bold">${esc(p.title)}</text>`);
  for (const t of yTicks) {
    out.push(`<line x1="${sx(x0)}" y1="${sy(t)}" x2="${sx(x1)}" y2="${sy(t)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${sx(x0) - 6}" y="${sy(t) + 4}" text-anchor="end" font-size="11">${fmt(t)}</text>`);
  }
  for (const t of xTicks) {
    out.push(`<line x1="${sx(t)}" y1="${sy(y0)}" x2="${sx(t)}" y2="${sy(y0) + 4}" stroke="#333"/>`);
    out.push(`<text x="${sx(t)}" y="${sy(y0) + 17}" text-anchor="middle" font-size="11">${fmt(t)}</text>`);
  }
  out.push(`<line x1="${sx(x0)}" y1="${sy(y0)}" x2="${sx(x1)}" y2="${sy(y0)}" stroke="#333"/>`);
  out.push(`<line x1="${sx(x0)}" y1="${sy(y0)}" x2="${sx(x0)}" y2="${sy(y1)}" stroke="#333"/>`);
  out.push(`<text x="${ox + M.left + pw / 2}" y="${oy + H - M.bottom + 34}" text-anchor="middle" font-size="12">${esc(p.xLabel)}</text>`);
  out.push(`<text transform="translate(${ox + 16},${oy + M.top + ph / 2}) rotate(-90)" text-anchor="middle" font-size="12">${esc(p.yLabel)}</text>`);
  if (p.threshold) {
    out.push(`<line x1="${sx(x0)}" y1="${sy(p.threshold.y)}" x2="${sx(x1)}" y2="${sy(p.threshold.y)}" stroke="#777" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${sx(x1) - 4}" y="${sy(p.threshold.y) - 5}" text-anchor="end" font-size="11" fill="#555">${esc(p.threshold.label)}</text>`);
  }
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const good = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (good.length > 1) out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${good.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}"/>`);
    if (good.length <= 30) for (const [x, y] of good) out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${color}"/>`);
    const lx = ox + M.left + (i % 2) * (pw / 2);
    const ly = oy + H - M.bottom + 52 + Math.floor(i / 2) * 16;
    out.push(`<line x1="${lx}" y1="${ly - 4}" x2="${lx + 18}" y2="${ly - 4}" stroke="${color}" stroke-width="3"/>`);
    out.push(`<text x="${lx + 24}" y="${ly}" font-size="11">${esc(s.name)}</text>`);
  });
  return out.join('\n');
}

/** One SVG with every panel; a small placeholder when there is none. */
export function renderChart(panels: readonly ChartPanel[], caption: string): string {
  const cols = panels.length > 1 ? 2 : 1;
  const rows = Math.max(1, Math.ceil(panels.length / cols));
  const width = cols * W;
  const height = rows * H + 28;
  const body = panels.map((p, i) => panel(p, (i % cols) * W, Math.floor(i / cols) * H)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    panels.length ? body : `<text x="20" y="40" font-size="14">no chart data in this run</text>`,
    `<text x="8" y="${height - 10}" font-size="11" fill="#555">${esc(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
