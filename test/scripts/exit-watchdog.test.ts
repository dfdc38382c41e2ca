/**
 * A test file whose process something keeps alive after its tests ended fails, with what keeps it
 * alive, instead of holding up the whole run for good (test/support/exit-watchdog.ts): node's
 * runner, as `npm test` starts it, on test files written here (no control plane needed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WATCHDOG = resolve(fileURLToPath(new URL('../support/exit-watchdog.ts', import.meta.url)));

/** Runs `node --test` with the watchdog on the given test-file sources; exit code, output, and how long it took. */
function run(files: Record<string, string>, graceMs = 1_000) {
  const dir = mkdtempSync(join(tmpdir(), 'converge-watchdog-'));
  try {
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
    // Without the runner's NODE_TEST_CONTEXT, or the child would report to this runner.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const started = performance.now();
    const r = spawnSync(process.execPath, ['--test', `--import=${WATCHDOG}`, '--test-reporter=spec', ...Object.keys(files)], {
      cwd: dir,
      env: { ...env, CONVERGE_TEST_EXIT_GRACE_MS: String(graceMs) },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, signal: r.signal, out: `${r.stdout}${r.stderr}`, ms: performance.now() - started };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const LEAKS = {
  'interval.test.mjs': `import { test } from 'node:test';
test('leaves an interval behind', () => { setInterval(function pollForever() {}, 200); });`,
  'server.test.mjs': `import { test } from 'node:test';
import { createServer } from 'node:net';
test('leaves a server listening', async () => { await new Promise((r) => createServer().listen(0, '127.0.0.1', r)); });`,
  'bound.test.mjs': `import { test } from 'node:test';
function boundTheExit() { return Promise.race([Promise.resolve(0), new Promise((r) => setTimeout(() => r('late'), 120_000))]); }
test('leaves a two-minute bound pending', async () => { await boundTheExit(); });`,
  'loop.test.mjs': `import { test } from 'node:test';
test('leaves a loop that re-arms its timer', () => { const again = () => setTimeout(function retryAfterBackoff() { again(); }, 300); again(); });`,
};

test('a file something keeps alive after its tests fails, naming what keeps it alive; the other files run on', () => {
  const r = run({ ...LEAKS, 'clean.test.mjs': `import { test } from 'node:test';\ntest('ends cleanly', () => {});` });
  assert.equal(r.signal, null, `the run ended on its own (${r.out})`);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /✔ ends cleanly/);
  assert.match(r.out, /✖ interval\.test\.mjs/);
  assert.match(r.out, /✖ server\.test\.mjs/);
  assert.match(r.out, /✖ loop\.test\.mjs/);
  assert.match(r.out, /✖ bound\.test\.mjs/);
  assert.doesNotMatch(r.out, /✖ clean\.test\.mjs/);
  assert.match(r.out, /still running 1 s after its last test ended/);
  assert.match(r.out, /every 200 ms\) → pollForever/, 'the interval and its callback');
  assert.match(r.out, /Server listening on \{"address":"127\.0\.0\.1"/, 'the server and its address');
  assert.match(r.out, /retryAfterBackoff/, 'the loop, seen running');
  assert.match(r.out, /a setTimeout of 120000 ms, made\n\s+at .*bound\.test\.mjs:2:\d+\n\s+at new Promise[^\n]*\n\s+at boundTheExit/, 'the pending timer and where it was made');
  assert.match(r.out, /created Timeout\n\s+at again \(file:.*loop\.test\.mjs/, 'where the loop re-arms its timer');
});

test('a file whose process ends on its own is left alone, however long its tests took', () => {
  const r = run({ 'slow.test.mjs': `import { test } from 'node:test';\ntest('takes 1.5 s', () => new Promise((r) => setTimeout(r, 1_500)));` }, 500);
  assert.equal(r.code, 0, r.out);
  assert.doesNotMatch(r.out, /still running/);
});
