/**
 * Checklist item 2, "crash points": `converge run` is SIGKILLed by the test-only fault hook
 * (`CONVERGE_FAULTS=point=kill[@n]`) exactly between two steps of its work, then started again.
 * For every point the state right after the crash is checked (so we know the kill landed where
 * it says), then the restarted operator must converge with no duplicate child, no duplicate
 * vendor instance and no lost status.
 *
 * Points: before the first child write, after a child create and before the next, after a child
 * update and before the next (a port change), before the first and before the second status
 * write; for providers before the vendor create, after it and before the status write, before the
 * first status write, before the vendor delete, and after the vendor delete before the finalizer
 * is removed. (`provider:after-create` is also covered by test/integration/provider/faults.test.ts;
 * it is repeated here so the matrix is complete.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentKind, ServiceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import type { MicroserviceSpec } from '../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind, PROVIDER_FINALIZER } from '../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProviderSpec } from '../../packages/operators/src/operators/provider/index.ts';
import type { OperatorReplica } from '../support/operator-process.ts';
import { reliabilityEnv, reliabilityReport, startWitness, waitConverged, describe, diedAt, within, IMAGE } from './support/index.ts';
import type { ReliabilityEnv } from './support/index.ts';

const workersStarted = (l: Record<string, unknown>) => l.msg === 'starting workers';
const MS: MicroserviceSpec = { container: { image: IMAGE, port: 8080 } };
const msKey = (env: ReliabilityEnv) => ({ namespace: env.ns, name: 'crash' });

interface Cell {
  point: string;
  at?: number;
  /**
   * More faults for the doomed replica (CONVERGE_FAULTS entries). The Microservice's children are
   * written concurrently: to crash with exactly one of them written, the other's write is failed
   * at its own fault point.
   */
  alsoFaults?: string;
  what: string;
  kind: 'ms' | 'dhp';
  /** Brings the object to the state the crash needs, with a healthy operator (then stopped). */
  prepare?: 'converged';
  /** The user action that makes the doomed operator reach the point. */
  trigger: (env: ReliabilityEnv) => Promise<void>;
  /** Checks the state right after the kill. */
  afterCrash: (env: ReliabilityEnv) => Promise<void>;
  /** What the user last asked for (undefined: the object is deleted). */
  final: (env: ReliabilityEnv) => MicroserviceSpec | DigitalHumanProviderSpec | undefined;
}

const get = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
  try {
    return await fn();
  } catch {
    return undefined;
  }
};

const dhpSpec = (env: ReliabilityEnv): DigitalHumanProviderSpec => ({ endpoint: env.sim.baseUrl, region: 'ap-northeast-1', displayName: 'crash', credentials: { secretRef: { name: 'creds' } } });
const createMs = (env: ReliabilityEnv) => env.client.create(MicroserviceKind, { metadata: { name: 'crash', namespace: env.ns }, spec: MS }).then(() => {});
const createDhp = (env: ReliabilityEnv) => env.client.create(DigitalHumanProviderKind, { metadata: { name: 'crash', namespace: env.ns }, spec: dhpSpec(env) }).then(() => {});
const deleteDhp = (env: ReliabilityEnv) => env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'crash' }).then(() => {});
const children = async (env: ReliabilityEnv) => ({
  deployment: await get(() => env.client.get(DeploymentKind, msKey(env))),
  service: await get(() => env.client.get(ServiceKind, msKey(env))),
  ms: await env.client.get(MicroserviceKind, msKey(env)),
});
const provider = (env: ReliabilityEnv) => env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'crash' });

