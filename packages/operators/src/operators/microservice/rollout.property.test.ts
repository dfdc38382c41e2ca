/**
 * Adversarial property test (fast-check) of the Microservice rollout assessment (`rollout.ts`):
 * `assessRollout` against the two tools people check a Deployment with, and `countEndpoints`
 * against a model of its documented identity rule.
 *
 * Searched: Deployments over the space the API server can hold and beyond it — `spec` absent,
 * `spec.replicas` absent or 0..n, `progressDeadlineSeconds` absent, any, or MaxInt32 (the
 * controller's "no deadline"); `metadata.generation` absent or 1..n; the generation annotation
 * absent, equal to the CR generation, or near it (`2`, `03`, ` 3`, `3.0`, empty); a
 * `deletionTimestamp` now and then; status absent, or each of `observedGeneration` (behind,
 * equal, ahead, any), `replicas`, `updatedReplicas`, `readyReplicas`, `availableReplicas`,
 * `unavailableReplicas` absent or any non-negative int (biased to the desired count so complete
 * rollouts are common), including combinations the API server's status validation rejects
 * (`updatedReplicas` > `replicas`, …: counted, and their few consequences named below);
 * conditions of any type, status and reason — Progressing `ProgressDeadlineExceeded` with status
 * True, False or Unknown, duplicated types, the controller's own "complete" and "timed out" sets —
 * and any condition message. Ready endpoints 0..n. For `countEndpoints`: pods identified by
 * targetRef uid, by kind/namespace/name (namespace given or left to the slice's; one name under
 * two kinds or two namespaces), by hostname, or
 * by address alone, listed in up to two slices per address family (dual-stack copies, a pod
 * moving between slices, duplicates), with one, several, no or an absent `addresses`, and `ready`
 * true, false or absent; empty slices, `endpoints: null`.
 *
 * Oracles, written here from upstream source (k8s.io/kubectl v0.36.3
 * pkg/polymorphichelpers/rollout_status.go `DeploymentStatusViewer.Status`; sigs.k8s.io/cli-utils
 * v0.37.2 pkg/kstatus/status `Compute` = generic.go + core.go `deploymentConditions`; the API
 * server's `ValidateDeploymentStatus` in k8s.io/kubernetes pkg/apis/apps/validation):
 * 1. kubectl: Available / ScaledToZero ⇒ "successfully rolled out"; Stalled ⇒ "exceeded its
 *    progress deadline"; "waiting for spec update to be observed" ⇒ neither Ready nor Stalled.
 * 2. kstatus: Available / ScaledToZero ⇒ Current.
 * 3. Truth: Available needs a ready endpoint and ≥ 1 desired replica; more ready endpoints never
 *    turn Available into anything else and change nothing but EndpointsNotReady → Available; a
 *    stamp of another CR generation is never Ready nor Stalled; Ready holds the module header's
 *    "strict on purpose" in full (observed; updated = available = replicas = desired and nothing
 *    unavailable; at zero replicas no pod left), which neither tool asks all of; the summary is
 *    the inputs' numbers (absent → 0, desired absent → 1); messages never show `undefined`,
 *    `NaN` or `[object`.
 * 4. countEndpoints: equals the model (one id per endpoint as documented; ready if ready in any
 *    slice listing it with an address); ready + notReady ≤ distinct ids; the answer does not
 *    depend on the order of slices or endpoints; more slices never lower the ready count.
 *
 * Differences from upstream the oracles allow, each counted and printed as a diagnostic:
 * - deliberate (module header: Ready is "strict on purpose" and read from the counts — "its
 *   controller must have observed its latest spec, and every replica … must be updated and
 *   available"; `api/constants.ts`: Ready is "observedGeneration caught up, updated = available =
 *   desired replicas"): kstatus also wants the controller's conditions (Available True, and
 *   Progressing True `NewReplicaSetAvailable` when a deadline is set), which the controller
 *   derives from those same counts; kstatus wants `observedGeneration` = `generation` where we,
 *   like kubectl, take "observed" as ≥ (only a hand-written status is ahead); kstatus reads
 *   Reconciling / Stalled conditions, types no Deployment controller writes and kubectl ignores.
 * - statuses the API server rejects (`updatedReplicas`/`availableReplicas`/`readyReplicas` >
 *   `replicas`, `availableReplicas` > `readyReplicas`): at 0 desired replicas and `replicas` 0 we
 *   say ScaledToZero whatever `updatedReplicas` says, kubectl and kstatus compare it to
 *   `availableReplicas`; with `readyReplicas` < `availableReplicas`, kstatus says LessReady.
 * - kstatus takes `ProgressDeadlineExceeded` from a second, duplicate Progressing condition; we
 *   read the first, as kubectl does (the controller never writes two).
 *
 * Found by this search and fixed (examples in rollout.test.ts): a `ProgressDeadlineExceeded`
 * condition whose status was not False read as no stall (kubectl, kstatus and the controller's
 * own `DeploymentTimedOut` go by the reason), and a Deployment being deleted could read Available
 * (kstatus: Terminating).
 *
 * Runs: 3 000 per property by default (the file takes about 1 s, 2 s on a busy machine);
 * CONVERGE_RELIABILITY_LONG=1 runs ten times as many (about 4 s). Each property also checks that
 * its generator reached the cases it is about (every state, kstatus agreeing, dual-stack pods…). A failure prints fast-check's seed:
 * `CONVERGE_FC_SEED=<seed> npm run test:unit -- packages/operators/src/operators/microservice/rollout.property.test.ts`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Deployment, EndpointSlice } from '@converge/runtime';
import { GENERATION_ANNOTATION } from './api/constants.ts';
import { assessRollout, countEndpoints, type RolloutState } from './rollout.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = LONG ? 30_000 : 3_000;

const MAX_INT32 = 2_147_483_647;
const PDE = 'ProgressDeadlineExceeded';
const FORBIDDEN = ['undefined', 'NaN', '[object'];
const READY_STATES: readonly RolloutState[] = ['Available', 'ScaledToZero'];

// ---------------------------------------------------------------------------------------------
// Deployments

interface DeploymentCondition { type: string; status: string; reason?: string; message?: string }
interface World { deployment: Deployment; crGeneration: number; readyEndpoints: number }

/** Drops the keys whose value is undefined: absent, as in JSON from the API server. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
const maybe = <T>(a: fc.Arbitrary<T>, freq = 8): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined, freq });
/** A count the API server takes (any non-negative int), `target` more often than not. */
const near = (target: number): fc.Arbitrary<number> => fc.oneof({ weight: 6, arbitrary: fc.constant(target) }, { weight: 1, arbitrary: fc.nat(6) });

