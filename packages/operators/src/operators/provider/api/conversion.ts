/**
 * DigitalHumanProvider conversion between `v1alpha1` (a spoke) and `v1` (the hub), lossless both
 * ways (ADR 0024): `credentialsSecretRef` ↔ `credentials.secretRef`; `limits`, which only v1 has,
 * rides along in the annotation `V1_FIELDS_ANNOTATION` while an object is seen as v1alpha1.
 * Pure functions; they never throw for any object the schemas admit (property-tested).
 * @module
 */
import type { KindConversion } from '@converge/runtime';
import type { DigitalHumanProviderV1alpha1 } from './v1alpha1.ts';
import type { DigitalHumanProvider, ProviderLimits } from './v1.ts';
import { PROVIDER_GROUP, PROVIDER_KIND } from './constants.ts';

/** Where a v1alpha1 object keeps what only v1 can say (reserved; users must not set it). */
export const V1_FIELDS_ANNOTATION = 'dhp.example.com/v1-fields';

function otherAnnotations(annotations: Record<string, string> | undefined): Record<string, string> | undefined {
  const { [V1_FIELDS_ANNOTATION]: _dropped, ...rest } = annotations ?? {};
  return Object.keys(rest).length ? rest : undefined;
}

/**
 * v1's bounds of each limit (`ProviderLimitsSchema`; kept here by hand so that the operator
 * process, which converts, does not load the schemas: ADR 0035). The conversion test checks them
 * against the schema.
 */
export const LIMIT_BOUNDS: Readonly<Record<keyof ProviderLimits, { min: number; max: number }>> = {
  maxConcurrency: { min: 1, max: 10_000 },
  requestsPerMinute: { min: 1, max: 1_000_000 },
  dailyQuota: { min: 1, max: 1_000_000_000 },
};

/**
 * The limits an annotation carries, as v1 admits them. A v1alpha1 write is checked against
 * v1alpha1's schema, which has no limits: a hand-written annotation would otherwise put values
 * into v1 that v1's own schema refuses. A limit v1 would refuse is left out (left as the vendor
 * has it); unknown fields are dropped.
 */
function readLimits(value: string | undefined): ProviderLimits | undefined {
  if (!value) return undefined;
  let limits: unknown;
  try {
    limits = (JSON.parse(value) as { limits?: unknown } | null)?.limits;
  } catch {
    return undefined;
  }
  if (!limits || typeof limits !== 'object' || Array.isArray(limits)) return undefined;
  const admitted: ProviderLimits = {};
  for (const [field, { min, max }] of Object.entries(LIMIT_BOUNDS) as [keyof ProviderLimits, { min: number; max: number }][]) {
    const v = (limits as Record<string, unknown>)[field];
    if (Number.isInteger(v) && (v as number) >= min && (v as number) <= max) admitted[field] = v as number;
  }
  return admitted;
}

export function providerToV1(obj: DigitalHumanProviderV1alpha1): DigitalHumanProvider {
  const { credentialsSecretRef, ...rest } = obj.spec ?? ({} as DigitalHumanProviderV1alpha1['spec']);
  const limits = readLimits(obj.metadata.annotations?.[V1_FIELDS_ANNOTATION]);
  const annotations = otherAnnotations(obj.metadata.annotations);
  const { annotations: _a, ...metadata } = obj.metadata;
  return {
    ...obj,
    metadata: { ...metadata, ...(annotations ? { annotations } : {}) },
    spec: { ...rest, credentials: { secretRef: credentialsSecretRef }, ...(limits ? { limits } : {}) },
  };
}

export function providerFromV1(obj: DigitalHumanProvider): DigitalHumanProviderV1alpha1 {
  const { credentials, limits, ...rest } = obj.spec ?? ({} as DigitalHumanProvider['spec']);
  const others = otherAnnotations(obj.metadata.annotations);
  const annotations = limits !== undefined ? { ...others, [V1_FIELDS_ANNOTATION]: JSON.stringify({ limits }) } : others;
  const { annotations: _a, ...metadata } = obj.metadata;
  return {
    ...obj,
    metadata: { ...metadata, ...(annotations ? { annotations } : {}) },
    spec: { ...rest, credentialsSecretRef: credentials?.secretRef },
  } as DigitalHumanProviderV1alpha1;
}

/** The registration for the runtime's `ConversionRegistry`. */
export const providerConversion: KindConversion<DigitalHumanProvider> = {
  group: PROVIDER_GROUP,
  kind: PROVIDER_KIND,
  hub: 'v1',
  spokes: [{ version: 'v1alpha1', toHub: providerToV1, fromHub: providerFromV1 }],
};
