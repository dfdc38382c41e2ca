/**
 * DigitalHumanProvider `v1alpha1`: `spec.credentialsSecretRef`. Still served, deprecated since
 * `v1` (`v1.ts`); objects convert losslessly through `conversion.ts` (ADR 0024).
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { celRule } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { DEFAULT_CREDENTIALS_KEY, REGION_PATTERN } from './constants.ts';
import { ENDPOINT_IMMUTABLE_RULE, ProviderStatusSchema } from './status.ts';
import type { DigitalHumanProviderStatus } from './status.ts';

export const CredentialsSecretRefSchema = Type.Object(
  {
    name: Type.String({
      description: 'Name of a Secret in the same namespace.',
      minLength: 1,
      maxLength: 253,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    }),
    key: Type.Optional(
      Type.String({
        description: `Key in the Secret that holds the vendor's bearer token. Defaults to "${DEFAULT_CREDENTIALS_KEY}".`,
        minLength: 1,
        maxLength: 253,
        pattern: '^[-._a-zA-Z0-9]+$',
        default: DEFAULT_CREDENTIALS_KEY,
      }),
    ),
  },
  { description: 'The Secret holding the vendor token. Tokens never appear in logs, Events or status.' },
);

export const ProviderV1alpha1SpecSchema = Type.Object(
  {
    endpoint: Type.String({
      description: "Base URL of the vendor API; must be https (TLS verification is never disabled).",
      minLength: 9,
      maxLength: 2048,
      pattern: '^https://',
      'x-kubernetes-validations': [
        celRule('isURL(self)', 'endpoint must be an absolute https:// URL such as https://api.vendor.example'),
        // The client appends its paths to the endpoint: a query or a fragment would cut them off
        // (whoever writes the endpoint would choose the whole URL the token is sent to), and user
        // info would be a credential in the spec.
        celRule("!self.contains('?') && !self.contains('#') && !self.matches('^https://[^/]*@')", 'endpoint must be a base URL such as https://api.vendor.example/v2: no user info, query or fragment'),
      ],
    }),
    region: Type.String({
      description: 'Vendor region of the instance, as the vendor names it: lower-case letters, digits and dashes (e.g. ap-northeast-1). Immutable: the vendor cannot move an instance.',
      minLength: 1,
      maxLength: 63,
      'x-kubernetes-validations': [
        celRule('self == oldSelf', 'region is immutable; create a new DigitalHumanProvider to use another region'),
        // What the vendor accepts (openapi.yaml, Region): refused here, not after a create the vendor answers with 400.
        celRule(`self.matches('${REGION_PATTERN}')`, 'region must be lower-case letters, digits and dashes, starting and ending with a letter or digit, as the vendor names its regions (e.g. ap-northeast-1)'),
      ],
    }),
    displayName: Type.Optional(Type.String({ description: 'Name shown in the vendor console.', maxLength: 256 })),
    credentialsSecretRef: CredentialsSecretRefSchema,
  },
  { description: 'The desired vendor instance.' },
);

export const DigitalHumanProviderV1alpha1Schema = Type.Object(
  { spec: ProviderV1alpha1SpecSchema, status: Type.Optional(ProviderStatusSchema) },
  {
    description: "An instance in the digital-human vendor's API, created, kept converged and cleaned up by the operator.",
    'x-kubernetes-validations': [ENDPOINT_IMMUTABLE_RULE],
  },
);

export type DigitalHumanProviderV1alpha1Spec = Static<typeof ProviderV1alpha1SpecSchema>;
export interface DigitalHumanProviderV1alpha1 extends KubeObject {
  spec: DigitalHumanProviderV1alpha1Spec;
  status?: DigitalHumanProviderStatus;
}
