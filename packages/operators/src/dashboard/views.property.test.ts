/**
 * Adversarial property test (fast-check) of the dashboard's server-side builders: the rows
 * (`items.ts`: `microserviceItem`, `providerItem`, `quotaOf`), the condition timeline
 * (`timeline.ts`), the aggregation model under sequences of changes (`model.ts`) and the detail
 * document (`detail.ts`, through an in-memory stand-in for a cluster's informer cache).
 *
 * Searched: the objects of `../cli/views/cluster-objects.test-support.ts` (Microservices and
 * DigitalHumanProviders with pruned or odd status, unknown condition types and reasons,
 * generations behind or ahead, huge messages, dates from year 1 to 9999 and unparseable ones,
 * deletionTimestamp, many finalizers, hostile unicode and control characters; their Deployments,
 * Services, EndpointSlices and Events), cluster names of any text, reachable or not; sequences of
 * upserts (new objects, new versions of the same object with another status, a re-created object
 * under the same name), removals and cluster changes, with a clock that moves forward, stands
 * still or steps back.
 *
 * Invariants checked:
 * - nothing throws, and the same input gives the same output (rows, transitions, details);
 * - everything served is plain JSON: no `undefined` (types.ts: "Absent values are `null`, never
 *   missing keys"), no NaN or Infinity, no lone surrogate; rows and details validate against
 *   `openapi.yaml` (formats not checked: a status date the API server never checked is passed on
 *   as it is); every key of `ItemCommon` and of the status rows is present;
 * - rows: `key` is `<kind>/<cluster>/<namespace>/<name>`; health is ready exactly when converged
 *   (shared/health.ts); `unconvergedSince` is null exactly when converged; `usable` only when
 *   converged, the cluster reachable and quota not known to be 0; `quota.left` never negative;
 *   `why` / `whyMessage` null or text; `rank` null (set only by a list answer);
 * - timeline: one entry per condition type whose status or reason changed, appeared or went,
 *   none for message-only changes; at most TIMELINE_LIMIT kept, the most recent;
 * - model: it emits an event only for a real change, every event validates as a `ServerEvent`,
 *   and replaying them rebuilds its rows; providers' `usable` follows their cluster;
 * - detail: the explanation is `converge explain`'s for the same facts (credentials never read:
 *   `secretExists` null), the timeline the model's, the YAML parses back to the object.
 *
 * Runs: 150 per property by default, 50 model sequences (about 7 s for the file on 2 cores;
 * 13 s with a second test process busy on both);
 * CONVERGE_RELIABILITY_LONG=1 runs ten times as many. A failure prints fast-check's seed:
 * `CONVERGE_FC_SEED=<seed> npm run test:unit -- packages/operators/src/dashboard/views.property.test.ts`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import type { Condition, KubeObject } from '@converge/runtime';
import { microserviceItem, providerItem, itemKey } from './items.ts';
import { conditionTransitions, appendTimeline, TIMELINE_LIMIT } from './timeline.ts';
import { DashboardModel } from './model.ts';
import { objectDetail } from './detail.ts';
import { REGARDING_UID_INDEX, SERVICE_SLICES_INDEX } from './cluster-source.ts';
import type { ClusterSource } from './cluster-source.ts';
import type { ClusterView, Item, ItemKind, ServerEvent, TimelineEntry } from './shared/types.ts';
import { explainMicroservice } from '../cli/views/explain-microservice.ts';
import { explainProvider } from '../cli/views/explain-provider.ts';
import { defaultPlatformDefaults } from '../operators/microservice/index.ts';
import type { Microservice } from '../operators/microservice/api/index.ts';
import type { DigitalHumanProvider } from '../operators/provider/api/index.ts';
import {
  BASE_MS, conditionsArb, dateArb, microserviceArb, microserviceWorldArb, notJson, providerArb, providerWorldArb, textArb,
} from '../cli/views/cluster-objects.test-support.ts';
import type { GeneratedCondition, MicroserviceWorld, ProviderWorld } from '../cli/views/cluster-objects.test-support.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = LONG ? 1_500 : 150;

// ---------------------------------------------------------------------------------------------
// The contract

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(parseYaml(readFileSync(new URL('./openapi.yaml', import.meta.url), 'utf8')) as object, 'openapi');
const schema = (name: string) => ajv.compile({ $ref: `openapi#/components/schemas/${name}` });
const SCHEMAS = { Microservice: schema('Microservice'), DigitalHumanProvider: schema('Provider'), ObjectDetail: schema('ObjectDetail'), ServerEvent: schema('ServerEvent'), TimelineEntry: schema('TimelineEntry') };

function assertValid(validate: ReturnType<typeof schema>, body: unknown, what: string): void {
  assert.ok(validate(body), `${what}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1500)}`);
}


const COMMON_KEYS = ['key', 'cluster', 'kind', 'health', 'why', 'whyMessage', 'unconvergedSince'];
const MS_ROW_KEYS = ['converged', 'createdAt', 'deleting', 'generation', 'image', 'managedResources', 'message', 'name', 'namespace', 'observedGeneration', 'phase', 'port', 'progressing', 'ready', 'reason', 'replicas', 'stalled', 'uid'];
const DHP_ROW_KEYS = ['converged', 'createdAt', 'deleting', 'displayName', 'endpoint', 'finalizer', 'generation', 'limitedBy', 'name', 'namespace', 'observedGeneration', 'providerID', 'ready', 'recommendation', 'region', 'uid', 'usage'];

function checkItem(item: Item, cluster: string, what: string): void {
  assert.deepEqual(notJson(item), [], `${what}: plain JSON`);
  assertValid(SCHEMAS[item.kind], item, what);
  const keys = new Set(Object.keys(item));
  for (const k of [...COMMON_KEYS, ...(item.kind === 'Microservice' ? MS_ROW_KEYS : [...DHP_ROW_KEYS, 'usable', 'quota', 'limitingReason', 'rank'])]) assert.ok(keys.has(k), `${what}: key ${k} present`);
  assert.equal(item.key, itemKey(item.kind, cluster, item.namespace, item.name));
  assert.equal(item.cluster, cluster);
  assert.equal(item.health === 'ready', item.converged, `${what}: health ready exactly when converged`);
  assert.equal(item.unconvergedSince === null, item.converged, `${what}: unconvergedSince null exactly when converged`);
  for (const k of ['why', 'whyMessage'] as const) assert.ok(item[k] === null || typeof item[k] === 'string', `${what}: ${k}`);
  if (item.kind === 'DigitalHumanProvider') {
    if (item.usable) assert.ok(item.converged && item.quota?.left !== 0, `${what}: usable only converged and with quota`);
    if (item.quota?.left != null) assert.ok(item.quota.left >= 0, `${what}: quota left never negative`);
    assert.equal(item.rank, null);
  }
}

const clusterNameArb = fc.oneof(fc.constantFrom('kind-dev', 'prod', ''), textArb);
const seenAtArb = dateArb.map((d) => new Date(Date.parse(d)).toISOString());

// ---------------------------------------------------------------------------------------------
// Rows

test('items: rows of odd objects are plain JSON, valid against openapi.yaml, and keep their promises (fast-check)', () => {
  fc.assert(
    fc.property(
      fc.oneof(microserviceArb.map((o) => ({ kind: 'Microservice' as const, o })), providerArb.map((o) => ({ kind: 'DigitalHumanProvider' as const, o }))),
      clusterNameArb,
      fc.boolean(),
      seenAtArb,
      ({ kind, o }, cluster, reachable, seenAt) => {
        const before = JSON.stringify(o);
        const build = (x: typeof o) => (kind === 'Microservice' ? microserviceItem(cluster, x as Microservice, seenAt) : providerItem(cluster, x as DigitalHumanProvider, reachable, seenAt));
        const item = build(o);
        assert.equal(JSON.stringify(o), before, 'the object is not modified');
        assert.equal(JSON.stringify(build(structuredClone(o))), JSON.stringify(item), 'same object, same row');
        checkItem(item, cluster, `${kind} row`);
        if (item.kind === 'DigitalHumanProvider' && !reachable) assert.equal(item.usable, false, 'an unreachable cluster: not usable');
      },
    ),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------------------------------------
// Timeline

const conditionListArb = fc.integer({ min: 1, max: 4 }).chain((g) => conditionsArb(g, fc.constantFrom('Ready', 'Stalled', 'Progressing', 'X')));

test('timeline: one entry per condition that appeared, went, or changed status or reason; bounded (fast-check)', () => {
  fc.assert(
    fc.property(conditionListArb, conditionListArb, seenAtArb, fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: 5 }), (before, after, seenAt, generation, limit) => {
      const entries = conditionTransitions(before as Condition[] | undefined, after as Condition[] | undefined, seenAt, generation);
      assert.deepEqual(conditionTransitions(structuredClone(before) as Condition[] | undefined, structuredClone(after) as Condition[] | undefined, seenAt, generation), entries, 'deterministic');
      assert.deepEqual(notJson(entries), []);
      for (const e of entries) assertValid(SCHEMAS.TimelineEntry, e, 'timeline entry');
      const old = new Map((before ?? []).map((c: GeneratedCondition) => [c.type, c]));
      const now = new Map((after ?? []).map((c: GeneratedCondition) => [c.type, c]));
      const expected = [
        ...[...now.values()].filter((c) => { const o = old.get(c.type); return !o || o.status !== c.status || o.reason !== c.reason; }).map((c) => c.type),
        ...[...old.keys()].filter((t) => !now.has(t)),
      ];
      assert.deepEqual(entries.map((e) => e.type), expected);
      for (const e of entries) {
        assert.ok(e.from !== null || e.to !== null);
        assert.equal(e.seenAt, seenAt);
        assert.equal(e.generation, generation);
        if (e.to) assert.deepEqual(e.to, { status: now.get(e.type)!.status, reason: now.get(e.type)!.reason, message: now.get(e.type)!.message, observedGeneration: now.get(e.type)!.observedGeneration ?? null, lastTransitionTime: now.get(e.type)!.lastTransitionTime });
      }
      assert.deepEqual(conditionTransitions(after as Condition[] | undefined, after as Condition[] | undefined, seenAt, generation), [], 'no change, no entry');
      const history: TimelineEntry[] = [];
      const batches = [entries, entries, entries];
      for (const b of batches) appendTimeline(history, b, limit);
      assert.ok(history.length <= limit);
      assert.deepEqual(history, batches.flat().slice(-limit), 'the most recent kept');
    }),
    { numRuns: RUNS * 2 },
  );
});

// ---------------------------------------------------------------------------------------------
// The model under sequences of changes

type Op =
  | { op: 'cluster'; cluster: number; reachable: boolean }
  | { op: 'upsert'; cluster: number; slot: number; version: number; recreate: boolean }
  | { op: 'remove'; cluster: number; slot: number }
  | { op: 'clock'; stepMs: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cluster' as const), cluster: fc.nat(2), reachable: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('upsert' as const), cluster: fc.nat(2), slot: fc.nat(3), version: fc.nat(2), recreate: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), cluster: fc.nat(2), slot: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('clock' as const), stepMs: fc.oneof(fc.constant(0), fc.integer({ min: -86_400_000, max: 86_400_000 })) }) },
);

/** Four objects (two of each kind), each in three versions that share name and uid but not status. */
const slotsArb = fc.tuple(
  ...[0, 1, 2, 3].map((i) => {
    const kind: ItemKind = i % 2 === 0 ? 'Microservice' : 'DigitalHumanProvider';
    const objects: fc.Arbitrary<KubeObject> = kind === 'Microservice' ? microserviceArb : providerArb;
    return fc.array(objects, { minLength: 3, maxLength: 3 }).map((versions) => {
      const [first] = versions;
      const metadata = first!.metadata;
      return { kind, versions: versions.map((v) => ({ ...v, metadata: { ...v.metadata, name: metadata.name, namespace: metadata.namespace, uid: metadata.uid } }) as KubeObject) };
    });
  }),
);

