/**
 * The operators' conversion webhook: converts Microservices and DigitalHumanProviders between
 * `v1alpha1` and `v1` for the API server (ADR 0024), on every replica of the operator process.
 *
 * Certificates, in the order they are looked for:
 * - `certDir`: `tls.crt`/`tls.key` from cert-manager (or any mounted `kubernetes.io/tls` Secret),
 *   reloaded when renewed; cert-manager's cainjector fills the CRDs' `caBundle`;
 * - otherwise self-managed: a CA kept in `caSecret` (in the cluster: every replica shares it) or in
 *   `caDir` (local runs), and a serving certificate per process for `hosts`.
 *
 * `injectCa` (self-managed only) writes the CA into both CRDs' `caBundle` once the server listens
 * — and, with `url`, points them at that URL (local runs, where the API server reaches the
 * webhook on 127.0.0.1), and keeps them so: every 30 s it looks again and writes the CA back if
 * someone replaced the conversion block (`CaBundleInjector`, as cert-manager's cainjector keeps
 * its CRDs). It is opt-in: a `converge run` from a laptop against a cluster must never re-point
 * that cluster's CRDs. Readiness (`/readyz` check `webhook`) waits for the server, and for the
 * first injection when asked.
 * @module
 */
import { CaBundleInjector, ConversionRegistry, WebhookServer, certDirCertificates, directoryCaStore, ensureSelfManagedCa, secretCaStore, selfManagedCertificates, withConversionWebhookUrl } from '@converge/runtime';
import type { CertificateSource, CustomResourceDefinitionV1, KubeClient, Logger, Manager } from '@converge/runtime';
// The converters and names only: the CRDs (built from the TypeBox schemas) are loaded by the
// local-run helpers below, never by the operator process (issue 17); the provider operator itself
// (and its HTTP client) is loaded when it runs.
import { microserviceConversion } from './microservice/api/conversion.ts';
import { MICROSERVICE_GROUP, MICROSERVICE_PLURAL } from './microservice/api/constants.ts';
import { providerConversion } from './provider/api/conversion.ts';
import { PROVIDER_GROUP, PROVIDER_PLURAL } from './provider/api/constants.ts';
import { WEBHOOK_SERVICE } from './webhook-service.ts';

export interface WebhookSettings {
  /** `host:port` or `:port` (default `:9443`); `0` disables the webhook. */
  bindAddress?: string;
  /** cert-manager's layout: `tls.crt` and `tls.key` in this folder. */
  certDir?: string;
  /** Self-managed CA in this Secret (`ca.crt`, `ca.key`), shared by every replica. */
  caSecret?: { namespace: string; name: string };
  /** Self-managed CA in this folder (local runs). */
  caDir?: string;
  /** Names the self-managed serving certificate is valid for (default: loopback and the Service's DNS names). */
  hosts?: string[];
  /** Write the self-managed CA into both CRDs' `caBundle` (and `url`, when given). */
  injectCa?: boolean;
  /** With `injectCa`: the URL the API server should call (`https://127.0.0.1:<port>/convert`). */
  url?: string;
}

/** The CRDs the webhook converts. */
export const CONVERTED_CRDS = [`${MICROSERVICE_PLURAL}.${MICROSERVICE_GROUP}`, `${PROVIDER_PLURAL}.${PROVIDER_GROUP}`];

/** Both kinds' converters, hub `v1`. */
export function conversionRegistry(): ConversionRegistry {
  return new ConversionRegistry().register(microserviceConversion).register(providerConversion);
}

/** The serving-certificate names a self-managed certificate covers by default. */
export function defaultWebhookHosts(namespace: string = WEBHOOK_SERVICE.namespace): string[] {
  const svc = `${WEBHOOK_SERVICE.name}.${namespace}.svc`;
  return ['localhost', '127.0.0.1', '::1', svc, `${svc}.cluster.local`];
}

