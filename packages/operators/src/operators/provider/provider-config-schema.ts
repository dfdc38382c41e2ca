/**
 * The TypeBox schema of the operator configuration's `provider` section (documented in
 * `provider-config.ts`). The operator process checks a section with the validator compiled
 * from it ahead of time (`../compiled-checks/`) and never loads this module; the generator, the
 * tests and the explanation of a failure do.
 * @module
 */
import { Type } from '@sinclair/typebox';

export const ProviderConfigSchema = Type.Object(
  {
    healthIntervalSeconds: Type.Optional(Type.Number({ minimum: 1, maximum: 86_400 })),
    maxConcurrentReconciles: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    maxRetryDelaySeconds: Type.Optional(Type.Number({ minimum: 0.01, maximum: 3_600 })),
    recoveryProbeSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 3_600 })),
    observeIntervalSeconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 3_600 })),
    usageRefreshSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400 })),
    lateCreateWindowSeconds: Type.Optional(Type.Number({ minimum: 1, maximum: 86_400 })),
    rejectedRetrySeconds: Type.Optional(Type.Number({ minimum: 1, maximum: 86_400 })),
    recommendation: Type.Optional(
      Type.Object(
        {
          quotaPercent: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100 })),
          sustainedThrottlingSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400 })),
        },
        { additionalProperties: false },
      ),
    ),
    vendor: Type.Optional(
      Type.Object(
        {
          requestsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
          burst: Type.Optional(Type.Integer({ minimum: 1 })),
          maxConcurrency: Type.Optional(Type.Integer({ minimum: 1 })),
          timeoutSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 600 })),
          caFile: Type.Optional(Type.String({ minLength: 1 })),
          allowedEndpoints: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 1000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
