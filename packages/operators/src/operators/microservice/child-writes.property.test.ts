/**
 * Model-based test of the child writes under a cluster whose admission changes what is written
 * (`child-writes.ts`): for any idempotent admission mutation (an image pinned to a digest, a
 * rendered limit lowered, a container appended, nothing) and any sequence of spec changes, hand
 * edits and periodic checks, (a) a periodic check after one with nothing changed in between (or
 * only what the operator does not compare: the deployment controller's revision annotation) sends
 * no write — the write loop this guards against — and (b) after every check each child is what
 * admission makes of the desired state: a new spec and a hand edit are still converged.
 *
 * The two client calls the writes use (create, replace) are played by a small model of the
 * API server's storage: admission applied to each write, the generation moved by a spec change,
 * the resourceVersion by any change, a write that changes nothing stored as a no-op. The real
 * API server with a MutatingAdmissionPolicy is `test/integration/microservice/admission-changed-write.test.ts`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import pino from 'pino';
import { DeploymentKind, ServiceKind, FakeClock } from '@converge/runtime';
import type { Deployment, KubeClient, KubeObject, Service } from '@converge/runtime';
import { renderDesiredState } from './desired-state.ts';
import { containsDesired } from './contains.ts';
import { deploymentUpdate } from './update-body.ts';
import { DEPLOYMENT_RULES } from './owned-fields.ts';
import { ChildWrites } from './child-writes.ts';
import type { Child } from './child-writes.ts';
import type { Microservice } from './api/index.ts';

type Admission = (d: Deployment) => Deployment;

/** Idempotent mutations as admission policies make them. */
const ADMISSIONS: Record<string, Admission> = {
  none: (d) => d,
  'pin-digest': (d) => mapContainers(d, (c) => (!c.image || c.image.includes('@') ? c : { ...c, image: `${c.image.slice(0, c.image.lastIndexOf(':'))}@sha256:${'a'.repeat(64)}` })),
  'cap-memory': (d) => mapContainers(d, (c) => ({ ...c, resources: { ...c.resources, limits: { ...c.resources?.limits, memory: '64Mi' } } })),
  'append-sidecar': (d) => {
    const containers = d.spec!.template.spec!.containers;
    if (containers.some((c) => c.name === 'proxy')) return d;
    return withContainers(d, [...containers, { name: 'proxy', image: 'example.com/proxy:1' }]);
  },
};

type Container = NonNullable<Deployment['spec']>['template']['spec'] extends infer S ? S extends { containers: (infer C)[] } ? C : never : never;
function withContainers(d: Deployment, containers: Container[]): Deployment {
  return { ...d, spec: { ...d.spec!, template: { ...d.spec!.template, spec: { ...d.spec!.template.spec!, containers } } } };
}
function mapContainers(d: Deployment, f: (c: Container) => Container): Deployment {
  return withContainers(d, d.spec!.template.spec!.containers.map(f));
}

/** The storage of one namespace as the API server keeps it, with `admit` applied to Deployment writes. */
class Storage {
  readonly objects = new Map<string, KubeObject>();
  writes = 0;
  #rv = 1;
  #uid = 1;
  readonly admit: Admission;
  constructor(admit: Admission) {
    this.admit = admit;
  }

  get(kind: string): KubeObject | undefined {
    const o = this.objects.get(kind);
    return o && structuredClone(o);
  }

