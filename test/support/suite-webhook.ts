/**
 * The test suite's conversion webhook: one for the whole shared control plane, started by the
 * harness (scripts/test.ts) before any test file, as a cluster always has its operators' webhook
 * running. It converts Microservices and DigitalHumanProviders between v1alpha1 and v1 (the
 * operators' own converters), listens on 127.0.0.1, and the CRDs point at it by URL with its CA.
 *
 * Test files read it from the environment: `CONVERGE_TEST_WEBHOOK_URL`, `CONVERGE_TEST_WEBHOOK_CA`
 * (the CA file). `suiteCrds()` gives the CRDs as installed for this suite; every test that
 * installs CRDs installs these (`ensureCrds`), never the published ones, whose conversion names
 * an in-cluster Service the API server cannot reach here. Tests that must apply the published
 * manifests (`kubectl apply -k deploy/…`) call `usePublishedCrds(t)`, which switches the
 * conversion to the Service form for the test and back afterwards.
 * @module
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { CustomResourceDefinitionKind, installCustomResourceDefinitions, withConversionWebhookUrl } from '@converge/runtime';
import type { CustomResourceDefinitionV1, KubeClient } from '@converge/runtime';
import { freePorts } from '@converge/envtest';
import { DigitalHumanProviderCrd, MicroserviceCrd, startStandaloneConversionWebhook } from '../../packages/operators/src/index.ts';

export const WEBHOOK_ENV = { url: 'CONVERGE_TEST_WEBHOOK_URL', ca: 'CONVERGE_TEST_WEBHOOK_CA' } as const;

const PUBLISHED = [MicroserviceCrd, DigitalHumanProviderCrd];

/** Starts the suite's webhook with its CA in `stateDir/webhook`, installs the CRDs pointing at it; the env to export. */
export async function startSuiteWebhook(client: KubeClient, stateDir: string): Promise<{ env: Record<string, string>; stop(): Promise<void> }> {
  const caDir = join(stateDir, 'webhook');
  const [port] = await freePorts(1);
  const webhook = await startStandaloneConversionWebhook({ caDir, port: port! });
  await installCustomResourceDefinitions(client, webhook.crds, { fieldManager: 'converge-tests' });
  return { env: { [WEBHOOK_ENV.url]: webhook.url, [WEBHOOK_ENV.ca]: join(caDir, 'ca.crt') }, stop: () => webhook.stop() };
}

/** The CRDs as this suite installs them: pointing at its webhook (the published ones outside the harness). */
export function suiteCrds(): CustomResourceDefinitionV1[] {
  const url = process.env[WEBHOOK_ENV.url];
  const caPath = process.env[WEBHOOK_ENV.ca];
  if (!url || !caPath) return PUBLISHED;
  const caPem = readFileSync(caPath, 'utf8');
  return PUBLISHED.map((crd) => withConversionWebhookUrl(crd, url, caPem));
}

/**
 * For a test that applies the published manifests: the CRDs' conversion switched to the
 * published (Service) form now, and back to the suite's webhook when the test ends. Meanwhile
 * v1alpha1 requests cannot be converted: only serial tests may call it.
 */
export async function usePublishedCrds(t: TestContext, client: KubeClient): Promise<void> {
  const setConversion = async (crds: CustomResourceDefinitionV1[]) => {
    for (const crd of crds) {
      const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name: crd.metadata.name });
      await client.patch(CustomResourceDefinitionKind, { namespace: '', name: crd.metadata.name }, {
        type: 'json',
        body: [{ op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion }, { op: 'add', path: '/spec/conversion', value: crd.spec.conversion }],
      }, { fieldManager: 'converge-tests' });
    }
  };
  await setConversion(PUBLISHED);
  t.after(async () => {
    await setConversion(suiteCrds());
    await installCustomResourceDefinitions(client, suiteCrds(), { fieldManager: 'converge-tests' });
  });
}
