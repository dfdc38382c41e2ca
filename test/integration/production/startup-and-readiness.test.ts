/**
 * Failure paths of a starting operator process, as a user meets them:
 * - `converge run` with a metrics or probe address that is already taken exits 1 at once with a
 *   line saying which address and which flag (it used to log `runnable failed` and reconcile on
 *   without metrics or probes);
 * - `/readyz` is honest: against a kubeconfig whose server is a closed port it fails
 *   `watches-healthy` with the connection error (it used to report `[+]watches-healthy ok`);
 *   on the local control plane it fails for a watch of a kind whose CRD is missing and passes
 *   once every watch has listed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { ConfigMapKind, Manager, defineKind, type KubeObject } from '@converge/runtime';
import { parse, stringify } from 'yaml';
import { kubeconfigPath, testClient, testLogger, testNamespace, eventually } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';
import { startReplica } from '../../support/operator-process.ts';
import { within } from '../../support/within.ts';

async function listenOnFreePort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server };
}

async function freePort(): Promise<number> {
  const { port, server } = await listenOnFreePort();
  await new Promise((r) => server.close(r));
  return port;
}

for (const [flag, server] of [['--metrics-bind-address', 'metrics'], ['--health-probe-bind-address', 'probe'], ['--webhook-bind-address', 'webhook']] as const) {
  test(`converge run with a busy ${server} port exits 1 with a clear message`, { timeout: 60_000 }, async (t) => {
    const client = testClient();
    t.after(() => client.close());
    await ensureCrds(client);
    const ns = await testNamespace(t, client, 'busy');
    const { port, server: taken } = await listenOnFreePort();
    t.after(() => new Promise((r) => taken.close(r)));
    const others = ['--metrics-bind-address', '--health-probe-bind-address', '--webhook-bind-address'].filter((f) => f !== flag).flatMap((f) => [f, '0']);
    const replica = startReplica(`busy-${server}`, ['--namespace', ns, '--operators', 'microservice', flag, `127.0.0.1:${port}`, ...others]);
    t.after(() => replica.kill('SIGKILL'));
    const started = Date.now();
    const code = await within(replica.exited, 30_000, 'still running after 30 s');
    assert.equal(code, 1, `exit code; last lines: ${JSON.stringify(replica.lines.slice(-5))}`);
    t.diagnostic(`exited ${Date.now() - started} ms after start`);
    const line = replica.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('converge run:'));
    assert.equal(
      line?.msg,
      `converge run: ${server} server cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE); choose another address with ${flag} (or 0 to disable it)`,
    );
    // The webhook listens once its certificate is made, which may be after the workers started.
    if (server !== 'webhook') assert.ok(!replica.lines.some((l) => l.msg === 'starting workers'), 'no controller ran without its server');
  });
}

test('converge run against an unreachable API server: /readyz fails watches-healthy with the connection error', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-unreachable-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = parse(readFileSync(kubeconfigPath(), 'utf8')) as { clusters: { cluster: { server: string } }[] };
  const closed = await freePort();
  for (const c of kubeconfig.clusters) c.cluster.server = `https://127.0.0.1:${closed}`;
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, stringify(kubeconfig));
  const probe = await freePort();
  const replica = startReplica('unreachable', ['--kubeconfig', path, '--health-probe-bind-address', `127.0.0.1:${probe}`, '--metrics-bind-address', '0']);
  t.after(async () => { replica.kill('SIGKILL'); await replica.exited; });
  const body = await eventually(async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${probe}/readyz?verbose`);
      const text = await res.text();
      return res.status === 500 && /ECONNREFUSED/.test(text) ? text : undefined;
    } catch {
      return undefined; // not listening yet
    }
  }, { timeoutMs: 30_000, what: '/readyz naming the refused connection' });
  assert.match(body, /\[-\]watches-healthy failed: Microservice: .*ECONNREFUSED/);
  assert.doesNotMatch(body, /\[\+\]watches-healthy ok/);
});

interface Widget extends KubeObject {}
const MissingKind = defineKind<Widget>({ group: 'converge-test.example.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true });

const WIDGET_NOT_SERVED = /\[-\]watches-healthy failed: (.*; )?Widget in readyz-[^:]+: .*(404|not found|not installed)/i;

test('on the local control plane: /readyz fails for a watch of a missing CRD, passes once every watch has listed', { timeout: 60_000 }, async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'readyz');
  const run = async (kinds: 'missing' | 'present') => {
    const manager = new Manager({ client: testClient(), log: testLogger(), namespaces: [ns], healthProbeBindAddress: '127.0.0.1:0' });
    manager.cache.informer(ConfigMapKind);
    if (kinds === 'missing') manager.cache.informer(MissingKind);
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    const [probe] = await manager.serverAddresses();
    return { probe, stop: async () => { stop.abort(); await running; await manager.client.close(); } };
  };
  const missing = await run('missing');
  t.after(missing.stop);
  const failing = await eventually(async () => {
    const res = await fetch(`http://${missing.probe}/readyz?verbose`);
    const text = await res.text();
    // Until the ConfigMap watch has listed, it is named too (first): wait for the Widget's line.
    return res.status === 500 && WIDGET_NOT_SERVED.test(text) ? text : undefined;
  }, { timeoutMs: 30_000, what: '/readyz naming the missing kind' });
  assert.match(failing, WIDGET_NOT_SERVED);
  await missing.stop();

  const present = await run('present');
  t.after(present.stop);
  const ok = await eventually(async () => {
    const res = await fetch(`http://${present.probe}/readyz?verbose`);
    const text = await res.text();
    return res.status === 200 ? text : undefined;
  }, { timeoutMs: 30_000, what: '/readyz ok' });
  assert.match(ok, /\[\+\]caches-synced ok\n\[\+\]watches-healthy ok/);
});
