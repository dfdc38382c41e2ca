/**
 * The Microservice resource (`microservices.platform.example.io`): both served versions in one
 * CRD — `v1` (the hub and storage version, `v1.ts`) and `v1alpha1` (deprecated, `v1alpha1.ts`) —
 * converted by the operators' webhook (`conversion.ts`, ADR 0024). The kinds are in `kind.ts`;
 * the operator works on `v1` only.
 *
 * Validation the API server can do is in the schemas (bounds, CEL rules with readable messages);
 * `checkMicroserviceSpec` (`spec-check.ts`) repeats it for objects that predate the schema or bypassed it.
 * @module
 */
import { defineCustomResource } from '@converge/runtime';
import type { CustomResourceDefinitionV1, ResourceKind } from '@converge/runtime';
import { MICROSERVICE_GROUP, MICROSERVICE_KIND, MICROSERVICE_PLURAL } from './constants.ts';
import { WEBHOOK_SERVICE } from '../../webhook-service.ts';
import { MicroserviceNameSchema, MicroserviceV1alpha1Schema } from './v1alpha1.ts';
import { MicroserviceSchema } from './v1.ts';
import type { PrinterColumn } from '@converge/runtime';

const statusColumns: PrinterColumn[] = [
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
  { name: 'Available', type: 'integer', jsonPath: '.status.rollout.availableReplicas', priority: 1 },
  { name: 'Endpoints', type: 'integer', jsonPath: '.status.rollout.readyEndpoints', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

const defined = defineCustomResource({
  group: MICROSERVICE_GROUP,
  kind: MICROSERVICE_KIND,
  plural: MICROSERVICE_PLURAL,
  shortNames: ['ms'],
  categories: ['converge'],
  scope: 'Namespaced',
  labels: { 'app.kubernetes.io/part-of': 'converge' },
  conversionWebhook: { service: WEBHOOK_SERVICE },
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: MicroserviceSchema,
      metadataName: MicroserviceNameSchema,
      subresources: { status: true },
      printerColumns: [
        { name: 'Image', type: 'string', jsonPath: '.spec.container.image' },
        { name: 'Port', type: 'integer', jsonPath: '.spec.container.port' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', priority: 1 },
        ...statusColumns,
      ],
    },
    {
      name: 'v1alpha1',
      served: true,
      storage: false,
      deprecated: true,
      deprecationWarning: 'platform.example.io/v1alpha1 Microservice is deprecated; use platform.example.io/v1 (spec.container.image, spec.container.port)',
      schema: MicroserviceV1alpha1Schema,
      metadataName: MicroserviceNameSchema,
      subresources: { status: true },
      printerColumns: [
        { name: 'Image', type: 'string', jsonPath: '.spec.image' },
        { name: 'Port', type: 'integer', jsonPath: '.spec.port' },
        ...statusColumns,
      ],
    },
  ],
});

/** The kinds the CRD defines, by version: `kind.ts` has them schema-free (`kinds.test.ts` checks that they are equal). */
export const MicroserviceCrdKinds: Readonly<Record<string, ResourceKind>> = defined.kinds;
/** The CRD to install (`deploy/crds/microservices.platform.example.io.yaml` is generated from it). */
export const MicroserviceCrd: CustomResourceDefinitionV1 = defined.crd;
