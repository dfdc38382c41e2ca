/**
 * The `node --test` reporter `npm test` reads its results from: one JSON line per failed test,
 * for `npm test` to repeat at the end of its output (scripts/failure-digest.ts formats them), and
 * one line with the run's totals, for its summary across phases. `readReport` reads both back.
 * It also writes a line per finished test, so that the file grows while the run moves
 * (scripts/stall-watch.ts watches it); `readReport` passes over those.
 *
 * A reporter of ours rather than node's TAP: TAP drops an error's `cause`, which is where a
 * fast-check failure keeps the assertion that failed ("Property failed after 36 tests" is the
 * error; "call 0 … resolved on a body over the bound" its cause).
 *
 * Guarantees: a line for every test that failed on its own account (not a parent that failed
 * only because a subtest did, nor a test cancelled because its parent ended), with its parents'
 * names, its location, node's failure type, and the error's message followed by each cause's;
 * the totals are node's own for the whole run (its last `test:summary`), absent when the runner
 * died before it ended.
 * @module
 */
import { inspect } from 'node:util';

/** One failed test, as the reporter writes it. */
export interface FailureRecord {
  /** The test's name, after its parents' names (outermost first). */
  path: string[];
  /** `file:line:column`, when the runner gives one. */
  location: string | undefined;
  /** node's failureType (`testCodeFailure`, `testTimeoutFailure`, `hookFailed`, ...). */
  failureType: string | undefined;
  /** The error's message, then `cause: …` for each cause (may span lines). */
  error: string;
}

/** One finished test, as the reporter writes it: how far the run has got (scripts/stall-watch.ts). */
export interface FinishedRecord {
  finished: 'pass' | 'fail';
  file: string | undefined;
  name: string;
}

/** A run's totals, under the names node's own summary lines use. */
export interface RunTotals {
  tests: number;
  suites: number;
  pass: number;
  fail: number;
  cancelled: number;
  skipped: number;
  todo: number;
  duration_ms: number;
}

export const TOTALS_KEYS: readonly (keyof RunTotals)[] = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo', 'duration_ms'];

interface TestEventData {
  name: string;
  nesting: number;
  file?: string;
  line?: number;
  column?: number;
  details?: { error?: unknown };
}

interface SummaryEventData {
  file?: string;
  duration_ms: number;
  counts: { tests: number; suites: number; passed: number; failed: number; cancelled: number; skipped: number; todo: number };
}

type ReporterEvent = { type: 'test:start' | 'test:pass' | 'test:fail'; data: TestEventData } | { type: 'test:summary'; data: SummaryEventData } | { type: string; data: unknown };

const SKIPPED_FAILURE_TYPES = new Set(['subtestsFailed', 'cancelledByParent']);

export default async function* testReporter(source: AsyncIterable<ReporterEvent>): AsyncGenerator<string> {
  /** Per file, the names of the tests now running at each nesting level. */
  const running = new Map<string, string[]>();
  for await (const event of source) {
    if (event.type === 'test:summary') {
      const { file, counts: c, duration_ms } = event.data as SummaryEventData;
      // One per file, then the run's (the one without a file).
      if (file !== undefined) continue;
      const totals: RunTotals = { tests: c.tests, suites: c.suites, pass: c.passed, fail: c.failed, cancelled: c.cancelled, skipped: c.skipped, todo: c.todo, duration_ms };
      yield `${JSON.stringify({ totals })}\n`;
      continue;
    }
    if (event.type === 'test:pass' || event.type === 'test:fail') {
      const { name, file } = event.data as TestEventData;
      yield `${JSON.stringify({ finished: event.type === 'test:pass' ? 'pass' : 'fail', file, name } satisfies FinishedRecord)}\n`;
    }
    if (event.type !== 'test:start' && event.type !== 'test:fail') continue;
    const { name, nesting, file = '', line, column, details } = event.data as TestEventData;
    const stack = running.get(file) ?? [];
    running.set(file, stack);
    if (event.type === 'test:start') {
      stack.length = nesting;
      stack[nesting] = name;
      continue;
    }
    const wrapper = details?.error as { failureType?: unknown; cause?: unknown } | undefined;
    const failureType = typeof wrapper?.failureType === 'string' ? wrapper.failureType : undefined;
    if (failureType !== undefined && SKIPPED_FAILURE_TYPES.has(failureType)) continue;
    const record: FailureRecord = {
      path: [...stack.slice(0, nesting), name],
      location: file ? `${file}${line === undefined ? '' : `:${line}:${column ?? 0}`}` : undefined,
      failureType,
      // node wraps what the test threw (ERR_TEST_FAILURE); the thrown error is its cause.
      error: errorText(wrapper?.cause ?? wrapper),
    };
    yield `${JSON.stringify(record)}\n`;
  }
}

/** The error's message, then `cause: …` for each error in its cause chain (at most 5). */
function errorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    const message = current instanceof Error || (typeof current === 'object' && 'message' in current) ? String((current as { message: unknown }).message) : inspect(current);
    parts.push(depth === 0 ? message : `cause: ${message}`);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.join('\n') || '(no error message)';
}

/** What a report holds: the failures in report order, and the totals when the run ended. A line that is neither (one cut short when the runner was killed) is skipped. */
export function readReport(report: string): { failures: FailureRecord[]; totals: RunTotals | undefined } {
  const failures: FailureRecord[] = [];
  let totals: RunTotals | undefined;
  for (const line of report.split('\n')) {
    if (line.trim() === '') continue;
    let r: Partial<FailureRecord> & { totals?: Partial<Record<keyof RunTotals, unknown>> };
    try {
      r = JSON.parse(line) as typeof r;
    } catch {
      continue;
    }
    if (r.totals && typeof r.totals === 'object') {
      const t = r.totals;
      if (TOTALS_KEYS.every((k) => typeof t[k] === 'number')) totals = t as RunTotals;
      continue;
    }
    if (!Array.isArray(r.path) || typeof r.error !== 'string') continue;
    failures.push({ path: r.path.map(String), location: typeof r.location === 'string' ? r.location : undefined, failureType: typeof r.failureType === 'string' ? r.failureType : undefined, error: r.error });
  }
  return { failures, totals };
}
