/**
 * The Microservice resource (`microservices.platform.example.io/v1alpha1`): one TypeBox schema
 * that yields the CRD, the TypeScript types and a spec check the operator runs before rendering.
 *
 * A service team gives only `image` and `port`; the platform supplies everything else (see
 * `platform-defaults.ts`). Invalid input is rejected by the API server: the schema bounds the
 * port and the image length, CEL rules give readable messages for the image format and the name.
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { defineCustomResource, ConditionsSchema, celRule } from '@converge/runtime';
import type { KubeObject, ResourceKind, CustomResourceDefinitionV1 } from '@converge/runtime';
import { IMAGE_REFERENCE_MAX_LENGTH, IMAGE_REFERENCE_PATTERN, isValidImageReference } from './image-reference.ts';
import { MICROSERVICE_GROUP, MICROSERVICE_KIND, MICROSERVICE_PLURAL, MICROSERVICE_VERSION, MicroservicePhase } from './constants.ts';

/** Service names are DNS-1035 labels; the CR name becomes the Service, Deployment and `app` label. */
const DNS_1035_LABEL = '^[a-z]([-a-z0-9]*[a-z0-9])?$';

export const MicroserviceSpecSchema = Type.Object(
  {
    image: Type.String({
      description: 'Container image reference, e.g. ghcr.io/org/app:1.0.0. Also reported as OTEL_SERVICE_VERSION.',
      minLength: 1,
      maxLength: IMAGE_REFERENCE_MAX_LENGTH,
      'x-kubernetes-validations': [
        celRule(
          `self.matches('${IMAGE_REFERENCE_PATTERN}')`,
          'image must be a valid image reference such as ghcr.io/org/app:1.0.0 ([registry/]repository[:tag][@digest], repository in lower case)',
        ),
      ],
    }),
    port: Type.Integer({
      description: 'Port the application listens on; used for the container port, probes, ASPNETCORE_URLS and the Service.',
      minimum: 1,
      maximum: 65535,
      format: 'int32',
    }),
  },
  { description: 'What the service team asks for. Everything else comes from the platform defaults.' },
);

const PhaseSchema = Type.Union(
  [Type.Literal(MicroservicePhase.Accepted), Type.Literal(MicroservicePhase.ResourcesApplied), Type.Literal(MicroservicePhase.Failed)],
  { description: 'Accepted: input received. ResourcesApplied: Deployment and Service written for observedGeneration. Failed: cannot be applied (see reason).' },
);

const Count = (description: string) => Type.Integer({ description, minimum: 0, format: 'int32' });

export const MicroserviceStatusSchema = Type.Object(
  {
    phase: Type.Optional(PhaseSchema),
    observedGeneration: Type.Optional(Type.Integer({ description: 'The metadata.generation this status describes.', minimum: 0, format: 'int64' })),
    conditions: Type.Optional(ConditionsSchema('Ready, Progressing and Stalled, each with the generation it was computed for.')),
    managedResources: Type.Optional(
      Type.Object(
        {
          deployment: Type.Optional(Type.String({ description: 'Name of the managed Deployment.' })),
          service: Type.Optional(Type.String({ description: 'Name of the managed Service.' })),
        },
        { description: 'Objects written for this Microservice; cleared when it fails (the objects are not deleted).' },
      ),
    ),
    rollout: Type.Optional(
      Type.Object(
        {
          replicas: Count('Desired replicas.'),
          updatedReplicas: Count('Replicas running the pod template of the current generation.'),
          availableReplicas: Count('Available replicas.'),
          readyEndpoints: Count('Ready endpoints of the Service.'),
        },
        { description: 'Rollout summary of the managed Deployment and Service.' },
      ),
    ),
    reason: Type.Optional(Type.String({ description: 'Why the phase is what it is, in CamelCase.', maxLength: 1024 })),
    message: Type.Optional(Type.String({ description: 'Human-readable detail for the phase.', maxLength: 32768 })),
  },
  { description: 'What the operator observed; written only by the operator through the status subresource.' },
);

export const MicroserviceSchema = Type.Object(
  {
    spec: MicroserviceSpecSchema,
    status: Type.Optional(MicroserviceStatusSchema),
  },
  { description: 'A service a team runs on the platform: an image and a port in; a Deployment, a Service and a truthful status out.' },
);

/** The CR name becomes the Service name (a DNS-1035 label), the Deployment name and the `app` label. */
export const MicroserviceNameSchema = Type.String({
  maxLength: 63,
  'x-kubernetes-validations': [
    celRule(
      `self.matches('${DNS_1035_LABEL}')`,
      "must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter): it names the Deployment and the Service",
    ),
  ],
});

export type MicroserviceSpec = Static<typeof MicroserviceSpecSchema>;
export type MicroserviceStatus = Static<typeof MicroserviceStatusSchema>;
export interface Microservice extends KubeObject {
  spec: MicroserviceSpec;
  status?: MicroserviceStatus;
}

const defined = defineCustomResource({
  group: MICROSERVICE_GROUP,
  kind: MICROSERVICE_KIND,
  plural: MICROSERVICE_PLURAL,
  shortNames: ['ms'],
  categories: ['converge'],
  scope: 'Namespaced',
  labels: { 'app.kubernetes.io/part-of': 'converge' },
  versions: [
    {
      name: MICROSERVICE_VERSION,
      served: true,
      storage: true,
      schema: MicroserviceSchema,
      metadataName: MicroserviceNameSchema,
      subresources: { status: true },
      printerColumns: [
        { name: 'Image', type: 'string', jsonPath: '.spec.image' },
        { name: 'Port', type: 'integer', jsonPath: '.spec.port' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
        { name: 'Available', type: 'integer', jsonPath: '.status.rollout.availableReplicas', priority: 1 },
        { name: 'Endpoints', type: 'integer', jsonPath: '.status.rollout.readyEndpoints', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
});

/** `microservices.platform.example.io`, typed as `Microservice`. */
export const MicroserviceKind: ResourceKind<Microservice> = defined.kind;
/** The CRD to install (`deploy/crds/microservices.platform.example.io.yaml` is generated from it). */
export const MicroserviceCrd: CustomResourceDefinitionV1 = defined.crd;

/**
 * The problems with a spec, in the API server's words where possible; empty when valid.
 * The API server already enforces all of this, so a non-empty answer means the object predates the
 * schema or bypassed validation: the operator reports `InvalidSpec` and does not retry.
 */
export function checkMicroserviceSpec(spec: unknown): string[] {
  const problems: string[] = [];
  for (const error of Value.Errors(MicroserviceSpecSchema, spec)) {
    problems.push(`spec${error.path.replaceAll('/', '.')}: ${error.message}`);
  }
  const image = (spec as { image?: unknown } | null | undefined)?.image;
  if (typeof image === 'string' && image.length > 0 && !isValidImageReference(image)) {
    problems.push('spec.image: must be a valid image reference such as ghcr.io/org/app:1.0.0');
  }
  return problems;
}

/** True when `name` can name the Microservice's Service (a DNS-1035 label, at most 63 characters). */
export function isValidMicroserviceName(name: string): boolean {
  return name.length <= 63 && new RegExp(DNS_1035_LABEL).test(name);
}