const cells: Cell[] = [
  {
    point: 'microservice:before-apply-deployment', what: 'before the first child write (no status yet: Accepted is not written on its own when the children follow; issue 17)', kind: 'ms', trigger: createMs, final: () => MS,
    afterCrash: async (env) => {
      const c = await children(env);
      assert.equal(c.ms.status?.phase, undefined, 'no status yet');
      assert.equal(c.deployment, undefined, 'no Deployment yet');
      assert.equal(c.service, undefined, 'no Service yet');
    },
  },
  {
    point: 'microservice:after-apply-deployment', alsoFaults: 'microservice:before-apply-service=throw', what: 'after the Deployment create, the Service create (sent concurrently) failed', kind: 'ms', trigger: createMs, final: () => MS,
    afterCrash: async (env) => {
      const c = await children(env);
      assert.ok(c.deployment, 'the Deployment was created');
      assert.equal(c.service, undefined, 'the Service was not');
    },
  },
  {
    point: 'microservice:before-status', at: 1, what: 'after both children, before the first status write (ResourcesApplied)', kind: 'ms', trigger: createMs, final: () => MS,
    afterCrash: async (env) => {
      const c = await children(env);
      assert.ok(c.deployment && c.service, 'both children exist');
      assert.equal(c.ms.status?.phase, undefined, 'no status yet');
    },
  },
  {
    point: 'microservice:after-apply-deployment', alsoFaults: 'microservice:before-apply-service=throw', what: 'port change: after the Deployment update, the Service update (sent concurrently) failed', kind: 'ms', prepare: 'converged',
    trigger: (env) => env.client.patch(MicroserviceKind, msKey(env), { type: 'merge', body: { spec: { container: { port: 9090 } } } }).then(() => {}),
    final: () => ({ ...MS, container: { ...MS.container, port: 9090 } }),
    afterCrash: async (env) => {
      const c = await children(env);
      assert.equal(c.deployment?.spec?.template?.spec?.containers?.[0]?.ports?.[0]?.containerPort, 9090, 'the Deployment was updated');
      assert.equal(c.service?.spec?.ports?.[0]?.port, 8080, 'the Service was not');
    },
  },
  {
    point: 'provider:before-create', what: 'finalizer added and the create request recorded, before the vendor create call', kind: 'dhp', trigger: createDhp, final: dhpSpec,
    afterCrash: async (env) => {
      const p = await provider(env);
      assert.ok(p.metadata.finalizers?.includes(PROVIDER_FINALIZER), 'finalizer added first');
      assert.ok(p.status?.createRequestedAt && p.status.instanceEndpoint === env.sim.baseUrl, 'the create request recorded before the call');
      assert.equal(env.sim.instances().length, 0, 'no instance yet');
    },
  },
  {
    point: 'provider:after-create', what: 'after the vendor create, before the status write', kind: 'dhp', trigger: createDhp, final: dhpSpec,
    afterCrash: async (env) => {
      assert.equal((await provider(env)).status?.providerID, undefined, 'providerID not recorded');
      assert.equal(env.sim.instances().length, 1, 'the instance exists');
    },
  },
  {
    point: 'provider:before-status', at: 1, what: 'after create and health check, before the first status write', kind: 'dhp', trigger: createDhp, final: dhpSpec,
    afterCrash: async (env) => {
      const status = (await provider(env)).status;
      assert.equal(status?.providerID, undefined, 'no providerID');
      assert.equal(status?.conditions, undefined, 'no condition');
      assert.equal(status?.instanceEndpoint, env.sim.baseUrl, 'only the create request, recorded before it was sent');
      assert.equal(env.sim.instances().length, 1);
    },
  },
  {
    point: 'provider:before-delete', what: 'CR deleted, before the vendor delete call', kind: 'dhp', prepare: 'converged', trigger: deleteDhp, final: () => undefined,
    afterCrash: async (env) => {
      assert.ok((await provider(env)).metadata.deletionTimestamp, 'Terminating');
      assert.equal(env.sim.instances().length, 1, 'the instance is still there');
    },
  },
  {
    point: 'provider:before-finalizer-removal', what: 'after the vendor delete, before the finalizer removal', kind: 'dhp', prepare: 'converged', trigger: deleteDhp, final: () => undefined,
    afterCrash: async (env) => {
      const p = await provider(env);
      assert.ok(p.metadata.deletionTimestamp && p.metadata.finalizers?.includes(PROVIDER_FINALIZER), 'Terminating with the finalizer');
      assert.equal(env.sim.instances().length, 0, 'the instance is gone');
    },
  },
];

for (const cell of cells) {
  const spec = `${cell.point}${cell.at ? `@${cell.at}` : ''}`;
  test(`kill at ${spec}: ${cell.what}`, { timeout: 180_000 }, async (t) => {
    const fig = reliabilityReport(t, 2, `Crash point ${spec}`);
    const env = await reliabilityEnv(t, 'rel-crash', { resyncSeconds: 30, healthIntervalSeconds: 30 });
    const witness = await startWitness(env.client, env.ns, env.sim);
    t.after(() => witness.stop());
    const operators = cell.kind === 'ms' ? 'microservice' : 'provider';
    const expectFor = () => {
      const final = cell.final(env);
      return cell.kind === 'ms'
        ? { microservices: new Map(final ? [['crash', final as MicroserviceSpec]] : []) }
        : { providers: new Map(final ? [['crash', final as DigitalHumanProviderSpec]] : []) };
    };

    if (cell.prepare === 'converged') {
      const healthy = env.startReplica('before', { operators });
      await (cell.kind === 'ms' ? createMs(env) : createDhp(env));
      const ready = await waitConverged(env.client, env.ns, env.sim, { ...(cell.kind === 'ms' ? { microservices: new Map([['crash', MS]]) } : { providers: new Map([['crash', dhpSpec(env)]]) }), timeoutMs: 60_000 });
      assert.ok(ready.converged, describe(ready));
      healthy.kill('SIGTERM');
      assert.equal(await healthy.exited, 0);
    }

    const doomed: OperatorReplica = env.startReplica('doomed', { operators, faults: `${cell.point}=kill${cell.at ? `@${cell.at}` : ''}${cell.alsoFaults ? `,${cell.alsoFaults}` : ''}` });
    await doomed.waitFor(workersStarted);
    const triggeredAt = Date.now();
    await cell.trigger(env);
    const exit = await within(doomed.exited, 60_000, 'still running');
    assert.equal(exit, 'SIGKILL', `the operator died by SIGKILL (last lines ${JSON.stringify(doomed.lines.slice(-4))})`);
    assert.equal(diedAt(doomed), cell.point, 'at the named point');
    fig.ms('trigger to kill', Date.now() - triggeredAt);
    await cell.afterCrash(env);

    const restartedAt = Date.now();
    const healed = env.startReplica('restarted', { operators });
    const result = await waitConverged(env.client, env.ns, env.sim, { ...expectFor(), timeoutMs: 60_000 });
    fig.ms('restart to converged', Date.now() - restartedAt);
    fig.duplicates('duplicate children', witness.duplicateChildren());
    fig.duplicates('duplicate vendor instances', witness.duplicateInstances());
    fig.count('vendor creates', witness.vendorCreates());
    fig.lost('lost status / spec', result.lostEdits + (result.converged ? 0 : result.unconverged));
    fig.orphans('orphans', result.orphanChildren + result.orphanInstances);
    fig.stuck('stuck Terminating', result.stuckTerminating);
    assert.ok(result.converged, describe(result));
    assert.equal(witness.duplicateChildren(), 0, `children UIDs: ${JSON.stringify([...witness.children].map(([k, v]) => [k, v.size]))}`);
    assert.equal(witness.duplicateInstances(), 0);
    assert.ok(witness.vendorCreates() <= 1, `vendor creates ${witness.vendorCreates()}`);
    healed.kill('SIGTERM');
    assert.equal(await healed.exited, 0, 'the restarted operator stops cleanly');
  });
}