const text = fc.string({ maxLength: 12, unit: 'grapheme' }).filter((s) => !FORBIDDEN.some((f) => s.includes(f)));
const conditionArb: fc.Arbitrary<DeploymentCondition> = fc.record(
  {
    type: fc.oneof(
      { weight: 6, arbitrary: fc.constant('Progressing') },
      { weight: 3, arbitrary: fc.constant('Available') },
      { weight: 1, arbitrary: fc.constantFrom('ReplicaFailure', 'Reconciling', 'Stalled', 'progressing') },
    ),
    status: fc.constantFrom('True', 'False', 'Unknown'),
    reason: fc.oneof(
      { weight: 1, arbitrary: fc.constant(PDE) },
      { weight: 2, arbitrary: fc.constantFrom('NewReplicaSetAvailable', 'ReplicaSetUpdated', 'NewReplicaSetCreated', 'FoundNewReplicaSet', 'DeploymentPaused', 'MinimumReplicasAvailable', 'MinimumReplicasUnavailable', 'FailedCreate', '', 'progressDeadlineExceeded') },
    ),
    message: fc.oneof(fc.constantFrom('', 'ReplicaSet "web-7d9f" has timed out progressing.', 'Deployment has minimum availability.'), text),
  },
  { requiredKeys: ['type', 'status'] },
);
/** What the Deployment controller writes once a rollout is complete (deadline set)… */
const COMPLETE: DeploymentCondition[] = [
  { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' },
  { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'ReplicaSet "web-7d9f" has successfully progressed.' },
];
/** …and once it gave up. */
const TIMED_OUT: DeploymentCondition[] = [
  { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' },
  { type: 'Progressing', status: 'False', reason: PDE, message: 'ReplicaSet "web-7d9f" has timed out progressing.' },
];
const conditionsArb = maybe(
  fc.oneof({ weight: 2, arbitrary: fc.array(conditionArb, { maxLength: 3 }) }, { weight: 2, arbitrary: fc.constant(COMPLETE) }, { weight: 1, arbitrary: fc.constant(TIMED_OUT) }),
  6,
);

const worldArb: fc.Arbitrary<World> = fc
  .record({
    crGeneration: fc.integer({ min: 1, max: 4 }),
    generation: maybe(fc.integer({ min: 1, max: 4 }), 10),
    spec: fc.constantFrom(true, true, true, true, true, true, true, true, true, false),
    replicas: maybe(fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.integer({ min: 1, max: 3 }) }), 6),
    deadline: maybe(fc.oneof(fc.constant(600), fc.integer({ min: 1, max: 900 }), fc.constant(MAX_INT32)), 4),
    deleting: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
    readyEndpoints: fc.oneof(fc.constant(0), fc.nat(4)),
  })
  .chain((b) => {
    const desired = (b.spec ? b.replicas : undefined) ?? 1;
    const g = b.generation ?? 1;
    const cr = b.crGeneration;
    return fc
      .record({
        stamp: fc.oneof(
          { weight: 8, arbitrary: fc.constant<string | undefined>(String(cr)) },
          { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, String(cr - 1), String(cr + 1), `0${cr}`, ` ${cr}`, `${cr}.0`, '') },
        ),
        status: maybe(
          fc.record({
            observedGeneration: maybe(fc.oneof({ weight: 4, arbitrary: fc.constant(g) }, { weight: 1, arbitrary: fc.constantFrom(Math.max(0, g - 1), g + 1) }, { weight: 1, arbitrary: fc.nat(5) }), 10),
            replicas: maybe(near(desired)),
            updatedReplicas: maybe(near(desired)),
            readyReplicas: maybe(near(desired)),
            availableReplicas: maybe(near(desired)),
            unavailableReplicas: maybe(near(0), 2),
            conditions: conditionsArb,
          }),
          20,
        ),
      })
      .map(({ stamp, status }): World => ({
        crGeneration: cr,
        readyEndpoints: b.readyEndpoints,
        deployment: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: compact({
            name: 'web',
            namespace: 'ns',
            generation: b.generation,
            deletionTimestamp: b.deleting ? '2026-12-05T00:00:00Z' : undefined,
            annotations: stamp === undefined ? undefined : { [GENERATION_ANNOTATION]: stamp },
          }),
          ...(b.spec ? { spec: compact({ replicas: b.replicas, progressDeadlineSeconds: b.deadline, selector: {}, template: {} }) } : {}),
          ...(status === undefined ? {} : { status: compact(status) }),
        } as Deployment,
      }));
  });

