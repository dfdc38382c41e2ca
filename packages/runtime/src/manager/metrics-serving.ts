/**
 * How the manager protects its metrics server, from its options: who may read it
 * (`metricsAuth`, ADR 0041) and whether it speaks HTTPS (`metricsSecureServing`,
 * `metricsCertDir`: controller-runtime's `SecureServing` and `CertDir`).
 *
 * What a caller can rely on: `metricsServing(options)` checks the options when the manager is
 * built, before anything starts, and throws a RangeError for a value or a combination it does not
 * know (a cert dir without secure serving, an empty cert dir); what it returns makes the metrics
 * server's options, and makes nothing until asked. With secure serving and no cert dir, the
 * certificate is made at start, in memory, for `localhost`, `127.0.0.1`, `::1` and the host's
 * name, by a CA of this process alone (no client can be given it: a scraper skips verification);
 * renewed before it expires like any self-managed certificate.
 * @module
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.ts';
import type { KubeClient } from '../client/index.ts';
import { kubernetesAuthorizer } from '../serving/index.ts';
import type { MetricsServerOptions } from '../serving/index.ts';
import { certDirCertificates, memoryCaStore, selfManagedCertificates } from '../webhook/certificates.ts';
import type { CertificateSource } from '../webhook/certificates.ts';

export interface MetricsServingOptions {
  metricsAuth?: 'none' | 'kubernetes';
  metricsSecureServing?: boolean;
  metricsCertDir?: string;
}

/** What the metrics server needs of the manager. */
export interface MetricsServingDeps {
  client: KubeClient;
  clock: Clock;
  log: Logger;
}

/** Checks the options now; the function returned gives the metrics server's `authorize`, `certificates` and `log`. */
export function metricsServing(options: MetricsServingOptions): (deps: MetricsServingDeps) => Pick<MetricsServerOptions, 'authorize' | 'certificates' | 'log'> {
  const auth = options.metricsAuth ?? 'none';
  if (auth !== 'none' && auth !== 'kubernetes') throw new RangeError(`metricsAuth must be 'none' or 'kubernetes', not ${JSON.stringify(auth)}`);
  const secure = options.metricsSecureServing ?? false;
  if (typeof secure !== 'boolean') throw new RangeError(`metricsSecureServing must be a boolean, not ${JSON.stringify(secure)}`);
  const certDir = options.metricsCertDir;
  if (certDir !== undefined) {
    if (typeof certDir !== 'string' || certDir.trim() === '') throw new RangeError(`metricsCertDir must name a folder, not ${JSON.stringify(certDir)}`);
    if (!secure) throw new RangeError('metricsCertDir needs metricsSecureServing: true (without it the metrics server is plain HTTP)');
  }
  return (deps) => ({
    ...(auth === 'kubernetes' ? { authorize: kubernetesAuthorizer({ client: deps.client, clock: deps.clock, log: deps.log }) } : {}),
    ...(secure ? { certificates: certDir === undefined ? selfSignedCertificates(deps.clock) : certDirCertificates(certDir, { clock: deps.clock }), log: deps.log } : {}),
  });
}

/** A certificate made in memory at start, for this host's names (controller-runtime's metrics server without a cert dir). */
function selfSignedCertificates(clock: Clock): CertificateSource {
  const hosts = [...new Set(['localhost', '127.0.0.1', '::1', hostname()].filter(Boolean))];
  return selfManagedCertificates({ store: memoryCaStore(), hosts, clock });
}
