/**
 * A search for breaks of the finalizer helpers' guarantees (`packages/runtime/src/finalizers`) on
 * the real API server, with several controllers, a user and someone else's finalizer racing over
 * one object name.
 *
 * Searched (fast-check): random programs of rounds; each round starts one to three steps at once:
 * - a controller (two of them, each with its own finalizer) runs `withFinalizer` on a fresh GET or
 *   on the last object it saw (an informer cache's view: never older than what it saw before; it
 *   also keeps the object `apply` was given, as a write-through cache would);
 * - the user deletes the object (DELETE with the uid and resourceVersion of a fresh read as
 *   preconditions, see below), edits a label, or creates it again once it is gone (a new uid; some
 *   incarnations start with a third, foreign finalizer, or with a controller's already on them);
 * - the user releases the foreign finalizer (a patch with the resourceVersion read).
 * After the rounds the object is deleted and everyone runs until it is gone.
 *
 * Must hold:
 * - `apply` is given an object that carries the controller's finalizer;
 * - `cleanup` is given an object being deleted, and runs while the finalizer still guards it;
 * - nothing leaks: for every incarnation and controller whose `apply` ran, `cleanup` ran after the
 *   last `apply` (what `apply` made outside the cluster is gone once the object is);
 * - no finalizer is dropped: the object never disappears while the foreign finalizer holds it;
 * - the helpers fail only with Conflict (a list changed since it was read) or NotFound;
 * - `removeFinalizer` resolving `undefined` means the incarnation is gone;
 * - the object is gone at the end (nothing stuck in Terminating).
 *
 * Not searched: a DELETE without preconditions racing the first `addFinalizer` (the API server
 * removes an object that had no finalizer when the DELETE looked, kubernetes/kubernetes#77988;
 * the module's caveat says what to do about it); reads older than one already acted on (the
 * module's assumption).
 *
 * Runs: `CONVERGE_FINALIZER_RUNS` programs (default 100, about 6 s; 1,000 with
 * `CONVERGE_RELIABILITY_LONG=1`, about 50 s). Five planted bugs (an add or a removal without the
 * resourceVersion read, `apply` before the add, the removal before `cleanup`, `undefined` for an
 * object still held) each failed it within 300 programs;
 * replay a failure with `CONVERGE_FC_SEED=<seed> npm test -- test/integration/runtime/finalizers-race`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ConfigMapKind, hasFinalizer, isConflict, isNotFound, removeFinalizer, withFinalizer } from '@converge/runtime';
import type { ConfigMap, KubeClient } from '@converge/runtime';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = Number(process.env.CONVERGE_FINALIZER_RUNS ?? (LONG ? 1_000 : 100));
const CONTROLLERS = ['a.converge.test/cleanup', 'b.converge.test/cleanup'] as const;
const FOREIGN = 'someone-else.test/hold';

type Step =
  | { t: 'reconcile'; who: 0 | 1; fresh: boolean }
  | { t: 'release'; who: 0 | 1; fresh: boolean } // removeFinalizer alone (a controller giving up its finalizer)
  | { t: 'delete' }
  | { t: 'touch' }
  | { t: 'recreate'; foreign: boolean; preset: 0 | 1 | null }
  | { t: 'release-foreign' };

const who = fc.constantFrom<0 | 1>(0, 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ t: fc.constant('reconcile' as const), who, fresh: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('release' as const), who, fresh: fc.boolean() }) },
  { weight: 3, arbitrary: fc.constant({ t: 'delete' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'touch' as const }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('recreate' as const), foreign: fc.boolean(), preset: fc.constantFrom<0 | 1 | null>(null, null, 0, 1) }) },
  { weight: 2, arbitrary: fc.constant({ t: 'release-foreign' as const }) },
);
const program = fc.record({
  foreign: fc.boolean(),
  // A controller works on one object with one worker at a time (as controller-runtime's queue
  // guarantees): at most one step of each controller per round.
  rounds: fc.array(fc.array(step, { minLength: 1, maxLength: 3 }).map(oneStepPerController), { minLength: 4, maxLength: 20 }),
});

function oneStepPerController(round: Step[]): Step[] {
  const busy = new Set<number>();
  return round.filter((s) => {
    if (s.t !== 'reconcile' && s.t !== 'release') return true;
    if (busy.has(s.who)) return false;
    busy.add(s.who);
    return true;
  });
}

interface Stats { programs: number; conflicts: number; notFound: number; applies: number; cleanups: number; concurrent: number; recreated: number; released: number; staleSteps: number }

/** One program's world: the object name, what each controller saw, and what ran for which uid. */
class World {
  readonly views: (ConfigMap | undefined)[] = [undefined, undefined];
  /** Per `controller uid`: the handler calls in order ('apply' | 'cleanup'). */
  readonly ledger = new Map<string, string[]>();
  /** uids whose foreign finalizer has not been released. */
  readonly foreignHeld = new Set<string>();
  /** uids whose foreign finalizer is being released (the patch sent, its answer not read yet). */
  readonly releasing = new Map<string, number>(); // uid → releases in flight (two steps may release at once)
  readonly violations: string[] = [];
  readonly trace: string[] = [];

