/**
 * The DigitalHumanProvider API without its schemas: the kinds, the types, the names (finalizer,
 * condition reasons, annotations, field manager) and the converters. This is what the operator
 * process loads; `index.ts` adds the TypeBox schemas and the CRD for the CLI, the tests and the
 * generators (ADR 0035).
 * @module
 */
export { DigitalHumanProviderKind, DigitalHumanProviderV1alpha1Kind } from './kind.ts';
export type { DigitalHumanProvider, DigitalHumanProviderSpec, ProviderLimits } from './v1.ts';
export type { DigitalHumanProviderV1alpha1, DigitalHumanProviderV1alpha1Spec } from './v1alpha1.ts';
export type { DigitalHumanProviderStatus } from './status.ts';
export { providerConversion, providerToV1, providerFromV1, V1_FIELDS_ANNOTATION as PROVIDER_V1_FIELDS_ANNOTATION } from './conversion.ts';
export * from './constants.ts';
