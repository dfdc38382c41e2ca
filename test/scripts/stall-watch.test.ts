/**
 * `npm test` ends a run that has stopped moving, saying which processes it was waiting for and in
 * what state (scripts/stall-watch.ts): a stand-in runner here (a node process that starts a
 * `sleep` and idles), a report file written by the test as scripts/test-reporter.ts writes it,
 * real processes read from /proc.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { watchForStall } from '../../scripts/stall-watch.ts';

/** A runner that starts `sleep 30`, prints its pid, and then does nothing. */
async function idleRunner() {
  const runner = spawn(process.execPath, ['-e', "const c = require('node:child_process').spawn('sleep', ['30'], { stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 1000);"], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(runner.stdout!, 'data')) as [Buffer];
  return { runner, sleeper: Number(String(line).trim()), exited: once(runner, 'exit') };
}

test('a run with no test finished for the limit is ended, naming the last test and every process under it with its state', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-stall-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const reportFile = join(dir, 'progress');
  writeFileSync(reportFile, `${JSON.stringify({ finished: 'pass', file: 'test/a.test.ts', name: 'the one before' })}\n${JSON.stringify({ totals: {} })}\n`);
  const { runner, sleeper, exited } = await idleRunner();
  t.after(() => {
    for (const pid of [sleeper, runner.pid!]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  process.kill(sleeper, 'SIGSTOP'); // a stopped process: it shows as T
  let report = '';
  const started = performance.now();
  const watch = watchForStall({ runner, reportFile, stallMs: 1_500, pollMs: 100, onStall: (r) => (report = r) });
  t.after(() => watch.stop());
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  const ms = performance.now() - started;
  assert.equal(signal, 'SIGTERM', 'the runner was ended');
  assert.ok(ms >= 1_400 && ms < 10_000, `ended ${Math.round(ms)} ms after the watch began`);
  assert.equal(code, null);
  assert.match(report, /no test has finished for 2 s \(CONVERGE_TEST_STALL_MS\)/);
  assert.match(report, /last test that finished: pass test\/a\.test\.ts "the one before"/);
  assert.match(report, new RegExp(`\\n    ${runner.pid} [SR] \\S+ .*node -e`), `the runner, sleeping or running:\n${report}`);
  assert.match(report, new RegExp(`\\n    ${sleeper} T \\S+ sleep 30`), `the stopped sleep:\n${report}`);
});

test('a run whose tests keep finishing is left alone, however long it takes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-stall-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const reportFile = join(dir, 'progress');
  const { runner, sleeper } = await idleRunner();
  t.after(() => {
    for (const pid of [sleeper, runner.pid!]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  let stalled = false;
  const watch = watchForStall({ runner, reportFile, stallMs: 600, pollMs: 50, onStall: () => (stalled = true) });
  for (let i = 0; i < 15; i++) {
    appendFileSync(reportFile, `${JSON.stringify({ finished: 'pass', file: 'test/b.test.ts', name: `test ${i}` })}\n`);
    await new Promise((r) => setTimeout(r, 200));
  }
  watch.stop();
  assert.equal(stalled, false);
  assert.equal(runner.exitCode, null, 'the runner still runs');
});
