/**
 * A churn workload for both kinds: creates, spec changes and deletes of Microservices and
 * DigitalHumanProviders, chosen by a seeded random generator, written as a user would (merge
 * patches of the spec, never status). It keeps the user's last word for every object in
 * `expect`, which is what convergence is later checked against (a spec that differs from it is a
 * lost edit).
 *
 * An operation whose outcome is unknown (no HTTP answer: the API server died mid-request) is
 * settled by reading the object back once the API server answers again (`settle()`). Every
 * operation is kept with its time and outcome in `history`, for the diagnosis of a failed run.
 * @module
 */
import { isNotFound } from '@converge/runtime';
import type { KubeClient } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import type { MicroserviceSpec } from '../../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProviderSpec } from '../../../packages/operators/src/operators/provider/index.ts';
import { ApiError } from '@converge/runtime';
import type { Rng } from './env.ts';

export type ChurnOp = 'ms-create' | 'ms-update' | 'ms-delete' | 'dhp-create' | 'dhp-update' | 'dhp-delete';

export interface ChurnOptions {
  client: KubeClient;
  ns: string;
  rng: Rng;
  /** Vendor endpoint for providers; without it no providers are made. */
  endpoint?: string;
  /** Keep at least this many and at most this many live objects per kind. */
  minLive?: number;
  maxLive?: number;
  /** Include Microservices (default true). */
  microservices?: boolean;
}

export class Churn {
  readonly expect = { microservices: new Map<string, MicroserviceSpec>(), providers: new Map<string, DigitalHumanProviderSpec>() };
  readonly counts: Record<ChurnOp | 'skipped' | 'uncertain', number> = {
    'ms-create': 0, 'ms-update': 0, 'ms-delete': 0, 'dhp-create': 0, 'dhp-update': 0, 'dhp-delete': 0, skipped: 0, uncertain: 0,
  };
  /** Every operation with its time and outcome, one line each (for the diagnosis of a failed run). */
  readonly history: string[] = [];
  readonly #o: ChurnOptions;
  readonly #uncertain = new Set<string>();
  #next = 0;
  #version = 0;

  constructor(options: ChurnOptions) {
    this.#o = options;
  }

  get operations(): number {
    return Object.entries(this.counts).filter(([k]) => k !== 'skipped' && k !== 'uncertain').reduce((n, [, v]) => n + v, 0);
  }