test('model: events only on change, valid, replayable into its rows; timelines bounded; providers follow their cluster (fast-check)', () => {
  fc.assert(
    fc.property(fc.array(clusterNameArb, { minLength: 3, maxLength: 3 }), slotsArb, fc.array(opArb, { maxLength: 30 }), (clusterNames, slots, ops) => {
      let clock = BASE_MS;
      const model = new DashboardModel({ now: () => new Date(clock) });
      const events: ServerEvent[] = [];
      model.subscribe((e) => events.push(e));
      const replay = new Map<string, Item>();
      const clusters = new Map<string, ClusterView>();
      const view = (name: string, reachable: boolean): ClusterView => ({ name, server: 'https://127.0.0.1:6443', state: reachable ? 'reachable' : 'unreachable', reachable, syncedAt: null, lastSync: null, error: reachable ? null : 'connect ECONNREFUSED', warnings: [] });
      for (const o of ops) {
        const seen = events.length;
        const itemsBefore = JSON.stringify(model.items());
        if (o.op === 'clock') clock += o.stepMs;
        else if (o.op === 'cluster') model.setCluster(view(clusterNames[o.cluster]!, o.reachable));
        else {
          const slot = slots[o.slot]!;
          const cluster = clusterNames[o.cluster]!;
          const object = slot.versions[o.op === 'upsert' ? o.version : 0]!;
          if (o.op === 'upsert') {
            const obj = o.recreate ? { ...object, metadata: { ...object.metadata, uid: `${object.metadata.uid}-again` } } : object;
            model.upsert(cluster, slot.kind, obj);
          } else model.remove(cluster, slot.kind, object);
        }
        for (const e of events.slice(seen)) {
          assert.deepEqual(notJson(e), [], 'events are plain JSON');
          assertValid(SCHEMAS.ServerEvent, e, `event ${e.type}`);
          if (e.type === 'upsert') {
            checkItem(e.item, e.item.cluster, 'streamed row');
            replay.set(e.item.key, e.item);
          } else if (e.type === 'delete') replay.delete(e.key);
          else if (e.type === 'cluster') clusters.set(e.cluster.name, e.cluster);
        }
        if (events.length > seen && o.op === 'upsert') assert.notEqual(JSON.stringify(model.items()), itemsBefore, 'an upsert event means a changed row');
        if (events.length === seen) assert.equal(JSON.stringify(model.items()), itemsBefore, 'no event, no change');
      }
      const items = model.items();
      assert.deepEqual(new Map(items.map((i) => [i.key, i])), replay, 'the events replayed give the rows');
      for (const item of items) {
        const entry = model.get(item.key)!;
        assert.ok(entry.timeline.length <= TIMELINE_LIMIT);
        assert.deepEqual(notJson(entry.timeline), []);
        if (item.kind === 'DigitalHumanProvider' && item.usable) assert.equal(model.cluster(item.cluster)?.reachable, true, 'a usable provider is on a reachable cluster');
      }
      assert.deepEqual(model.clusters().map((c) => c.name), [...clusters.keys()].sort((a, b) => (a < b ? -1 : 1)));
    }),
    // Each run builds 12 objects and up to 30 changes: a third of the runs keeps the file's time.
    { numRuns: Math.ceil(RUNS / 3) },
  );
});

