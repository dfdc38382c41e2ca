/**
 * The failures of a `node --test` run, for `npm test` to print once more at the very end of its
 * output: read back from what scripts/failure-reporter.ts wrote (one JSON line per failed test).
 *
 * Why: a phase's spec reporter lists its failures where that phase ends, which for a unit test
 * is twenty minutes and thousands of lines before the end of a CI log; a CI that keeps only the
 * log's tail then says which test failed but not why (the assertion, the fast-check seed). The
 * digest puts the why in the tail.
 *
 * Guarantees: every failure the reporter recorded is listed, in report order, with its parents'
 * names, its location and its error (with its causes); the text is bounded
 * (`maxLinesPerFailure` lines per failure, `maxFailures` failures, each line cut at
 * `maxLineChars`), saying what it left out. A line that is not a record is skipped.
 * @module
 */

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

/** The failures a report records, in report order. */
export function failuresFromReport(report: string): FailureRecord[] {
  const failures: FailureRecord[] = [];
  for (const line of report.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const r = JSON.parse(line) as Partial<FailureRecord>;
      if (!Array.isArray(r.path) || typeof r.error !== 'string') continue;
      failures.push({ path: r.path.map(String), location: typeof r.location === 'string' ? r.location : undefined, failureType: typeof r.failureType === 'string' ? r.failureType : undefined, error: r.error });
    } catch {
      // a line cut short (the runner killed): skipped
    }
  }
  return failures;
}

export interface DigestLimits {
  maxFailures: number;
  maxLinesPerFailure: number;
  maxLineChars: number;
}

const DEFAULT_LIMITS: DigestLimits = { maxFailures: 10, maxLinesPerFailure: 30, maxLineChars: 400 };

/** The failures as text for the end of a log; empty when there are none. */
export function formatFailures(failures: FailureRecord[], limits: DigestLimits = DEFAULT_LIMITS): string {
  if (failures.length === 0) return '';
  const cut = (s: string) => (s.length > limits.maxLineChars ? `${s.slice(0, limits.maxLineChars)}… (${s.length - limits.maxLineChars} more characters)` : s);
  const out = [`✖ ${failures.length} failed test${failures.length === 1 ? '' : 's'}, repeated from above with their errors:`];
  for (const f of failures.slice(0, limits.maxFailures)) {
    const where = [f.location, f.failureType && f.failureType !== 'testCodeFailure' ? f.failureType : undefined].filter(Boolean).join(', ');
    out.push(`✖ ${f.path.join(' › ')}${where ? ` (${where})` : ''}`);
    const errorLines = f.error.replace(/\s+$/, '').split('\n');
    for (const l of errorLines.slice(0, limits.maxLinesPerFailure)) out.push(`    ${cut(l)}`);
    if (errorLines.length > limits.maxLinesPerFailure) out.push(`    … ${errorLines.length - limits.maxLinesPerFailure} more lines (the full error is above)`);
  }
  if (failures.length > limits.maxFailures) out.push(`✖ … and ${failures.length - limits.maxFailures} more failed tests (listed above)`);
  return `${out.join('\n')}\n`;
}
