/**
 * The failures of a `node --test` run, for `npm test` to print once more at the very end of its
 * output, as scripts/test-reporter.ts recorded them.
 *
 * Why: a phase's spec reporter lists its failures where that phase ends, which for a unit test
 * is twenty minutes and thousands of lines before the end of a CI log; a CI that keeps only the
 * log's tail then says which test failed but not why (the assertion, the fast-check seed). The
 * digest puts the why in the tail.
 *
 * Guarantees: every failure given is listed, in the order given, with its parents'
 * names, its location and its error (with its causes); the text is bounded
 * (`maxLinesPerFailure` lines per failure, `maxFailures` failures, each line cut at
 * `maxLineChars`), saying what it left out.
 * @module
 */

import type { FailureRecord } from './test-reporter.ts';

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
