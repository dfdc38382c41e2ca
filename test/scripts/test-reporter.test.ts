/**
 * `npm test` reads its totals from our reporter and repeats its failures, with their errors, at
 * the end of its output (scripts/test-reporter.ts writes and reads them back,
 * scripts/failure-digest.ts prints them): node's runner with that reporter on test files written
 * here, run by the Node that runs this test (no control plane needed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { formatFailures } from '../../scripts/failure-digest.ts';
import { readReport } from '../../scripts/test-reporter.ts';

const REPORTER = resolve(fileURLToPath(new URL('../../scripts/test-reporter.ts', import.meta.url)));

/** Runs `node --test` on the given test-file sources with our reporter; its report, and node's TAP of the same run. */
function run(files: Record<string, string>): { report: string; tap: string } {
  const dir = mkdtempSync(join(tmpdir(), 'converge-digest-'));
  try {
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
    const reportFile = join(dir, 'report.jsonl');
    const tapFile = join(dir, 'report.tap');
    // Without the runner's NODE_TEST_CONTEXT, or the child would report to this runner, not to the file.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    spawnSync(
      process.execPath,
      ['--test', `--test-reporter=${REPORTER}`, `--test-reporter-destination=${reportFile}`, '--test-reporter=tap', `--test-reporter-destination=${tapFile}`, ...Object.keys(files)],
      { cwd: dir, env, encoding: 'utf8' },
    );
    return { report: readFileSync(reportFile, 'utf8'), tap: readFileSync(tapFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the digest lists the tests that failed on their own account, with parents, location, error and causes', () => {
  const { report, tap } = run({
    'a.test.mjs': `
import { test } from 'node:test';
import assert from 'node:assert/strict';
test('passes', () => {});
test('outer', async (t) => {
  await t.test('inner fails', () => { assert.equal(1, 2, 'one is not two'); });
  await t.test('inner passes', () => {});
});
test('a property', () => { throw new Error('Property failed after 3 tests\\n{ seed: -530273561, path: "2:1" }\\nCounterexample: [1]', { cause: new assert.AssertionError({ message: 'call 0: settled after 1208 ms' }) }); });
test('times out', { timeout: 50 }, () => new Promise(() => {}));
`,
    'b.test.mjs': `
import { test } from 'node:test';
import { describe, it } from 'node:test';
test('b passes', () => {});
describe('a suite', () => { it('skipped', (t) => t.skip('drawn as skipped')); it('to do', { todo: true }, () => {}); });
test("quotes ' and \\" and # and \\\\", () => { throw new Error("it's \\u001b[31mred"); });
`,
  });
  const { failures, totals } = readReport(report);
  // The run's totals are node's own: what its TAP reporter's summary lines say of the same run.
  const tapTotals = Object.fromEntries([...tap.matchAll(/^# (\w+) ([\d.]+)$/gm)].map((m) => [m[1], Number(m[2])]));
  assert.deepEqual(totals, tapTotals);
  assert.deepEqual({ ...totals, duration_ms: 0 }, { tests: 10, suites: 1, pass: 3, fail: 4, cancelled: 1, skipped: 1, todo: 1, duration_ms: 0 });
  assert.deepEqual(failures.map((f) => f.path), [['outer', 'inner fails'], ['a property'], ['times out'], [`quotes ' and " and # and \\`]]);
  assert.match(failures[0]!.error, /^one is not two/);
  assert.match(failures[0]!.location ?? '', /a\.test\.mjs:6:\d+$/);
  assert.equal(failures[1]!.error, 'Property failed after 3 tests\n{ seed: -530273561, path: "2:1" }\nCounterexample: [1]\ncause: call 0: settled after 1208 ms');
  assert.equal(failures[2]!.failureType, 'testTimeoutFailure');
  assert.equal(failures[3]!.error, "it's \u001b[31mred");
  assert.match(failures[3]!.location ?? '', /b\.test\.mjs:6:\d+$/);

  const text = formatFailures(failures);
  assert.match(text, /^✖ 4 failed tests, repeated from above with their errors:\n/);
  assert.match(text, /\n✖ outer › inner fails \(.*a\.test\.mjs:6:\d+\)\n {4}one is not two\n/);
  assert.match(text, /\n {4}\{ seed: -530273561, path: "2:1" \}\n {4}Counterexample: \[1\]\n {4}cause: call 0: settled after 1208 ms\n/);
  assert.match(text, /✖ times out \(.*, testTimeoutFailure\)\n/);
});

test('names and messages of any text come back as the test gave them (one run of 25 drawn tests)', () => {
  // Any text: quotes, `#`, `\\`, control characters, line breaks, lone surrogates.
  const awkward = fc.oneof(fc.constantFrom('#', '\\', "'", '"', '`', ' ', '\n', '\r', '\t', '\u001b', '\u2028', '\ud800', '›', 'é', '😀'), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }));
  const name = fc.string({ unit: awkward, minLength: 1, maxLength: 30 });
  const line = fc.string({ unit: awkward, minLength: 1, maxLength: 40 }).filter((s) => !s.includes('\n'));
  const cases = fc.sample(fc.record({ name, lines: fc.array(line, { minLength: 1, maxLength: 4 }), nested: fc.boolean() }), { numRuns: 25, seed: 17 })
    .map((c, i) => ({ ...c, name: `${i} ${c.name}` }));
  const source = [
    "import { test } from 'node:test';",
    ...cases.map((c) =>
      c.nested
        ? `test(${JSON.stringify(`parent of ${c.name}`)}, async (t) => { await t.test(${JSON.stringify(c.name)}, () => { throw new Error(${JSON.stringify(c.lines.join('\n'))}); }); });`
        : `test(${JSON.stringify(c.name)}, () => { throw new Error(${JSON.stringify(c.lines.join('\n'))}); });`,
    ),
  ].join('\n');
  const { failures } = readReport(run({ 'drawn.test.mjs': source }).report);
  assert.deepEqual(
    failures.map((f) => ({ path: f.path, error: f.error })),
    cases.map((c) => ({ path: c.nested ? [`parent of ${c.name}`, c.name] : [c.name], error: c.lines.join('\n') })),
  );
});

test('the digest is bounded and says what it left out', () => {
  const many = Array.from({ length: 12 }, (_, i) => ({ path: [`t${i}`], location: undefined, failureType: 'testCodeFailure', error: Array.from({ length: 50 }, (_, j) => `line ${j} ${'x'.repeat(j === 0 ? 1_000 : 1)}`).join('\n') }));
  const text = formatFailures(many, { maxFailures: 3, maxLinesPerFailure: 5, maxLineChars: 100 });
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 1 + 3 * (1 + 5 + 1) + 1);
  assert.ok(lines.every((l) => l.length <= 160), 'every line bounded');
  assert.match(text, /… 45 more lines \(the full error is above\)/);
  assert.match(text, /… \(907 more characters\)/);
  assert.match(text, /✖ … and 9 more failed tests \(listed above\)\n$/);
  assert.equal(formatFailures([]), '');
});