/** Go's zero value for an absent status field, as the typed conversion upstream reads it. */
function counts(d: Deployment) {
  const s = d.status ?? {};
  return {
    observedGeneration: s.observedGeneration ?? 0,
    replicas: s.replicas ?? 0,
    updatedReplicas: s.updatedReplicas ?? 0,
    readyReplicas: s.readyReplicas ?? 0,
    availableReplicas: s.availableReplicas ?? 0,
  };
}
const conditionsOf = (d: Deployment): DeploymentCondition[] => (d.status?.conditions ?? []) as DeploymentCondition[];

/** k8s.io/kubernetes pkg/apis/apps/validation `ValidateDeploymentStatus` (the cross-field rules; every count here is ≥ 0). */
function statusAccepted(d: Deployment): boolean {
  const s = counts(d);
  return s.updatedReplicas <= s.replicas && s.readyReplicas <= s.replicas && s.availableReplicas <= s.replicas && s.availableReplicas <= s.readyReplicas;
}

/** kubectl `DeploymentStatusViewer.Status` (revision 0): [message, done] or an error. */
function kubectlRolloutStatus(d: Deployment): { message: string; done: boolean } | { error: string } {
  const name = d.metadata.name ?? '';
  const s = counts(d);
  if ((d.metadata.generation ?? 0) <= s.observedGeneration) {
    // deploymentutil.GetDeploymentCondition: the first condition of the type.
    const cond = conditionsOf(d).find((c) => c.type === 'Progressing');
    if (cond !== undefined && cond.reason === PDE) return { error: `deployment "${name}" exceeded its progress deadline` };
    const specReplicas = d.spec?.replicas; // *int32: nil when absent (FromUnstructured does not default)
    if (specReplicas !== undefined && s.updatedReplicas < specReplicas) {
      return { message: `Waiting for deployment "${name}" rollout to finish: ${s.updatedReplicas} out of ${specReplicas} new replicas have been updated...\n`, done: false };
    }
    if (s.replicas > s.updatedReplicas) {
      return { message: `Waiting for deployment "${name}" rollout to finish: ${s.replicas - s.updatedReplicas} old replicas are pending termination...\n`, done: false };
    }
    if (s.availableReplicas < s.updatedReplicas) {
      return { message: `Waiting for deployment "${name}" rollout to finish: ${s.availableReplicas} of ${s.updatedReplicas} updated replicas are available...\n`, done: false };
    }
    return { message: `deployment "${name}" successfully rolled out\n`, done: true };
  }
  return { message: 'Waiting for deployment spec update to be observed...\n', done: false };
}

