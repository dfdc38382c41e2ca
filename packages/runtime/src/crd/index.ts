/**
 * Custom resource definitions from TypeScript: one TypeBox schema per resource version yields the
 * TypeScript type of its objects, its `ResourceKind`, and the `apiextensions.k8s.io/v1` CRD
 * (a structural OpenAPI schema with CEL rules, printer columns and the status subresource).
 *
 * What a caller can rely on:
 * - Everything here is pure and synchronous and talks to no API server, except
 *   `installCustomResourceDefinitions` (applies CRDs and waits until they are served) and
 *   `migrateStorage` (rewrites stored objects in the storage version, then prunes storedVersions).
 * - `defineCustomResource` throws at definition time when the API server would reject the CRD
 *   (non-structural schema, unknown keyword, bad names, a default that does not fit its field, not
 *   exactly one storage version) or would refuse every value of a field (a bound that is not a
 *   value of the field's own type), so a mistake fails on import and in unit tests, not at
 *   install time.
 * - Output is deterministic: the same definition always gives a deeply equal CRD, so generated
 *   YAML can be committed and checked for staleness.
 * - This folder knows no operator; operators define their resources with it.
 *
 * @module
 */
export { defineCustomResource, rootSchema } from './define-custom-resource.ts';
export type {
  CustomResourceInput,
  CustomResourceVersionInput,
  CustomResourceOf,
  DefinedCustomResource,
} from './define-custom-resource.ts';
export { installCustomResourceDefinitions } from './install.ts';
export { migrateStorage, StorageMigrationError, STORAGE_MIGRATION_ANNOTATION } from './storage-migration.ts';
export type { StorageMigrationOptions, StorageMigrationProgress, StorageMigrationResult } from './storage-migration.ts';
export type { InstallCrdsOptions } from './install.ts';
export { toStructuralSchema, SchemaConversionError } from './structural-schema.ts';
export { ConditionSchema, ConditionsSchema, celRule } from './common-schemas.ts';
export type { TConditionSchema } from './common-schemas.ts';
export type {
  CustomResourceDefinitionV1,
  CustomResourceDefinitionSpec,
  CustomResourceConversion,
  CustomResourceDefinitionVersion,
  CustomResourceDefinitionNames,
  JSONSchemaProps,
  PrinterColumn,
  ValidationRule,
} from './types.ts';
