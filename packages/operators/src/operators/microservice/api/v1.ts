/**
 * Microservice `v1` (the hub and storage version): what `v1alpha1` said, with container
 * settings grouped and what seed 000 found missing added (ADR 0024):
 *
 * - `spec.container.image` and `spec.container.port` (were `spec.image`, `spec.port`);
 * - `spec.container.env` (v1 only): variables for the container, plain values or Secret keys;
 *   names the platform sets itself, and Secret keys a Pod cannot name (`secret-key.ts`), are
 *   refused by the API server;
 * - `spec.replicas` (v1 only): overrides the platform default.
 *
 * The status is the same in both versions (the operator writes it; older readers ignore what
 * they do not know), so it converts as is. `v1alpha1` stays served, deprecated, and converts
 * losslessly through `conversion.ts`.
 *
 * The operator process never loads this module (TypeBox and the schemas are for the CRD, the
 * tests and explaining a failure): it checks specs with `spec-check.ts`, which runs the validator
 * compiled from `MicroserviceSpecSchema` ahead of time (`../../compiled-checks/`).
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { celRule } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { IMAGE_REFERENCE_MAX_LENGTH, IMAGE_REFERENCE_PATTERN } from './image-reference.ts';
import { PLATFORM_ENV_NAMES } from './constants.ts';
import { SECRET_KEY_DOTS_MESSAGE, SECRET_KEY_DOTS_RULE, SECRET_KEY_MAX_LENGTH, SECRET_KEY_PATTERN } from './secret-key.ts';
import { MicroserviceStatusSchema } from './status.ts';
import type { MicroserviceStatus } from './status.ts';

const NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export const SecretKeySelectorSchema = Type.Object(
  {
    name: Type.String({ description: 'Name of a Secret in the Microservice\'s namespace.', minLength: 1, maxLength: 253, pattern: NAME }),
    key: Type.String({
      description: 'Key in the Secret.',
      minLength: 1,
      maxLength: SECRET_KEY_MAX_LENGTH,
      pattern: SECRET_KEY_PATTERN,
      'x-kubernetes-validations': [celRule(SECRET_KEY_DOTS_RULE, SECRET_KEY_DOTS_MESSAGE)],
    }),
    optional: Type.Optional(Type.Boolean({ description: 'Start the container even when the Secret or key is missing.' })),
  },
  { description: 'A key of a Secret; the kubelet reads it, the operator never does.' },
);

export const EnvVarSchema = Type.Object(
  {
    name: Type.String({
      description: 'Variable name (a C identifier).',
      minLength: 1,
      maxLength: 256,
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      'x-kubernetes-validations': [
        celRule(`!(self in [${PLATFORM_ENV_NAMES.map((n) => `'${n}'`).join(', ')}])`, `the platform sets ${PLATFORM_ENV_NAMES.join(', ')}; choose another name`),
      ],
    }),
    value: Type.Optional(Type.String({ description: 'A plain value.', maxLength: 32768 })),
    valueFrom: Type.Optional(Type.Object({ secretKeyRef: SecretKeySelectorSchema }, { description: 'Where the value comes from.' })),
  },
  {
    description: 'One environment variable: a value, or a reference to a Secret key.',
    'x-kubernetes-validations': [celRule('has(self.value) != has(self.valueFrom)', 'give exactly one of value and valueFrom')],
  },
);

export const ContainerSpecSchema = Type.Object(
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
    env: Type.Optional(
      Type.Array(EnvVarSchema, {
        description: 'Environment variables, after the platform\'s own.',
        maxItems: 64,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
  },
  { description: 'The application container.' },
);

export const MicroserviceSpecSchema = Type.Object(
  {
    container: ContainerSpecSchema,
    replicas: Type.Optional(Type.Integer({ description: 'Pods to run; the platform default when absent.', minimum: 0, maximum: 100, format: 'int32' })),
  },
  { description: 'What the service team asks for. Everything else comes from the platform defaults.' },
);

export const MicroserviceSchema = Type.Object(
  { spec: MicroserviceSpecSchema, status: Type.Optional(MicroserviceStatusSchema) },
  { description: 'A service a team runs on the platform: a container in; a Deployment, a Service and a truthful status out.' },
);

export type MicroserviceSpec = Static<typeof MicroserviceSpecSchema>;
export type EnvVar = Static<typeof EnvVarSchema>;
export interface Microservice extends KubeObject {
  spec: MicroserviceSpec;
  status?: MicroserviceStatus;
}
