/**
 * The DigitalHumanProvider resource (`digitalhumanproviders.dhp.example.com`): an instance in an
 * external vendor's API, kept converged to this object. Both served versions in one CRD — `v1`
 * (the hub and storage version, `v1.ts`) and `v1alpha1` (deprecated, `v1alpha1.ts`) — converted
 * by the operators' webhook (`conversion.ts`, ADR 0024). The operator works on `v1` only.
 * @module
 */
import { defineCustomResource } from '@converge/runtime';
import type { CustomResourceDefinitionV1, PrinterColumn, ResourceKind } from '@converge/runtime';
import { PROVIDER_GROUP, PROVIDER_KIND, PROVIDER_PLURAL } from './constants.ts';
import { WEBHOOK_SERVICE } from '../../webhook-service.ts';
import { DigitalHumanProviderSchema } from './v1.ts';
import { DigitalHumanProviderV1alpha1Schema } from './v1alpha1.ts';

/** What the upstream reads at a glance (issue 14): region, ready, quota left, what limits it; `-o wide` adds whether the spec is applied. */
const columns: PrinterColumn[] = [
  { name: 'Region', type: 'string', jsonPath: '.spec.region' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Quota Left', type: 'integer', jsonPath: '.status.usage.quotaRemaining', description: 'Calls left in the vendor quota day' },
  { name: 'Limited By', type: 'string', jsonPath: '.status.limitedBy', description: "What limits the provider now (Ready's reason when False, else RateLimited)" },
  { name: 'ProviderID', type: 'string', jsonPath: '.status.providerID', priority: 1 },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
  { name: 'Spec Applied', type: 'string', jsonPath: '.status.conditions[?(@.type=="SpecApplied")].reason', priority: 1, description: 'Whether the vendor holds this generation\'s spec: Applied, VendorRejected (a refused change; the instance serves as it was) or ApplyFailed' },
  { name: 'Endpoint', type: 'string', jsonPath: '.spec.endpoint', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/**
 * The upstream's field selector: `--field-selector spec.region=R,status.usable=true` (v1 only: the
 * API server folds settings identical in every version into one top-level field, and refuses a
 * top-level `selectableFields` while the versions' schemas differ).
 */
const selectableFields = ['.spec.region', '.status.usable'];

const defined = defineCustomResource({
  group: PROVIDER_GROUP,
  kind: PROVIDER_KIND,
  plural: PROVIDER_PLURAL,
  shortNames: ['dhp'],
  categories: ['converge'],
  scope: 'Namespaced',
  labels: { 'app.kubernetes.io/part-of': 'converge' },
  conversionWebhook: { service: WEBHOOK_SERVICE },
  versions: [
    { name: 'v1', served: true, storage: true, schema: DigitalHumanProviderSchema, subresources: { status: true }, printerColumns: columns, selectableFields },
    {
      name: 'v1alpha1',
      served: true,
      storage: false,
      deprecated: true,
      deprecationWarning: 'dhp.example.com/v1alpha1 DigitalHumanProvider is deprecated; use dhp.example.com/v1 (spec.credentials.secretRef)',
      schema: DigitalHumanProviderV1alpha1Schema,
      subresources: { status: true },
      printerColumns: columns,
    },
  ],
});

/** The kinds the CRD defines, by version: `kind.ts` has them schema-free (`kinds.test.ts` checks that they are equal). */
export const DigitalHumanProviderCrdKinds: Readonly<Record<string, ResourceKind>> = defined.kinds;
/** The CRD to install (`deploy/crds/digitalhumanproviders.dhp.example.com.yaml` is generated from it). */
export const DigitalHumanProviderCrd: CustomResourceDefinitionV1 = defined.crd;
