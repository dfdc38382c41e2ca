/**
 * The Microservice API without its schemas: the kinds, the types, the names (phases, conditions,
 * reasons, annotations, field manager), the converters and the spec check. This is what the
 * operator process loads; `index.ts` adds the TypeBox schemas and the CRD (≈ 250 modules and
 * ≈ 3 MiB of RSS, issue 17) for the CLI, the tests and the generators.
 * `operator-modules.test.ts` fails when a module on the operator's path reaches a schema.
 * @module
 */
export { MicroserviceKind, MicroserviceV1alpha1Kind } from './kind.ts';
export { isValidMicroserviceName } from './name.ts';
export { checkMicroserviceSpec } from './spec-check.ts';
export type { Microservice, MicroserviceSpec, EnvVar } from './v1.ts';
export type { MicroserviceV1alpha1, MicroserviceV1alpha1Spec } from './v1alpha1.ts';
export type { MicroserviceStatus } from './status.ts';
export { microserviceConversion, microserviceToV1, microserviceFromV1, V1_FIELDS_ANNOTATION as MICROSERVICE_V1_FIELDS_ANNOTATION } from './conversion.ts';
export * from './constants.ts';
export { IMAGE_REFERENCE_PATTERN, IMAGE_REFERENCE_MAX_LENGTH, isValidImageReference } from './image-reference.ts';
