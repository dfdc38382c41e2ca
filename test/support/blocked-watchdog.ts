/**
 * Loaded into every integration test process (`scripts/test.ts` passes `--import` in its
 * integration phases; the unit phase's short files do without it): a test file's process whose
 * main thread stops running — a synchronous loop that never ends, a synchronous call into the
 * system that never returns — fails within minutes, saying where it stands. No timer of the
 * process can fire then (the per-test timeout included): nothing is printed, the file never
 * ends, and without this the whole run waits until CI kills it, as CI's run at stop 62 did.
 *
 * How: the main thread ticks a shared counter every second (a timer that keeps nothing alive); a
 * worker thread watches it. When it has not moved for `CONVERGE_TEST_BLOCKED_LIMIT_MS` (180 s),
 * the worker pauses the main thread through the inspector and writes its JavaScript stack to
 * stderr — or, when no pause comes within 5 s (the thread is inside a system call), says so — and
 * kills the process, so that file fails and the run goes on.
 *
 * Guarantees: a process whose main thread keeps turning is never touched; the worker keeps
 * nothing alive.
 * @module
 */
import { Worker } from 'node:worker_threads';

// The worker, as plain JavaScript (an `eval` worker is CommonJS, and loads no TypeScript).
const WATCHER = `
const { workerData } = require('node:worker_threads');
const { readFileSync, writeSync } = require('node:fs');
const inspector = require('node:inspector');
const { ticks, limitMs, file } = workerData;
let seen = Atomics.load(ticks, 0);
let since = performance.now();
const say = (text) => { try { writeSync(2, text + '\\n'); } catch {} };
const end = () => process.kill(process.pid, 'SIGKILL');
const check = setInterval(() => {
  const now = Atomics.load(ticks, 0);
  if (now !== seen) { seen = now; since = performance.now(); return; }
  if (performance.now() - since < limitMs) return;
  clearInterval(check);
  const head = 'the main thread of ' + file + ' has not run for ' + Math.round(limitMs / 1000) + ' s (CONVERGE_TEST_BLOCKED_LIMIT_MS); the process is killed.';
  const session = new inspector.Session();
  session.connectToMainThread();
  const urls = new Map();
  session.on('Debugger.scriptParsed', ({ params }) => urls.set(params.scriptId, params.url));
  const outside = setTimeout(() => {
    const read = (path) => { try { return readFileSync(path, 'utf8').replace(/\\0/g, ' ').trim(); } catch { return '?'; } };
    const task = '/proc/' + process.pid + '/task/' + process.pid;
    const children = read(task + '/children').split(/\\s+/).filter((c) => /^\\d+$/.test(c)).map((c) => c + ' (' + read('/proc/' + c + '/cmdline').slice(0, 200) + ')');
    say(head + '\\n  it did not pause within 5 s: it is blocked outside JavaScript (a synchronous call into the system: a child process, a file, a lock)' +
      '\\n  waiting in the kernel at: ' + read(task + '/wchan') + (children.length ? '\\n  its child processes: ' + children.join('; ') : ''));
    end();
  }, 5000);
  session.on('Debugger.paused', ({ params }) => {
    clearTimeout(outside);
    const frames = params.callFrames.slice(0, 15).map((f) => '    at ' + (f.functionName || '(anonymous)') + ' (' + (urls.get(f.location.scriptId) || f.url || '?') + ':' + (f.location.lineNumber + 1) + ':' + (f.location.columnNumber + 1) + ')');
    say(head + '\\n  it is busy in JavaScript, here:\\n' + frames.join('\\n'));
    end();
  });
  session.post('Debugger.enable', () => session.post('Debugger.pause'));
}, 1000);
`;

// Only in a file's own process (the runner that starts them loads this module too).
if (process.env.NODE_TEST_CONTEXT?.startsWith('child')) {
  const limitMs = Number(process.env.CONVERGE_TEST_BLOCKED_LIMIT_MS ?? 180_000);
  const ticks = new Int32Array(new SharedArrayBuffer(4));
  const file = process.argv.find((a) => /\.test\.[cm]?[jt]s$/.test(a)) ?? process.argv.slice(1).join(' ');
  new Worker(WATCHER, { eval: true, workerData: { ticks, limitMs, file } }).unref();
  setInterval(() => Atomics.add(ticks, 0, 1), 1_000).unref();
}
