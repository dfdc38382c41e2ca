/**
 * Predicates filter the changes a controller reacts to, before a key is enqueued.
 *
 * A predicate is a pure function of the change; it must not read the cluster. Adds and deletes
 * pass every built-in "changed" predicate (an object appearing or vanishing is always news);
 * they only filter updates. Filtering is an optimisation: the periodic check still visits every
 * object, so a predicate that drops too much delays convergence but never prevents it.
 * @module
 */
import type { KubeObject } from '../objects/index.ts';
import type { Change } from '../cache/index.ts';

export type Predicate<T extends KubeObject = KubeObject> = (change: Change<T>) => boolean;

const onUpdate =
  (changed: (a: KubeObject, b: KubeObject) => boolean): Predicate =>
  (c) =>
    c.type !== 'update' || !c.oldObject || changed(c.oldObject, c.object);

/**
 * Passes updates whose `metadata.generation` changed (spec edits), or that start deletion. A kind
 * the API server gives no generation (ConfigMap, Secret, Service, Namespace) has no way to tell a
 * spec edit from any other change, so every new version of it passes (`resourceVersionChanged`).
 * controller-runtime's GenerationChangedPredicate drops them all instead, which makes an owned
 * Service's drift or a watched ConfigMap's new data wait for the periodic check.
 */
export const generationChanged: Predicate = onUpdate((a, b) =>
  a.metadata.generation === undefined && b.metadata.generation === undefined
    ? a.metadata.resourceVersion !== b.metadata.resourceVersion
    : a.metadata.generation !== b.metadata.generation || a.metadata.deletionTimestamp !== b.metadata.deletionTimestamp,
);

/** Passes updates whose labels changed. */
export const labelsChanged: Predicate = onUpdate((a, b) => !shallowEqual(a.metadata.labels, b.metadata.labels));

/** Passes updates whose annotations changed. */
export const annotationsChanged: Predicate = onUpdate((a, b) => !shallowEqual(a.metadata.annotations, b.metadata.annotations));

/** Passes updates whose resourceVersion changed (drops resync no-ops). */
export const resourceVersionChanged: Predicate = onUpdate((a, b) => a.metadata.resourceVersion !== b.metadata.resourceVersion);

/** Passes changes of objects whose labels include every pair given. */
export function hasLabels(selector: Record<string, string>): Predicate {
  return (c) => Object.entries(selector).every(([k, v]) => c.object.metadata.labels?.[k] === v);
}

export function or<T extends KubeObject>(...ps: Predicate<T>[]): Predicate<T> {
  return (c) => ps.some((p) => p(c));
}

export function and<T extends KubeObject>(...ps: Predicate<T>[]): Predicate<T> {
  return (c) => ps.every((p) => p(c));
}

export function not<T extends KubeObject>(p: Predicate<T>): Predicate<T> {
  return (c) => !p(c);
}

function shallowEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => a?.[k] === b?.[k]);
}
