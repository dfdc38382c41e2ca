import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { markdownTable, renderMarkdown } from './markdown.ts';
import { niceTicks, renderChart } from './svg-chart.ts';
import { CAVEAT } from './index.ts';
import type { Report } from './index.ts';
import { parseBenchArgs } from '../support/options.ts';

describe('bench report rendering', () => {
  it('markdown tables right-align numeric columns and escape pipes', () => {
    const t = markdownTable({ columns: ['a', 'n'], rows: [['x|y', 1], ['z', null]] });
    assert.equal(t, '| a | n |\n|---|---:|\n| x\\|y | 1 |\n| z | — |');
  });
  it('ticks are round numbers covering the range', () => {
    assert.deepEqual(niceTicks(0, 9.3), [0, 2, 4, 6, 8, 10]);
    assert.deepEqual(niceTicks(0, 0), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  });
  it('the chart is one SVG document with every panel title, escaped', () => {
    const svg = renderChart(
      [
        { title: 'A & B', xLabel: 'x', yLabel: 'y', series: [{ name: 's<1>', points: [[0, 0], [1, 2]] }], threshold: { y: 1, label: 't' } },
        { title: 'Second', xLabel: 'x', yLabel: 'y', series: [{ name: 'n', points: [[1, Number.NaN]] }] },
      ],
      'caption',
    );
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(svg, /A &amp; B/);
    assert.match(svg, /s&lt;1&gt;/);
    assert.doesNotMatch(svg, /NaN/);
  });
  it('the markdown report names the machine, the caveat and every scenario', () => {
    const report: Report = {
      schemaVersion: 1,
      startedAt: '2025-01-01T00:00:00.000Z',
      finishedAt: '2025-01-01T00:01:00.000Z',
      durationSeconds: 60,
      command: 'npm run bench',
      options: parseBenchArgs([])!,
      machine: { cpus: 2, cpuModel: 'cpu', memoryGiB: 8, freeMemoryGiB: 4, loadAverageAtStart: [1, 1, 1], os: 'linux', node: 'v24', kubernetes: 'v1.36.3', git: { commit: 'abc', dirty: false, branch: 'main' } },
      loadAverageAtEnd: [1, 1, 1],
      caveat: CAVEAT,
      scenarios: [
        { name: 'repair', title: 'Repair', description: 'd', status: 'ok', durationSeconds: 1, headline: 'fast', figures: {}, tables: [{ title: 'T', columns: ['a'], rows: [[1]] }], charts: [], notes: ['n'] },
        { name: 'churn', title: 'Churn', description: 'd', status: 'failed', error: 'boom', durationSeconds: 1 },
      ],
    };
    const md = renderMarkdown(report);
    for (const needle of ['v1.36.3', 'Noise warning', '## Repair', 'fast', '**failed**: boom', '![chart](chart.svg)']) assert.ok(md.includes(needle), needle);
    assert.doesNotMatch(md, /split-cpus/, 'no CPU row without --split-cpus');
    const split = renderMarkdown({ ...report, cpuSplit: { controlPlane: [0], bench: [1] } });
    assert.match(split, /\| CPUs \(`--split-cpus`, every scenario\) \| control plane on CPU 0; the benchmark, its observers and every operator it starts on CPU 1 \|/);
  });
});

describe('CPU profile summary', () => {
  it('attributes sample time to functions, largest self time first', async () => {
    const { hotFunctions } = await import('./cpu-profile.ts');
    const profile = {
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 } },
        { id: 2, callFrame: { functionName: 'reconcile', url: 'file:///repo/src/a.ts', lineNumber: 9 } },
        { id: 3, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
      ],
      samples: [2, 3, 2, 2],
      timeDeltas: [1000, 5000, 1000, 1000],
      startTime: 0,
      endTime: 8000,
    };
    const r = hotFunctions(profile, '/repo', 5);
    assert.equal(r.totalMs, 8);
    assert.deepEqual(r.functions.map((f) => [f.name, f.location, f.selfMs]), [['(idle)', '', 5], ['reconcile', 'src/a.ts:10', 3]]);
  });
});
