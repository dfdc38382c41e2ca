/**
 * On a system Node.js older than 24 (what a fresh machine often has, and what bootstraps
 * `npm start`): `npm ci` under scripts/bootstrap.mjs says once why npm's EBADENGINE warnings do
 * not matter instead of printing eight five-line blocks; `converge` (bin/converge.js) and the CLI
 * entry point say that Converge needs Node.js 24 and that `npm start` installs it.
 *
 * The npm part runs the real npm of the machine (`npm ci --dry-run` on a copy of the manifests and
 * the lock, from npm's cache: nothing is installed); on a machine whose system Node.js is already
 * 24 npm warns about nothing, and the test checks the filter on a recorded Node 20 transcript only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error plain JavaScript without declarations (it runs on any Node.js)
import { engineWarningFilter } from '../../scripts/npm-engine-warnings.mjs';
import { nodeVersionProblem } from '../../packages/operators/src/cli/shared/node-version.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
type Filter = { push(text: string): void; end(): void };
const filterOf = (version: string): { filter: Filter; out: string[] } => {
  const out: string[] = [];
  return { filter: (engineWarningFilter as (w: (l: string) => void, v: string) => Filter)((l) => out.push(l), version), out };
};

/** PATH without the project's node_modules/.bin (where the Node.js 24 of the `node` package is). */
const systemPath = (process.env.PATH ?? '').split(delimiter).filter((p) => !p.includes('node_modules')).join(delimiter);
function systemNode(): string | undefined {
  for (const dir of systemPath.split(delimiter)) {
    try {
      accessSync(join(dir, 'node'), constants.X_OK);
      return join(dir, 'node');
    } catch {}
  }
  return undefined;
}

const RECORDED = `npm warn EBADENGINE Unsupported engine {
npm warn EBADENGINE   package: 'converge-monorepo@0.1.0',
npm warn EBADENGINE   required: { node: '>=24.0.0' },
npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }
npm warn EBADENGINE }
npm warn deprecated something@1.0.0: keep this line
npm warn EBADENGINE Unsupported engine {
npm warn EBADENGINE   package: '@converge/runtime@0.1.0',
npm warn EBADENGINE   required: { node: '>=24.0.0' },
npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }
npm warn EBADENGINE }
npm warn EBADENGINE Unsupported engine {
npm warn EBADENGINE   package: '@converge/runtime@0.1.0',
npm warn EBADENGINE   required: { node: '>=24.0.0' },
npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }
npm warn EBADENGINE }
npm warn EBADENGINE Unsupported engine {
npm warn EBADENGINE   package: 'undici@8.13.1',
npm warn EBADENGINE   required: { node: '>=22.19.0' },
npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }
npm warn EBADENGINE }`;

test('the EBADENGINE blocks become one line; every other line passes, in order', () => {
  const { filter, out } = filterOf('v20.20.2');
  // in pieces that cut lines, as a pipe delivers them
  for (let i = 0; i < RECORDED.length; i += 37) filter.push(RECORDED.slice(i, i + 37));
  filter.end();
  assert.deepEqual(out, [
    'npm warn deprecated something@1.0.0: keep this line\n',
    'converge: npm runs on Node.js v20.20.2, so it warned (EBADENGINE) that 3 packages need a newer Node.js (converge-monorepo, @converge/runtime, undici). ' +
      'Expected: they run on the Node.js 24 that npm ci installs (node_modules/.bin/node), not on this one.\n',
  ]);
  const quiet = filterOf('v24.21.0');
  quiet.filter.push('added 184 packages in 2s\n');
  quiet.filter.end();
  assert.deepEqual(quiet.out, ['added 184 packages in 2s\n']);
});

test("the machine's own npm: npm ci of this project shows no EBADENGINE block through the filter", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-older-node-'));
  try {
    for (const file of ['package.json', 'package-lock.json', 'packages/runtime/package.json', 'packages/envtest/package.json', 'packages/operators/package.json', 'examples/configmap-mirror/package.json']) {
      mkdirSync(join(dir, dirname(file)), { recursive: true });
      cpSync(join(root, file), join(dir, file));
    }
    const env = { ...process.env, PATH: systemPath, npm_config_audit: 'false', npm_config_fund: 'false' };
    const npm = spawnSync('npm', ['ci', '--dry-run', '--prefer-offline', '--ignore-scripts'], { cwd: dir, env, encoding: 'utf8', timeout: 280_000 });
    assert.equal(npm.status, 0, npm.stderr);
    const version = spawnSync('node', ['--version'], { env, encoding: 'utf8' }).stdout.trim();
    const { filter, out } = filterOf(version);
    filter.push(npm.stderr);
    filter.end();
    const shown = out.join('');
    assert.doesNotMatch(shown, /EBADENGINE Unsupported engine|package: '/, shown);
    if (Number(version.replace(/^v/, '').split('.')[0]) < 24) assert.match(shown, /converge: npm runs on Node\.js v\d+[^\n]*@converge\/runtime[^\n]*Expected/, shown);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('converge on an older Node.js says what it needs and that npm start installs it', () => {
  assert.equal(nodeVersionProblem('24.0.0'), undefined);
  assert.equal(nodeVersionProblem('25.1.0'), undefined);
  assert.equal(nodeVersionProblem('22.18.0'), 'Converge needs Node.js >= 24 (this is v22.18.0). In the repository, `npm start` and `npm test` install it and run on it (node_modules/.bin/node); elsewhere install Node.js 24 LTS.\n');
  const node = systemNode();
  if (!node) return;
  const major = Number(spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '').split('.')[0]);
  if (major >= 24) return;
  const bin = spawnSync(node, [join(root, 'packages/operators/bin/converge.js'), '--help'], { encoding: 'utf8' });
  assert.equal(bin.status, 1);
  assert.match(bin.stderr, /^Converge needs Node\.js >= 24 \(this is v\d+\.\d+\.\d+\)\. In the repository, `npm start` and `npm test` install it/);
});
