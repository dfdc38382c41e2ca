/**
 * Platform defaults: everything about a Microservice's workload that the service team does not
 * choose (replicas, telemetry endpoint, probes, resource requests, extra labels). The values match
 * the existing Todo API; operators override them with `converge run --config <file>`.
 *
 * In the operator's config file (YAML or JSON, see `packages/operators/src/operators/operator-config.ts`) they live
 * under `microservice.defaults`:
 *
 *   microservice:
 *     defaults:
 *       replicas: 2
 *       progressDeadlineSeconds: 600       # a rollout without progress for this long is RolloutStalled
 *       otlpEndpoint: http://otel-collector.observability.svc.cluster.local:4317
 *       containerName: app
 *       resources:
 *         requests: { cpu: 25m, memory: 128Mi }
 *         limits: { memory: 256Mi }          # optional; none by default
 *       probes:
 *         readinessPath: /health/ready
 *         livenessPath: /health/live
 *       labels: { team: platform }           # added to Deployments, Services and pods
 *
 * Every field is optional; unknown fields are errors (typos must not pass silently). Quantities are
 * stored in the API server's canonical spelling (`1000m` becomes `1`), so what the operator writes
 * is what it reads back. A limit below its request (the default request included) is an error: the
 * API server would refuse every Deployment. Checked against the API server for random defaults and
 * specs by `test/integration/microservice/desired-state-differential.test.ts`.
 * @module
 */
import { readFile } from 'node:fs/promises';
import type { Static } from '@sinclair/typebox';
import { inSection, checkedProblems } from '../config-problems.ts';
import type { PlatformDefaultsConfigSchema } from './platform-defaults-schema.ts';
import { readConfigText } from '../config-text.ts';
import { ManagedLabel } from './api/constants.ts';
import { canonicalQuantity, quantityMilli } from './quantity.ts';