  readonly client: KubeClient;
  readonly key: { namespace: string; name: string };
  readonly stats: Stats;

  constructor(client: KubeClient, key: { namespace: string; name: string }, stats: Stats) {
    this.client = client;
    this.key = key;
    this.stats = stats;
  }

  /** A fresh read; notes an incarnation gone while the foreign finalizer held it. */
  async read(): Promise<ConfigMap | undefined> {
    // Held for the whole GET (created before it started, not released before it ended): the
    // GET's answer must include that incarnation.
    const heldBefore = [...this.foreignHeld];
    let live: ConfigMap | undefined;
    try {
      live = await this.client.get(ConfigMapKind, this.key);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // A release in flight may have landed before this GET was answered: not held for certain.
    for (const uid of heldBefore.filter((u) => this.foreignHeld.has(u) && !this.releasing.has(u))) {
      if (live?.metadata.uid !== uid) this.violations.push(`incarnation ${uid} is gone while ${FOREIGN} still held it (a finalizer was dropped)`);
    }
    return live;
  }

  record(controller: number, uid: string, call: 'apply' | 'cleanup'): void {
    const id = `${controller} ${uid}`;
    const calls = this.ledger.get(id) ?? [];
    calls.push(call);
    this.ledger.set(id, calls);
  }

  /** The controller's reconcile: withFinalizer on a fresh or the last seen object. */
  async reconcile(c: 0 | 1, fresh: boolean): Promise<void> {
    let obj = this.views[c];
    if (fresh || !obj) {
      obj = await this.read();
      if (!obj) return;
      this.views[c] = obj;
    } else this.stats.staleSteps++;
    const finalizer = CONTROLLERS[c];
    try {
      await withFinalizer(this.client, ConfigMapKind, obj, finalizer, {
        apply: async (o) => {
          if (!hasFinalizer(o, finalizer)) this.violations.push(`apply of ${c} ran on rv ${o.metadata.resourceVersion} without its finalizer`);
          this.record(c, o.metadata.uid!, 'apply');
          this.stats.applies++;
          this.views[c] = o;
        },
        cleanup: async (o) => {
          if (!o.metadata.deletionTimestamp) this.violations.push(`cleanup of ${c} ran on rv ${o.metadata.resourceVersion}, which is not being deleted`);
          // Still guarded while cleanup runs, if what apply made is not cleaned up yet (a stale
          // read may run a finished cleanup again): the finalizer goes only once cleanup resolved.
          const live = await this.read();
          const guarded = live !== undefined && live.metadata.uid === o.metadata.uid && hasFinalizer(live, finalizer);
          if (!guarded && this.ledger.get(`${c} ${o.metadata.uid}`)?.at(-1) === 'apply') this.violations.push(`cleanup of ${c} runs while ${o.metadata.uid} is no longer guarded by its finalizer, and no cleanup ran after its apply`);
          this.record(c, o.metadata.uid!, 'cleanup');
          this.stats.cleanups++;
        },
      });
    } catch (err) {
      this.expected(err, `reconcile of ${c}`);
    }
  }

  /** A controller removing its finalizer on its own (e.g. told to stop guarding the object). */
  async release(c: 0 | 1, fresh: boolean): Promise<void> {
    // Only a controller that never applied, or whose cleanup is its last call, may let go.
    const obj = fresh || !this.views[c] ? await this.read() : this.views[c];
    if (!obj) return;
    const calls = this.ledger.get(`${c} ${obj.metadata.uid}`) ?? [];
    if (calls.at(-1) === 'apply') return;
    try {
      const after = await removeFinalizer(this.client, ConfigMapKind, obj, CONTROLLERS[c]);
      if (after === undefined) {
        const live = await this.read();
        if (live && live.metadata.uid === obj.metadata.uid) this.violations.push(`removeFinalizer of ${c} resolved undefined, yet ${obj.metadata.uid} is there (rv ${live.metadata.resourceVersion})`);
      } else this.views[c] = after;
    } catch (err) {
      this.expected(err, `release of ${c}`);
    }
  }

  async delete(): Promise<void> {
    const live = await this.read();
    if (!live) return;
    try {
      await this.client.delete(ConfigMapKind, this.key, { preconditions: { uid: live.metadata.uid!, resourceVersion: live.metadata.resourceVersion! } });
    } catch (err) {
      this.expected(err, 'delete');
    }
  }

  async touch(): Promise<void> {
    try {
      await this.client.patch(ConfigMapKind, this.key, { type: 'merge', body: { metadata: { labels: { touched: String(Date.now() % 1000) } } } });
    } catch (err) {
      this.expected(err, 'touch');
    }
  }

  async create(foreign: boolean, preset: 0 | 1 | null): Promise<void> {
    const finalizers = [...(foreign ? [FOREIGN] : []), ...(preset === null ? [] : [CONTROLLERS[preset]])];
    try {
      const made = await this.client.create(ConfigMapKind, { metadata: { ...this.key, ...(finalizers.length ? { finalizers } : {}) } });
      if (foreign) this.foreignHeld.add(made.metadata.uid!);
      this.stats.recreated++;
    } catch (err) {
      if (!(err instanceof Error && /AlreadyExists|already exists/.test(String((err as { reason?: string }).reason ?? err.message)))) throw err;
    }
  }

  async releaseForeign(): Promise<void> {
    const live = await this.read();
    if (!live || !this.foreignHeld.has(live.metadata.uid!)) return;
    const finalizers = (live.metadata.finalizers ?? []).filter((f) => f !== FOREIGN);
    const uid = live.metadata.uid!;
    this.releasing.set(uid, (this.releasing.get(uid) ?? 0) + 1);
    try {
      await this.client.patch(ConfigMapKind, this.key, { type: 'merge', body: { metadata: { finalizers, resourceVersion: live.metadata.resourceVersion } } });
      this.foreignHeld.delete(uid);
      this.stats.released++;
    } catch (err) {
      // NotFound: released meanwhile by a concurrent step of the user (a drop is found by `read`).
      this.expected(err, 'release of the foreign finalizer');
    } finally {
      const left = this.releasing.get(uid)! - 1;
      if (left) this.releasing.set(uid, left);
      else this.releasing.delete(uid);
    }
  }

  expected(err: unknown, what: string): void {
    if (isConflict(err)) this.stats.conflicts++;
    else if (isNotFound(err)) this.stats.notFound++;
    else this.violations.push(`${what} failed with something other than Conflict or NotFound: ${err instanceof Error ? err.message : String(err)}`);
  }

  async run(s: Step): Promise<void> {
    this.trace.push(JSON.stringify(s));
    switch (s.t) {
      case 'reconcile': return this.reconcile(s.who, s.fresh);
      case 'release': return this.release(s.who, s.fresh);
      case 'delete': return this.delete();
      case 'touch': return this.touch();
      case 'recreate': return (await this.read()) ? undefined : this.create(s.foreign, s.preset);
      case 'release-foreign': return this.releaseForeign();
    }
  }

  /** Delete, then run everyone until the object is gone (bounded). */
  async drain(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      const live = await this.read();
      if (!live) return;
      if (!live.metadata.deletionTimestamp) await this.delete();
      await Promise.all([this.reconcile(0, true), this.reconcile(1, true)]);
      if (i >= 2) await this.releaseForeign(); // the foreign holder lets go last
    }
    const live = await this.read();
    if (live) this.violations.push(`still there after the drain: finalizers ${JSON.stringify(live.metadata.finalizers ?? [])}, deletionTimestamp ${live.metadata.deletionTimestamp ?? 'none'}`);
  }

