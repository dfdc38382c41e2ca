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
 *   maxRetryDelaySeconds: 60       # cap of the per-object backoff after a failed reconcile (jittered)
 *   defaults:                      # platform defaults (see platform-defaults.ts)
 *     replicas: 2
 *     otlpEndpoint: http://otel-collector.observability.svc.cluster.local:4317
 * client: { qps: 0 }              # client-side rate limit towards the API server; 0 (default): none,
 *                                  # as controller-runtime (API Priority and Fairness protects it; ADR 0026)
 * shutdownGraceSeconds: 30
 * cacheSyncTimeoutSeconds: 120     # start fails (exit 1, naming the kinds) if the caches are not synced by then
 * ```
 *
 * Guarantees: a file is checked whole before anything starts, the platform defaults and the
 * `provider` section included, and every problem is reported at once, one line each, with its
 * path in the file (`microservice.defaults.replicas: …`, `micrservice: unexpected property (did
 * you mean "microservice"?)`; `config-problems.ts`).
 * @module
 */
import { readFile } from 'node:fs/promises';
import type { Static } from '@sinclair/typebox';
import { readConfigText } from './config-text.ts';
import { defaultPlatformDefaults, parsePlatformDefaults, PlatformDefaultsError } from './microservice/platform-defaults.ts';
// provider-config.ts, not provider/index.ts: the index loads the provider operator (and its HTTP
// client), which a process running only the Microservice operator never needs (issue 17).
import { providerConfigProblems } from './provider/provider-config.ts';
import { inSection, checkedProblems } from './config-problems.ts';
import type { OperatorConfigFileSchema } from './operator-config-schema.ts';
import type { PlatformDefaults } from './microservice/platform-defaults.ts';

export type OperatorConfigFile = Static<typeof OperatorConfigFileSchema>;

export interface OperatorConfig {
  microservice: { resyncPeriodMs: number; maxConcurrentReconciles: number; statusProgressIntervalMs: number; maxRetryDelayMs: number; defaults: PlatformDefaults };
  /** The provider operator's section, validated by that operator. */
  provider: unknown;
  client: { qps: number; burst: number };
  shutdownGraceMs: number;
  cacheSyncTimeoutMs: number;
}

export const defaultOperatorConfig: OperatorConfig = {
  microservice: { resyncPeriodMs: 10_000, maxConcurrentReconciles: 4, statusProgressIntervalMs: 15_000, maxRetryDelayMs: 60_000, defaults: defaultPlatformDefaults },
  provider: {},
  client: { qps: 0, burst: 100 },
  shutdownGraceMs: 30_000,
  cacheSyncTimeoutMs: 120_000,
};

/** The configuration cannot be used; `problems` are `path: what` lines (paths in the file), all of them. */
export class OperatorConfigError extends Error {
  override readonly name = 'OperatorConfigError';
  readonly problems: readonly string[];
  constructor(source: string, problems: string[]) {
    super(`invalid configuration in ${source}:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

/**
 * Every problem of a configuration file's content, all sections at once (the file's own fields,
 * `microservice.defaults`, `provider`), as `path: what` lines with paths from the top of the file.
 * Empty when it is valid. Pure.
 */
export function operatorConfigProblems(raw: unknown): string[] {
  const input = raw ?? {};
  const problems = checkedProblems('operatorConfigFile', input);
  if (typeof input !== 'object' || Array.isArray(input)) return problems;
  const file = input as { microservice?: unknown; provider?: unknown };
  const defaults = isMapping(file.microservice) ? file.microservice['defaults'] : undefined;
  try {
    parsePlatformDefaults(defaults);
  } catch (error) {
    if (!(error instanceof PlatformDefaultsError)) throw error;
    problems.push(...error.problems.map((p) => inSection('microservice.defaults', p)));
  }
  if (file.provider !== undefined && file.provider !== null) problems.push(...providerConfigProblems(file.provider).map((p) => inSection('provider', p)));
  // By path, so that each section's problems stand together.
  return problems.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export function parseOperatorConfig(raw: unknown, source = 'config'): OperatorConfig {
  const input = raw ?? {};
  const problems = operatorConfigProblems(input);
  if (problems.length) throw new OperatorConfigError(source, problems);
  const file = input as OperatorConfigFile;
  const d = defaultOperatorConfig;
  return {
    microservice: {
      resyncPeriodMs: (file.microservice?.resyncPeriodSeconds ?? d.microservice.resyncPeriodMs / 1000) * 1000,
      maxConcurrentReconciles: file.microservice?.maxConcurrentReconciles ?? d.microservice.maxConcurrentReconciles,
      statusProgressIntervalMs: (file.microservice?.statusProgressIntervalSeconds ?? d.microservice.statusProgressIntervalMs / 1000) * 1000,
      maxRetryDelayMs: (file.microservice?.maxRetryDelaySeconds ?? d.microservice.maxRetryDelayMs / 1000) * 1000,
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
    throw new OperatorConfigError(path, [`cannot read the file: ${(err as Error).message}`]);
  }
  const read = readConfigText(text);
  if (!read.ok) throw new OperatorConfigError(path, read.problems);
  const raw = read.value;
  const config = parseOperatorConfig(raw, path);
  const problems = await fileProblems(raw);
  if (problems.length) throw new OperatorConfigError(path, problems);
  return config;
}

/**
 * The files a valid configuration names, checked where they are read: this machine. Run after
 * the shape checks (a file path of the wrong type is reported there); a configuration given as an
 * object (`parseOperatorConfig`) names files its caller checks.
 */
async function fileProblems(raw: unknown): Promise<string[]> {
  const caFile = isMapping(raw) && isMapping(raw.provider) && isMapping(raw.provider.vendor) ? raw.provider.vendor.caFile : undefined;
  if (typeof caFile !== 'string' || caFile === '') return [];
  let pem: string;
  try {
    pem = await readFile(caFile, 'utf8');
  } catch (err) {
    return [`provider.vendor.caFile: cannot read ${caFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`];
  }
  return pem.includes('-----BEGIN CERTIFICATE-----') ? [] : [`provider.vendor.caFile: ${caFile} holds no PEM certificate`];
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
