/**
 * "Everything converged", checked from the API server and the vendor simulator, object by
 * object, with a list of what is still wrong:
 * - every live Microservice: not deleting, status `ResourcesApplied` and `Ready=True` for its
 *   current generation, a Deployment and a Service controlled by its UID carrying its image
 *   and port;
 * - every live DigitalHumanProvider: not deleting, `Ready=True` for its generation, its
 *   `providerID` naming a live vendor instance whose idempotency key is its UID and whose
 *   displayName matches the spec;
 * - orphans: Deployments/Services controlled by a Microservice that no longer exists, vendor
 *   instances whose key is no live provider's UID;
 * - stuck: any object with a deletionTimestamp;
 * - optionally the expected set of objects and their specs (lost user edits).
 *
 * `waitConverged` polls this until nothing is wrong, and returns the last assessment either way
 * so a test can report the figures before it asserts.
 * @module
 */
import { DeploymentKind, ServiceKind, controllerOf } from '@converge/runtime';
import type { Deployment, KubeClient, Service } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice, MicroserviceSpec } from '../../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProviderSpec } from '../../../packages/operators/src/operators/provider/index.ts';
import type { VendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';

export interface Expectations {
  /** The Microservices that must exist, by name, with the spec the user last wrote. */
  microservices?: Map<string, MicroserviceSpec>;
  providers?: Map<string, DigitalHumanProviderSpec>;
  /**
   * Judge only the operator's part of the work: skip the Microservices' `Ready` condition (it also
   * waits for the cluster's Deployment and EndpointSlice controllers) and children left by deleted
   * Microservices (the cluster's garbage collector removes them).
   */
  operatorOnly?: boolean;
  /** Judge only the objects with these names (others may legitimately never converge). */
  only?: readonly string[];
}

export interface Assessment {
  problems: string[];
  microservices: number;
  providers: number;
  unconverged: number;
  orphanChildren: number;
  orphanInstances: number;
  stuckTerminating: number;
  /** Objects whose spec differs from what the user last wrote, or expected objects missing / unexpected ones present. */
  lostEdits: number;
}

function ready(conditions: { type: string; status: string; observedGeneration?: number }[] | undefined, generation: number | undefined) {
  const c = conditions?.find((x) => x.type === 'Ready');
  return c?.status === 'True' && c.observedGeneration === generation;
}

export async function assess(client: KubeClient, ns: string, sim: VendorSimulator | undefined, expect: Expectations = {}): Promise<Assessment> {
  const [ms, deps, svcs, dhps] = await Promise.all([
    client.listAll(MicroserviceKind, { namespace: ns }),
    client.listAll(DeploymentKind, { namespace: ns }),
    client.listAll(ServiceKind, { namespace: ns }),
    client.listAll(DigitalHumanProviderKind, { namespace: ns }),
  ]);
  const problems: string[] = [];
  let unconverged = 0;
  let stuck = 0;
  let lostEdits = 0;
  const msByUid = new Map(ms.items.map((m) => [m.metadata.uid!, m]));
  const child = <T extends Deployment | Service>(items: T[], m: Microservice) => items.find((c) => c.metadata.name === m.metadata.name && controllerOf(c)?.uid === m.metadata.uid);

  for (const m of ms.items) {
    const name = m.metadata.name!;
    if (expect.only && !expect.only.includes(name)) continue;
    const gen = m.metadata.generation;
    const why: string[] = [];
    if (m.metadata.deletionTimestamp) { stuck++; why.push('Terminating'); }
    if (m.status?.phase !== 'ResourcesApplied' || m.status.observedGeneration !== gen) why.push(`phase ${m.status?.phase}/${m.status?.observedGeneration} for generation ${gen}`);
    else if (!expect.operatorOnly && !ready(m.status.conditions, gen)) {
      const c = m.status.conditions?.find((x) => x.type === 'Ready');
      why.push(`not Ready for its generation (${c?.status}/${c?.reason}: ${c?.message})`);
    }
    const d = child(deps.items, m);
    const s = child(svcs.items, m);
    const container = d?.spec?.template?.spec?.containers?.[0];
    if (!d) why.push('no Deployment controlled by it');
    else if (container?.image !== m.spec.container.image || container?.ports?.[0]?.containerPort !== m.spec.container.port) why.push(`Deployment has ${container?.image}:${container?.ports?.[0]?.containerPort}`);
    if (!s) why.push('no Service controlled by it');
    else if (s.spec?.ports?.[0]?.port !== m.spec.container.port) why.push(`Service port ${s.spec?.ports?.[0]?.port}`);
    const wanted = expect.microservices?.get(name);
    if (expect.microservices && (!wanted || wanted.container.image !== m.spec.container.image || wanted.container.port !== m.spec.container.port)) {
      lostEdits++;
      why.push(wanted ? `spec ${m.spec.container.image}:${m.spec.container.port}, the user last wrote ${wanted.container.image}:${wanted.container.port}` : 'should not exist');
    }
    if (why.length) { unconverged++; problems.push(`Microservice ${name}: ${why.join(', ')}`); }
  }
  for (const name of expect.microservices?.keys() ?? []) {
    if (!ms.items.some((m) => m.metadata.name === name)) { lostEdits++; problems.push(`Microservice ${name}: missing`); }
  }
  let orphanChildren = 0;
  for (const c of [...deps.items, ...svcs.items]) {
    const ref = controllerOf(c);
    if (ref?.kind === 'Microservice' && !msByUid.has(ref.uid)) {
      orphanChildren++;
      if (!expect.operatorOnly) problems.push(`${c.kind ?? 'child'} ${c.metadata.name} controlled by a Microservice that is gone (uid ${ref.uid.slice(0, 8)})`);
    }
  }

  const instances = sim?.instances() ?? [];
  const liveUids = new Set(dhps.items.map((d) => d.metadata.uid!));
  for (const d of dhps.items) {
    const name = d.metadata.name!;
    if (expect.only && !expect.only.includes(name)) continue;
    const gen = d.metadata.generation;
    const why: string[] = [];
    if (d.metadata.deletionTimestamp) { stuck++; why.push(`Terminating (${d.status?.conditions?.find((c) => c.type === 'Ready')?.reason})`); }
    if (!ready(d.status?.conditions, gen) || d.status?.observedGeneration !== gen) {
      const c = d.status?.conditions?.find((x) => x.type === 'Ready');
      why.push(`Ready ${c?.status ?? 'unset'}/${c?.reason ?? ''} for generation ${d.status?.observedGeneration} of ${gen} (${c?.message ?? ''})`);
    }
    const mine = instances.filter((i) => i.idempotencyKey === d.metadata.uid);
    if (sim) {
      if (mine.length !== 1) why.push(`${mine.length} vendor instances`);
      else if (d.status?.providerID !== mine[0]!.id) why.push(`providerID ${d.status?.providerID} but the instance is ${mine[0]!.id}`);
      else if (d.spec.displayName !== undefined && mine[0]!.displayName !== d.spec.displayName) why.push(`vendor displayName ${mine[0]!.displayName}`);
    }
    const wanted = expect.providers?.get(name);
    if (expect.providers && (!wanted || wanted.displayName !== d.spec.displayName || wanted.endpoint !== d.spec.endpoint)) {
      lostEdits++;
      why.push(wanted ? `spec displayName ${d.spec.displayName}, the user last wrote ${wanted.displayName}` : 'should not exist');
    }
    if (why.length) { unconverged++; problems.push(`DigitalHumanProvider ${name}: ${why.join(', ')}`); }
  }
  for (const name of expect.providers?.keys() ?? []) {
    if (!dhps.items.some((d) => d.metadata.name === name)) { lostEdits++; problems.push(`DigitalHumanProvider ${name}: missing`); }
  }
  let orphanInstances = 0;
  for (const i of instances) {
    if (!i.idempotencyKey || !liveUids.has(i.idempotencyKey)) {
      orphanInstances++;
      problems.push(`vendor instance ${i.id} (key ${i.idempotencyKey?.slice(0, 8)}) belongs to no live provider`);
    }
  }
  return { problems, microservices: ms.items.length, providers: dhps.items.length, unconverged, orphanChildren, orphanInstances, stuckTerminating: stuck, lostEdits };
}

/** `CONVERGE_RELIABILITY_DEBUG=1` prints what is still unconverged every 2 s while waiting. */
const DEBUG = process.env.CONVERGE_RELIABILITY_DEBUG === '1';

/** Polls `assess` until nothing is wrong or the deadline passes; never throws for a timeout. */
export async function waitConverged(
  client: KubeClient,
  ns: string,
  sim: VendorSimulator | undefined,
  options: Expectations & { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Assessment & { converged: boolean; tookMs: number }> {
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? 120_000);
  let last: Assessment | undefined;
  let lastPrinted = 0;
  for (;;) {
    try {
      last = await assess(client, ns, sim, options);
      if (last.problems.length === 0) return { ...last, converged: true, tookMs: Date.now() - started };
      if (DEBUG && Date.now() - lastPrinted > 2_000) {
        lastPrinted = Date.now();
        process.stderr.write(`[waitConverged ${ns} +${Date.now() - started} ms] ${describe(last, 5)}\n`);
      }
    } catch (err) {
      last ??= { problems: [String(err)], microservices: 0, providers: 0, unconverged: 0, orphanChildren: 0, orphanInstances: 0, stuckTerminating: 0, lostEdits: 0 };
    }
    if (Date.now() > deadline) return { ...last, converged: false, tookMs: Date.now() - started };
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 500));
  }
}

/** A short text for assertion messages: the first problems. */
export function describe(a: Assessment, max = 12): string {
  return a.problems.length === 0 ? 'converged' : `${a.problems.length} problems:\n  ${a.problems.slice(0, max).join('\n  ')}`;
}