type KstatusStatus = 'Current' | 'InProgress' | 'Failed' | 'Terminating';
/** kstatus `Compute` for an apps/v1 Deployment; `why` names the rule that decided. */
function kstatus(d: Deployment): { status: KstatusStatus; why: string } {
  // generic.go checkGenericProperties
  if (d.metadata.deletionTimestamp) return { status: 'Terminating', why: 'Terminating' };
  const observed = d.status?.observedGeneration;
  if (d.metadata.generation !== undefined && observed !== undefined && observed !== d.metadata.generation) {
    return { status: 'InProgress', why: 'LatestGenerationNotObserved' };
  }
  for (const c of conditionsOf(d)) {
    if (c.type === 'Reconciling' && c.status === 'True') return { status: 'InProgress', why: 'GenericReconciling' };
    if (c.type === 'Stalled' && c.status === 'True') return { status: 'Failed', why: 'GenericStalled' };
  }
  // core.go deploymentConditions
  let progressing = (d.spec?.progressDeadlineSeconds ?? MAX_INT32) === MAX_INT32;
  let available = false;
  for (const c of conditionsOf(d)) {
    if (c.type === 'Progressing') {
      if (c.reason === PDE) return { status: 'Failed', why: PDE };
      if (c.status === 'True' && c.reason === 'NewReplicaSetAvailable') progressing = true;
    } else if (c.type === 'Available' && c.status === 'True') {
      available = true;
    }
  }
  const specReplicas = d.spec?.replicas ?? 1;
  const s = counts(d);
  if (specReplicas > s.replicas) return { status: 'InProgress', why: 'LessReplicas' };
  if (specReplicas > s.updatedReplicas) return { status: 'InProgress', why: 'LessUpdated' };
  if (s.replicas > specReplicas) return { status: 'InProgress', why: 'ExtraPods' };
  if (s.updatedReplicas > s.availableReplicas) return { status: 'InProgress', why: 'LessAvailable' };
  if (specReplicas > s.readyReplicas) return { status: 'InProgress', why: 'LessReady' };
  if (!progressing) return { status: 'InProgress', why: 'ReplicaSetNotAvailable' };
  if (!available) return { status: 'InProgress', why: 'DeploymentNotAvailable' };
  return { status: 'Current', why: 'Current' };
}

/** The reported difference: a ProgressDeadlineExceeded reason that is no stall for us (see the header). */
function deadlineReasonWeIgnore(d: Deployment): boolean {
  const progressing = conditionsOf(d).filter((c) => c.type === 'Progressing');
  return progressing.some((c) => c.reason === PDE) && progressing[0]?.reason !== PDE;
}

