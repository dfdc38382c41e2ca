/**
 * Wires a reconciler to the events that should wake it, controller-runtime style:
 *
 *   manager.controller('microservice')
 *     .for(MicroserviceKind, { predicates: [generationChanged] })
 *     .owns(DeploymentKind)
 *     .owns(ServiceKind)
 *     .watches(SecretKind, (secret) => keysOfProvidersNaming(secret))
 *     .withOptions({ maxConcurrentReconciles: 4, resyncPeriodMs: 10_000 })
 *     .complete(reconciler);
 *
 * Every kind named here is declared on the manager's shared cache (one watch per kind, however
 * many controllers use it). `owns` maps a child's change to its controller owner's key, matched
 * by the owner's API group and kind; `watches` maps with any function. An update is mapped from
 * both its versions, so a primary an object was moved away from (relabelled, orphaned, handed
 * to another owner) is woken too; a delete is mapped from the last version seen. The handlers are
 * connected while the controller runs (as controller-runtime starts its sources with the
 * controller): the cache of a standby replica fills, its queues do not; on taking over, each
 * informer replays what it holds, so every cached object is reconciled.
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject, ObjectKey, PartialObjectMetadata, ResourceKind } from '../objects/index.ts';
import { formatKey, keyOf } from '../objects/index.ts';
import type { Cache, Change, Informer } from '../cache/index.ts';
import type { Clock } from '../clock/index.ts';
import type { RuntimeMetrics } from '../metrics/index.ts';
import type { Predicate } from '../predicates/index.ts';
import type { Reconciler, ReconcileFunc } from '../reconcile/index.ts';
import { ConvergenceTracker } from '../convergence/index.ts';
import { controllerOf, refersToKind } from '../owners/index.ts';
import type { ConvergencePredicate } from '../convergence/index.ts';
import { Controller } from './controller.ts';
import type { ControllerOptions } from './controller.ts';

/** What a controller needs from its manager. */
export interface ControllerHost {
  readonly cache: Cache;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: RuntimeMetrics;
  /** Registers the controller to run while this process leads. */
  addController(controller: Controller): void;
  /**
   * Throws what `addController` would for a controller of this name (the name taken, the host
   * started), before the controller is built: building one registers its metrics, which would
   * otherwise take over those of the controller already there.
   */
  checkNewController?(name: string): void;
  /** Defaults applied to every controller (the manager's shutdown grace, for one). */
  readonly controllerDefaults: ControllerOptions;
  /** Where a controller's convergence tracker is published (metrics gauge, debug endpoint). */
  trackConvergence(controller: string, tracker: ConvergenceTracker): void;
}

export interface WatchOptions<T extends KubeObject> {
  predicates?: Predicate<T>[];
}

export interface ForOptions<T extends KubeObject> extends WatchOptions<T> {
  /**
   * When is a primary object converged? Feeds `converge_longest_unconverged_seconds` and the
   * `/debug/unconverged` endpoint. Default: observedGeneration caught up and Ready=True.
   * `false` turns tracking off (kinds without a status convention).
   */
  convergence?: ConvergencePredicate | false;
}

/** Connects one watched kind to `enqueue`; returns the disconnect. */
type Wiring = (enqueue: (key: string) => void) => () => void;

export class ControllerBuilder {
  readonly #host: ControllerHost;
  readonly #name: string;
  #primary: ResourceKind | undefined;
  readonly #wirings: Wiring[] = [];
  #options: ControllerOptions = {};
  #publishTracker: (() => void) | undefined;

  constructor(host: ControllerHost, name: string) {
    this.#host = host;
    this.#name = name;
  }