  leaks(): string[] {
    return [...this.ledger].filter(([, calls]) => calls.at(-1) !== 'cleanup').map(([id, calls]) => `controller ${id.replace(' ', ', uid ')}: ${calls.join(' → ')} (what apply made outlives the object)`);
  }
}

test('finalizer helpers under racing controllers, deletes and recreations: no leak, no dropped finalizer, nothing stuck (fast-check)', { timeout: 600_000 }, async (t) => {
  const client = testClient();
  const namespace = await testNamespace(t, client, 'finalizer-race');
  const stats: Stats = { programs: 0, conflicts: 0, notFound: 0, applies: 0, cleanups: 0, concurrent: 0, recreated: 0, released: 0, staleSteps: 0 };
  let n = 0;
  await fc.assert(
    fc.asyncProperty(program, async ({ foreign, rounds }) => {
      stats.programs++;
      const world = new World(client, { namespace, name: `guarded-${n++}` }, stats);
      await world.create(foreign, null);
      for (const round of rounds) {
        if (round.length > 1) stats.concurrent++;
        await Promise.all(round.map((s) => world.run(s)));
      }
      await world.drain();
      const problems = [...world.violations, ...world.leaks()];
      assert.deepEqual(problems, [], `steps:\n${world.trace.join('\n')}`);
    }),
    { numRuns: RUNS },
  );
  t.diagnostic(`finalizer race: ${JSON.stringify(stats)}`);
  // The programs must have made the races happen that the search is for.
  assert.ok(stats.conflicts > 0 && stats.cleanups > 0 && stats.concurrent > 0 && stats.recreated > 0 && stats.staleSteps > 0, JSON.stringify(stats));
});
