/**
 * A whole operator process (both operators, leader election, metrics, probes, the conversion
 * webhook, a vendor simulator behind the providers) stopped at a random moment of its start-up or
 * of its first reconciles: when `runOperatorProcess` settles, nothing of it is still at work — no
 * log line comes afterwards and no server, socket or timer of it is left (Node's active resources
 * are back to what they were; the vendor simulator runs in this process, so a connection the
 * operator left open to it shows as the simulator's socket). `converge run` and `converge dev`
 * close their logs and exit right after it settles (`dev` died of a line written after its log
 * file closed), and a test or an embedding program runs it again in the same process. The moments
 * come from fast-check (`CONVERGE_FC_SEED` replays).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { SecretKind, loadKubeConfig } from '@converge/runtime';
import { freePorts } from '@converge/envtest';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { runOperatorProcess } from '../../../packages/operators/src/operators/operator-process.ts';
import { defaultOperatorConfig } from '../../../packages/operators/src/operators/operator-config.ts';
import { startVendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import { startDashboard } from '../../../packages/operators/src/dashboard/index.ts';
import { openEvents } from '../../support/dashboard-client.ts';
import { afterStopWitness } from '../../../packages/runtime/src/manager/after-stop.test-support.ts';
import { kubeconfigPath, testClient, testNamespace } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';
import { provider } from '../provider/support.ts';

const RUNS = process.env.CONVERGE_RELIABILITY_LONG === '1' ? 30 : 6;

test('an operator process stopped at any moment of its start-up or first reconciles logs nothing and leaves nothing running once it settled', { timeout: 600_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'quiet');
  const token = `quiet-${randomBytes(8).toString('hex')}`;
  const sim = await startVendorSimulator({ token });
  t.after(() => sim.stop());
  await client.create(SecretKind, { metadata: { name: 'creds', namespace: ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token } });
  for (let i = 0; i < 3; i++) await client.create(MicroserviceKind, { metadata: { name: `web-${i}`, namespace: ns }, spec: { container: { image: 'nginx:1.27', port: 8080 } } });
  for (let i = 0; i < 2; i++) await client.create(DigitalHumanProviderKind, provider(ns, `presenter-${i}`, sim.baseUrl));
  const caDir = mkdtempSync(join(tmpdir(), 'converge-quiet-ca-'));
  t.after(() => rmSync(caDir, { recursive: true, force: true }));
  const kubeConfig = loadKubeConfig(kubeconfigPath());
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 4_000 })), async (stopAfterMs) => {
      run += 1;
      // Something to do at each start: every object changed since the last run.
      for (let i = 0; i < 3; i++) await client.patch(MicroserviceKind, { namespace: ns, name: `web-${i}` }, { type: 'merge', body: { spec: { container: { image: `nginx:1.27.${run}` } } } });
      for (let i = 0; i < 2; i++) await client.patch(DigitalHumanProviderKind, { namespace: ns, name: `presenter-${i}` }, { type: 'merge', body: { spec: { displayName: `Presenter ${i} take ${run}` } } });
      const [webhookPort] = await freePorts(1);
      const witness = afterStopWitness();
      const { log } = witness;
      const stop = new AbortController();
      const running = runOperatorProcess(
        {
          kubeConfig,
          namespaces: [ns],
          leaderElection: { namespace: ns },
          metricsBindAddress: '127.0.0.1:0',
          healthProbeBindAddress: '127.0.0.1:0',
          // Not injected: the suite's CRDs call the suite's webhook.
          webhook: { bindAddress: `127.0.0.1:${webhookPort}`, caDir, injectCa: false },
          log,
          config: { ...defaultOperatorConfig, provider: { healthIntervalSeconds: 1, vendor: { caFile: sim.caPath, timeoutSeconds: 2 } } },
        },
        stop.signal,
      ).catch((err: unknown) => err);
      await new Promise((r) => setTimeout(r, stopAfterMs));
      stop.abort();
      const outcome = await running;
      witness.stopped();
      assert.equal(outcome, undefined, `a graceful stop ${stopAfterMs} ms after the start resolves`);
      await witness.check(`stopped ${stopAfterMs} ms after the start`);
    }),
    { numRuns: RUNS },
  );
});

test('the dashboard closed at any moment, with a browser reading its event stream, logs nothing and leaves nothing running once close settled', { timeout: 300_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'quiet-dash');
  for (let i = 0; i < 3; i++) await client.create(MicroserviceKind, { metadata: { name: `web-${i}`, namespace: ns }, spec: { container: { image: 'nginx:1.27', port: 8080 } } });
  const kubeConfig = loadKubeConfig(kubeconfigPath());
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 1_500 })), fc.boolean(), async (closeAfterMs, reading) => {
      const witness = afterStopWitness();
      const { log } = witness;
      const dashboard = await startDashboard({ clusters: [{ name: 'here', kubeConfig }], listen: '127.0.0.1:0', log });
      const reader = reading ? await openEvents(dashboard.url).catch(() => undefined) : undefined;
      await new Promise((r) => setTimeout(r, closeAfterMs));
      await dashboard.close();
      witness.stopped();
      reader?.close();
      await witness.check(`closed ${closeAfterMs} ms after the start${reading ? ', a reader connected' : ''}`);
    }),
    { numRuns: RUNS },
  );
});