  /** The kind this controller reconciles; its keys are the reconcile requests. Exactly once. */
  for<T extends KubeObject>(kind: ResourceKind<T>, options: ForOptions<T> = {}): this {
    if (this.#primary) throw new Error(`controller ${this.#name}: for() called twice`);
    this.#primary = kind;
    const informer = this.#host.cache.informer(kind);
    if (options.convergence !== false) {
      const convergence = options.convergence;
      // Published once the controller is registered (a builder never completed tracks nothing).
      this.#publishTracker = () => {
        const tracker = new ConvergenceTracker({ clock: this.#host.clock, ...(convergence ? { predicate: convergence } : {}) });
        informer.addHandler((c) => {
          if (c.type === 'delete') tracker.forget(formatKey(keyOf(c.object)));
          else tracker.observe(c.object);
        });
        this.#host.trackConvergence(this.#name, tracker);
      };
    }
    this.#wirings.push((enqueue) =>
      informer.addHandler((c) => {
        if (passes(c, options.predicates)) enqueue(formatKey(keyOf(c.object)));
      }),
    );
    return this;
  }

  /** A kind whose objects are controlled by the primary kind: a child's change enqueues its owner. */
  owns<T extends KubeObject>(kind: ResourceKind<T>, options: WatchOptions<T> = {}): this {
    const informer = this.#host.cache.informer(kind);
    this.#wirings.push((enqueue) =>
      informer.addHandler((c) => {
        const primary = this.#primary;
        if (!primary || !passes(c, options.predicates)) return;
        const ownerKey = (obj: T): string | undefined => {
          const ref = controllerOf(obj);
          return ref && refersToKind(ref, primary) ? formatKey({ namespace: primary.namespaced ? (obj.metadata.namespace ?? '') : '', name: ref.name }) : undefined;
        };
        // The owner before an update too: a child orphaned or handed to another owner is news to
        // the one it left (controller-runtime's EnqueueRequestForOwner maps both versions).
        const now = ownerKey(c.object);
        const before = c.oldObject && ownerKey(c.oldObject);
        if (now !== undefined) enqueue(now);
        if (before !== undefined && before !== now) enqueue(before);
      }),
    );
    return this;
  }

  /**
   * Any other kind: `map` says which primary objects a change concerns. With `metadataOnly`, the
   * kind is cached (and `map` called) with `PartialObjectMetadata` only.
   */
  watches(kind: ResourceKind, map: (obj: PartialObjectMetadata) => (ObjectKey | string)[], options: WatchOptions<PartialObjectMetadata> & { metadataOnly: true }): this;
  watches<T extends KubeObject>(kind: ResourceKind<T>, map: (obj: T) => (ObjectKey | string)[], options?: WatchOptions<T>): this;
  watches<T extends KubeObject>(kind: ResourceKind<T>, map: (obj: T) => (ObjectKey | string)[], options: WatchOptions<T> & { metadataOnly?: boolean } = {}): this {
    const informer = (options.metadataOnly ? this.#host.cache.informer(kind, { metadataOnly: true }) : this.#host.cache.informer(kind)) as unknown as Informer<T>;
    this.#wirings.push((enqueue) =>
      informer.addHandler((c) => {
        if (!passes(c, options.predicates)) return;
        // Both versions of an update are mapped: an object relabelled or renamed away from a
        // primary is news to that primary (controller-runtime's EnqueueRequestsFromMapFunc).
        const keys = new Set<string>();
        for (const obj of c.oldObject ? [c.object, c.oldObject] : [c.object]) for (const k of map(obj)) keys.add(typeof k === 'string' ? k : formatKey(k));
        for (const key of keys) enqueue(key);
      }),
    );
    return this;
  }

  withOptions(options: ControllerOptions): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /** Builds the controller and registers it with the manager. */
  complete(reconciler: Reconciler | ReconcileFunc): Controller {
    const primary = this.#primary;
    if (!primary) throw new Error(`controller ${this.#name}: call for(kind) before complete()`);
    this.#host.checkNewController?.(this.#name);
    const store = this.#host.cache.store(primary);
    const controller = new Controller(
      {
        name: this.#name,
        reconciler: typeof reconciler === 'function' ? { reconcile: reconciler } : reconciler,
        log: this.#host.log,
        clock: this.#host.clock,
        metrics: this.#host.metrics,
        exists: (key) => store.get(key) !== undefined,
        sources: [...this.#wirings],
      },
      { ...this.#host.controllerDefaults, ...this.#options },
    );
    this.#host.addController(controller);
    this.#publishTracker?.();
    return controller;
  }
}

function passes<T extends KubeObject>(c: Change<T>, predicates: Predicate<T>[] | undefined): boolean {
  return !predicates || predicates.every((p) => p(c));
}
