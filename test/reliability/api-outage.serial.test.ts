/**
 * Checklist item 4, "API server outage": during churn the shared API server is killed for 15 s
 * (60 s with CONVERGE_RELIABILITY_LONG=1) and started again. The operator process (`converge
 * run`, probes on loopback) must ride it out without a restart: `/healthz` stays 200 (no reason
 * to restart it), `/readyz` turns 500 while its watches cannot reach the API server and 200 again
 * after, the watches resume, and everything converges to the user's last word.
 *
 * Serial: it stops the API server every other test file shares.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePorts } from '@converge/envtest';
import { testCluster } from '../support/cluster.ts';
import { reliabilityEnv, reliabilityReport, startWitness, reportLeftovers, waitConverged, describe, Churn, random, LONG } from './support/index.ts';

const OUTAGE_MS = LONG ? 60_000 : 15_000;

async function status(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status;
  } catch {
    return 0;
  }
}

async function watchRestarts(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return text.split('\n').filter((l) => l.startsWith('converge_watch_restarts_total')).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

test(`API server down ${OUTAGE_MS / 1000} s during churn: the operator recovers without a restart`, { timeout: LONG ? 600_000 : 300_000 }, async (t) => {
  const fig = reliabilityReport(t, 4, 'API server outage');
  const cluster = await testCluster();
  const env = await reliabilityEnv(t, 'rel-outage', { resyncSeconds: 5, healthIntervalSeconds: 5 });
  const witness = await startWitness(env.client, env.ns, env.sim);
  t.after(() => witness.stop());
  const [probePort, metricsPort] = await freePorts(2);
  const readyz = `http://127.0.0.1:${probePort}/readyz`;
  const healthz = `http://127.0.0.1:${probePort}/healthz`;
  const metrics = `http://127.0.0.1:${metricsPort}/metrics`;
  const operator = env.startReplica('operator', { args: ['--health-probe-bind-address', `127.0.0.1:${probePort}`, '--metrics-bind-address', `127.0.0.1:${metricsPort}`] });
  let apiDown = false;
  t.after(async () => { if (apiDown) await cluster.startApiServer(); });

  const churn = new Churn({ client: env.client, ns: env.ns, rng: random.seeded(4), endpoint: env.sim.baseUrl, minLive: 4, maxLive: 8 });
  for (let i = 0; i < 4; i++) {
    await churn.createMicroservice();
    await churn.createProvider();
  }
  const first = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 60_000 });
  assert.ok(first.converged, describe(first));
  assert.equal(await status(readyz), 200, 'ready before the outage');
  const restartsBefore = await watchRestarts(metrics);

  const stopChurn = new AbortController();
  const churning = churn.run(stopChurn.signal, 200);
  await new Promise((r) => setTimeout(r, 3_000));

  // The outage. Probes are polled every 250 ms throughout.
  const samples: { at: number; readyz: number; healthz: number }[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const [r, h] = await Promise.all([status(readyz), status(healthz)]);
      samples.push({ at: Date.now(), readyz: r, healthz: h });
      await new Promise((res) => setTimeout(res, 250));
    }
  })();
  const downAt = Date.now();
  apiDown = true;
  await cluster.stopApiServer();
  await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - downAt))));
  const startingAt = Date.now();
  await cluster.startApiServer();
  apiDown = false;
  const backAt = Date.now();
  const readyAgain = await (async () => {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const s = samples.findLast((x) => x.at > backAt && x.readyz === 200);
      if (s) return s.at;
      await new Promise((r) => setTimeout(r, 100));
    }
    return undefined;
  })();
  await new Promise((r) => setTimeout(r, 3_000)); // churn goes on after the outage
  stopChurn.abort();
  await churning;
  await churn.settle();
  const caughtUp = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, operatorOnly: true, timeoutMs: 180_000 });
  const caughtUpAt = Date.now();
  const result = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 180_000 });
  const convergedAt = Date.now();
  polling = false;
  await poller;

  const unreadyAt = samples.find((s) => s.at >= downAt && s.readyz !== 200)?.at;
  const healthzFailures = samples.filter((s) => s.healthz !== 200).length;
  const restartsAfter = await watchRestarts(metrics).catch(() => Number.NaN);
  fig.ms('API server stopped for', startingAt - downAt);
  fig.ms('API server boot', backAt - startingAt);
  fig.ms('/readyz false after the kill', unreadyAt === undefined ? -1 : unreadyAt - downAt);
  fig.ms('/readyz true after the API server was back', readyAgain === undefined ? -1 : readyAgain - backAt);
  fig.count('/healthz failures', healthzFailures);
  fig.count('probe samples', samples.length);
  fig.count('watch restarts', restartsAfter - restartsBefore);
  fig.count('operator restarts', operator.child.exitCode === null && operator.child.signalCode === null ? 0 : 1);
  fig.ms('operator caught up after the API server was back (status and children of every live object)', caughtUp.converged ? caughtUpAt - backAt : -1);
  fig.ms('everything converged after the API server was back (also Ready rollouts and garbage collection by kube-controller-manager)', result.converged ? convergedAt - backAt : -1);
  fig.count('workload operations', churn.operations);
  fig.count('operations without an answer (settled by reading back)', churn.counts.uncertain);
  reportLeftovers(fig, witness, result);
  if (!LONG) fig.note(`default run: ${OUTAGE_MS / 1000} s outage; CONVERGE_RELIABILITY_LONG=1 runs the 60 s outage of the checklist`);

  assert.ok(caughtUp.converged, describe(caughtUp));
  assert.ok(result.converged, describe(result));
  assert.ok(unreadyAt !== undefined, '/readyz reported the outage');
  assert.ok(readyAgain !== undefined, '/readyz recovered');
  assert.equal(healthzFailures, 0, '/healthz never asked for a restart');
  assert.equal(operator.child.exitCode, null, 'the operator process never exited');
  assert.equal(operator.child.signalCode, null);
  assert.ok(restartsAfter - restartsBefore >= 1, 'the watches restarted');
  assert.equal(witness.duplicateChildren(), 0);
  assert.equal(witness.recreatedAfterOwnerDeleted(), 0, 'no child created twice for the same deleted owner');
  assert.equal(witness.duplicateInstances(), 0);
  operator.kill('SIGTERM');
  assert.equal(await operator.exited, 0);
});
