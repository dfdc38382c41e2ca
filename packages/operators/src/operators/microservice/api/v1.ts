/**
 * Microservice `v1` (the hub and storage version): what `v1alpha1` said, with container
 * settings grouped and what seed 000 found missing added (ADR 0024):
 *
 * - `spec.container.image` and `spec.container.port` (were `spec.image`, `spec.port`);
 * - `spec.container.env` (v1 only): variables for the container, plain values or Secret keys;
 *   names the platform sets itself are refused by the API server;
 * - `spec.replicas` (v1 only): overrides the platform default.
 *
 * The status is the same in both versions (the operator writes it; older readers ignore what
 * they do not know), so it converts as is. `v1alpha1` stays served, deprecated, and converts
 * losslessly through `conversion.ts`.
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { celRule } from '@converge/runtime';
import type { KubeObject } from '@converge/runtime';
import { IMAGE_REFERENCE_MAX_LENGTH, IMAGE_REFERENCE_PATTERN, isValidImageReference } from './image-reference.ts';
import { MicroserviceStatusSchema } from './status.ts';
import type { MicroserviceStatus } from './status.ts';

/** Environment variables the platform sets on every Microservice's container; a spec cannot set them. */
export const PLATFORM_ENV_NAMES = ['ASPNETCORE_URLS', 'OTEL_SERVICE_NAME', 'OTEL_SERVICE_VERSION', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const;

const NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export const SecretKeySelectorSchema = Type.Object(
  {
    name: Type.String({ description: 'Name of a Secret in the Microservice\'s namespace.', minLength: 1, maxLength: 253, pattern: NAME }),
    key: Type.String({ description: 'Key in the Secret.', minLength: 1, maxLength: 253, pattern: '^[-._a-zA-Z0-9]+$' }),
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

/**
 * The problems with a v1 spec, in the API server's words where possible; empty when valid. The API
 * server enforces all of this, so a non-empty answer means the object bypassed validation.
 */
export function checkMicroserviceSpec(spec: unknown): string[] {
  const problems: string[] = [];
  for (const error of Value.Errors(MicroserviceSpecSchema, spec)) problems.push(`spec${error.path.replaceAll('/', '.')}: ${error.message}`);
  const container = (spec as { container?: { image?: unknown; env?: unknown } } | null | undefined)?.container;
  if (typeof container?.image === 'string' && container.image.length > 0 && !isValidImageReference(container.image)) {
    problems.push('spec.container.image: must be a valid image reference such as ghcr.io/org/app:1.0.0');
  }
  if (Array.isArray(container?.env)) {
    const seen = new Set<string>();
    for (const [i, e] of (container.env as EnvVar[]).entries()) {
      if ((PLATFORM_ENV_NAMES as readonly string[]).includes(e.name)) problems.push(`spec.container.env[${i}].name: ${e.name} is set by the platform`);
      if (seen.has(e.name)) problems.push(`spec.container.env[${i}].name: ${e.name} appears twice`);
      seen.add(e.name);
      if ((e.value === undefined) === (e.valueFrom === undefined)) problems.push(`spec.container.env[${i}]: give exactly one of value and valueFrom`);
    }
  }
  return problems;
}
