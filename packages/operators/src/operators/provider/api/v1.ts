/**
 * DigitalHumanProvider `v1` (the hub and storage version), ADR 0024:
 *
 * - `spec.credentials.secretRef` (was `spec.credentialsSecretRef`): credentials grouped, so other
 *   kinds of credentials can join later without another top-level field;
 * - `spec.limits` (v1 only): the limits the platform wants on the vendor instance (concurrency,
 *   requests per minute, a daily call quota), converged by the operator.
 *
 * `endpoint` (immutable once an instance may live there), `region` (immutable) and `displayName`
 * are unchanged; the status is the same in
 * both versions. `v1alpha1` stays served, deprecated, and converts losslessly (`conversion.ts`).
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import type { KubeObject } from '@converge/runtime';
import { CredentialsSecretRefSchema, ProviderV1alpha1SpecSchema } from './v1alpha1.ts';
import { ENDPOINT_IMMUTABLE_RULE, ProviderStatusSchema } from './status.ts';
import type { DigitalHumanProviderStatus } from './status.ts';

export const ProviderLimitsSchema = Type.Object(
  {
    maxConcurrency: Type.Optional(Type.Integer({ description: 'Requests the vendor runs at once for this instance.', minimum: 1, maximum: 10000, format: 'int32' })),
    requestsPerMinute: Type.Optional(Type.Integer({ description: 'Requests per minute the vendor accepts for this instance.', minimum: 1, maximum: 1000000, format: 'int32' })),
    dailyQuota: Type.Optional(Type.Integer({ description: 'Calls per day (the vendor\'s quota day) before the vendor refuses more.', minimum: 1, maximum: 1000000000, format: 'int64' })),
  },
  { description: 'Limits the vendor enforces on the instance; the operator keeps them converged. Absent fields are left as the vendor has them.' },
);

export const ProviderSpecSchema = Type.Object(
  {
    endpoint: ProviderV1alpha1SpecSchema.properties.endpoint,
    region: ProviderV1alpha1SpecSchema.properties.region,
    displayName: ProviderV1alpha1SpecSchema.properties.displayName,
    credentials: Type.Object({ secretRef: CredentialsSecretRefSchema }, { description: 'How the operator authenticates to the vendor.' }),
    limits: Type.Optional(ProviderLimitsSchema),
  },
  { description: 'The desired vendor instance.' },
);

export const DigitalHumanProviderSchema = Type.Object(
  { spec: ProviderSpecSchema, status: Type.Optional(ProviderStatusSchema) },
  {
    description: "An instance in the digital-human vendor's API, created, kept converged and cleaned up by the operator.",
    'x-kubernetes-validations': [ENDPOINT_IMMUTABLE_RULE],
  },
);

export type DigitalHumanProviderSpec = Static<typeof ProviderSpecSchema>;
export type ProviderLimits = Static<typeof ProviderLimitsSchema>;
export interface DigitalHumanProvider extends KubeObject {
  spec: DigitalHumanProviderSpec;
  status?: DigitalHumanProviderStatus;
}