// ---------------------------------------------------------------------------------------------
// The detail document

/** A stand-in for a ClusterSource: a name, and a cache holding the world's objects with the informers' indexes. */
function sourceOf(name: string, objects: readonly KubeObject[]): ClusterSource {
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
  return {
    name,
    cache: {
      store: (kind: { kind: string }) => ({
        get: ({ namespace, name: n }: { namespace: string; name: string }) => byKind(kind.kind).find((o) => o.metadata.namespace === namespace && o.metadata.name === n),
        list: (namespace?: string) => byKind(kind.kind).filter((o) => namespace === undefined || o.metadata.namespace === namespace),
        byIndex: (index: string, value: string) =>
          index === REGARDING_UID_INDEX ? byKind(kind.kind).filter((o) => (o as { regarding?: { uid?: string } }).regarding?.uid === value)
          : index === SERVICE_SLICES_INDEX ? byKind(kind.kind).filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.labels?.['kubernetes.io/service-name'] ?? ''}` === value)
          : [],
      }),
    },
    view: () => ({ unreadableKinds: [], warnings: [] }),
  } as unknown as ClusterSource;
}

async function checkDetail(kind: ItemKind, primary: KubeObject, objects: KubeObject[], expected: () => unknown, cluster: string): Promise<void> {
  const model = new DashboardModel({ now: () => new Date(BASE_MS) });
  model.setCluster({ name: cluster, server: 's', state: 'reachable', reachable: true, syncedAt: null, lastSync: null, error: null, warnings: [] });
  model.upsert(cluster, kind, primary);
  const source = sourceOf(cluster, objects);
  const ns = primary.metadata.namespace!;
  const name = primary.metadata.name!;
  const detail = await objectDetail(model, source, kind, ns, name);
  assert.ok(detail, 'an object the model holds has a detail');
  assert.deepEqual(notJson(detail), [], 'the detail is plain JSON (a difference\'s actual included: null when the live child lacks the field)');
  assertValid(SCHEMAS.ObjectDetail, JSON.parse(JSON.stringify(detail)), 'detail');
  assert.equal(JSON.stringify(await objectDetail(model, source, kind, ns, name)), JSON.stringify(detail), 'same cache, same detail');
  assert.equal(JSON.stringify(detail.explanation), JSON.stringify(expected()), "the explanation is converge explain's");
  assert.deepEqual(detail.timeline, model.get(itemKey(kind, cluster, ns, name))!.timeline);
  // The object, with what explain hides hidden: plain env values and the last-applied annotation.
  const shown = JSON.parse(JSON.stringify(primary)) as KubeObject & { spec?: { container?: { env?: { value?: string }[] } } };
  for (const e of shown.spec?.container?.env ?? []) if (e.value !== undefined) e.value = '(value hidden)';
  if (shown.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] !== undefined) shown.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] = '(value hidden)';
  assert.deepEqual(parseYaml(detail.yaml), shown, 'the YAML is the object, env values and last-applied hidden');
  assert.equal(await objectDetail(model, source, kind, ns, `${name}-not-there`), undefined);
}

test('detail: a Microservice with its children, slices and Events, from the cache (fast-check)', async () => {
  await fc.assert(
    fc.asyncProperty(microserviceWorldArb, clusterNameArb, async (w: MicroserviceWorld, cluster) => {
      const objects = [w.microservice, w.deployment, w.service, ...w.endpointSlices, ...w.events].filter((o): o is NonNullable<typeof o> => o !== undefined) as KubeObject[];
      // What the reader finds for it: the Events in its namespace regarding the object or its children.
      const uids = [w.microservice, w.deployment, w.service].filter((o) => o !== undefined).map((o) => o!.metadata.uid ?? '').filter(Boolean);
      const events = uids.flatMap((uid) => w.events.filter((e) => e.regarding?.uid === uid && e.metadata.namespace === w.microservice.metadata.namespace));
      await checkDetail('Microservice', w.microservice, objects, () =>
        explainMicroservice({ microservice: w.microservice, deployment: w.deployment, service: w.service, endpointSlices: w.endpointSlices, events, defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' }), cluster);
    }),
    { numRuns: RUNS },
  );
});

test('detail: a DigitalHumanProvider with its Events, credentials never read (fast-check)', async () => {
  await fc.assert(
    fc.asyncProperty(providerWorldArb, clusterNameArb, async (w: ProviderWorld, cluster) => {
      const objects = [w.provider, ...w.events] as KubeObject[];
      const events = w.events.filter((e) => e.regarding?.uid === w.provider.metadata.uid && e.metadata.namespace === w.provider.metadata.namespace);
      await checkDetail('DigitalHumanProvider', w.provider, objects, () =>
        explainProvider({ provider: w.provider, credentials: { secretExists: null, keyPresent: null, error: 'the dashboard does not read Secrets (see the Ready condition)' }, events }), cluster);
    }),
    { numRuns: RUNS },
  );
});
