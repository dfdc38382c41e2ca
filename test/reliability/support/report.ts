/**
 * Figures of the reliability suite: every test states what it measured (recovery times,
 * duplicates found, writes counted) through `t.diagnostic()` and into a summary table.
 *
 * How it stays robust when test files run in parallel processes: each test file writes only its
 * own JSON file, `test/reliability/results/tmp/<file>.json` (rewritten atomically after every
 * test), and then re-renders `test/reliability/results/latest.md` from all JSON files present,
 * under a small directory lock, once every test file of the suite has left its rows (the
 * committed table is a full run's: a run of one file on a fresh clone leaves it alone). A file
 * that was not part of this run keeps its previous rows (each row says when it ran).
 * `node scripts/reliability-report.ts` renders the table again from whatever rows there are.
 *
 * A row is written when its test ends, with `pass`/`fail` from the test's outcome, so a failing
 * run still leaves its figures behind.
 * @module
 */
import type { TestContext } from 'node:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `CONVERGE_RELIABILITY_LONG=1` selects the long variants (more kills, longer outages). */
export const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';

export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
export const ROWS_DIR = join(RESULTS_DIR, 'tmp');
export const LATEST_MD = join(RESULTS_DIR, 'latest.md');
const REPO_ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

/**
 * What a figure is. `duplicates`, `orphans`, `stuck` and `lost` must be 0 in a good run and are
 * summed in the table's totals; `ms` is a duration; `count` any other number; `text` a word.
 */
export type FigureKind = 'duplicates' | 'orphans' | 'stuck' | 'lost' | 'ms' | 'count' | 'text';

export interface Figure {
  name: string;
  value: number | string;
  kind: FigureKind;
  unit?: string;
}

export interface ResultRow {
  item: number;
  check: string;
  test: string;
  file: string;
  mode: 'short' | 'long';
  /** `known-bug`: a test marked `todo` for a known defect failed, as expected. */
  status: 'pass' | 'fail' | 'known-bug';
  durationMs: number;
  finishedAt: string;
  figures: Figure[];
  notes: string[];
}

const rowsOfThisProcess: ResultRow[] = [];

export interface Figures {
  count(name: string, value: number, unit?: string): void;
  ms(name: string, value: number): void;
  duplicates(name: string, value: number): void;
  orphans(name: string, value: number): void;
  stuck(name: string, value: number): void;
  lost(name: string, value: number): void;
  text(name: string, value: string): void;
  /** A sentence worth keeping beside the figures (what was simplified, what was observed). */
  note(text: string): void;
}

/**
 * Figures for one test: `item` is the checklist number of issue 7, `check` a short title.
 * The row is written when the test ends.
 */
export function reliabilityReport(t: TestContext, item: number, check: string, options: { knownBug?: string } = {}): Figures {
  const started = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  const add = (name: string, value: number | string, kind: FigureKind, unit?: string) => {
    const existing = figures.findIndex((f) => f.name === name);
    const figure: Figure = { name, value, kind, ...(unit ? { unit } : {}) };
    if (existing >= 0) figures[existing] = figure;
    else figures.push(figure);
    t.diagnostic(`${name}: ${formatValue(figure)}`);
  };
  const file = relative(REPO_ROOT, (t as { filePath?: string }).filePath ?? process.argv[1] ?? 'unknown');
  t.after(() => {
    rowsOfThisProcess.push({
      item,
      check,
      test: t.name,
      file,
      mode: LONG ? 'long' : 'short',
      status: (t as { passed?: boolean }).passed === false ? (options.knownBug ? 'known-bug' : 'fail') : 'pass',
      durationMs: Date.now() - started,
      finishedAt: new Date().toISOString(),
      figures,
      notes: options.knownBug && (t as { passed?: boolean }).passed === false ? [...notes, `known bug: ${options.knownBug}`] : notes,
    });
    writeRows(file);
  });
  return {
    count: (name, value, unit) => add(name, value, 'count', unit),
    ms: (name, value) => add(name, Math.round(value), 'ms'),
    duplicates: (name, value) => add(name, value, 'duplicates'),
    orphans: (name, value) => add(name, value, 'orphans'),
    stuck: (name, value) => add(name, value, 'stuck'),
    lost: (name, value) => add(name, value, 'lost'),
    text: (name, value) => add(name, value, 'text'),
    note: (text) => {
      notes.push(text);
      t.diagnostic(text);
    },
  };
}

function formatValue(f: Figure): string {
  if (f.kind === 'ms') return typeof f.value === 'number' && f.value >= 10_000 ? `${(f.value / 1000).toFixed(1)} s` : `${f.value} ms`;
  return `${f.value}${f.unit ? ` ${f.unit}` : ''}`;
}

function rowsFileName(testFile: string): string {
  return `${basename(testFile).replace(/\.test\.ts$/, '').replace(/[^\w.-]+/g, '_')}.json`;
}

