/**
 * The operator process's configuration file (`converge run --config <file>`, YAML or JSON):
 * platform defaults for Microservices, intervals, limits. Every field is optional; absent
 * fields keep the defaults below. Unknown fields are an error (a typo must not pass silently).
 *
 * ```yaml
 * microservice:
 *   resyncPeriodSeconds: 10        # the periodic check (jittered ±10 %)
 *   maxConcurrentReconciles: 4
 *   statusProgressIntervalSeconds: 15  # progress-only status changes (rollout counts) at most this often
 *   defaults:                      # platform defaults (see platform-defaults.ts)
 *     replicas: 2
 *     otlpEndpoint: http://otel-collector.observability.svc.cluster.local:4317
 * client: { qps: 0 }              # client-side rate limit towards the API server; 0 (default): none,
 *                                  # as controller-runtime (API Priority and Fairness protects it; ADR 0026)
 * shutdownGraceSeconds: 30
 * cacheSyncTimeoutSeconds: 120     # start fails (exit 1, naming the kinds) if the caches are not synced by then
 * ```
 * @module
 */
import { readFile } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { defaultPlatformDefaults, parsePlatformDefaults } from './microservice/index.ts';
import type { PlatformDefaults } from './microservice/index.ts';

const Seconds = (max: number) => Type.Number({ exclusiveMinimum: 0, maximum: max });

export const OperatorConfigFileSchema = Type.Object(
  {
    microservice: Type.Optional(
      Type.Object(
        {
          resyncPeriodSeconds: Type.Optional(Seconds(86_400)),
          maxConcurrentReconciles: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
          statusProgressIntervalSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 3_600 })),
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
export type OperatorConfigFile = Static<typeof OperatorConfigFileSchema>;

export interface OperatorConfig {
  microservice: { resyncPeriodMs: number; maxConcurrentReconciles: number; statusProgressIntervalMs: number; defaults: PlatformDefaults };
  /** The provider operator's section, validated by that operator. */
  provider: unknown;
  client: { qps: number; burst: number };
  shutdownGraceMs: number;
  cacheSyncTimeoutMs: number;
}

export const defaultOperatorConfig: OperatorConfig = {
  microservice: { resyncPeriodMs: 10_000, maxConcurrentReconciles: 4, statusProgressIntervalMs: 15_000, defaults: defaultPlatformDefaults },
  provider: {},
  client: { qps: 0, burst: 100 },
  shutdownGraceMs: 30_000,
  cacheSyncTimeoutMs: 120_000,
};

export class OperatorConfigError extends Error {
  override readonly name = 'OperatorConfigError';
}

export function parseOperatorConfig(raw: unknown, source = 'config'): OperatorConfig {
  const input = raw ?? {};
  const errors = [...Value.Errors(OperatorConfigFileSchema, input)].map((e) => `${source}${e.path.replaceAll('/', '.') || ''}: ${e.message}`);
  if (errors.length) throw new OperatorConfigError(errors.join('; '));
  const file = input as OperatorConfigFile;
  const d = defaultOperatorConfig;
  return {
    microservice: {
      resyncPeriodMs: (file.microservice?.resyncPeriodSeconds ?? d.microservice.resyncPeriodMs / 1000) * 1000,
      maxConcurrentReconciles: file.microservice?.maxConcurrentReconciles ?? d.microservice.maxConcurrentReconciles,
      statusProgressIntervalMs: (file.microservice?.statusProgressIntervalSeconds ?? d.microservice.statusProgressIntervalMs / 1000) * 1000,
      defaults: file.microservice?.defaults === undefined ? d.microservice.defaults : parsePlatformDefaults(file.microservice.defaults, `${source}.microservice.defaults`),
    },
    provider: file.provider ?? d.provider,
    client: { qps: file.client?.qps ?? d.client.qps, burst: file.client?.burst ?? d.client.burst },
    shutdownGraceMs: (file.shutdownGraceSeconds ?? d.shutdownGraceMs / 1000) * 1000,
    cacheSyncTimeoutMs: (file.cacheSyncTimeoutSeconds ?? d.cacheSyncTimeoutMs / 1000) * 1000,
  };
}

export async function loadOperatorConfig(path: string): Promise<OperatorConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new OperatorConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new OperatorConfigError(`${path} is not valid YAML: ${(err as Error).message}`);
  }
  return parseOperatorConfig(raw, path);
}
