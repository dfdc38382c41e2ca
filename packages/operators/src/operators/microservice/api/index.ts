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
 * - `schema-free.ts` is this API without the schemas and the CRD: what the operator process loads.
 *
 * @module
 */
export * from './schema-free.ts';
export { MicroserviceCrd, MicroserviceCrdKinds } from './microservice.ts';
export { MicroserviceSchema, MicroserviceSpecSchema, ContainerSpecSchema, EnvVarSchema } from './v1.ts';
export { MicroserviceV1alpha1Schema, MicroserviceV1alpha1SpecSchema, MicroserviceNameSchema } from './v1alpha1.ts';
export { MicroserviceStatusSchema } from './status.ts';