/** The suite's test files whose rows are not in `dir` yet (none: `latest.md` may be rendered). */
export function missingRows(dir = ROWS_DIR, suiteDir = fileURLToPath(new URL('../', import.meta.url))): string[] {
  const have = new Set(existsSync(dir) ? readdirSync(dir) : []);
  return readdirSync(suiteDir)
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => !have.has(rowsFileName(f)))
    .sort();
}

let toldIncomplete = false;

function writeRows(file: string): void {
  mkdirSync(ROWS_DIR, { recursive: true });
  const target = join(ROWS_DIR, rowsFileName(file));
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(rowsOfThisProcess, null, 2)}\n`);
  renameSync(tmp, target);
  const missing = missingRows();
  if (missing.length > 0) {
    if (!toldIncomplete) {
      toldIncomplete = true;
      process.stderr.write(`reliability report: ${relative(REPO_ROOT, LATEST_MD)} left as it is (no figures yet from ${missing.join(', ')}; a run of the whole suite renders it)\n`);
    }
    return;
  }
  try {
    renderLatest();
  } catch (err) {
    process.stderr.write(`reliability report: could not render ${LATEST_MD}: ${(err as Error).message}\n`);
  }
}

/** Reads every rows file; a half-written or foreign file is skipped. */
export function readRows(dir = ROWS_DIR): ResultRow[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const rows: ResultRow[] = [];
  for (const name of names) {
    try {
      const parsed = JSON.parse(readFileSync(join(dir, name), 'utf8')) as ResultRow[];
      if (Array.isArray(parsed)) rows.push(...parsed.filter((r) => r && typeof r.item === 'number'));
    } catch {
      // being replaced right now, or not ours
    }
  }
  return rows.sort((a, b) => a.item - b.item || a.file.localeCompare(b.file) || a.finishedAt.localeCompare(b.finishedAt));
}

/** Renders the markdown table from rows. Pure. */
export function renderMarkdown(rows: readonly ResultRow[], generatedAt = new Date()): string {
  const sum = (kind: FigureKind) => rows.reduce((n, r) => n + r.figures.filter((f) => f.kind === kind && typeof f.value === 'number').reduce((m, f) => m + (f.value as number), 0), 0);
  const failed = rows.filter((r) => r.status === 'fail').length;
  const known = rows.filter((r) => r.status === 'known-bug').length;
  const modes = [...new Set(rows.map((r) => r.mode))].join(', ') || 'none';
  const escape = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines: string[] = [
    '# Reliability suite: latest results',
    '',
    `Rendered ${generatedAt.toISOString()} from ${rows.length} test results (mode: ${modes}) by the suite under \`test/reliability/\``,
    '(see `docs/reliability.md`). Each row keeps the time its test last ran; re-render with `node scripts/reliability-report.ts`.',
    '',
    `**Totals: ${sum('duplicates')} duplicates, ${sum('orphans')} orphans, ${sum('stuck')} stuck objects, ${sum('lost')} lost updates; ${failed} of ${rows.length} tests failed${known ? `, ${known} known bug${known > 1 ? 's' : ''} (todo tests)` : ''}.**`,
    '',
    '| # | Check | Test | Mode | Result | Figures | Took | Ran at (UTC) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const figures = r.figures.map((f) => `${f.name}: **${formatValue(f)}**`).join('; ');
    lines.push(
      `| ${r.item} | ${escape(r.check)} | ${escape(r.test)} | ${r.mode} | ${r.status === 'pass' ? 'pass' : r.status === 'known-bug' ? '**KNOWN BUG**' : '**FAIL**'} | ${escape(figures)} | ${(r.durationMs / 1000).toFixed(1)} s | ${r.finishedAt.slice(0, 19).replace('T', ' ')} |`,
    );
  }
  const noted = rows.filter((r) => r.notes.length > 0);
  if (noted.length > 0) {
    lines.push('', '## Notes', '');
    for (const r of noted) for (const n of r.notes) lines.push(`- (${r.item}) ${escape(r.test)}: ${escape(n)}`);
  }
  lines.push('');
  return lines.join('\n');
}

/** Renders `latest.md` from every rows file, under a lock so parallel test files do not interleave. */
export function renderLatest(): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  return withLock(join(RESULTS_DIR, '.render.lock'), () => {
    const markdown = renderMarkdown(readRows());
    const tmp = `${LATEST_MD}.${process.pid}.tmp`;
    writeFileSync(tmp, markdown);
    renameSync(tmp, LATEST_MD);
    return LATEST_MD;
  });
}

function withLock<T>(lock: string, fn: () => T): T {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        // A lock older than 30 s belongs to a process that died while rendering.
        if (Date.now() - statSync(lock).mtimeMs > 30_000) rmdirSync(lock);
      } catch {
        // released meanwhile
      }
      if (Date.now() > deadline) break; // render anyway rather than hang a test
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
  try {
    return fn();
  } finally {
    try {
      rmdirSync(lock);
    } catch {
      // not ours (deadline passed)
    }
  }
}
