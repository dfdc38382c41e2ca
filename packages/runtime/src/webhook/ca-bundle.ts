/**
 * Points CRDs at the conversion webhook: sets `spec.conversion` to the `Webhook` strategy with the
 * webhook's CA in `clientConfig.caBundle` (and, for local runs, its URL; in a cluster the
 * manifests give the Service and only the CA is injected). What cert-manager's cainjector does for
 * the cert-manager path, done by the operator itself for the self-managed one.
 *
 * Guarantees: writes a CRD only when its conversion block differs (a restart with the same CA
 * costs no write); one JSON patch per CRD that replaces the block whole, conditional on the
 * resourceVersion read (a concurrent change is re-read and retried); never touches anything else in the CRD. RBAC:
 * `get` and `patch` on exactly the named `customresourcedefinitions`.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { CustomResourceDefinitionKind } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import { isConflict, isInvalid } from '../client/index.ts';
import type { CustomResourceDefinitionV1 } from '../crd/index.ts';

export interface WebhookClientConfig {
  caBundle: string;
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
}

export interface InjectCaBundleOptions {
  /** CRD names, e.g. `microservices.platform.example.io`. */
  crds: readonly string[];
  /** The CA (PEM) that signs the webhook's serving certificate. */
  caPem: string;
  /** The webhook's URL (local runs); without it the CRD's existing `service` is kept. */
  url?: string;
  signal?: AbortSignal;
}

/**
 * A copy of `crd` whose conversion webhook is reached at `url` with `caPem` as its CA: what to
 * install for local runs (a webhook on 127.0.0.1), so that installing and re-installing the CRD
 * never leaves a Service reference beside the URL. Pure.
 */
export function withConversionWebhookUrl<T extends CustomResourceDefinitionV1>(crd: T, url: string, caPem: string): T {
  return {
    ...crd,
    spec: {
      ...crd.spec,
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle: Buffer.from(caPem).toString('base64') } } },
    },
  };
}

/** Returns the names of the CRDs it wrote. */
export async function injectCaBundle(client: KubeClient, options: InjectCaBundleOptions): Promise<string[]> {
  const written: string[] = [];
  const caBundle = Buffer.from(options.caPem).toString('base64');
  for (const name of options.crds) {
    for (let attempt = 0; ; attempt++) {
      const crd = await client.get(CustomResourceDefinitionKind, { namespace: '', name }, options.signal ? { signal: options.signal } : {});
      const spec = crd.spec as { conversion?: { strategy?: string; webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions?: string[] } } };
      const current = spec.conversion;
      const clientConfig: WebhookClientConfig = options.url
        ? { url: options.url, caBundle }
        : { ...current?.webhook?.clientConfig, caBundle };
      if (!options.url && !clientConfig.service && !clientConfig.url) {
        throw new Error(`CRD ${name} has no conversion webhook service or URL to add the CA to; install the manifests that configure it, or give the webhook URL`);
      }
      const desired = { strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: ['v1'] } };
      if (isDeepStrictEqual(current, desired)) break;
      try {
        // One JSON patch, conditional on the version read, replacing the whole block: a stale url
        // or service must not survive beside the new one, and there is never a moment without it.
        await client.patch(CustomResourceDefinitionKind, { namespace: '', name }, {
          type: 'json',
          body: [
            { op: 'test', path: '/metadata/resourceVersion', value: crd.metadata.resourceVersion },
            { op: 'add', path: '/spec/conversion', value: desired },
          ],
        }, { fieldManager: 'converge-webhook', ...(options.signal ? { signal: options.signal } : {}) });
        written.push(name);
        break;
      } catch (err) {
        // A failed `test` (someone changed the CRD since it was read) is 422 Invalid: read again.
        if (!(isConflict(err) || isInvalid(err)) || attempt >= 5) throw err;
      }
    }
  }
  return written;
}
