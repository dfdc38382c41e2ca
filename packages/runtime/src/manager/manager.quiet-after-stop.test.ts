/**
 * When a manager's `start` settles, nothing it ran is still at work: stopped at a random moment of
 * its start-up (servers binding, the webhook's first certificate being issued, the CA injector
 * retrying an API server that is not there), no log line comes after `start` settled, and no
 * server, socket or timer of it is left (Node's active resources are back to what they were).
 * A process closes its log and exits right after `start` settles (`converge dev` died of a line
 * written after its log file closed: the webhook server settled before its certificate source).
 */
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { CaBundleInjector, WebhookServer, directoryCaStore, selfManagedCertificates } from '../webhook/index.ts';
import { Manager } from './index.ts';
import { afterStopWitness } from './after-stop.test-support.ts';
import { closedPort, unreachableKubeConfig } from './unreachable-cluster.test-support.ts';

const RUNS = process.env.CONVERGE_RELIABILITY_LONG === '1' ? 200 : 25;

test('stopped at any moment of its start-up, a manager leaves nothing running and logs nothing after start settles', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-quiet-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeConfig = unreachableKubeConfig(await closedPort());
  // The CA is made once (as a replica finds it in its store); each run issues its own serving pair.
  const store = directoryCaStore(dir);
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 400 })), async (stopAfterMs) => {
      const witness = afterStopWitness();
      const { log } = witness;
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
      witness.stopped();
      await witness.check(`stopped ${stopAfterMs} ms after the start`, { quietMs: 150 });
    }),
    { numRuns: RUNS },
  );
});
