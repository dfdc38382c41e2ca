/**
 * The TypeBox schema of the platform defaults (`microservice.defaults` in the operator
 * configuration, documented in `platform-defaults.ts`). The operator process checks a section
 * with the validator compiled from it ahead of time (`../../compiled-checks/`) and never loads
 * this module; the generator, the tests and the explanation of a failure do.
 * @module
 */
import { Type } from '@sinclair/typebox';

const ResourceList = Type.Record(Type.String(), Type.String({ minLength: 1 }));
const HttpPath = Type.String({ pattern: '^/[^\\s]*$', maxLength: 1024 });

export const PlatformDefaultsConfigSchema = Type.Object(
  {
    replicas: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    progressDeadlineSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    otlpEndpoint: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048 })),
    containerName: Type.Optional(Type.String({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 })),
    resources: Type.Optional(
      Type.Object({ requests: Type.Optional(ResourceList), limits: Type.Optional(ResourceList) }, { additionalProperties: false }),
    ),
    probes: Type.Optional(
      Type.Object({ readinessPath: Type.Optional(HttpPath), livenessPath: Type.Optional(HttpPath) }, { additionalProperties: false }),
    ),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);
