import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LOG_LEVELS, logLevelError } from './log-level.ts';

const main = fileURLToPath(new URL('../main.ts', import.meta.url));
const converge = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 60_000 });

test('every command with --log-level lists every level it accepts in its help', () => {
  for (const command of ['run', 'dev', 'dashboard']) {
    const help = converge(command, '--help');
    assert.equal(help.status, 0, help.stderr);
    const line = help.stdout.split('\n').find((l) => l.includes('--log-level'));
    assert.ok(line, `${command} --help has no --log-level line`);
    for (const level of LOG_LEVELS) assert.ok(line.includes(level), `${command} --help does not list ${level}: ${line}`);
  }
});

test('a level that is not accepted is a usage error that lists the accepted ones', () => {
  assert.equal(logLevelError('run', 'fatal'), undefined);
  assert.equal(logLevelError('run', 'WARN'), undefined);
  const bad = converge('run', '--log-level', 'verbose', '--kubeconfig', '/nonexistent');
  assert.equal(bad.status, 2, bad.stderr);
  assert.equal(bad.stderr, 'converge run: unknown --log-level "verbose"; use one of trace|debug|info|warn|error|fatal|silent\n');
});
