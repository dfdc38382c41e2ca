/**
 * Webhooks: the HTTPS server the API server calls, and CRD conversion on it.
 *
 * - `WebhookServer` (a manager runnable, on every replica): TLS from a `CertificateSource`
 *   (`certDirCertificates` for cert-manager's layout, reloaded on change; `selfManagedCertificates`
 *   for a CA of our own kept in a folder or a Secret), JSON handlers per path, metrics.
 * - `ConversionRegistry`: hub-and-spoke converters per kind; `server.serveConversion(registry)`
 *   answers `ConversionReview`s at `/convert`.
 * - `injectCaBundle`: writes the webhook's CA (and, locally, its URL) into the CRDs once;
 *   `CaBundleInjector` (a runnable) keeps it there, as cert-manager's cainjector does.
 *
 * What a caller can rely on is stated in each file's header: conversions are all-or-nothing and
 * never crash the server; certificates are swapped without a restart; the server is ready
 * (`ready()`, a manager readiness check) only while it listens with a certificate.
 * @module
 */
export { WebhookServer } from './webhook-server.ts';
export type { WebhookServerOptions, WebhookHandler } from './webhook-server.ts';
export { ConversionRegistry, ConversionError } from './conversion.ts';
export type { ConversionReview, ConversionRequest, ConversionResponse, KindConversion, Spoke, ConversionObserver } from './conversion.ts';
export { certDirCertificates, selfManagedCertificates, ensureSelfManagedCa, directoryCaStore, memoryCaStore, secretCaStore } from './certificates.ts';
export type { CertificateSource, ServingCertificate, CaStore, SelfManagedOptions } from './certificates.ts';
export { injectCaBundle, withConversionWebhookUrl } from './ca-bundle.ts';
export type { InjectCaBundleOptions, WebhookClientConfig } from './ca-bundle.ts';
export { CaBundleInjector } from './ca-bundle-injector.ts';
export type { CaBundleInjectorOptions } from './ca-bundle-injector.ts';