  client(): KubeClient {
    const create = async (kind: { kind: string }, body: KubeObject): Promise<KubeObject> => {
      this.writes++;
      if (this.objects.has(kind.kind)) throw Object.assign(new Error('AlreadyExists'), { status: 409 });
      const stored = this.#admitted(kind.kind, structuredClone(body));
      stored.metadata = { ...stored.metadata, uid: `uid-${this.#uid++}`, resourceVersion: String(this.#rv++), ...(kind.kind === 'Deployment' ? { generation: 1 } : {}) };
      this.objects.set(kind.kind, stored);
      return structuredClone(stored);
    };
    const replace = async (kind: { kind: string }, body: KubeObject): Promise<KubeObject> => {
      this.writes++;
      const current = this.objects.get(kind.kind)!;
      assert.equal(body.metadata.resourceVersion, current.metadata.resourceVersion, 'written with the version read');
      const next = this.#admitted(kind.kind, structuredClone(body)) as KubeObject & { spec?: unknown };
      next.metadata = { ...next.metadata, uid: current.metadata.uid!, resourceVersion: current.metadata.resourceVersion!, ...(current.metadata.generation !== undefined ? { generation: current.metadata.generation } : {}) };
      if (isDeepStrictEqual(next, current)) return structuredClone(current);
      if (!isDeepStrictEqual(next.spec, (current as { spec?: unknown }).spec) && next.metadata.generation !== undefined) next.metadata.generation++;
      next.metadata.resourceVersion = String(this.#rv++);
      this.objects.set(kind.kind, next);
      return structuredClone(next);
    };
    return { create, replace } as unknown as KubeClient;
  }

  /** A hand edit (not through the operator): admitted like any write, the generation moved by a spec change. */
  edit(f: (d: Deployment) => Deployment): void {
    const current = this.objects.get('Deployment') as Deployment | undefined;
    if (!current) return;
    const next = this.#admitted('Deployment', f(structuredClone(current))) as Deployment;
    if (isDeepStrictEqual(next, current)) return;
    const generation = (current.metadata.generation ?? 1) + (isDeepStrictEqual(next.spec, current.spec) ? 0 : 1);
    next.metadata = { ...next.metadata, generation, resourceVersion: String(this.#rv++) };
    this.objects.set('Deployment', next);
  }

  #admitted(kind: string, o: KubeObject): KubeObject {
    return kind === 'Deployment' ? this.admit(o as Deployment) : o;
  }
}

type Step =
  | { do: 'check' }
  | { do: 'new-spec'; tag: string; port: number }
  | { do: 'hand-edit'; edit: 'command' | 'image' | 'replicas-label' }
  /** What others change that the operator does not compare: no write may follow. */
  | { do: 'foreign-edit' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.constant({ do: 'check' as const }), weight: 4 },
  fc.record({ do: fc.constant('new-spec' as const), tag: fc.constantFrom('1', '2', '3'), port: fc.constantFrom(8080, 9090) }),
  fc.record({ do: fc.constant('hand-edit' as const), edit: fc.constantFrom('command' as const, 'image' as const, 'replicas-label' as const) }),
  fc.constant({ do: 'foreign-edit' as const }),
);

/** The deployment controller's revision annotation, moved as it does on each rollout. */
function nextRevision(d: Deployment): Deployment {
  const revision = Number(d.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '0') + 1;
  return { ...d, metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, 'deployment.kubernetes.io/revision': String(revision) } } };
}

const HAND_EDITS: Record<Extract<Step, { do: 'hand-edit' }>['edit'], (d: Deployment) => Deployment> = {
  command: (d) => mapContainers(d, (c) => ({ ...c, command: ['/bin/sh', '-c', 'sleep 1d'] })),
  image: (d) => mapContainers(d, (c) => (c.name === 'proxy' ? c : { ...c, image: 'example.com/hand-picked:9' })),
  'replicas-label': (d) => ({ ...d, metadata: { ...d.metadata, labels: { ...d.metadata.labels, app: 'someone-else' } } }),
};

test('property: under any idempotent admission mutation, a check with nothing changed since the last sends no write, and every check leaves each child as admission makes the desired state', async () => {
  await fc.assert(fc.asyncProperty(fc.constantFrom(...Object.keys(ADMISSIONS)), fc.array(step, { minLength: 1, maxLength: 30 }), async (admission, steps) => {
    const admit = ADMISSIONS[admission]!;
    const storage = new Storage(admit);
    const writes = new ChildWrites({ client: storage.client(), clock: new FakeClock(0) });
    const log = pino({ level: 'silent' });
    let ms: Microservice = { apiVersion: 'platform.example.io/v1alpha1', kind: 'Microservice', metadata: { name: 'web', namespace: 'ns', uid: 'ms-uid', generation: 1, resourceVersion: '1' }, spec: { container: { image: 'example.com/web:1', port: 8080 } } };
    let changedSinceCheck = true;
    for (const s of [{ do: 'check' } as Step, ...steps]) {
      if (s.do === 'new-spec') {
        ms = { ...ms, metadata: { ...ms.metadata, generation: ms.metadata.generation! + 1 }, spec: { container: { image: `example.com/web:${s.tag}`, port: s.port } } };
        changedSinceCheck = true;
        continue;
      }
      if (s.do === 'foreign-edit') {
        storage.edit(nextRevision);
        continue;
      }
      if (s.do === 'hand-edit') {
        storage.edit(HAND_EDITS[s.edit]);
        changedSinceCheck = true;
        continue;
      }
      const desired = renderDesiredState(ms);
      const children: Child[] = [
        { kind: DeploymentKind, current: storage.get('Deployment') as Deployment | undefined, desired: desired.deployment },
        { kind: ServiceKind, current: storage.get('Service') as Service | undefined, desired: desired.service },
      ];
      const before = storage.writes;
      const { writes: planned, refusals } = writes.plan(ms, 'ns/web', children, [], log);
      assert.deepEqual(refusals, []);
      const sent = await writes.send(planned, 'ns/web', 'web', new AbortController().signal, log);
      assert.equal(sent.failure, undefined);
      const sentNow = storage.writes - before;
      assert.ok(sentNow <= 2, `${sentNow} writes in one check`);
      if (!changedSinceCheck) assert.equal(sentNow, 0, `a check with nothing changed since the last sent ${sentNow} write(s) (admission ${admission})`);
      changedSinceCheck = false;

      const stored = storage.get('Deployment') as Deployment;
      const wanted = admit(deploymentUpdate(stored, desired.deployment));
      assert.ok(containsDesired(stored, wanted, DEPLOYMENT_RULES), `the Deployment is what admission (${admission}) makes of the desired state: ${JSON.stringify(stored.spec?.template.spec?.containers)}`);
      assert.ok(containsDesired(storage.get('Service'), desired.service), 'the Service is as desired');
    }
  }), { numRuns: 300 });
});
