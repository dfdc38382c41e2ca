/**
 * Microservice conversion between `v1alpha1` (a spoke) and `v1` (the hub), lossless both ways
 * (ADR 0024).
 *
 * `v1alpha1` has no place for `spec.container.env` or `spec.replicas`: converting a v1 object down
 * keeps them, as JSON, in the annotation `V1_FIELDS_ANNOTATION`; converting up takes them back
 * from there and drops the annotation. A v1alpha1 client that reads, edits and writes an object
 * (any verb that keeps annotations: update, merge or strategic patch, apply without that field)
 * therefore keeps what only v1 can say. The status is the same schema in both versions.
 *
 * Pure functions; they never throw for any object the schemas admit (property-tested).
 * @module
 */
import type { KindConversion } from '@converge/runtime';
import type { MicroserviceV1alpha1 } from './v1alpha1.ts';
import type { Microservice, MicroserviceSpec } from './v1.ts';
import { MICROSERVICE_GROUP, MICROSERVICE_KIND } from './constants.ts';

/** Where a v1alpha1 object keeps what only v1 can say (reserved; users must not set it). */
export const V1_FIELDS_ANNOTATION = 'platform.example.io/v1-fields';

type V1OnlyFields = { env?: MicroserviceSpec['container']['env']; replicas?: number };

function withoutAnnotation<T extends { metadata: { annotations?: Record<string, string> } }>(obj: T, key: string): Record<string, string> | undefined {
  const { [key]: _dropped, ...rest } = obj.metadata.annotations ?? {};
  return Object.keys(rest).length ? rest : undefined;
}

function readStash(value: string | undefined): V1OnlyFields {
  if (!value) return {};
  try {
    const parsed = JSON.parse(value) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const { env, replicas } = parsed as V1OnlyFields;
    return {
      ...(Array.isArray(env) ? { env } : {}),
      ...(typeof replicas === 'number' ? { replicas } : {}),
    };
  } catch {
    return {}; // a hand-edited, unreadable stash is ignored rather than failing every read
  }
}

export function microserviceToV1(obj: MicroserviceV1alpha1): Microservice {
  const stash = readStash(obj.metadata.annotations?.[V1_FIELDS_ANNOTATION]);
  const annotations = withoutAnnotation(obj, V1_FIELDS_ANNOTATION);
  const spec = obj.spec ?? ({} as MicroserviceV1alpha1['spec']);
  const { annotations: _a, ...metadata } = obj.metadata;
  return {
    ...obj,
    metadata: { ...metadata, ...(annotations ? { annotations } : {}) },
    spec: {
      container: { image: spec.image, port: spec.port, ...(stash.env ? { env: stash.env } : {}) },
      ...(stash.replicas !== undefined ? { replicas: stash.replicas } : {}),
    },
  };
}

export function microserviceFromV1(obj: Microservice): MicroserviceV1alpha1 {
  const container = obj.spec?.container ?? ({} as MicroserviceSpec['container']);
  const stash: V1OnlyFields = {
    ...(container.env !== undefined ? { env: container.env } : {}),
    ...(obj.spec?.replicas !== undefined ? { replicas: obj.spec.replicas } : {}),
  };
  const others = withoutAnnotation(obj, V1_FIELDS_ANNOTATION);
  const annotations = Object.keys(stash).length ? { ...others, [V1_FIELDS_ANNOTATION]: JSON.stringify(stash) } : others;
  const { annotations: _a, ...metadata } = obj.metadata;
  return {
    ...obj,
    metadata: { ...metadata, ...(annotations ? { annotations } : {}) },
    spec: { image: container.image, port: container.port },
  };
}

/** The registration for the runtime's `ConversionRegistry`. */
export const microserviceConversion: KindConversion<Microservice> = {
  group: MICROSERVICE_GROUP,
  kind: MICROSERVICE_KIND,
  hub: 'v1',
  spokes: [{ version: 'v1alpha1', toHub: microserviceToV1, fromHub: microserviceFromV1 }],
};
