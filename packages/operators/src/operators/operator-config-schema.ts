/**
 * The TypeBox schema of the operator configuration file (documented in `operator-config.ts`).
 * The operator process checks a file with the validator compiled from it ahead of time
 * (`compiled-checks/`) and never loads this module; the generator, the tests and the
 * explanation of a failure do.
 * @module
 */
import { Type } from '@sinclair/typebox';

const Seconds = (max: number) => Type.Number({ exclusiveMinimum: 0, maximum: max });

export const OperatorConfigFileSchema = Type.Object(
  {
    microservice: Type.Optional(
      Type.Object(
        {
          resyncPeriodSeconds: Type.Optional(Type.Number({ minimum: 1, maximum: 86_400 })),
          maxConcurrentReconciles: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
          statusProgressIntervalSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 3_600 })),
          maxRetryDelaySeconds: Type.Optional(Type.Number({ minimum: 0.01, maximum: 3_600 })),
          defaults: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: false },
      ),
    ),
    provider: Type.Optional(Type.Unknown()),
    client: Type.Optional(
      Type.Object({ qps: Type.Optional(Type.Number({ minimum: 0 })), burst: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
    ),
    shutdownGraceSeconds: Type.Optional(Seconds(3_600)),
    cacheSyncTimeoutSeconds: Type.Optional(Seconds(86_400)),
  },
  { additionalProperties: false },
);
