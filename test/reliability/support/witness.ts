/**
 * An independent witness of what happened in a test namespace and at the vendor, so duplicates
 * are counted from facts rather than from the operator's own account:
 * - every Deployment and Service UID ever seen, per controlling Microservice UID (a child
 *   deleted and created again, or two children for one CR, shows up as a second UID);
 * - every vendor instance ever seen (sampled from the simulator every 50 ms), per idempotency
 *   key (= the CR's UID), plus the simulator's own count of creates;
 * - every Microservice and DigitalHumanProvider UID ever seen, and when each Microservice was
 *   deleted, so children created after their owner was gone (a stale cache racing the delete;
 *   the garbage collector removes them) are told apart from duplicates of a live owner;
 * - per provider UID, every version of the CR the watch delivered and when an instance under its
 *   key appeared and went (`providerHistory`), for the diagnosis of a leak or a stuck deletion.
 *
 * It watches through the runtime's cache with the test's own client, so it does not depend on
 * the operator under test being alive.
 * @module
 */
import { Cache, DeploymentKind, ServiceKind, controllerOf } from '@converge/runtime';
import type { KubeClient, KubeObject } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import type { VendorSimulator } from '../../../packages/operators/src/vendor-sim/index.ts';
import { testLogger } from '../../support/operator-harness.ts';
import type { Assessment } from './convergence.ts';
import type { Figures } from './report.ts';

export interface Witness {
  /** Child UIDs per `<Kind>/<owner uid>`. */
  readonly children: Map<string, Set<string>>;
  /** Instance ids per idempotency key. */
  readonly instances: Map<string, Set<string>>;
  readonly microserviceUids: Set<string>;
  readonly providerUids: Set<string>;
  /** Second and later UIDs of a child created while its owner existed, summed over owners and kinds. */
  duplicateChildren(): number;
  /** Children first seen after their owning Microservice was deleted (garbage-collected later). */
  createdAfterOwnerDeleted(): number;
  /** Of those, the second and later per owner and kind: the operator re-creating children of a deleted owner. */
  recreatedAfterOwnerDeleted(): number;
  /**
   * Second and later vendor instances per idempotency key (= CR UID), for keys created since the
   * witness started — exact, from the simulator's create counts, so an instance created and
   * deleted between two samples of `instances` is counted too.
   */
  duplicateInstances(): number;
  /** The keys behind `duplicateInstances`, with their create counts (for assertion messages). */
  duplicateInstanceKeys(): Record<string, number>;
  /** Vendor creates counted by the simulator since the witness started. */
  vendorCreates(): number;
  /**
   * What the witness saw of one provider UID and of the vendor instances under that key, in
   * order, one line each (for the diagnosis of a leak or a stuck deletion).
   */
  providerHistory(uid: string): string[];
  stop(): Promise<void>;
}

