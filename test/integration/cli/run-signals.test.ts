/**
 * `converge run` is a pod's main process: a SIGTERM is a graceful stop whenever it arrives —
 * as it starts, while caches sync, or while the workers run — and ends with exit code 0 (a pod
 * deleted right after it started must not look like a crash).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReplica } from '../../support/operator-process.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';

test('SIGTERM at any moment of the start is a graceful stop with exit code 0', { timeout: 120_000 }, async (t) => {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'run-signals');
  const args = ['--namespace', ns, '--metrics-bind-address', '0', '--health-probe-bind-address', '0'];
  // The moments a test can name: with the first log line (caches not synced yet), during the
  // sync, and with the workers running. Earlier, while the command loads, main.ts already takes
  // SIGTERM as a stop; that window cannot be hit reliably from outside (before it, Node itself is
  // still booting and nothing can catch the signal), so it is not asserted here.
  const moments: [string, (r: ReturnType<typeof startReplica>) => Promise<unknown>][] = [
    ['with the first log line', (r) => r.waitFor(() => true, 60_000)],
    ['while the caches sync', (r) => r.waitFor((l) => l.msg === 'waiting for caches to sync', 60_000)],
    ['once the workers run', (r) => r.waitFor((l) => l.msg === 'starting workers', 60_000)],
  ];
  for (const [when, wait] of moments) {
    const replica = startReplica(`signals-${when}`, args);
    t.after(() => replica.kill('SIGKILL'));
    await wait(replica);
    replica.kill('SIGTERM');
    const exit = await replica.exited;
    assert.equal(exit, 0, `SIGTERM ${when}: exit ${exit}; last lines ${JSON.stringify(replica.lines.slice(-3))}`);
  }
});
