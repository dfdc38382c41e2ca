/**
 * Checklist item 3, "kill storm": while a random workload creates, changes and deletes
 * Microservices and DigitalHumanProviders, `converge run` is SIGKILLed at random moments and
 * started again (20 times by default, 100 with CONVERGE_RELIABILITY_LONG=1). Afterwards one
 * operator runs undisturbed and everything must converge to the user's last word: 0 duplicate
 * children, 0 duplicate vendor instances, 0 orphaned instances or children, 0 objects stuck
 * Terminating, 0 lost edits.
 *
 * The workload and the kill moments come from a seeded generator; the seed is printed and can
 * be replayed with CONVERGE_RELIABILITY_SEED. Every replica reaches the API server through the
 * fault proxy with the default mix (every watch event cut, half of the watches closed early,
 * latency; test/support/fault-proxy.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { reliabilityEnv, reliabilityReport, startWitness, waitConverged, describe, Churn, random, within, LONG, auditMark } from './support/index.ts';
import { DEFAULT_FAULTS } from '../support/fault-proxy.ts';
import { LATE_INSTANCE_DELETED_LOG } from '../../packages/operators/src/operators/provider/late-creates.ts';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';

const KILLS = LONG ? 100 : 20;
const SEED = Number(process.env.CONVERGE_RELIABILITY_SEED ?? Date.now() % 1_000_000);
/** Measured by the storm, judged by the test after it. */
let recreated: number | undefined;

