/**
 * The DigitalHumanProvider API (`digitalhumanproviders.dhp.example.com`, short name `dhp`; `v1`
 * is the hub, `v1alpha1` deprecated and converted by the webhook): its TypeScript types, its `ResourceKind`, its CRD, and the names (finalizer, condition
 * reasons, field manager) that the operator, the CLI and the tests share.
 *
 * What a caller can rely on:
 * - The CRD and the types come from one TypeBox schema; the committed YAML under `deploy/crds/`
 *   is checked against it by a test.
 * - The API server enforces: `endpoint` starts with `https://` and is a URL, `region` is
 *   non-empty and immutable (CEL `self == oldSelf`), `credentialsSecretRef.name` is required
 *   (`key` defaults to `token`, so after admission it is always set).
 * - Pure data; importing it has no side effects.
 * - `schema-free.ts` is this API without the schemas and the CRD: what the operator process loads.
 *
 * @module
 */
export * from './schema-free.ts';
export { DigitalHumanProviderCrd, DigitalHumanProviderCrdKinds } from './digital-human-provider.ts';
export { DigitalHumanProviderSchema, ProviderSpecSchema, ProviderLimitsSchema } from './v1.ts';
export { DigitalHumanProviderV1alpha1Schema, ProviderV1alpha1SpecSchema, CredentialsSecretRefSchema } from './v1alpha1.ts';
export { ProviderStatusSchema, ENDPOINT_IMMUTABLE_RULE } from './status.ts';
