/**
 * A test file whose main thread stops running (a synchronous loop, a synchronous call that never
 * returns) fails within the limit, saying where it stands, instead of holding up the whole run
 * with no word (test/support/blocked-watchdog.ts): node's runner, as `npm test` starts it, on test
 * files written here (no control plane needed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WATCHDOG = resolve(fileURLToPath(new URL('../support/blocked-watchdog.ts', import.meta.url)));

test('a file whose main thread is stuck fails, with its JavaScript stack or the system call it waits in; the other files run on', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-blocked-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'spin.test.mjs': `import { test } from 'node:test';
function spinForever() { for (;;) {} }
test('spins', () => { spinForever(); });`,
    'waits.test.mjs': `import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
test('waits for a child that does not end', () => { execFileSync('sleep', ['20']); });`,
    'slow.test.mjs': `import { test } from 'node:test';
test('waits 3 s on a timer, and ends', () => new Promise((r) => setTimeout(r, 3_000)));`,
  };
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  // Without the runner's NODE_TEST_CONTEXT, or the child would report to this runner.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const r = spawnSync(process.execPath, ['--test', `--import=${WATCHDOG}`, '--test-reporter=spec', ...Object.keys(files)], {
    cwd: dir,
    env: { ...env, CONVERGE_TEST_BLOCKED_LIMIT_MS: '2000' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const out = `${r.stdout}${r.stderr}`;
  // The sleep the killed file waited for is left behind: end it.
  for (const pid of out.matchAll(/its child processes: (\d+)/g)) {
    try {
      process.kill(Number(pid[1]), 'SIGKILL');
    } catch {
      // gone already
    }
  }
  assert.equal(r.signal, null, `the run ended on its own (${out})`);
  assert.equal(r.status, 1, out);
  assert.match(out, /✖ spin\.test\.mjs/);
  assert.match(out, /✖ waits\.test\.mjs/);
  assert.match(out, /✔ waits 3 s on a timer, and ends/);
  assert.match(out, /the main thread of .*spin\.test\.mjs has not run for 2 s/);
  assert.match(out, /busy in JavaScript, here:\n\s+at spinForever \(file:.*spin\.test\.mjs:2:/, 'the stack of the loop');
  assert.match(out, /blocked outside JavaScript[^\n]*\n\s+waiting in the kernel at: \S+\n\s+its child processes: \d+ \(sleep 20\)/, 'the system call and the child it waits for');
});
