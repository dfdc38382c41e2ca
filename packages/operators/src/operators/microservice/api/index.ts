/**
 * The Microservice API (`microservices.platform.example.io/v1alpha1`, short name `ms`): its
 * TypeScript types, its `ResourceKind`, its CRD, and the names (phases, conditions, reasons,
 * annotations, field manager) that the operator, the CLI and the tests share.
 *
 * What a caller can rely on:
 * - The CRD and the types come from one TypeBox schema, so they cannot drift apart; the committed
 *   YAML under `deploy/crds/` is checked against it by a test.
 * - Everything here is pure data and pure functions; importing it has no side effects.
 *
 * @module
 */
export {
  MicroserviceKind,
  MicroserviceCrd,
  MicroserviceSchema,
  MicroserviceSpecSchema,
  MicroserviceStatusSchema,
  checkMicroserviceSpec,
  isValidMicroserviceName,
} from './microservice.ts';
export type { Microservice, MicroserviceSpec, MicroserviceStatus } from './microservice.ts';
export * from './constants.ts';
export { IMAGE_REFERENCE_PATTERN, IMAGE_REFERENCE_MAX_LENGTH, isValidImageReference } from './image-reference.ts';