test(`${KILLS} SIGKILLs during churn: everything converges with nothing duplicated, orphaned or stuck`, { timeout: LONG ? 1_200_000 : 300_000 }, async (t) => {
  const fig = reliabilityReport(t, 3, 'Kill storm');
  fig.count('seed', SEED);
  const env = await reliabilityEnv(t, 'rel-storm', { resyncSeconds: 5, healthIntervalSeconds: 5, faults: DEFAULT_FAULTS });
  const witness = await startWitness(env.client, env.ns, env.sim);
  const audit = await auditMark(env.ns);
  t.after(() => witness.stop());
  const rng = random.seeded(SEED);
  const churn = new Churn({ client: env.client, ns: env.ns, rng: random.seeded(SEED + 1), endpoint: env.sim.baseUrl, minLive: 4, maxLive: 10 });
  for (let i = 0; i < 4; i++) {
    await churn.createMicroservice();
    await churn.createProvider();
  }

  const stopChurn = new AbortController();
  const churning = churn.run(stopChurn.signal, 120);
  let kills = 0;
  let killedWhileWorking = 0;
  let didWork = 0;
  const stormStart = Date.now();
  const replicas: { name: string; lines: Record<string, unknown>[] }[] = [];
  try {
    for (let k = 1; k <= KILLS; k++) {
      const replica = env.startReplica(`storm-${k}`);
      replicas.push({ name: `storm-${k}`, lines: replica.lines });
      if (rng.next() < 0.2) {
        // While it starts: listing, syncing caches.
        await new Promise((r) => setTimeout(r, rng.int(100, 1_200)));
      } else {
        // While it reconciles: the first seconds after the workers start are the busiest.
        await within(replica.waitFor((l) => l.msg === 'starting workers', 30_000).catch(() => undefined), 30_000, undefined);
        await new Promise((r) => setTimeout(r, rng.int(50, 2_000)));
      }
      const working = replica.lines.some((l) => l.msg === 'starting workers');
      if (replica.lines.some((l) => typeof l.reconcileID === 'string')) didWork++;
      replica.kill('SIGKILL');
      const exit = await within(replica.exited, 10_000, 'did not exit');
      assert.equal(exit, 'SIGKILL', `replica ${k} exit`);
      kills++;
      if (working) killedWhileWorking++;
    }
  } finally {
    stopChurn.abort();
    await churning;
  }
  const stormMs = Date.now() - stormStart;
  await churn.settle();

  const restartedAt = Date.now();
  const survivor = env.startReplica('survivor');
  replicas.push({ name: 'survivor', lines: survivor.lines });
  // Up and working before anything is judged (and before its SIGTERM at the end): the storm's
  // last replica may have converged everything already.
  await survivor.waitFor((l) => l.msg === 'starting workers', 60_000);
  const result = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 180_000 });
  fig.count('SIGKILLs', kills);
  fig.count('killed after workers started', killedWhileWorking);
  fig.count('killed after logging reconcile work', didWork);
  fig.ms('storm duration', stormMs);
  fig.count('workload operations', churn.operations);
  fig.text('operations by kind', Object.entries(churn.counts).map(([k, v]) => `${k} ${v}`).join(', '));
  fig.count('objects at the end', result.microservices + result.providers);
  fig.ms('last restart to converged', Date.now() - restartedAt);
  fig.duplicates('duplicate children', witness.duplicateChildren());
  fig.count('children created after their owner was deleted (garbage-collected)', witness.createdAfterOwnerDeleted());
  recreated = witness.recreatedAfterOwnerDeleted();
  fig.duplicates('duplicate vendor instances', witness.duplicateInstances());
  fig.count('vendor creates', witness.vendorCreates());
  fig.count('providers that ever existed', witness.providerUids.size);
  // Creates that reached the vendor after their provider's finalizer went (ADR 0037), deleted by the sweep.
  fig.count('late vendor instances deleted by the late-create sweep', replicas.flatMap((r) => r.lines).filter((l) => l.msg === LATE_INSTANCE_DELETED_LOG).length);
  fig.orphans('orphaned vendor instances', result.orphanInstances);
  fig.orphans('orphaned children', result.orphanChildren);
  fig.stuck('stuck Terminating', result.stuckTerminating);
  fig.lost('lost edits', result.lostEdits);
  if (env.proxy) {
    const p = env.proxy.stats();
    fig.text('fault proxy', `${p.requests} requests, ${p.watches} watches, ${p.cuts} cuts (${p.cutsInsideCharacters} inside characters), ${p.closedCleanly} watches closed cleanly and ${p.closedAbruptly} abruptly`);
  }

  if (!result.converged) {
    // Every replica's log lines, for the diagnosis of a storm that did not converge (a storm's
    // timing does not replay from its seed alone).
    const dir = new URL('./results/tmp/', import.meta.url);
    mkdirSync(dir, { recursive: true });
    const file = new URL(`kill-storm-${SEED}.log`, dir);
    writeFileSync(file, replicas.flatMap((r) => r.lines.map((l) => JSON.stringify({ replica: r.name, ...l }))).join('\n') + '\n');
    // Each leaked instance's story: what the witness saw of its provider, what the workload did to
    // it, and the API server's audit trail of it (this found kubernetes#77988, docs/reliability.md).
    const live = new Set((await env.client.list(DigitalHumanProviderKind, { namespace: env.ns })).items.map((d) => d.metadata.uid));
    const calls = await audit.events();
    const leaks = env.sim.instances().filter((i) => !i.idempotencyKey || !live.has(i.idempotencyKey));
    const story = leaks.flatMap((i) => {
      const seen = i.idempotencyKey ? witness.providerHistory(i.idempotencyKey) : [];
      const name = /^\S+ \w+ (\S+) rv=/.exec(seen[0] ?? '')?.[1];
      const audited = name === undefined ? [] : calls.filter((e) => e.objectRef?.resource === 'digitalhumanproviders' && e.objectRef.name === name).map((e) => `${e.requestReceivedTimestamp} ${e.verb}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''} ${e.responseStatus?.code ?? ''} ${e.userAgent ?? ''}`);
      return [`# vendor instance ${i.id} (key ${i.idempotencyKey}, created ${i.createdAt}): provider ${name ?? 'never seen'}`, ...seen, '## the workload', ...churn.history.filter((h) => name !== undefined && h.includes(` dhp/${name}: `)), '## the API server (audit log)', ...audited, ''];
    });
    const storyFile = new URL(`kill-storm-${SEED}.leaks.txt`, dir);
    if (story.length) writeFileSync(storyFile, story.join('\n'));
    assert.fail(`${describe(result)} (seed ${SEED}; the replicas' log lines are in ${file.pathname}${story.length ? `, each leaked instance's story in ${storyFile.pathname}` : ''})`);
  }
  assert.equal(witness.duplicateChildren(), 0, `children per owner: ${JSON.stringify([...witness.children].filter(([, v]) => v.size > 1).map(([k, v]) => [k, [...v]]))}`);
  assert.equal(witness.duplicateInstances(), 0, `vendor creates per CR UID: ${JSON.stringify(witness.duplicateInstanceKeys())}`);
  assert.ok(witness.vendorCreates() <= witness.providerUids.size, `at most one create per provider UID (${witness.vendorCreates()} creates, ${witness.providerUids.size} UIDs)`);
  assert.ok(kills >= KILLS);
  survivor.kill('SIGTERM');
  assert.equal(await survivor.exited, 0);
});

// Found by the long storm: when a Microservice was deleted while the operator's cache still
// showed it, the operator created its children again and again — the garbage collector deleted
// each one (its owner was gone), the Deployment's delete event re-queued the owner, the stale
// cache still had it, the status write answered 404 and was retried (seen: 5 Deployments for one
// deleted owner within 0.6 s). Fixed by a live read of the owner before any child is created and
// by ending the reconcile on a 404 from the status write. One child created by a reconcile racing
// the delete is still possible (between that read and the create); more than one per owner is
// the loop this test guards against.
test('no child is re-created for an owner that is already deleted', (t) => {
  const fig = reliabilityReport(t, 3, 'Kill storm: children re-created for a deleted owner');
  if (recreated === undefined) {
    fig.note('skipped: the storm above did not get this far');
    return;
  }
  fig.duplicates('children re-created for an owner already deleted (beyond one racing the delete)', recreated);
  assert.equal(recreated, 0);
});