export interface PlatformDefaults {
  /** Deployment replicas; 0 scales every Microservice to zero (Ready as `ScaledToZero`). */
  readonly replicas: number;
  /**
   * The Deployment's `progressDeadlineSeconds`: how long a rollout may make no progress before
   * the Deployment controller calls it failed (`ProgressDeadlineExceeded`), which the operator
   * reports as `RolloutStalled`. Until then a failing image is `RolloutInProgress`. Kubernetes'
   * own default is 600 (10 minutes); `converge dev` uses 60.
   */
  readonly progressDeadlineSeconds: number;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` of every workload. */
  readonly otlpEndpoint: string;
  /** Name of the one container in the pod. */
  readonly containerName: string;
  readonly resources: {
    readonly requests: Readonly<Record<string, string>>;
    readonly limits: Readonly<Record<string, string>>;
  };
  readonly probes: { readonly readinessPath: string; readonly livenessPath: string };
  /** Extra labels on the Deployment, the Service and the pods (never the selector). */
  readonly labels: Readonly<Record<string, string>>;
}

export const defaultPlatformDefaults: PlatformDefaults = Object.freeze({
  replicas: 2,
  progressDeadlineSeconds: 600,
  otlpEndpoint: 'http://otel-collector.observability.svc.cluster.local:4317',
  containerName: 'app',
  resources: Object.freeze({ requests: Object.freeze({ cpu: '25m', memory: '128Mi' }), limits: Object.freeze({}) }),
  probes: Object.freeze({ readinessPath: '/health/ready', livenessPath: '/health/live' }),
  labels: Object.freeze({}),
});

const RESOURCE_NAMES = ['cpu', 'memory', 'ephemeral-storage'];
export type PlatformDefaultsConfig = Static<typeof PlatformDefaultsConfigSchema>;

export class PlatformDefaultsError extends Error {
  override readonly name = 'PlatformDefaultsError';
  readonly problems: readonly string[];
  constructor(source: string, problems: string[]) {
    super(`invalid platform defaults in ${source}:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

/**
 * Validates a platform-defaults object (the `microservice.defaults` section of the config) and
 * fills what it leaves out from `base`. Throws `PlatformDefaultsError` listing every problem, with
 * paths relative to the section (`resources.requests.cpu: …`). Pure.
 */
export function parsePlatformDefaults(section: unknown, source = 'config', base: PlatformDefaults = defaultPlatformDefaults): PlatformDefaults {
  if (section === undefined || section === null) return base;
  // Every problem at once: the schema's, and those of the values it lets through (quantities,
  // label keys and values), also of fields next to ones the schema refused.
  const problems = checkedProblems('platformDefaults', section);
  const config = (isPlainObject(section) ? section : {}) as PlatformDefaultsConfig;
  const resources = isPlainObject(config.resources) ? config.resources : undefined;
  const requests = resourceList(stringEntries(resources?.requests), 'requests', problems) ?? base.resources.requests;
  const limits = resourceList(stringEntries(resources?.limits), 'limits', problems) ?? base.resources.limits;
  const labels = stringEntries(config.labels) ?? base.labels;
  for (const [key, value] of Object.entries(labels)) {
    if ((Object.values(ManagedLabel) as string[]).includes(key)) problems.push(`labels: ${key} is set by the operator and cannot be overridden`);
    else if (!isLabelKey(key)) problems.push(`labels: ${JSON.stringify(key)} is not a valid label key`);
    if (!isLabelValue(value)) problems.push(`labels.${key}: ${JSON.stringify(value)} is not a valid label value (at most 63 characters: letters, digits, '-', '_', '.')`);
  }
  // The API server refuses a container whose request exceeds its limit: every Microservice would
  // fail to apply with these defaults, so they are refused here, where the mistake was made.
  for (const [name, limit] of Object.entries(limits)) {
    const request = requests[name];
    if (request === undefined || quantityMilli(request) <= quantityMilli(limit)) continue;
    const from = isPlainObject(resources?.requests) ? '' : ` (the default request; set resources.requests.${name} too)`;
    problems.push(`resources.limits.${name}: ${limit} is less than the request of ${request}${from}; the API server refuses a container whose request exceeds its limit`);
  }
  if (problems.length > 0) throw new PlatformDefaultsError(source, problems);

  return Object.freeze({
    replicas: config.replicas ?? base.replicas,
    progressDeadlineSeconds: config.progressDeadlineSeconds ?? base.progressDeadlineSeconds,
    otlpEndpoint: config.otlpEndpoint ?? base.otlpEndpoint,
    containerName: config.containerName ?? base.containerName,
    resources: Object.freeze({ requests: Object.freeze({ ...requests }), limits: Object.freeze({ ...limits }) }),
    probes: Object.freeze({
      readinessPath: config.probes?.readinessPath ?? base.probes.readinessPath,
      livenessPath: config.probes?.livenessPath ?? base.probes.livenessPath,
    }),
    labels: Object.freeze({ ...labels }),
  });
}

/**
 * Reads a YAML or JSON config file and returns its platform defaults (`microservice.defaults`).
 * The operator process reads the whole file with `loadOperatorConfig`; this is for tools that need
 * only the defaults (e.g. `converge explain` rendering the desired state).
 */
export async function loadPlatformDefaults(path: string): Promise<PlatformDefaults> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new PlatformDefaultsError(path, [`cannot read the file: ${(error as Error).message}`]);
  }
  const read = readConfigText(text);
  if (!read.ok) throw new PlatformDefaultsError(path, read.problems);
  const document = read.value;
  if (document === null || document === undefined) return defaultPlatformDefaults;
  if (typeof document !== 'object' || Array.isArray(document)) throw new PlatformDefaultsError(path, ['the file must hold a mapping']);
  const section = (document as { microservice?: { defaults?: unknown } }).microservice?.defaults;
  try {
    return parsePlatformDefaults(section, path);
  } catch (error) {
    // Paths in the file, as `converge run --config` reports them.
    if (error instanceof PlatformDefaultsError) throw new PlatformDefaultsError(path, error.problems.map((p) => inSection('microservice.defaults', p)));
    throw error;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The string-valued entries of a map (others are the schema's problems), or undefined when it is not a map. */
function stringEntries(v: unknown): Record<string, string> | undefined {
  return isPlainObject(v) ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string')) : undefined;
}

function resourceList(list: Record<string, string> | undefined, field: string, problems: string[]): Record<string, string> | undefined {
  if (list === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, quantity] of Object.entries(list)) {
    if (!RESOURCE_NAMES.includes(name)) {
      problems.push(`resources.${field}: unknown resource ${JSON.stringify(name)} (use ${RESOURCE_NAMES.join(', ')})`);
      continue;
    }
    try {
      out[name] = canonicalQuantity(String(quantity));
    } catch (error) {
      problems.push(`resources.${field}.${name}: ${(error as Error).message}`);
    }
  }
  return out;
}

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A Kubernetes label key: `[prefix/]name`, prefix a DNS subdomain (≤ 253), name ≤ 63. */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length > 0 && name.length <= 63 && LABEL_NAME.test(name);
}

/** A Kubernetes label value: empty, or ≤ 63 characters of the label-name alphabet. */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && LABEL_NAME.test(value));
}
