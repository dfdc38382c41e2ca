/**
 * Names a resource on the API server and carries the TypeScript type of its objects.
 * @module
 */
import type { KubeObject } from './types.ts';

export interface ResourceKind<T extends KubeObject = KubeObject> {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in URLs, e.g. `deployments`. */
  readonly plural: string;
  readonly namespaced: boolean;
  /** `group/version`, or just `version` for the core group. */
  readonly apiVersion: string;
  /**
   * `false` when the kind is known to have no status subresource (a CRD defined without one by
   * `defineCustomResource`): status is then part of the object, and `patchStatus` refuses it.
   * Absent when unknown (built-in kinds, kinds defined by hand).
   */
  readonly statusSubresource?: boolean;
  /** Type carrier only; never set at run time. */
  readonly __object?: T;
}

export function defineKind<T extends KubeObject>(spec: {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  statusSubresource?: boolean;
}): ResourceKind<T> {
  const apiVersion = spec.group === '' ? spec.version : `${spec.group}/${spec.version}`;
  return Object.freeze({ ...spec, apiVersion });
}