class Tally {
  readonly #n = new Map<string, number>();
  add(key: string): void {
    this.#n.set(key, (this.#n.get(key) ?? 0) + 1);
  }
  get(key: string): number {
    return this.#n.get(key) ?? 0;
  }
  toString(): string {
    return [...this.#n].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${v}`).join(', ');
  }
}

const show = (w: World) => JSON.stringify(w);

test('assessRollout agrees with kubectl rollout status: Ready ⇒ rolled out, Stalled ⇒ deadline exceeded, unobserved ⇒ neither', (t) => {
  const seen = new Tally();
  const allowed = new Tally();
  fc.assert(
    fc.property(worldArb, (w) => {
      const ours = assessRollout(w.deployment, w.crGeneration, w.readyEndpoints);
      const kubectl = kubectlRolloutStatus(w.deployment);
      seen.add(ours.state);
      if (!statusAccepted(w.deployment)) seen.add('(status the API server rejects)');
      if ('message' in kubectl && kubectl.message.startsWith('Waiting for deployment spec update to be observed')) {
        seen.add('(kubectl: spec update not observed)');
        assert.ok(![...READY_STATES, 'Stalled'].includes(ours.state), `kubectl waits for the spec to be observed, we say ${ours.state}: ${show(w)}`);
      }
      if (ours.state === 'Stalled') {
        assert.ok('error' in kubectl && kubectl.error.endsWith('exceeded its progress deadline'), `we say Stalled, kubectl ${JSON.stringify(kubectl)}: ${show(w)}`);
      }
      if (READY_STATES.includes(ours.state)) {
        if ('done' in kubectl && kubectl.done) {
          assert.match(kubectl.message, /successfully rolled out/);
          return;
        }
        // updatedReplicas > replicas = 0: a status the API server rejects.
        if (ours.state === 'ScaledToZero' && !statusAccepted(w.deployment) && 'message' in kubectl && /updated replicas are available/.test(kubectl.message)) {
          allowed.add('rejected status: ScaledToZero, updatedReplicas > replicas');
          return;
        }
        assert.fail(`we say ${ours.state}, kubectl ${JSON.stringify(kubectl)}: ${show(w)}`);
      }
    }),
    { numRuns: RUNS },
  );
  t.diagnostic(`states: ${seen}`);
  t.diagnostic(`allowed differences: ${allowed}`);
  // The generator must reach every answer, or the property says nothing about it.
  for (const [key, min] of [['Available', RUNS / 50], ['ScaledToZero', RUNS / 200], ['Stalled', RUNS / 100], ['EndpointsNotReady', RUNS / 100], ['InProgress', RUNS / 10], ['(kubectl: spec update not observed)', RUNS / 100]] as const) {
    assert.ok(seen.get(key) >= min, `only ${seen.get(key)} of ${RUNS} runs gave ${key}: the generator misses the case`);
  }
});

test('assessRollout agrees with kstatus: Available / ScaledToZero ⇒ Current', (t) => {
  const agreed = new Tally();
  const allowed = new Tally();
  fc.assert(
    fc.property(worldArb, (w) => {
      const ours = assessRollout(w.deployment, w.crGeneration, w.readyEndpoints);
      if (!READY_STATES.includes(ours.state)) return;
      const k = kstatus(w.deployment);
      if (k.status === 'Current') {
        agreed.add(ours.state);
        return;
      }
      const d = w.deployment;
      const why = ((): string | undefined => {
        switch (k.why) {
          // Deliberate: observed means ≥, as for kubectl (module header: "its controller must have observed its latest spec").
          case 'LatestGenerationNotObserved':
            return (d.status?.observedGeneration ?? 0) > (d.metadata.generation ?? 0) ? 'deliberate: observedGeneration ahead of generation' : undefined;
          // Deliberate: Ready is read from the counts (module header), like kubectl, not from the controller's conditions.
          case 'ReplicaSetNotAvailable':
          case 'DeploymentNotAvailable':
            return `deliberate: counts, not conditions (${k.why})`;
          // Deliberate: not a Deployment condition; no Deployment controller writes it, kubectl ignores it.
          case 'GenericReconciling':
          case 'GenericStalled':
            return `deliberate: kstatus generic condition (${k.why})`;
          case PDE:
            // Deliberate: the reason in a second, duplicate Progressing condition; we read the first, as kubectl does.
            return deadlineReasonWeIgnore(d) ? 'deliberate: ProgressDeadlineExceeded in a duplicate Progressing condition' : undefined;
          // Only with a status the API server rejects (availableReplicas ≤ readyReplicas ≤ replicas, updatedReplicas ≤ replicas).
          case 'LessReady':
          case 'LessAvailable':
            return statusAccepted(d) ? undefined : `rejected status (${k.why})`;
          default:
            return undefined;
        }
      })();
      assert.ok(why !== undefined, `we say ${ours.state}, kstatus ${k.status} (${k.why}): ${show(w)}`);
      allowed.add(why);
    }),
    { numRuns: RUNS },
  );
  t.diagnostic(`kstatus Current: ${agreed}`);
  t.diagnostic(`allowed differences: ${allowed}`);
  assert.ok(agreed.get('Available') >= RUNS / 100, `only ${agreed.get('Available')} Available runs that kstatus calls Current: the generator misses the case`);
  assert.ok(agreed.get('ScaledToZero') >= RUNS / 400, `only ${agreed.get('ScaledToZero')} ScaledToZero runs that kstatus calls Current: the generator misses the case`);
});

test('assessRollout tells the truth: its numbers are the inputs, Available needs an endpoint and a replica, more endpoints never hurt', () => {
  fc.assert(
    fc.property(worldArb, fc.integer({ min: 1, max: 5 }), (w, more) => {
      const d = w.deployment;
      const ours = assessRollout(d, w.crGeneration, w.readyEndpoints);
      assert.deepEqual(ours.summary, {
        replicas: d.spec?.replicas ?? 1,
        updatedReplicas: d.status?.updatedReplicas ?? 0,
        availableReplicas: d.status?.availableReplicas ?? 0,
        readyEndpoints: w.readyEndpoints,
      });
      assert.ok(ours.message.length > 0, 'empty message');
      for (const f of FORBIDDEN) assert.ok(!ours.message.includes(f), `message ${JSON.stringify(ours.message)} shows ${f}: ${show(w)}`);
      if (ours.state === 'Available') {
        assert.ok(w.readyEndpoints >= 1, `Available without a ready endpoint: ${show(w)}`);
        assert.ok(ours.summary.replicas >= 1, `Available at 0 desired replicas: ${show(w)}`);
      }
      // The module header's own "strict on purpose", which neither kubectl nor kstatus asks in full:
      // observed, every replica updated and available, none unavailable, no pod of an old ReplicaSet;
      // at zero replicas, no pod left.
      if (READY_STATES.includes(ours.state)) {
        const s = counts(d);
        assert.ok(s.observedGeneration >= (d.metadata.generation ?? 1), `Ready before the spec was observed: ${show(w)}`);
        const desired = ours.summary.replicas;
        const complete = ours.state === 'ScaledToZero'
          ? desired === 0 && s.replicas === 0
          : s.updatedReplicas === desired && s.availableReplicas === desired && s.replicas === desired && (d.status?.unavailableReplicas ?? 0) === 0;
        assert.ok(complete, `${ours.state} with ${JSON.stringify(d.status)}: ${show(w)}`);
      }
      if (d.metadata.annotations?.[GENERATION_ANNOTATION] !== String(w.crGeneration)) {
        assert.equal(ours.state, 'InProgress', `a Deployment written for another CR generation: ${show(w)}`);
      }
      const after = assessRollout(d, w.crGeneration, w.readyEndpoints + more);
      if (after.state !== ours.state) {
        assert.deepEqual([ours.state, after.state], ['EndpointsNotReady', 'Available'], `${w.readyEndpoints} → ${w.readyEndpoints + more} ready endpoints: ${show(w)}`);
      }
    }),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------------------------------------
// Endpoints

type How = 'uid' | 'ref' | 'host' | 'addr';
/** `name` and `namespace` are drawn from small pools: pods identified by reference collide exactly when kind, namespace and name all match. */
interface Pod { how: How; kind: string | undefined; name: string; namespace: string }
interface Listing {
  pod: number;
  family: 'IPv4' | 'IPv6';
  slot: number;
  addresses: 'one' | 'many' | 'empty' | 'absent';
  ready: boolean | undefined | 'no-conditions';
  explicitNamespace: boolean;
  variant: number;
}
interface EndpointWorld { pods: Pod[]; listings: Listing[]; emptySlices: { family: 'IPv4' | 'IPv6'; slot: number; nullEndpoints: boolean }[]; shuffle: number }

const familyArb = fc.constantFrom<'IPv4' | 'IPv6'>('IPv4', 'IPv6');
const endpointWorldArb: fc.Arbitrary<EndpointWorld> = fc
  .array(
    fc.record({
      how: fc.constantFrom<How>('uid', 'ref', 'host', 'addr'),
      kind: fc.constantFrom<string | undefined>('Pod', undefined, 'VirtualMachineInstance'),
      name: fc.constantFrom('p0', 'p1'),
      namespace: fc.constantFrom('ns', 'ns', 'other'),
    }),
    { minLength: 1, maxLength: 6 },
  )
  .chain((pods) =>
    fc.record({
      pods: fc.constant(pods),
      listings: fc.array(
        fc.record({
          pod: fc.nat(pods.length - 1),
          family: familyArb,
          slot: fc.nat(1),
          addresses: fc.constantFrom<Listing['addresses']>('one', 'one', 'one', 'many', 'empty', 'absent'),
          ready: fc.constantFrom<Listing['ready']>(true, false, undefined, 'no-conditions'),
          explicitNamespace: fc.boolean(),
          variant: fc.nat(2),
        }),
        { maxLength: 20 },
      ),
      emptySlices: fc.array(fc.record({ family: familyArb, slot: fc.nat(2), nullEndpoints: fc.boolean() }), { maxLength: 2 }),
      shuffle: fc.nat(),
    }),
  );

/** The endpoint a listing of pod `i` writes, identified the way its pod is (`variant` varies what is beside the point). */
function endpointOf(pods: Pod[], l: Listing): EndpointSlice['endpoints'][number] {
  const i = l.pod;
  const pod = pods[i]!;
  const v4 = l.family === 'IPv4';
  const primary = v4 ? `10.0.0.${i + 1}` : `fd00::${i + 1}`;
  const kind = pod.kind === undefined ? {} : { kind: pod.kind };
  // The slices live in `ns`: a pod there may leave its namespace out.
  const namespace = l.explicitNamespace || pod.namespace !== 'ns' ? { namespace: pod.namespace } : {};
  let identity: object;
  switch (pod.how) {
    case 'uid': // a uid decides, whatever the name says
      identity = { targetRef: { ...kind, ...namespace, ...[{ name: `p${i}` }, {}, { name: `renamed-${l.pod}-${l.slot}` }][l.variant], uid: `uid-${i}` } };
      break;
    case 'ref': // kind/namespace/name, namespace given or the slice's; an empty uid is none
      identity = { targetRef: { ...kind, ...namespace, name: pod.name, ...(l.variant === 1 ? { uid: '' } : {}) }, ...(l.variant === 2 ? { hostname: `other-${l.slot}` } : {}) };
      break;
    case 'host': // a targetRef without uid or name identifies nothing
      identity = { hostname: `h${i}`, ...[{}, { targetRef: { kind: 'Pod' } }, { targetRef: { kind: 'Pod', name: '', uid: '' } }][l.variant] };
      break;
    case 'addr':
      identity = [{}, { hostname: '' }, { targetRef: { ...kind } }][l.variant]!;
      break;
  }
  const addresses = { one: { addresses: [primary] }, many: { addresses: [primary, v4 ? `10.0.1.${i + 1}` : `fd00::1:${i + 1}`] }, empty: { addresses: [] }, absent: {} }[l.addresses];
  const conditions = l.ready === 'no-conditions' ? {} : { conditions: l.ready === undefined ? { serving: true } : { ready: l.ready, serving: l.ready, terminating: false } };
  return { ...addresses, ...identity, ...conditions, nodeName: `node-${i % 2}` } as EndpointSlice['endpoints'][number];
}

function slicesOf(w: EndpointWorld): EndpointSlice[] {
  const slices = new Map<string, EndpointSlice>();
  const sliceFor = (family: string, slot: number) => {
    const key = `${family}/${slot}`;
    let s = slices.get(key);
    if (!s) {
      s = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `web-${family.toLowerCase()}-${slot}`, namespace: 'ns', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: family, endpoints: [] };
      slices.set(key, s);
    }
    return s;
  };
  for (const l of w.listings) sliceFor(l.family, l.slot).endpoints.push(endpointOf(w.pods, l));
  for (const e of w.emptySlices) {
    const s = sliceFor(e.family, e.slot);
    if ((s.endpoints ?? []).length === 0 && e.nullEndpoints) (s as { endpoints: unknown }).endpoints = null; // Go's nil slice: `"endpoints": null`
  }
  return [...slices.values()];
}

/** Which endpoint a listing is of: its pod, or the pod's kind/namespace/name when that identifies it, or pod and family when only the address does. */
function modelId(w: EndpointWorld, l: Listing): string {
  const pod = w.pods[l.pod]!;
  if (pod.how === 'ref') return JSON.stringify([pod.kind ?? '', pod.namespace, pod.name]);
  return pod.how === 'addr' ? `${l.pod}@${l.family}` : `${l.pod}`;
}

/** The model: one endpoint per pod (per pod and address family when only its address identifies it), ready when any listing with an address is. */
function model(w: EndpointWorld): { ready: number; notReady: number } {
  const ready = new Map<string, boolean>();
  for (const l of w.listings) {
    if (l.addresses === 'empty' || l.addresses === 'absent') continue;
    const id = modelId(w, l);
    ready.set(id, (ready.get(id) ?? false) || l.ready !== false);
  }
  const values = [...ready.values()];
  return { ready: values.filter((r) => r).length, notReady: values.filter((r) => !r).length };
}

/** A deterministic shuffle (mulberry32) of slices and of each slice's endpoints, on copies. */
function shuffled(slices: EndpointSlice[], seed: number): EndpointSlice[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4_294_967_296;
  };
  const shuffle = <T>(xs: T[]): T[] => {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  return shuffle(slices.map((s) => ({ ...s, endpoints: s.endpoints === null ? s.endpoints : shuffle(s.endpoints) })));
}

test('countEndpoints counts each endpoint once across slices, as documented, whatever the order', (t) => {
  let dualStack = 0;
  let moved = 0;
  let mixedReadiness = 0;
  fc.assert(
    fc.property(endpointWorldArb, (w) => {
      const slices = slicesOf(w);
      const got = countEndpoints(slices);
      const expected = model(w);
      assert.deepEqual(got, expected, `slices ${JSON.stringify(slices)}`);
      const ids = new Set(w.listings.filter((l) => l.addresses === 'one' || l.addresses === 'many').map((l) => modelId(w, l)));
      assert.ok(got.ready + got.notReady <= ids.size);
      assert.deepEqual(countEndpoints(shuffled(slices, w.shuffle)), got, 'the order of slices or endpoints changed the answer');
      for (let n = 0; n < slices.length; n++) {
        assert.ok(countEndpoints(slices.slice(0, n)).ready <= got.ready, 'a slice more lowered the ready count');
      }
      // What the generator reached (a pod listed with an address twice: per family, per slice of one family, ready and not).
      const listed = w.listings.filter((l) => l.addresses === 'one' || l.addresses === 'many');
      const byPod = Map.groupBy(listed, (l) => l.pod);
      for (const ls of byPod.values()) {
        if (new Set(ls.map((l) => l.family)).size > 1) dualStack++;
        if (new Set(ls.filter((l) => l.family === 'IPv4').map((l) => l.slot)).size > 1) moved++;
        if (new Set(ls.map((l) => l.ready === false)).size > 1) mixedReadiness++;
      }
    }),
    { numRuns: RUNS },
  );
  t.diagnostic(`pods listed in both families ${dualStack}, in two IPv4 slices ${moved}, ready in one listing and not in another ${mixedReadiness}`);
  for (const [what, n] of [['dual-stack', dualStack], ['moved', moved], ['mixed readiness', mixedReadiness]] as const) {
    assert.ok(n >= RUNS / 10, `only ${n} ${what} pods in ${RUNS} runs: the generator misses the case`);
  }
});
