// Runs a TypeScript entry point of this project on the project's own Node.js (24, from the
// `node` dev dependency), installing the npm dependencies first when they are missing or older
// than package-lock.json. Plain JavaScript on purpose: on a fresh clone the only Node.js around
// may be an older system one (npm's), which cannot run TypeScript.
//
//   node scripts/bootstrap.mjs <entry.ts> [args...]      (what `npm start` and `npm test` call)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineWarningFilter } from './npm-engine-warnings.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nodeBin = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'node.cmd' : 'node');
const installed = join(root, 'node_modules', '.package-lock.json');
const lock = join(root, 'package-lock.json');

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

/** `npm ci`, its stderr passed on without the EBADENGINE noise of an older Node.js (see npm-engine-warnings.mjs). */
function npmCi() {
  return new Promise((resolveCode, reject) => {
    const child = spawn('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: ['inherit', 'inherit', 'pipe'], shell: process.platform === 'win32' });
    const filter = engineWarningFilter((line) => process.stderr.write(line));
    child.stderr.setEncoding('utf8').on('data', (chunk) => filter.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      filter.end();
      resolveCode(code ?? 1);
    });
  });
}

const stale = !existsSync(nodeBin) || !existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs + 1000;
if (stale) {
  process.stderr.write('converge: installing npm dependencies (npm ci), including Node.js 24…\n');
  let code = await npmCi();
  if (code === 0 && spawnSync(nodeBin, ['--version']).status !== 0) code = run('npm', ['rebuild', 'node']);
  if (code !== 0) {
    process.stderr.write('converge: npm ci failed; see above\n');
    process.exit(code);
  }
}
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  process.stderr.write('usage: node scripts/bootstrap.mjs <entry.ts> [args...]\n');
  process.exit(2);
}
const child = spawn(nodeBin, [join(root, entry), ...args], { stdio: 'inherit' });
// Ctrl-C reaches the child through the terminal's process group; the wrapper just waits for it
// to finish tearing down. SIGTERM/SIGHUP sent to the wrapper alone are passed on.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
