/**
 * The DigitalHumanProvider resource (`digitalhumanproviders.dhp.example.com/v1alpha1`): an
 * instance in an external vendor's API, kept converged to this object. One TypeBox schema yields
 * the CRD and the TypeScript types.
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineCustomResource, ConditionsSchema, celRule } from '@converge/runtime';
import type { KubeObject, ResourceKind, CustomResourceDefinitionV1 } from '@converge/runtime';
import { DEFAULT_CREDENTIALS_KEY, PROVIDER_GROUP, PROVIDER_KIND, PROVIDER_PLURAL, PROVIDER_VERSION } from './constants.ts';

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

export const ProviderSpecSchema = Type.Object(
  {
    endpoint: Type.String({
      description: "Base URL of the vendor API; must be https (TLS verification is never disabled).",
      minLength: 9,
      maxLength: 2048,
      pattern: '^https://',
      'x-kubernetes-validations': [celRule('isURL(self)', 'endpoint must be an absolute https:// URL such as https://api.vendor.example')],
    }),
    region: Type.String({
      description: 'Vendor region of the instance. Immutable: the vendor cannot move an instance.',
      minLength: 1,
      maxLength: 63,
      'x-kubernetes-validations': [celRule('self == oldSelf', 'region is immutable; create a new DigitalHumanProvider to use another region')],
    }),
    displayName: Type.Optional(Type.String({ description: 'Name shown in the vendor console.', maxLength: 256 })),
    credentialsSecretRef: CredentialsSecretRefSchema,
  },
  { description: 'The desired vendor instance.' },
);

export const ProviderStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'The metadata.generation this status describes.', minimum: 0, format: 'int64' })),
    providerID: Type.Optional(Type.String({ description: "The vendor's ID of the instance.", maxLength: 256 })),
    instanceEndpoint: Type.Optional(
      Type.String({
        description:
          'Where the instance lives: the vendor endpoint of status.providerID, or the one a create was sent to (see createRequestedAt). Lookups, updates and the deletion go there. While it is set, spec.endpoint cannot change.',
        maxLength: 2048,
      }),
    ),
    createRequestedAt: Type.Optional(
      Type.String({
        description:
          "When a create with this object's UID as Idempotency-Key was last sent to instanceEndpoint; written before the request. From then on an instance may exist there even without a providerID, so deletion asks the vendor before the finalizer is released.",
        format: 'date-time',
      }),
    ),
    conditions: Type.Optional(ConditionsSchema('Ready, with the generation it was computed for.')),
  },
  { description: 'What the operator observed; written only by the operator through the status subresource.' },
);

/**
 * `spec.endpoint` is immutable once an instance may live at it (a providerID or a create request
 * is recorded): the vendor cannot move an instance, and pointing the object elsewhere would leave
 * it behind unmanaged (ADR 0018). An endpoint that never got a create (a typo, a host that never
 * answered) can still be fixed in place.
 */
const ENDPOINT_RECORDED = "has(oldSelf.status) && (has(oldSelf.status.providerID) || has(oldSelf.status.instanceEndpoint))";
export const ENDPOINT_IMMUTABLE_RULE = celRule(
  `!(${ENDPOINT_RECORDED}) || self.spec.endpoint == oldSelf.spec.endpoint`,
  'spec.endpoint cannot change while a vendor instance may live at the recorded endpoint (status.instanceEndpoint): the vendor cannot move it, and it would be left behind. Delete this DigitalHumanProvider (its instance is deleted with it) and create a new one for the new endpoint.',
  {
    messageExpression:
      "'spec.endpoint cannot change while a vendor instance may live at ' + (has(oldSelf.status.instanceEndpoint) ? oldSelf.status.instanceEndpoint : oldSelf.spec.endpoint) + (has(oldSelf.status.providerID) ? ' (instance ' + oldSelf.status.providerID + ')' : ' (a create was sent there)') + ': the vendor cannot move it, and it would be left behind. Delete this DigitalHumanProvider (its instance is deleted with it) and create a new one for ' + self.spec.endpoint + '.'",
    reason: 'FieldValueForbidden',
    fieldPath: '.spec.endpoint',
  },
);

export const DigitalHumanProviderSchema = Type.Object(
  { spec: ProviderSpecSchema, status: Type.Optional(ProviderStatusSchema) },
  {
    description: "An instance in the digital-human vendor's API, created, kept converged and cleaned up by the operator.",
    'x-kubernetes-validations': [ENDPOINT_IMMUTABLE_RULE],
  },
);

export type DigitalHumanProviderSpec = Static<typeof ProviderSpecSchema>;
export type DigitalHumanProviderStatus = Static<typeof ProviderStatusSchema>;
export interface DigitalHumanProvider extends KubeObject {
  spec: DigitalHumanProviderSpec;
  status?: DigitalHumanProviderStatus;
}

const defined = defineCustomResource({
  group: PROVIDER_GROUP,
  kind: PROVIDER_KIND,
  plural: PROVIDER_PLURAL,
  shortNames: ['dhp'],
  categories: ['converge'],
  scope: 'Namespaced',
  labels: { 'app.kubernetes.io/part-of': 'converge' },
  versions: [
    {
      name: PROVIDER_VERSION,
      served: true,
      storage: true,
      schema: DigitalHumanProviderSchema,
      subresources: { status: true },
      printerColumns: [
        { name: 'Region', type: 'string', jsonPath: '.spec.region' },
        { name: 'ProviderID', type: 'string', jsonPath: '.status.providerID' },
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
        { name: 'Endpoint', type: 'string', jsonPath: '.spec.endpoint', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
});

/** `digitalhumanproviders.dhp.example.com`, typed as `DigitalHumanProvider`. */
export const DigitalHumanProviderKind: ResourceKind<DigitalHumanProvider> = defined.kind;
/** The CRD to install (`deploy/crds/digitalhumanproviders.dhp.example.com.yaml` is generated from it). */
export const DigitalHumanProviderCrd: CustomResourceDefinitionV1 = defined.crd;
