/**
 * The Microservice API (`microservices.platform.example.io`, short name `ms`; `v1` is the hub,
 * `v1alpha1` deprecated and converted by the webhook): its TypeScript types, its `ResourceKinds`,
 * its CRD, the converters, and the names (phases, conditions, reasons,
 * annotations, field manager) that the operator, the CLI and the tests share.
 *
 * What a caller can rely on:
 * - The CRD and the types come from one TypeBox schema, so they cannot drift apart; the committed
 *   YAML under `deploy/crds/` is checked against it by a test.
 * - Everything here is pure data and pure functions; importing it has no side effects.
 *
 * @module
 */
export { MicroserviceKind, MicroserviceV1alpha1Kind, MicroserviceCrd } from './microservice.ts';
export { isValidMicroserviceName } from './name.ts';
export { MicroserviceSchema, MicroserviceSpecSchema, ContainerSpecSchema, EnvVarSchema, PLATFORM_ENV_NAMES, checkMicroserviceSpec } from './v1.ts';
export type { Microservice, MicroserviceSpec, EnvVar } from './v1.ts';
export { MicroserviceV1alpha1Schema, MicroserviceV1alpha1SpecSchema, MicroserviceNameSchema } from './v1alpha1.ts';
export type { MicroserviceV1alpha1, MicroserviceV1alpha1Spec } from './v1alpha1.ts';
export { MicroserviceStatusSchema } from './status.ts';
export type { MicroserviceStatus } from './status.ts';
export { microserviceConversion, microserviceToV1, microserviceFromV1, V1_FIELDS_ANNOTATION as MICROSERVICE_V1_FIELDS_ANNOTATION } from './conversion.ts';
export * from './constants.ts';
export { IMAGE_REFERENCE_PATTERN, IMAGE_REFERENCE_MAX_LENGTH, isValidImageReference } from './image-reference.ts';
