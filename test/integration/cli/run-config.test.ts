/**
 * `converge run --config` with a file holding problems in several sections reports all of them
 * at once, each with its path in the file (`micrservice: unexpected property`, not
 * `cfg.yaml.micrservice`), and starts nothing: exit 1 before a watch or a lease (issue 18 item 14).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReplica } from '../../support/operator-process.ts';

test('converge run reports every configuration problem at once, with paths in the file, and starts nothing', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-run-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cfg.yaml');
  writeFileSync(
    file,
    ['micrservice: {}', 'microservice:', '  defaults:', '    replicas: -1', 'provider:', '  vendor: { timeoutSecond: 5 }', ''].join('\n'),
  );
  const replica = startReplica('run-config', ['--config', file, '--metrics-bind-address', '0', '--health-probe-bind-address', '0']);
  t.after(() => replica.kill('SIGKILL'));
  const exit = await Promise.race([replica.exited, new Promise((r) => setTimeout(() => r('still running after 30 s'), 30_000).unref())]);
  const text = replica.lines.map((l) => String(l.msg)).join('\n');
  assert.equal(exit, 1, `exit ${String(exit)}: ${text}`);
  assert.equal(
    text,
    [
      `converge run: invalid configuration in ${file}:`,
      '  - microservice.defaults.replicas: expected integer to be greater or equal to 0',
      '  - micrservice: unexpected property (did you mean "microservice"?)',
      '  - provider.vendor.timeoutSecond: unexpected property (did you mean "timeoutSeconds"?)',
      'Nothing was started.',
    ].join('\n'),
  );
});
