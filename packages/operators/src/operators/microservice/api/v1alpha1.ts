/**
 * Microservice `v1alpha1`: `spec.image` and `spec.port`. Still served, deprecated since `v1`
 * (`v1.ts`); objects convert losslessly through `conversion.ts` (ADR 0024).
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { celRule } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { IMAGE_REFERENCE_MAX_LENGTH, IMAGE_REFERENCE_PATTERN } from './image-reference.ts';
import { MicroserviceStatusSchema } from './status.ts';
import type { MicroserviceStatus } from './status.ts';
import { DNS_1035_LABEL } from './name.ts';

export const MicroserviceV1alpha1SpecSchema = Type.Object(
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

export const MicroserviceV1alpha1Schema = Type.Object(
  {
    spec: MicroserviceV1alpha1SpecSchema,
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

export type MicroserviceV1alpha1Spec = Static<typeof MicroserviceV1alpha1SpecSchema>;
export interface MicroserviceV1alpha1 extends KubeObject {
  spec: MicroserviceV1alpha1Spec;
  status?: MicroserviceStatus;
}
