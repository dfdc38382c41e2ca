/**
 * When a manager's `start` settles, nothing it ran is still at work: stopped at a random moment of
 * its start-up (servers binding, the webhook's first certificate being issued, the CA injector
 * retrying an API server that is not there), no log line comes after `start` settled, and no
 * server, socket or timer of it is left (Node's active resources are back to what they were).
 * A process closes its log and exits right after `start` settles (`converge dev` died of a line
 * written after its log file closed: the webhook server settled before its certificate source).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { KubeConfig } from '../kubeconfig/index.ts';
import { createLogger } from '../logging/index.ts';
import { CaBundleInjector, WebhookServer, directoryCaStore, selfManagedCertificates } from '../webhook/index.ts';
import { Manager } from './index.ts';

const RUNS = process.env.CONVERGE_RELIABILITY_LONG === '1' ? 200 : 25;

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

function unreachableKubeConfig(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'nowhere', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'nobody', token: 'not-a-token' }],
    contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'nobody' }],
    currentContext: 'nowhere',
  });
  return kc;
}

/** Node's active resources (handles and timers), counted by type. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/** What `now` holds beyond `before`, by type. */
function beyond(before: Map<string, number>, now: Map<string, number>): Record<string, number> {
  const extra: Record<string, number> = {};
  for (const [type, n] of now) if (n > (before.get(type) ?? 0)) extra[type] = n - (before.get(type) ?? 0);
  return extra;
}

test('stopped at any moment of its start-up, a manager leaves nothing running and logs nothing after start settles', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-quiet-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeConfig = unreachableKubeConfig(await closedPort());
  // The CA is made once (as a replica finds it in its store); each run issues its own serving pair.
  const store = directoryCaStore(dir);
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 400 })), async (stopAfterMs) => {
      const before = activeResources();
      const lines: string[] = [];
      const log = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
      const m = new Manager({ kubeConfig, log, metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0' });
      const webhook = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store }), log });
      m.add({ name: 'webhook server', start: (s) => webhook.start(s) }, { needLeaderElection: false });
      const injector = new CaBundleInjector({ client: m.client, crds: ['things.example.com'], caPem: () => webhook.caPem(), log });
      m.add({ name: 'CA injector', start: (s) => injector.start(s) }, { needLeaderElection: false });
      const stop = new AbortController();
      const running = m.start(stop.signal).catch(() => undefined);
      await new Promise((r) => setTimeout(r, stopAfterMs));
      stop.abort();
      await running;
      const settled = lines.length;
      await new Promise((r) => setTimeout(r, 150));
      assert.deepEqual(lines.slice(settled), [], `logged after start settled (stopped ${stopAfterMs} ms after the start)`);
      assert.deepEqual(beyond(before, activeResources()), {}, `left running after start settled (stopped ${stopAfterMs} ms after the start)`);
    }),
    { numRuns: RUNS },
  );
});