  async createMicroservice(name = `ms-${this.#next++}`): Promise<void> {
    const spec: MicroserviceSpec = { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } };
    await this.#do('ms-create', `ms/${name}`, async () => {
      await this.#o.client.create(MicroserviceKind, { metadata: { name, namespace: this.#o.ns }, spec });
      this.expect.microservices.set(name, spec);
    });
  }

  async createProvider(name = `dhp-${this.#next++}`): Promise<void> {
    if (!this.#o.endpoint) return;
    const spec: DigitalHumanProviderSpec = { endpoint: this.#o.endpoint, region: 'ap-northeast-1', displayName: `${name} v0`, credentials: { secretRef: { name: 'creds' } } };
    await this.#do('dhp-create', `dhp/${name}`, async () => {
      await this.#o.client.create(DigitalHumanProviderKind, { metadata: { name, namespace: this.#o.ns }, spec });
      this.expect.providers.set(name, spec);
    });
  }

  async updateMicroservice(name: string): Promise<void> {
    const old = this.expect.microservices.get(name)!;
    const spec: MicroserviceSpec = this.#o.rng.next() < 0.7
      ? { ...old, container: { ...old.container, image: `ghcr.io/yrw9281/it30-todo-api:0.1.${++this.#version}` } }
      : { ...old, container: { ...old.container, port: this.#o.rng.int(8000, 8999) } };
    await this.#do('ms-update', `ms/${name}`, async () => {
      await this.#o.client.patch(MicroserviceKind, { namespace: this.#o.ns, name }, { type: 'merge', body: { spec } });
      this.expect.microservices.set(name, spec);
    });
  }

  async updateProvider(name: string): Promise<void> {
    const old = this.expect.providers.get(name)!;
    const spec: DigitalHumanProviderSpec = { ...old, displayName: `${name} v${++this.#version}` };
    await this.#do('dhp-update', `dhp/${name}`, async () => {
      await this.#o.client.patch(DigitalHumanProviderKind, { namespace: this.#o.ns, name }, { type: 'merge', body: { spec: { displayName: spec.displayName } } });
      this.expect.providers.set(name, spec);
    });
  }

  async deleteMicroservice(name: string): Promise<void> {
    await this.#do('ms-delete', `ms/${name}`, async () => {
      await this.#o.client.delete(MicroserviceKind, { namespace: this.#o.ns, name });
      this.expect.microservices.delete(name);
    });
  }

  async deleteProvider(name: string): Promise<void> {
    await this.#do('dhp-delete', `dhp/${name}`, async () => {
      await this.#o.client.delete(DigitalHumanProviderKind, { namespace: this.#o.ns, name });
      this.expect.providers.delete(name);
    });
  }

  /** One random operation on a random kind. */
  async step(): Promise<void> {
    const { rng } = this.#o;
    const min = this.#o.minLive ?? 3;
    const max = this.#o.maxLive ?? 12;
    const kinds: ('ms' | 'dhp')[] = [];
    if (this.#o.microservices !== false) kinds.push('ms');
    if (this.#o.endpoint) kinds.push('dhp');
    const kind = rng.pick(kinds);
    const live = [...(kind === 'ms' ? this.expect.microservices : this.expect.providers).keys()].filter((n) => !this.#uncertain.has(`${kind}/${n}`));
    const roll = rng.next();
    const op = live.length < min || (roll < 0.3 && live.length < max) ? 'create' : roll < 0.75 || live.length <= min ? 'update' : 'delete';
    if (op === 'create' || live.length === 0) return kind === 'ms' ? this.createMicroservice() : this.createProvider();
    const name = rng.pick(live);
    if (op === 'update') return kind === 'ms' ? this.updateMicroservice(name) : this.updateProvider(name);
    return kind === 'ms' ? this.deleteMicroservice(name) : this.deleteProvider(name);
  }

  /** Runs `step` every `intervalMs` until the signal aborts. Never throws. */
  async run(signal: AbortSignal, intervalMs = 150): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.step();
      } catch {
        // counted in #do
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  /** Reads back every object whose last operation had no answer, and takes the live state as the user's word. */
  async settle(): Promise<void> {
    for (const id of [...this.#uncertain]) {
      const [kind, name] = id.split('/') as ['ms' | 'dhp', string];
      try {
        if (kind === 'ms') {
          const live = await this.#o.client.get(MicroserviceKind, { namespace: this.#o.ns, name });
          if (live.metadata.deletionTimestamp) this.expect.microservices.delete(name);
          else this.expect.microservices.set(name, { container: { image: live.spec.container.image, port: live.spec.container.port } });
        } else {
          const live = await this.#o.client.get(DigitalHumanProviderKind, { namespace: this.#o.ns, name });
          if (live.metadata.deletionTimestamp) this.expect.providers.delete(name);
          else this.expect.providers.set(name, live.spec);
        }
      } catch (err) {
        if (!isNotFound(err)) throw err;
        if (kind === 'ms') this.expect.microservices.delete(name);
        else this.expect.providers.delete(name);
      }
      this.#uncertain.delete(id);
    }
  }

  async #do(op: ChurnOp, id: string, fn: () => Promise<void>): Promise<void> {
    if (this.#uncertain.has(id)) { this.counts.skipped++; return; }
    const at = new Date().toISOString();
    try {
      await fn();
      this.counts[op]++;
      this.history.push(`${at} ${op} ${id}: done`);
    } catch (err) {
      if (err instanceof ApiError && err.code > 0 && err.code < 500) {
        // Answered with a refusal: it did not happen (AlreadyExists while the old one terminates, NotFound, …).
        this.counts.skipped++;
        this.history.push(`${at} ${op} ${id}: refused (${err.code})`);
        return;
      }
      // No answer, or a server error: it may or may not have happened.
      this.#uncertain.add(id);
      this.counts.uncertain++;
      this.history.push(`${at} ${op} ${id}: uncertain (${err instanceof Error ? err.message : String(err)})`);
    }
  }
}
