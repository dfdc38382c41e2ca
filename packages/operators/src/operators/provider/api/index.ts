/**
 * The DigitalHumanProvider API (`digitalhumanproviders.dhp.example.com/v1alpha1`, short name
 * `dhp`): its TypeScript types, its `ResourceKind`, its CRD, and the names (finalizer, condition
 * reasons, field manager) that the operator, the CLI and the tests share.
 *
 * What a caller can rely on:
 * - The CRD and the types come from one TypeBox schema; the committed YAML under `deploy/crds/`
 *   is checked against it by a test.
 * - The API server enforces: `endpoint` starts with `https://` and is a URL, `region` is
 *   non-empty and immutable (CEL `self == oldSelf`), `credentialsSecretRef.name` is required
 *   (`key` defaults to `token`, so after admission it is always set).
 * - Pure data; importing it has no side effects.
 *
 * @module
 */
export {
  DigitalHumanProviderKind,
  DigitalHumanProviderCrd,
  DigitalHumanProviderSchema,
  ProviderSpecSchema,
  ProviderStatusSchema,
  CredentialsSecretRefSchema,
  ENDPOINT_IMMUTABLE_RULE,
} from './digital-human-provider.ts';
export type { DigitalHumanProvider, DigitalHumanProviderSpec, DigitalHumanProviderStatus } from './digital-human-provider.ts';
export * from './constants.ts';