function certificatesFor(settings: WebhookSettings, client: KubeClient, log?: Logger): CertificateSource {
  if (settings.certDir) return certDirCertificates(settings.certDir);
  const store = settings.caSecret
    ? secretCaStore(client, settings.caSecret.namespace, settings.caSecret.name)
    : settings.caDir
      ? directoryCaStore(settings.caDir)
      : undefined;
  if (!store) throw new Error('the conversion webhook needs a certificate: give certDir, caSecret or caDir');
  return selfManagedCertificates({ store, hosts: settings.hosts ?? defaultWebhookHosts(settings.caSecret?.namespace), ...(log ? { log } : {}) });
}

/** Registers the webhook server (and the CA injector, when asked) on `manager`; returns the server. */
export function addConversionWebhook(manager: Manager, settings: WebhookSettings, log: Logger): WebhookServer | undefined {
  if (settings.bindAddress === '0') return undefined;
  if (settings.injectCa && settings.certDir) throw new Error('--webhook-inject-ca is for self-managed certificates; with --webhook-cert-dir, cert-manager injects the CA');
  const server = new WebhookServer({
    bindAddress: settings.bindAddress ?? ':9443',
    certificates: certificatesFor(settings, manager.client, log),
    log: log.child({ component: 'webhook' }),
    registry: manager.metrics.registry,
  }).serveConversion(conversionRegistry());
  manager.add({ name: 'webhook server', start: (s) => server.start(s) }, { needLeaderElection: false });

  const injector = settings.injectCa
    ? new CaBundleInjector({ client: manager.client, crds: CONVERTED_CRDS, caPem: () => server.caPem(), ...(settings.url ? { url: settings.url } : {}), clock: manager.clock, log })
    : undefined;
  if (injector) {
    manager.add({
      name: 'webhook CA injector',
      start: async (signal) => {
        await server.listening();
        await injector.start(signal);
      },
    }, { needLeaderElection: false });
  }
  manager.addReadyCheck('webhook', () => {
    const serving = server.ready();
    if (!serving.ok) return serving;
    if (injector && !injector.injected()) {
      const why = injector.lastError();
      return { ok: false, detail: `the CRDs do not trust the webhook yet${why ? `: ${why}` : ''}` };
    }
    return { ok: true };
  });
  return server;
}

/**
 * For local runs (the local control plane, `converge dev`, the test suite): a webhook on
 * `127.0.0.1:<port>` with its CA in `caDir` — the URL, the CA, the CRDs already pointing at it
 * (install these, not the published ones, so re-installing never mixes a URL with a Service),
 * and the settings for `runOperatorProcess` (which then keeps the CRDs pointing there).
 */
export async function localConversionWebhook(caDir: string, port: number): Promise<{ url: string; caPem: string; crds: CustomResourceDefinitionV1[]; settings: WebhookSettings }> {
  const caPem = await ensureSelfManagedCa(directoryCaStore(caDir));
  const { MicroserviceCrd } = await import('./microservice/api/microservice.ts');
  const { DigitalHumanProviderCrd } = await import('./provider/api/digital-human-provider.ts');
  const url = `https://127.0.0.1:${port}/convert`;
  return {
    url,
    caPem,
    crds: [withConversionWebhookUrl(MicroserviceCrd, url, caPem), withConversionWebhookUrl(DigitalHumanProviderCrd, url, caPem)],
    settings: { bindAddress: `127.0.0.1:${port}`, caDir, injectCa: true, url },
  };
}

/** A conversion webhook on its own, without operators (the test suite's shared one). */
export async function startStandaloneConversionWebhook(options: { caDir: string; port: number; log?: Logger }): Promise<{ url: string; caPem: string; crds: CustomResourceDefinitionV1[]; stop(): Promise<void> }> {
  const local = await localConversionWebhook(options.caDir, options.port);
  const abort = new AbortController();
  const server = new WebhookServer({
    bindAddress: local.settings.bindAddress!,
    certificates: selfManagedCertificates({ store: directoryCaStore(options.caDir), hosts: defaultWebhookHosts() }),
    ...(options.log ? { log: options.log } : {}),
  }).serveConversion(conversionRegistry());
  const running = server.start(abort.signal);
  await server.listening();
  return { url: local.url, caPem: local.caPem, crds: local.crds, stop: async () => { abort.abort(); await running; } };
}