export async function startWitness(client: KubeClient, ns: string, sim?: VendorSimulator): Promise<Witness> {
  const cache = new Cache({ client, namespaces: [ns], log: testLogger() });
  const children = new Map<string, Set<string>>();
  const instances = new Map<string, Set<string>>();
  const microserviceUids = new Set<string>();
  const firstSeen = new Map<string, number>();
  const ownerDeletedAt = new Map<string, number>();
  const providerUids = new Set<string>();
  /** Per provider UID (= idempotency key): every version the watch delivered, and the instances seen under the key. */
  const history = new Map<string, string[]>();
  const log = (uid: string, line: string) => {
    let lines = history.get(uid);
    if (!lines) history.set(uid, (lines = []));
    lines.push(`${new Date().toISOString()} ${line}`);
  };
  const note = (map: Map<string, Set<string>>, key: string, value: string) => {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(value);
  };
  const child = (kind: string) => (change: { object: KubeObject }) => {
    const owner = controllerOf(change.object);
    const uid = change.object.metadata.uid;
    if (owner?.kind !== 'Microservice' || !uid) return;
    note(children, `${kind}/${owner.uid}`, uid);
    if (!firstSeen.has(uid)) firstSeen.set(uid, Date.now());
  };
  cache.informer(DeploymentKind).addHandler(child('Deployment'));
  cache.informer(ServiceKind).addHandler(child('Service'));
  cache.informer(MicroserviceKind).addHandler((c) => {
    const uid = c.object.metadata.uid;
    if (!uid) return;
    microserviceUids.add(uid);
    if (c.type === 'delete' && !ownerDeletedAt.has(uid)) ownerDeletedAt.set(uid, Date.now());
  });
  cache.informer(DigitalHumanProviderKind).addHandler((c) => {
    const { uid, name, resourceVersion, generation, deletionTimestamp, finalizers } = c.object.metadata;
    if (!uid) return;
    providerUids.add(uid);
    const s = c.object.status;
    const ready = s?.conditions?.find((x) => x.type === 'Ready');
    // A delete carries the last version this cache held, not the object's final state.
    log(uid, `${c.type === 'delete' ? 'delete (last seen as)' : c.type} ${name} rv=${resourceVersion} gen=${generation}${deletionTimestamp ? ` deleting(${deletionTimestamp})` : ''} finalizers=[${(finalizers ?? []).join(',')}] providerID=${s?.providerID ?? '-'} createRequestedAt=${s?.createRequestedAt ?? '-'} ready=${ready ? `${ready.status}/${ready.reason}` : '-'}`);
  });
  const abort = new AbortController();
  const running = cache.start(abort.signal);
  await cache.waitForSync();

  const createsAtStart = sim?.stats().creates ?? 0;
  const createsByKeyAtStart = sim?.stats().createsByKey ?? {};
  const duplicateKeys = (): Record<string, number> => {
    const now = sim?.stats().createsByKey ?? {};
    return Object.fromEntries(Object.entries(now).filter(([key, n]) => n > (createsByKeyAtStart[key] ?? 0) && n > 1));
  };
  let present = new Set<string>();
  const sample = () => {
    if (!sim) return;
    const now = new Set<string>();
    for (const i of sim.instances()) {
      const key = i.idempotencyKey ?? `(no key) ${i.id}`;
      note(instances, key, i.id);
      now.add(i.id);
      if (!present.has(i.id) && i.idempotencyKey) log(i.idempotencyKey, `vendor instance ${i.id} seen (created ${i.createdAt})`);
    }
    for (const id of present) {
      if (now.has(id)) continue;
      const key = [...instances.entries()].find(([, ids]) => ids.has(id))?.[0];
      if (key) log(key, `vendor instance ${id} gone`);
    }
    present = now;
  };
  sample();
  const timer = sim ? setInterval(sample, 50) : undefined;
  /** Per owner and kind: children first seen while the owner lived, and after it was deleted. */
  const split = () => [...children.entries()].map(([key, uids]) => {
    const deletedAt = ownerDeletedAt.get(key.slice(key.indexOf('/') + 1));
    const after = deletedAt === undefined ? 0 : [...uids].filter((u) => (firstSeen.get(u) ?? 0) > deletedAt).length;
    return { alive: uids.size - after, after };
  });

  return {
    children,
    instances,
    microserviceUids,
    providerUids,
    duplicateChildren: () => split().reduce((n, x) => n + Math.max(0, x.alive - 1), 0),
    createdAfterOwnerDeleted: () => split().reduce((n, x) => n + x.after, 0),
    recreatedAfterOwnerDeleted: () => split().reduce((n, x) => n + Math.max(0, x.after - 1), 0),
    duplicateInstances: () => Object.values(duplicateKeys()).reduce((n, c) => n + c - 1, 0),
    duplicateInstanceKeys: duplicateKeys,
    vendorCreates: () => (sim?.stats().creates ?? 0) - createsAtStart,
    providerHistory: (uid) => [...(history.get(uid) ?? [])],
    async stop() {
      if (timer) clearInterval(timer);
      abort.abort();
      await running;
    },
  };
}

/**
 * The figures every churn test reports about what it left behind: duplicates and re-creations
 * (from the witness), orphans, stuck objects and lost edits (from the final assessment).
 */
export function reportLeftovers(fig: Figures, witness: Witness, result: Assessment): void {
  fig.duplicates('duplicate children', witness.duplicateChildren());
  fig.count('children created after their owner was deleted (garbage-collected)', witness.createdAfterOwnerDeleted());
  fig.duplicates('of them re-created for the same deleted owner (a loop fixed after the kill storm found it)', witness.recreatedAfterOwnerDeleted());
  fig.duplicates('duplicate vendor instances', witness.duplicateInstances());
  fig.orphans('orphans', result.orphanChildren + result.orphanInstances);
  fig.stuck('stuck Terminating', result.stuckTerminating);
  fig.lost('lost edits', result.lostEdits);
}
