/**
 * The failures of a `node --test` run, read back from its TAP report, for `npm test` to print
 * once more at the very end of its output.
 *
 * Why: a phase's spec reporter lists its failures where that phase ends, which for a unit test
 * is twenty minutes and thousands of lines before the end of a CI log; a CI that keeps only the
 * log's tail then says which test failed but not why (the assertion, the fast-check seed). The
 * digest puts the why in the tail.
 *
 * Guarantees: every `not ok` test that failed on its own account is listed (a parent that failed
 * only because a subtest did, and a test cancelled because its parent ended, are not), with its
 * parents' names, its location and its error message, in report order; the text is bounded
 * (`maxLinesPerFailure` lines per failure, `maxFailures` failures, each line cut at
 * `maxLineChars`), saying what it left out.
 * Assumptions: TAP as node's `tap` reporter writes it (subtests indented by four spaces, a YAML
 * block two spaces deeper than its `not ok` line, ended by `...`).
 * @module
 */

export interface TestFailure {
  /** The test's name, after its parents' names (outermost first). */
  path: string[];
  /** `file:line:column`, when the report gives one. */
  location: string | undefined;
  /** node's failureType (`testCodeFailure`, `testTimeoutFailure`, `hookFailure`, ...). */
  failureType: string | undefined;
  /** The error message as reported (may span lines). */
  error: string;
}

/** The failures a TAP report records, in report order. */
export function failuresFromTap(tap: string): TestFailure[] {
  const lines = tap.split(/\r?\n/);
  const failures: TestFailure[] = [];
  /** The name of the latest `# Subtest:` at each indent. */
  const names = new Map<number, string>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const subtest = /^( *)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      names.set(subtest[1]!.length, unescapeName(subtest[2]!));
      continue;
    }
    const notOk = /^( *)not ok \d+ - (.*?)(?: # (?:SKIP|TODO)\b.*)?$/.exec(line);
    if (!notOk) continue;
    const indent = notOk[1]!.length;
    const path: string[] = [];
    for (let d = 0; d < indent; d += 4) {
      const parent = names.get(d);
      if (parent !== undefined) path.push(parent);
    }
    path.push(unescapeName(notOk[2]!));
    const block = yamlBlock(lines, i + 1, indent + 2);
    const failureType = scalar(block, 'failureType');
    if (failureType === 'subtestsFailed' || failureType === 'cancelledByParent') continue;
    failures.push({ path, location: scalar(block, 'location'), failureType, error: scalar(block, 'error') ?? '(no error message in the report)' });
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
export function formatFailures(failures: TestFailure[], limits: DigestLimits = DEFAULT_LIMITS): string {
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

/** The YAML lines after a test line, up to its `...`, with `indent` spaces removed. */
function yamlBlock(lines: string[], from: number, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (lines[from] !== `${pad}---`) return [];
  const block: string[] = [];
  for (let i = from + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (l === `${pad}...`) break;
    if (l.trim() !== '' && !l.startsWith(pad)) break;
    block.push(l.slice(indent));
  }
  return block;
}

/** A top-level key's value in a YAML block: a quoted or plain scalar, or a `|-`/`|`/`>-` block. */
function scalar(block: string[], key: string): string | undefined {
  const at = block.findIndex((l) => l.startsWith(`${key}:`));
  if (at < 0) return undefined;
  const rest = block[at]!.slice(key.length + 1).trim();
  if (/^[|>][-+]?$/.test(rest)) {
    const body: string[] = [];
    for (let i = at + 1; i < block.length && (block[i]!.startsWith('  ') || block[i]!.trim() === ''); i++) body.push(block[i]!.slice(2));
    return rest.startsWith('>') ? body.join(' ') : body.join('\n').replace(/\n+$/, '');
  }
  const quote = rest[0];
  if ((quote === "'" || quote === '"' || quote === '`') && rest.length >= 2 && rest.endsWith(quote)) return unescapeJs(rest.slice(1, -1));
  return rest;
}

/** node's TAP reporter escapes `\\`, `#` and control characters in names. */
function unescapeName(name: string): string {
  return name.replace(/\\([\\#bfnrtv])/g, (_, c: string) => TAP_ESCAPES[c] ?? c);
}

const TAP_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** A string body as `util.inspect` quotes it (the YAML block's one-line values). */
function unescapeJs(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    if (e.length > 1) return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    return TAP_ESCAPES[e] ?? e;
  });
}
