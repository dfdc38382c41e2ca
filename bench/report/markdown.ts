/**
 * Renders a benchmark report as markdown: caveat, machine, summary, then one section per
 * scenario with its tables and notes. Pure; unit-tested.
 * @module
 */
import type { Cell, Table } from '../scenarios/types.ts';
import type { Report } from './report-types.ts';

const cell = (c: Cell | undefined) => (c === null || c === undefined ? '—' : String(c).replace(/\|/g, '\\|').replace(/\n/g, ' '));

export function markdownTable(t: Pick<Table, 'columns' | 'rows'>): string {
  const numeric = t.columns.map((_, i) => t.rows.length > 0 && t.rows.every((r) => typeof r[i] === 'number' || r[i] === null));
  const lines = [
    `| ${t.columns.map((c) => cell(c)).join(' | ')} |`,
    `|${t.columns.map((_, i) => (numeric[i] ? '---:' : '---')).join('|')}|`,
    ...t.rows.map((r) => `| ${t.columns.map((_, i) => cell(r[i])).join(' | ')} |`),
  ];
  return lines.join('\n');
}

export function renderMarkdown(report: Report): string {
  const m = report.machine;
  const out: string[] = [];
  out.push(`# Converge benchmarks — ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC`);
  out.push('');
  out.push(`> **Noise warning.** ${report.caveat}`);
  out.push('');
  out.push(`Command: \`${report.command}\` — size \`${report.options.size}\`, ${report.durationSeconds.toFixed(0)} s in all.`);
  out.push('');
  out.push('## Machine');
  out.push('');
  out.push(
    markdownTable({
      columns: ['', ''],
      rows: [
        ['CPU', `${m.cpus} × ${m.cpuModel}`],
        ['memory', `${m.memoryGiB} GiB (${m.freeMemoryGiB} GiB free at start)`],
        ['load average at start / end (1, 5, 15 min)', `${m.loadAverageAtStart.join(', ')} / ${report.loadAverageAtEnd.join(', ')}`],
        ['OS', m.os],
        ['Node.js', m.node],
        ['Kubernetes (local control plane)', m.kubernetes],
        ['git commit', `${m.git.commit}${m.git.dirty ? ' (with uncommitted changes)' : ''} on ${m.git.branch}`],
        ...(report.cpuSplit ? [['CPUs (`--split-cpus`, every scenario)', `control plane on CPU ${report.cpuSplit.controlPlane.join(',')}; the benchmark, its observers and every operator it starts on CPU ${report.cpuSplit.bench.join(',')}`]] : []),
        ['operator settings', `${report.options.workers} workers, client limit ${report.options.qps}/s burst ${report.options.burst}, periodic check ${report.options.resyncSeconds} s${report.options.operatorNodeFlags ? `; Node.js flags \`${report.options.operatorNodeFlags.join(' ') || '(none)'}\` instead of the image's` : ''}`],
      ],
    }),
  );
  out.push('');
  out.push('## Summary');
  out.push('');
  out.push(markdownTable({ columns: ['scenario', 'result', 'took (s)'], rows: report.scenarios.map((s) => [s.title, s.status === 'ok' ? (s.headline ?? '') : `**${s.status}**: ${s.error ?? ''}`, Math.round(s.durationSeconds)]) }));
  out.push('');
  out.push('![chart](chart.svg)');
  out.push('');
  for (const s of report.scenarios) {
    out.push(`## ${s.title} (\`${s.name}\`)`);
    out.push('');
    out.push(s.description);
    out.push('');
    if (s.status !== 'ok') {
      out.push(`**${s.status}**${s.error ? `: ${s.error}` : ''}`);
      out.push('');
      continue;
    }
    for (const t of s.tables ?? []) {
      out.push(`**${t.title}**`);
      out.push('');
      out.push(markdownTable(t));
      out.push('');
    }
    for (const n of s.notes ?? []) out.push(`- ${n}`);
    if (s.notes?.length) out.push('');
  }
  if (report.profiles?.length) {
    out.push('## CPU profiles (`--profile`)');
    out.push('');
    out.push('Open a `.cpuprofile` in Chrome DevTools (Performance → Load profile) for the call tree. Self time by function, top first:');
    out.push('');
    for (const p of report.profiles) {
      out.push(`**\`${p.file}\`** (${(p.totalMs / 1000).toFixed(1)} s sampled)`);
      out.push('');
      out.push(markdownTable({ columns: ['function', 'where', 'self (ms)', 'share (%)'], rows: p.top.map((f) => [f.name, f.location || null, f.selfMs, Math.round(f.selfShare * 1000) / 10]) }));
      out.push('');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
